package link

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
)

func sideRecord(t *testing.T, mem memory.Allocator, sc *arrow.Schema, from, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for r := from; r < from+n; r++ {
		for c, f := range sc.Fields() {
			switch fb := b.Field(c).(type) {
			case *array.Int64Builder:
				fb.Append(int64(r))
			case *array.StringBuilder:
				if f.Nullable && r%3 == 0 {
					fb.AppendNull()
				} else {
					fb.Append(fmt.Sprintf("v%d", r))
				}
			case *array.Int32Builder:
				fb.Append(int32(r * 2))
			}
		}
	}
	return b.NewRecordBatch()
}

// TestBuildSidesRoundTrip sends three build sides (one empty, one in two records of which
// one is a slice) through the Arrow IPC stream format and checks every row comes back to
// its side in order, with NULLs.
func TestBuildSidesRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sides := []*arrow.Schema{
		arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
		arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil),
		arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil),
	}
	types := [][]vec.Type{{vec.Int64Type, vec.StringType}, {vec.Int32Type}, {vec.Int64Type}}
	enc := NewBuildEncoder(sides, mem)
	defer enc.Release()

	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(enc.Schema()), arrowipc.WithAllocator(mem))
	send := func(side int, rec arrow.RecordBatch) {
		up, err := enc.Encode(side, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(up); err != nil {
			t.Fatal(err)
		}
		up.Release()
	}
	r0 := sideRecord(t, mem, sides[0], 0, 10)
	send(0, r0)
	r0.Release()
	r2 := sideRecord(t, mem, sides[2], 100, 7)
	send(2, r2)
	r2.Release()
	r0b := sideRecord(t, mem, sides[0], 10, 20)
	sl := r0b.NewSlice(5, 15) // rows 15..24
	send(0, sl)
	sl.Release()
	r0b.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	rd, err := arrowipc.NewReader(&buf, arrowipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	got := make([][]string, 3)
	for rd.Next() {
		err := DecodeBuildUpload(rd.RecordBatch(), types, func(side int, part arrow.RecordBatch) error {
			for r := 0; r < int(part.NumRows()); r++ {
				var row []string
				for c := 0; c < int(part.NumCols()); c++ {
					row = append(row, part.Column(c).ValueStr(r))
				}
				got[side] = append(got[side], strings.Join(row, ","))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	var want0 []string
	for r := 0; r < 10; r++ {
		want0 = append(want0, row0(r))
	}
	for r := 15; r < 25; r++ {
		want0 = append(want0, row0(r))
	}
	if strings.Join(got[0], ";") != strings.Join(want0, ";") {
		t.Errorf("side 0:\n got %v\nwant %v", got[0], want0)
	}
	if len(got[1]) != 0 {
		t.Errorf("side 1 should be empty: %v", got[1])
	}
	if strings.Join(got[2], ";") != "100;101;102;103;104;105;106" {
		t.Errorf("side 2: %v", got[2])
	}
}

func row0(r int) string {
	if r%3 == 0 {
		return fmt.Sprintf("%d,(null)", r)
	}
	return fmt.Sprintf("%d,v%d", r, r)
}

func TestBuildUploadMismatch(t *testing.T) {
	sides := []*arrow.Schema{arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)}
	enc := NewBuildEncoder(sides, nil)
	defer enc.Release()
	rec := sideRecord(t, memory.DefaultAllocator, sides[0], 0, 3)
	defer rec.Release()
	up, err := enc.Encode(0, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Release()
	noop := func(int, arrow.RecordBatch) error { return nil }
	for _, tc := range []struct {
		types [][]vec.Type
		want  string
	}{
		{[][]vec.Type{{vec.Int32Type}}, "build side 0 column 0 is int64, the fragment declares int32"},
		{[][]vec.Type{{vec.Int64Type, vec.Int64Type}}, "build side 0 has 1 columns, the fragment declares 2"},
		{[][]vec.Type{{vec.Int64Type}, {vec.Int64Type}}, "build upload has 1 columns, the fragment declares 2 build sides"},
	} {
		err := DecodeBuildUpload(up, tc.types, noop)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: got %v, want %q", tc.types, err, tc.want)
		}
	}
	if _, err := enc.Encode(1, rec); err == nil {
		t.Error("encoding side 1 of 1 succeeded")
	}
	other := sideRecord(t, memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil), 0, 2)
	defer other.Release()
	if _, err := enc.Encode(0, other); err == nil || !strings.Contains(err.Error(), "record has int32") {
		t.Errorf("type mismatch: %v", err)
	}
}

func TestSchemaRoundTripAndColumns(t *testing.T) {
	sc, err := SchemaFromColumns([]ColumnDef{
		{Name: "id", SQLType: "BIGINT"},
		{Name: "price", SQLType: "decimal(15, 2)"},
		{Name: "d", SQLType: "date", Nullable: true},
		{Name: "name", SQLType: "char(25)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeSchema(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(sc) {
		t.Fatalf("schema changed:\n%s\n%s", sc, back)
	}
	var got []string
	for _, f := range back.Fields() {
		got = append(got, f.Name+" "+vec.SQLTypeOf(f)+" "+f.Type.String())
	}
	want := "id bigint int64|price decimal(15,2) decimal64(15, 2)|d date date32|name char(25) utf8"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q\nwant %q", strings.Join(got, "|"), want)
	}
	for _, tc := range []struct {
		cols []ColumnDef
		want string
	}{
		{nil, "no columns declared"},
		{[]ColumnDef{{Name: "x", SQLType: "blob"}}, `column "x": unsupported SQL type "blob"`},
		{[]ColumnDef{{Name: "x", SQLType: "decimal(30,2)"}}, `column "x": SQL type "decimal(30,2)": stored decimals need precision <= 18`},
		{[]ColumnDef{{SQLType: "int"}}, "column 0 has no name"},
	} {
		_, err := SchemaFromColumns(tc.cols)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.cols, err, tc.want)
		}
	}
}

// TestFragmentArgsInline checks that a FragmentArgs decodes as an exec.Fragment (its keys
// are inline) and that an exec.Fragment decodes as FragmentArgs.
func TestFragmentArgsInline(t *testing.T) {
	f := exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: []string{"l_quantity"}, Types: []vec.Type{vec.Decimal(15, 2)}}}
	b, err := msgpack.Marshal(FragmentArgs{Fragment: f, Threads: 3, Query: "q6"})
	if err != nil {
		t.Fatal(err)
	}
	var back exec.Fragment
	if err := msgpack.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Scan.Table != "lineitem" || len(back.Scan.Types) != 1 || back.Scan.Types[0] != vec.Decimal(15, 2) {
		t.Fatalf("decoded as exec.Fragment: %+v", back)
	}
	b, err = msgpack.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var args FragmentArgs
	if err := msgpack.Unmarshal(b, &args); err != nil {
		t.Fatal(err)
	}
	if args.Scan.Table != "lineitem" || args.Threads != 0 {
		t.Fatalf("decoded as FragmentArgs: %+v", args)
	}
}
