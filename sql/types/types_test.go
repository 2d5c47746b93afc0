package types

import (
	"math"
	"testing"
)

func mustDec(t *testing.T, s string) Value {
	t.Helper()
	v, err := ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseDecimal(t *testing.T) {
	cases := []struct{ in, out, typ string }{
		{"0.2", "0.2", "decimal(2,1)"},
		{".06", "0.06", "decimal(3,2)"},
		{"100.00", "100.00", "decimal(5,2)"},
		{"-1.50", "-1.50", "decimal(3,2)"},
		{"0.0001000000", "0.0001000000", "decimal(11,10)"},
		{"12345678901234567890.5", "12345678901234567890.5", "decimal(21,1)"},
	}
	for _, c := range cases {
		v := mustDec(t, c.in)
		if v.String() != c.out || v.Type.String() != c.typ {
			t.Errorf("ParseDecimal(%q) = %s %s, want %s %s", c.in, v, v.Type, c.out, c.typ)
		}
	}
	for _, bad := range []string{"", ".", "1.2.3", "1e5", "abc"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q): no error", bad)
		}
	}
}

// TestArith checks MySQL's result types: + - take the larger scale, * the sum of scales,
// / the dividend's scale + 4; integers stay BIGINT except under /.
func TestArith(t *testing.T) {
	money := Dec(15, 2)
	one := IntValue(1).Type
	cases := []struct {
		op   ArithOp
		a, b Type
		want string
	}{
		{OpSub, one, money, "decimal(16,2)"},
		{OpMul, money, Dec(16, 2), "decimal(31,4)"},
		{OpMul, Dec(31, 4), Dec(16, 2), "decimal(38,6)"},
		{OpDiv, Dec(38, 2), Dec(2, 1), "decimal(38,6)"},
		{OpDiv, Dec(5, 2), Dec(15, 2), "decimal(11,6)"},
		{OpAdd, Int32Type, Int32Type, "bigint"},
		{OpDiv, Int64Type, Int64Type, "decimal(23,4)"},
		{OpDiv, Int32Type, IntValue(7).Type, "decimal(14,4)"},
		{OpAdd, Float64Type, money, "double"},
		{OpIntDiv, money, Int64Type, "bigint"},
		{OpMod, money, Dec(3, 1), "decimal(15,2)"},
	}
	for _, c := range cases {
		got, err := Arith(c.op, c.a, c.b)
		if err != nil || got.String() != c.want {
			t.Errorf("Arith(%d, %s, %s) = %s, %v; want %s", c.op, c.a, c.b, got, err, c.want)
		}
	}
	if _, err := Arith(OpAdd, DateType, Int64Type); err == nil {
		t.Error("date + int: no error")
	}
	if s, _ := Sum(money); s.String() != "decimal(38,2)" {
		t.Errorf("SUM(decimal(15,2)) = %s", s)
	}
	if s, _ := Sum(Int32Type); s.String() != "decimal(38,0)" {
		t.Errorf("SUM(int) = %s", s)
	}
	if a, _ := Avg(money); a.String() != "decimal(38,6)" {
		t.Errorf("AVG(decimal(15,2)) = %s", a)
	}
	if a, _ := Avg(Int32Type); a.String() != "decimal(38,4)" {
		t.Errorf("AVG(int) = %s", a)
	}
}

func TestArrowCarrier(t *testing.T) {
	if got := Dec(15, 2).Arrow().String(); got != "decimal64(15, 2)" {
		t.Errorf("decimal(15,2) carried as %s", got)
	}
	if got := Dec(19, 6).Arrow().String(); got != "decimal(19, 6)" {
		t.Errorf("decimal(19,6) carried as %s", got)
	}
}

func TestArithmeticValues(t *testing.T) {
	cases := []struct {
		op   ArithOp
		a, b Value
		want string
	}{
		{OpSub, mustDec(t, ".06"), mustDec(t, "0.01"), "0.05"},
		{OpMul, mustDec(t, "100.00"), mustDec(t, "0.15"), "15.0000"},
		{OpDiv, mustDec(t, "1.00"), mustDec(t, "3"), "0.333333"},
		{OpDiv, mustDec(t, "2.00"), mustDec(t, "3"), "0.666667"},
		{OpDiv, mustDec(t, "-2.00"), mustDec(t, "3"), "-0.666667"},
		{OpDiv, mustDec(t, "1.00"), mustDec(t, "0"), "NULL"},
		{OpAdd, IntValue(1), IntValue(10), "11"},
		{OpDiv, IntValue(5), IntValue(2), "2.5000"},
		{OpMod, IntValue(7), IntValue(0), "NULL"},
	}
	for _, c := range cases {
		typ, err := Arith(c.op, c.a.Type, c.b.Type)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Arithmetic(c.op, c.a, c.b, typ)
		if err != nil || v.String() != c.want {
			t.Errorf("%s op%d %s = %s, %v; want %s", c.a, c.op, c.b, v, err, c.want)
		}
	}
}

