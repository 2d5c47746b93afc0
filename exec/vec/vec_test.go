package vec

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func toBig(v Int128) *big.Int {
	b := big.NewInt(v.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(v.Lo))
}

func fitsI128(b *big.Int) bool {
	return b.Cmp(toBig(MaxInt128())) <= 0 && b.Cmp(toBig(MinInt128())) >= 0
}

func randI128(r *rand.Rand) Int128 {
	switch r.IntN(4) {
	case 0:
		return I128(r.Int64N(1000) - 500)
	case 1:
		return I128(int64(r.Uint64()))
	case 2:
		return Int128{Lo: r.Uint64(), Hi: int64(r.Uint64()) >> r.IntN(64)}
	}
	return Int128{Lo: r.Uint64(), Hi: int64(r.Uint64())}
}

// TestInt128AgainstBig checks every Int128 operation, including its overflow report,
// against math/big on random operands of mixed magnitudes.
func TestInt128AgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		a, b := randI128(r), randI128(r)
		ba, bb := toBig(a), toBig(b)
		check := func(op string, got Int128, ok bool, want *big.Int) {
			t.Helper()
			if fitsI128(want) != ok || (ok && toBig(got).Cmp(want) != 0) {
				t.Fatalf("%s %s %s: got %s ok=%v, want %s", a, op, b, got, ok, want)
			}
		}
		s, ok := a.Add(b)
		check("+", s, ok, new(big.Int).Add(ba, bb))
		s, ok = a.Sub(b)
		check("-", s, ok, new(big.Int).Sub(ba, bb))
		s, ok = a.Mul(b)
		check("*", s, ok, new(big.Int).Mul(ba, bb))
		if b.Sign() != 0 {
			q, ok := a.QuoRound(b)
			// Round half away from zero.
			qq, rr := new(big.Int).QuoRem(ba, bb, new(big.Int))
			rr.Abs(rr).Lsh(rr, 1)
			if rr.Cmp(new(big.Int).Abs(bb)) >= 0 {
				if (ba.Sign() < 0) != (bb.Sign() < 0) {
					qq.Sub(qq, big.NewInt(1))
				} else {
					qq.Add(qq, big.NewInt(1))
				}
			}
			check("/r", q, ok, qq)
		}
		if x := int64(a.Lo); true {
			y := int64(b.Lo)
			if got, want := Mul64x64(x, y), new(big.Int).Mul(big.NewInt(x), big.NewInt(y)); toBig(got).Cmp(want) != 0 {
				t.Fatalf("Mul64x64(%d,%d) = %s", x, y, got)
			}
		}
	}
}

// TestInt128Bounds: MaxInt128 and MinInt128 are 2^127-1 and -2^127, and the arithmetic
// reports overflow just past them.
func TestInt128Bounds(t *testing.T) {
	max127 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
	if got := toBig(MaxInt128()); got.Cmp(max127) != 0 {
		t.Errorf("MaxInt128() = %s, want %s", got, max127)
	}
	if got, want := toBig(MinInt128()), new(big.Int).Neg(new(big.Int).Add(max127, big.NewInt(1))); got.Cmp(want) != 0 {
		t.Errorf("MinInt128() = %s, want %s", got, want)
	}
	if _, ok := MaxInt128().Add(I128(1)); ok {
		t.Error("MaxInt128()+1 did not overflow")
	}
	if _, ok := MinInt128().Sub(I128(1)); ok {
		t.Error("MinInt128()-1 did not overflow")
	}
	if _, ok := MinInt128().Neg(); ok {
		t.Error("-MinInt128() did not overflow")
	}
	if n, ok := MaxInt128().Neg(); !ok || n != (Int128{Lo: 1, Hi: -1 << 63}) {
		t.Errorf("-MaxInt128() = %s, %v", n, ok)
	}
}