func TestConvertRounds(t *testing.T) {
	cases := []struct {
		v    Value
		to   Type
		want string
	}{
		{mustDec(t, "0.065"), Dec(15, 2), "0.07"},
		{mustDec(t, "-0.065"), Dec(15, 2), "-0.07"},
		{mustDec(t, "2.5"), Int64Type, "3"},
		{IntValue(24), Dec(15, 2), "24.00"},
		{StringValue("1995-03-15"), DateType, "date '1995-03-15'"},
		{StringValue(" 42 "), Int32Type, "42"},
		{StringValue("+42"), Int64Type, "42"},
		{StringValue("12.9"), Int64Type, "12"}, // CAST(… AS SIGNED): the integer part, as MySQL
		{StringValue("-12.9"), Int64Type, "-12"},
		{StringValue("1e3"), Int64Type, "1"},
		{StringValue("\v12.5"), Int64Type, "12"},
		{StringValue("-9223372036854775808"), Int64Type, "-9223372036854775808"},
		{StringValue(" 1.005 "), Dec(5, 2), "1.01"},
		{StringValue("1995-3-5"), DateType, "date '1995-03-05'"},
		{FloatValue(0.125), Dec(5, 2), "0.13"},
		{DateValue(0), VarcharType(10), "'1970-01-01'"},
	}
	for _, c := range cases {
		got, err := Convert(c.v, c.to)
		if err != nil || got.String() != c.want {
			t.Errorf("Convert(%s, %s) = %s, %v; want %s", c.v, c.to, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		v  Value
		to Type
	}{
		{StringValue("x"), Int32Type},
		{StringValue("12abc"), Int64Type},
		{StringValue("9223372036854775808"), Int64Type},
		{StringValue("99999999999999999999.5"), Int64Type},
		{StringValue("3000000000"), Int32Type},
		{StringValue("1e3"), Dec(5, 0)}, // a DECIMAL literal has no exponent
		{StringValue("95-01-01"), DateType},
		{StringValue("0000-00-00"), DateType},
		{IntValue(1 << 40), Int32Type},
		{mustDec(t, "12345.6"), Dec(5, 2)},
		{StringValue("1995-02-30"), DateType},
	} {
		if got, err := Convert(bad.v, bad.to); err == nil {
			t.Errorf("Convert(%s, %s) = %s, want an error", bad.v, bad.to, got)
		}
	}
}

func TestDates(t *testing.T) {
	d, err := ParseDate("1998-12-01")
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatDate(d - 90); got != "1998-09-02" {
		t.Errorf("1998-12-01 - 90 days = %s", got)
	}
	jan31, _ := ParseDate("2020-01-31")
	for _, c := range []struct {
		n    int64
		want string
	}{{1, "2020-02-29"}, {-13, "2018-12-31"}, {12 * 7980, "NULL"}, {math.MinInt64, "NULL"}} {
		got := "NULL"
		if r, ok := AddMonths(jan31, c.n); ok {
			got = FormatDate(r)
		}
		if got != c.want {
			t.Errorf("2020-01-31 + %d months = %s, want %s", c.n, got, c.want)
		}
	}
	for _, bad := range []string{"1995-2-30", "95-01-01", "1995-00-10", "1995/01/01", "0000-01-01",
		"10000-01-01", "1995-001-01", "2021-13-45"} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q): no error", bad)
		}
	}
	if d, err := ParseDate("1995-3-5"); err != nil || FormatDate(d) != "1995-03-05" {
		t.Errorf("ParseDate(1995-3-5) = %v, %v", d, err)
	}
	// The ends of MySQL's DATE range, and days beyond time.Duration's ±292 years, read and
	// print back unchanged.
	for _, s := range []string{"0001-01-01", "9999-12-31", "0999-01-01", "2262-04-12", "1677-09-21", "3000-02-28"} {
		d, err := ParseDate(s)
		if err != nil || FormatDate(d) != s {
			t.Errorf("ParseDate(%q) = %d %v, prints %s", s, d, err, FormatDate(d))
		}
		if y, m, dd := CivilFromDays(d); DaysFromCivil(y, m, dd) != d {
			t.Errorf("%s: civil round trip fails", s)
		}
	}
}

func TestCommon(t *testing.T) {
	cases := []struct {
		a, b Type
		want string
	}{
		{Dec(15, 2), IntValue(24).Type, "decimal(15,2)"},
		{Dec(15, 2), Dec(3, 3), "decimal(16,3)"},
		{Int32Type, Int64Type, "bigint"},
		{CharType(25), VarcharType(40), "varchar(40)"},
		{DateType, VarcharType(10), "date"},
		{NullType, Dec(15, 2), "decimal(15,2)"},
		{Float64Type, Int32Type, "double"},
	}
	for _, c := range cases {
		got, ok := Common(c.a, c.b)
		if !ok || got.String() != c.want {
			t.Errorf("Common(%s, %s) = %s, %v; want %s", c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := Common(DateType, Int64Type); ok {
		t.Error("Common(date, bigint) should not exist")
	}
}

func TestLike(t *testing.T) {
	cases := []struct {
		s, p string
		want bool
	}{
		{"PROMO BRUSHED TIN", "PROMO%", true},
		{"forest green", "%green%", true},
		{"Customer xx Complaints", "%Customer%Complaints%", true},
		{"Customer Complaint", "%Customer%Complaints%", false},
		{"MEDIUM POLISHED BRASS", "%BRASS", true},
		{"ab", "a_", true},
		{"abc", "a_", false},
		{"50%", "50!%", true},
		{"500", "50!%", false},
		{"", "%", true},
		{"é!", "_!", true},
	}
	for _, c := range cases {
		if got := Like(c.s, c.p, '!'); got != c.want {
			t.Errorf("Like(%q, %q) = %v", c.s, c.p, got)
		}
	}
}