func TestDecimalText(t *testing.T) {
	cases := []struct {
		in   string
		want string
		typ  string
	}{
		{"0", "0", "decimal(1,0)"},
		{"1.50", "1.50", "decimal(3,2)"},
		{"-0.05", "-0.05", "decimal(2,2)"},
		{"0.2", "0.2", "decimal(1,1)"},
		{"123456789012345678901234567890.12345678", "123456789012345678901234567890.12345678", "decimal(38,8)"},
		{"1e3", "1000", "decimal(4,0)"},
		{"1.5e-3", "0.0015", "decimal(4,4)"},
		{"-99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "decimal(38,0)"},
	}
	for _, c := range cases {
		v, ty, err := ParseDecimal(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := string(v.AppendDecimal(nil, ty.Scale)); got != c.want || ty.String() != c.typ {
			t.Errorf("%s: got %s %s, want %s %s", c.in, got, ty, c.want, c.typ)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "abc", "1e", "12x", "123456789012345678901234567890123456789"} {
		if _, _, err := ParseDecimal(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	// Rounding to a smaller scale is half away from zero.
	for in, want := range map[string]string{"1.005": "1.01", "-1.005": "-1.01", "1.004": "1.00", "2.5e-2": "0.03"} {
		v, err := ParseDecimalScale([]byte(in), 2)
		if err != nil || string(v.AppendDecimal(nil, 2)) != want {
			t.Errorf("%s at scale 2: %s %v, want %s", in, v.AppendDecimal(nil, 2), err, want)
		}
	}
}

func TestDates(t *testing.T) {
	for d := DaysFromCivil(1, 1, 1); d <= DaysFromCivil(9999, 12, 31); d += 7 {
		y, m, dd := CivilFromDays(d)
		if DaysFromCivil(y, m, dd) != d || dd > DaysInMonth(y, m) {
			t.Fatalf("day %d -> %d-%d-%d", d, y, m, dd)
		}
	}
	if got := string(AppendDate(nil, 0)); got != "1970-01-01" {
		t.Errorf("epoch prints %s", got)
	}
	d, err := ParseDate([]byte("1995-03-15"))
	if err != nil || string(AppendDate(nil, d)) != "1995-03-15" {
		t.Errorf("1995-03-15: %d %v", d, err)
	}
	for _, bad := range []string{"1995-02-29", "1995-13-01", "1995-1", "x", "1995-03-15x", "19955-01-01"} {
		if _, err := ParseDate([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	jan31 := MustParseDate("2000-01-31")
	for n, want := range map[int64]string{1: "2000-02-29", 13: "2001-02-28", -1: "1999-12-31", 12: "2001-01-31", -13: "1998-12-31"} {
		got, ok := AddMonths(int32(jan31.Int), n)
		if !ok || string(AppendDate(nil, got)) != want {
			t.Errorf("2000-01-31 + %d months = %s, want %s", n, AppendDate(nil, got), want)
		}
	}
}

// TestArrowRoundTrip writes batches with NULLs through RecordBuilder (with a selection
// vector and in pieces) and views the record back.
func TestArrowRoundTrip(t *testing.T) {
	tab, err := ParseTable(`a:int64 b:decimal(15,2) c:string d:date e:bool f:decimal(38,4) g:double h:int32
1 | 1.50 | abc | 1995-03-15 | true | 12345678901234567890.1234 | 1.5 | 7
NULL | -2.00 | '' | NULL | false | NULL | NULL | NULL
3 | NULL | NULL | 2000-02-29 | NULL | -1.0000 | -0.25 | -8
4 | 0.01 | 'with space ' | 1970-01-01 | true | 0.0000 | 0 | 0
`)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(NewPool(0))
	defer mem.AssertSize(t, 0)
	rb := NewRecordBuilder(SchemaOf(tab.Names, tab.Types), tab.Types, mem)
	b1 := tab.Batch(0, 3)
	b1.Sel = []int32{0, 2}
	rb.Append(b1)
	rb.Append(tab.Batch(1, 2))
	rb.Append(tab.Batch(3, 4))
	rec := rb.Finish()
	defer rec.Release()
	got := &Table{Names: tab.Names, Types: tab.Types}
	if err := got.AppendRecord(rec); err != nil {
		t.Fatal(err)
	}
	want := &Table{Names: tab.Names, Types: tab.Types, Rows: [][]Datum{tab.Rows[0], tab.Rows[2], tab.Rows[1], tab.Rows[3]}}
	if got.String() != want.String() {
		t.Fatalf("round trip:\n%s\nwant:\n%s", got, want)
	}
	// A view of a slice of the record sees the same rows.
	b := &Batch{}
	slice := rec.NewSlice(1, 3)
	defer slice.Release()
	if err := b.ViewRecord(slice, tab.Types, 0, 2); err != nil {
		t.Fatal(err)
	}
	sl := &Table{Names: tab.Names, Types: tab.Types}
	sl.AppendBatch(b)
	if sl.String() != (&Table{Names: tab.Names, Types: tab.Types, Rows: want.Rows[1:3]}).String() {
		t.Fatalf("slice view:\n%s", sl)
	}
}

func TestPoolRecycles(t *testing.T) {
	p := NewPool(1 << 20)
	a := p.Allocate(1000)
	if len(a) != 1000 || cap(a) != 1024 {
		t.Fatalf("len %d cap %d", len(a), cap(a))
	}
	a[5] = 9
	p.Free(a)
	b := p.Allocate(900)
	if &b[0] != &a[0] || b[5] != 0 {
		t.Fatalf("buffer not recycled or not zeroed")
	}
	if s := p.Stats(); s.Misses != 1 || (s.Gets-s.Misses) != 1 {
		t.Fatalf("stats %+v", s)
	}
	big := p.Allocate(2 << 20) // more than the pool retains
	p.Free(big)
	if p.Stats().Idle != 0 {
		t.Fatalf("kept a buffer beyond the retention limit")
	}
}

func TestVecAppendText(t *testing.T) {
	tab, err := ParseTable(`a:int64 b:decimal(15,2) c:string d:date e:bool f:decimal(38,4) g:double h:int32
1 | -1.50 | abc | 1995-03-15 | true | -12345678901234567890.1234 | 0.05008133906964238 | 7
NULL | 0.00 | '' | NULL | false | NULL | 1e20 | NULL
`)
	if err != nil {
		t.Fatal(err)
	}
	b := tab.Batch(0, 2)
	var got []string
	for i := 0; i < 2; i++ {
		var line []byte
		for c, v := range b.Cols {
			if c > 0 {
				line = append(line, '|')
			}
			line = v.AppendText(line, i)
			if d := v.Datum(i); string(d.AppendText(nil)) != string(v.AppendText(nil, i)) {
				t.Errorf("column %d row %d: Vec %q, Datum %q", c, i, v.AppendText(nil, i), d.AppendText(nil))
			}
		}
		got = append(got, string(line))
	}
	want := []string{"1|-1.50|abc|1995-03-15|1|-12345678901234567890.1234|0.05008133906964238|7",
		"NULL|0.00||NULL|0|NULL|1e20|NULL"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %s, want %s", i, got[i], want[i])
		}
	}
}

// TestPoolTrim: Trim lets go of the buffers no Allocate wanted since the previous Trim and
// keeps those reused in between.
func TestPoolTrim(t *testing.T) {
	p := NewPool(1 << 20)
	const size = 4096
	trim := func(want int64) {
		t.Helper()
		if n := p.Sweep(); n != want {
			t.Fatalf("Trim released %d bytes, want %d", n, want)
		}
	}
	a, b := p.Allocate(size), p.Allocate(size)
	p.Free(a)
	p.Free(b)
	trim(0)        // freed since the last Trim: not idle for a whole interval yet
	trim(2 * size) // now they have been
	a, b = p.Allocate(size), p.Allocate(size)
	p.Free(a)
	p.Free(b)
	trim(0)
	c := p.Allocate(size) // one of the two is reused, the other lies idle
	p.Free(c)
	trim(size)
	if s := p.Stats(); s.Idle != size {
		t.Fatalf("kept %d bytes, want the reused buffer's %d", s.Idle, size)
	}
	trim(size)
	if s := p.Stats(); s.Idle != 0 || s.Released != 4*size {
		t.Fatalf("stats after trimming everything: %+v", s)
	}
}

// TestPoolSlices: typed arrays from a pool are zeroed, grow keeping their contents, and
// their memory is recycled; a nil pool uses the Go heap.
func TestPoolSlices(t *testing.T) {
	for _, p := range []*Pool{nil, NewScribblingPool(1 << 20)} {
		s := MakeSlice[int64](p, 100)
		if len(s) != 100 || cap(s) < 100 {
			t.Fatalf("len %d cap %d", len(s), cap(s))
		}
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("element %d not zero", i)
			}
			s[i] = int64(i)
		}
		// A freed array of the class the growth takes comes back scribbled: what the grown
		// slice exposes must still read zero.
		FreeSlice(p, MakeSlice[int64](p, 1000))
		s = GrowSlice(p, s, 1000)
		for i := range s {
			if want := int64(i); i >= 100 && s[i] != 0 || i < 100 && s[i] != want {
				t.Fatalf("after growing: element %d is %d", i, s[i])
			}
		}
		s = s[:500]
		s = GrowSlice(p, s, 600) // within capacity: the new elements are zeroed again
		for i := 500; i < 600; i++ {
			if s[i] != 0 {
				t.Fatalf("element %d not zero after growing within capacity", i)
			}
		}
		FreeSlice(p, s)
		d := MakeSlice[Int128](p, 3)
		d[2] = Int128{Hi: 1, Lo: 2}
		FreeSlice(p, d)
		if p != nil {
			// One hit so far: the growth took the scribbled array.
			if st := p.Stats(); st.Idle == 0 || (st.Gets-st.Misses) != 1 {
				t.Fatalf("stats %+v", st)
			}
			if e := MakeSlice[int32](p, 5); e[0] != 0 || e[4] != 0 || (p.Stats().Gets-p.Stats().Misses) != 2 {
				t.Fatalf("a recycled int32 array: %v, stats %+v", e, p.Stats())
			}
		}
	}
}

// TestVecReserveFromRecycle: an append-mode Vec reserving from a pool keeps its values
// and gives its arrays back when recycled.
func TestVecReserveFromRecycle(t *testing.T) {
	p := NewScribblingPool(1 << 20)
	for _, ty := range []Type{Int64Type, Int32Type, StringType, Decimal(38, 2), Float64Type, BoolType} {
		v := NewVec(ty)
		var want []Datum
		for i := range 300 {
			if i%64 == 0 {
				v.ReserveFrom(p, 64)
			}
			d := Datum{Type: ty, Null: i%7 == 3}
			switch {
			case d.Null:
			case ty.ID == String:
				d = StringDatum(strconv.Itoa(i))
			case ty.ID == Decimal128:
				d = DecimalDatum(Int128{Lo: uint64(i)}, ty.Precision, ty.Scale)
			case ty.ID == Float64:
				d = Float64Datum(float64(i) / 4)
			case ty.ID == Bool:
				d = BoolDatum(i%2 == 0)
			default:
				d.Int = int64(i)
			}
			v.AppendDatum(d)
			want = append(want, d)
		}
		for i, d := range want {
			if got := v.Datum(i); string(got.AppendText(nil)) != string(d.AppendText(nil)) {
				t.Fatalf("%s row %d: %s, want %s", ty, i, got.AppendText(nil), d.AppendText(nil))
			}
		}
		kept := p.Stats().Idle
		v.Recycle(p)
		if v.Len() != 0 || p.Stats().Idle <= kept {
			t.Fatalf("%s: after Recycle, %d values, pool keeps %d bytes (before %d)", ty, v.Len(), p.Stats().Idle, kept)
		}
	}
}

// TestSQLField: the one SQL-to-Arrow mapping and back.
func TestSQLField(t *testing.T) {
	for sqlType, want := range map[string]string{
		"INT": "int32", "bigint": "int64", "decimal(15, 2)": "decimal64(15, 2)", "date": "date32",
		"char(25)": "utf8", "varchar(44)": "utf8", "double": "float64", "boolean": "bool",
	} {
		f, err := SQLField("c", sqlType, true)
		if err != nil || f.Type.String() != want || !f.Nullable {
			t.Errorf("SQLField(%q) = %v, %v; want %s", sqlType, f, err, want)
			continue
		}
		norm := strings.ToLower(strings.ReplaceAll(sqlType, " ", ""))
		if got := SQLTypeOf(f); got != norm {
			t.Errorf("SQLTypeOf(SQLField(%q)) = %q", sqlType, got)
		}
	}
	for _, bad := range []string{"blob", "decimal(30,2)", "decimal"} {
		if _, err := SQLField("c", bad, false); err == nil {
			t.Errorf("SQLField(%q) accepted an unstorable type", bad)
		}
	}
}

// TestInt128ToFloat64Nearest: a decimal converts to the double nearest its value (MySQL
// reads the digits), for unscaled values within and beyond 2^53 and scales to 38.
func TestInt128ToFloat64Nearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 20000; k++ {
		v := Int128{Lo: r.Uint64(), Hi: int64(r.Uint64()) >> (r.IntN(64) + 1)}
		if k%3 == 0 {
			v = I128(int64(r.Uint64()>>r.IntN(64)) * int64(1-2*r.IntN(2)))
		}
		scale := int32(r.IntN(MaxPrecision + 1))
		want, _ := new(big.Rat).SetFrac(toBig(v), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).Float64()
		if got := Int128ToFloat64(v, scale); got != want {
			t.Fatalf("%s at scale %d: %v, want %v", v.AppendDecimal(nil, 0), scale, got, want)
		}
	}
	if got := Int128ToFloat64(I128(-100999999900000000), 15); got != -100.9999999 {
		t.Errorf("-100.9999999 at scale 15: %v", got)
	}
}

// TestGatherListedAt: an inner join's gather sets the listed rows and, from a source without
// NULLs, leaves no NULL bitmap (GatherAt marks the unlisted rows NULL); a source's NULLs
// still come through at the listed rows.
func TestGatherListedAt(t *testing.T) {
	ints, strs := NewVec(Int64Type), NewVec(StringType)
	for i, s := range []string{"zero", "one", "two", "three"} {
		ints.AppendDatum(Int64Datum(int64(10 * i)))
		strs.AppendDatum(StringDatum(s))
	}
	idx, at := []int32{3, 0, 2}, []int32{1, 4, 5}
	for _, tc := range []struct {
		src  *Vec
		want map[int32]string
	}{{ints, map[int32]string{1: "30", 4: "0", 5: "20"}}, {strs, map[int32]string{1: "three", 4: "zero", 5: "two"}}} {
		var all, listed Vec
		all.GatherAt(tc.src, idx, at, 6)
		listed.GatherListedAt(tc.src, idx, at, 6)
		if all.Nulls == nil || !all.IsNull(0) || all.IsNull(1) {
			t.Errorf("GatherAt: unlisted rows must be NULL: %v", all.Nulls)
		}
		if listed.Nulls != nil {
			t.Errorf("GatherListedAt from a source without NULLs made a bitmap %v", listed.Nulls)
		}
		for row, want := range tc.want {
			if got := string(listed.AppendText(nil, int(row))); got != want {
				t.Errorf("row %d: %q, want %q", row, got, want)
			}
		}
	}
	ints.AppendNull()
	var listed Vec
	listed.GatherListedAt(ints, []int32{4, 1}, []int32{0, 2}, 3)
	if !listed.IsNull(0) || listed.IsNull(2) || listed.I64[2] != 10 {
		t.Errorf("a NULL of the source at a listed row: nulls %v, values %v", listed.Nulls, listed.I64)
	}
}
