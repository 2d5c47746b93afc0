package textparse

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/colinkdb/colink/internal/civil"
)

// errName spells a result's error for the tables.
func errName(err error) string {
	switch err {
	case nil:
		return ""
	case ErrSyntax:
		return "syntax"
	case ErrDigits:
		return "digits"
	case ErrRange:
		return "range"
	}
	return err.Error()
}

func TestTrim(t *testing.T) {
	for _, c := range []struct {
		in   string
		sp   Space
		want string
	}{
		{" \t1 \t", NoSpace, " \t1 \t"},
		{" \t1 \t", Blanks, "\t1 \t"},
		{"  1  ", Blanks, "1"},
		{" \t1 \t", BlanksTabs, "1"},
		{"\n1\r", BlanksTabs, "\n1\r"},
		{"\v\f\n 1\r\u00a0", UnicodeSpace, "1"},
	} {
		if got := string(Trim([]byte(c.in), c.sp)); got != c.want {
			t.Errorf("Trim(%q, %d) = %q, want %q", c.in, c.sp, got, c.want)
		}
	}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		sp   Space
		want int64
		err  string
	}{
		{"0", NoSpace, 0, ""},
		{"42", NoSpace, 42, ""},
		{"+42", NoSpace, 42, ""},
		{"-42", NoSpace, -42, ""},
		{"007", NoSpace, 7, ""},
		{"9223372036854775807", NoSpace, 9223372036854775807, ""},
		{"-9223372036854775808", NoSpace, -9223372036854775808, ""},
		{"9223372036854775808", NoSpace, 0, "range"},
		{"-9223372036854775809", NoSpace, 0, "range"},
		{"99999999999999999999", NoSpace, 0, "range"},
		{"99999999999999999999x", NoSpace, 0, "syntax"}, // the syntax is checked past an overflow
		{"3000000000", NoSpace, 3000000000, ""},         // an INT column checks its own range
		{"", NoSpace, 0, "syntax"},
		{"-", NoSpace, 0, "syntax"},
		{"+-1", NoSpace, 0, "syntax"},
		{"x1", NoSpace, 0, "syntax"},
		{"12abc", NoSpace, 0, "syntax"}, // strict: not CAST's prefix
		{"1.0", NoSpace, 0, "syntax"},
		{"1e3", NoSpace, 0, "syntax"},
		{"1_000", NoSpace, 0, "syntax"},
		{"0x10", NoSpace, 0, "syntax"},
		{"1 2", UnicodeSpace, 0, "syntax"},
		{" 42", NoSpace, 0, "syntax"},
		{" 42 ", Blanks, 42, ""},
		{"\t42\t", Blanks, 0, "syntax"},
		{"\t42\t", BlanksTabs, 42, ""},
		{"\r\n 42 \n", UnicodeSpace, 42, ""},
		{"\u00a0-42\u00a0", UnicodeSpace, -42, ""}, // bytes.TrimSpace's set, as LOAD DATA had
	} {
		got, err := Int([]byte(c.in), c.sp)
		if got != c.want || errName(err) != c.err {
			t.Errorf("Int(%q, %d) = %d %q, want %d %q", c.in, c.sp, got, errName(err), c.want, c.err)
		}
	}
}

func TestIntPrefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		sp   Space
		want int64
		err  string
	}{
		{"12", BlanksTabs, 12, ""},
		{"12.9", BlanksTabs, 12, ""}, // MySQL's CAST('12.9' AS SIGNED) is 12
		{"-12.9", BlanksTabs, -12, ""},
		{"+12.9", BlanksTabs, 12, ""},
		{"1e3", BlanksTabs, 1, ""},
		{"12abc", BlanksTabs, 12, ""},
		{"-.5", BlanksTabs, 0, ""}, // no integer digits
		{".5", BlanksTabs, 0, ""},
		{"abc", BlanksTabs, 0, ""},
		{"", BlanksTabs, 0, ""},
		{" \t12.5", BlanksTabs, 12, ""},
		{"\n12.5", BlanksTabs, 0, ""},
		{"\v12.5", UnicodeSpace, 12, ""},
		{"9223372036854775807.9", BlanksTabs, 9223372036854775807, ""},
		{"-9223372036854775808.9", BlanksTabs, -9223372036854775808, ""},
		{"9223372036854775808", BlanksTabs, 0, "range"},
		{"-9223372036854775809", BlanksTabs, 0, "range"},
		{"123456789012345678901234.5", BlanksTabs, 0, "range"},
	} {
		got, err := IntPrefix([]byte(c.in), c.sp)
		if got != c.want || errName(err) != c.err {
			t.Errorf("IntPrefix(%q, %d) = %d %q, want %d %q", c.in, c.sp, got, errName(err), c.want, c.err)
		}
	}
}

// The forms of the callers: exec's numbers, the SQL layer's DECIMAL literals, LOAD DATA's
// decimal fields.
var (
	execForm  = NumberForm{Space: BlanksTabs, Exponent: true, MaxDigits: 38}
	sqlForm   = NumberForm{Space: UnicodeSpace}
	loadForm  = NumberForm{Space: UnicodeSpace}
	allForms  = map[string]NumberForm{"exec": execForm, "sql": sqlForm}
	fortyNine = "12345678901234567890123456789012345678901234567890"
)

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		form string // "exec", "sql" or "" for both
		want string // Neg Int Frac Exp, or the error
	}{
		{"0", "", "+ '' '' 0"},
		{"100", "", "+ '100' '' 0"},
		{"-1.50", "", "- '1' '50' 0"},
		{"+.06", "", "+ '' '06' 0"},
		{"007.5", "", "+ '7' '5' 0"},
		{"5.", "", "+ '5' '' 0"},
		{"-0.0", "", "- '' '0' 0"},
		{" 1.5\t", "", "+ '1' '5' 0"},
		{"\n1.5", "exec", "syntax"},
		{"\n1.5\u00a0", "sql", "+ '1' '5' 0"},
		{"1e3", "exec", "+ '1' '' 3"},
		{"1.5E-3", "exec", "+ '1' '5' -3"},
		{"7e+1", "exec", "+ '7' '' 1"},
		{"1e1000", "exec", "+ '1' '' 1000"},
		{"1e10009", "exec", "+ '1' '' 10009"}, // read while at most 1000
		{"1e1001", "exec", "+ '1' '' 1001"},
		{"1e10010", "exec", "syntax"},
		{"1e100000", "exec", "syntax"},
		{"1e3", "sql", "syntax"},
		{"", "", "syntax"},
		{"-", "", "syntax"},
		{".", "", "syntax"},
		{"-.", "", "syntax"},
		{"1.2.3", "", "syntax"},
		{"abc", "", "syntax"},
		{"12x", "", "syntax"},
		{"1 2", "", "syntax"},
		{"1e", "exec", "syntax"},
		{"1e+", "exec", "syntax"},
		{"e3", "exec", "syntax"},
		{".e3", "exec", "syntax"},
		{"1e3x", "exec", "syntax"},
		{"--1", "", "syntax"},
		{"0x10", "", "syntax"},
		{"inf", "", "syntax"},
		{"12345678901234567890123456789012345678", "exec", "+ '12345678901234567890123456789012345678' '' 0"},
		{"123456789012345678901234567890123456789", "exec", "digits"},
		{"0.00000000000000000000000000000000000000001", "exec", "+ '' '00000000000000000000000000000000000000001' 0"}, // leading zeros do not count
		{"1.00000000000000000000000000000000000000", "exec", "digits"},                                                // trailing ones do
		{"123456789012345678901234567890123456789", "sql", "+ '123456789012345678901234567890123456789' '' 0"},
	} {
		for name, f := range allForms {
			if c.form != "" && c.form != name {
				continue
			}
			n, err := ParseNumber([]byte(c.in), f)
			got := errName(err)
			if err == nil {
				s := "+"
				if n.Neg {
					s = "-"
				}
				got = fmt.Sprintf("%s '%s' '%s' %d", s, n.Int, n.Frac, n.Exp)
			}
			if got != c.want {
				t.Errorf("ParseNumber(%q, %s) = %s, want %s", c.in, name, got, c.want)
			}
		}
	}
}

func TestDigits(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "0.000": 0, "1.50": 3, ".06": 1, "100": 3, "0.0001000000": 7, "12.5": 3} {
		n, err := ParseNumber([]byte(in), sqlForm)
		if err != nil || n.Digits() != want {
			t.Errorf("%s: %d significant digits (%v), want %d", in, n.Digits(), err, want)
		}
	}
}

// text spells an Int128 at a scale through math/big, independently of the parser.
func text(v Int128, scale int32) string {
	b := new(big.Int).Lsh(big.NewInt(v.Hi), 64)
	b.Add(b, new(big.Int).SetUint64(v.Lo))
	r := new(big.Rat).SetFrac(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return r.FloatString(int(scale))
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		in    string
		form  NumberForm
		scale int32
		want  string // the value at scale, or the error
	}{
		// Rounding of extra fraction digits: half away from zero, by the first dropped digit.
		{"1.005", execForm, 2, "1.01"},
		{"-1.005", execForm, 2, "-1.01"},
		{"1.004", execForm, 2, "1.00"},
		{"1.00499999999", execForm, 2, "1.00"},
		{"2.5e-2", execForm, 2, "0.03"},
		{"0.125", loadForm, 2, "0.13"},
		{"-0.124", loadForm, 2, "-0.12"},
		{"0.5", loadForm, 0, "1"},
		{"-0.5", loadForm, 0, "-1"},
		{"0.49", loadForm, 0, "0"},
		{"9.995", loadForm, 2, "10.00"}, // the carry adds a digit; the caller checks precision
		{"5e-39", execForm, 0, "0"},
		{"5e-1", execForm, 0, "1"},
		{"5e-2", execForm, 0, "0"},
		// Fewer fraction digits than the scale, and exponents, scale up.
		{"3", loadForm, 2, "3.00"},
		{"3.5", loadForm, 2, "3.50"},
		{"-7", loadForm, 2, "-7.00"},
		{"1e3", execForm, 0, "1000"},
		{"1.5e-3", execForm, 4, "0.0015"},
		{"1.5e-3", execForm, 2, "0.00"},
		{"0e100000", NumberForm{Exponent: true}, 0, "syntax"},
		{"0e1000", execForm, 0, "0"},
		{"0.000e1000", execForm, 2, "0.00"},
		// 38 digits at the scale, and no more.
		{"-99999999999999999999999999999999999999", execForm, 0, "-99999999999999999999999999999999999999"},
		{"99999999999999999999999999999999999999", execForm, 0, "99999999999999999999999999999999999999"},
		{"99999999999999999999999999999999999999", execForm, 1, "range"},
		{"99999999999999999999999999999999999999.5", loadForm, 0, "range"}, // the carry makes 39
		{"9999999999999999999999999999999999999.95", loadForm, 1, "range"},
		{"123456789012345678901234567890.12345678", execForm, 8, "123456789012345678901234567890.12345678"},
		{"1e38", execForm, 0, "range"},
		{"1e37", execForm, 0, "10000000000000000000000000000000000000"},
		{"1e1000", execForm, 0, "range"},
		{"12345678901234", loadForm, 2, "12345678901234.00"}, // fits 38; DECIMAL(15,2) is the caller's check
		{"0000000000000000000000000000000000000000001.5", loadForm, 1, "1.5"},
		{fortyNine, loadForm, 0, "range"},
		{"1." + fortyNine, loadForm, 2, "1.12"}, // a long fraction is rounded, not refused
		{"1." + fortyNine, execForm, 2, "digits"},
		{"-9223372036854775808", loadForm, 0, "-9223372036854775808"},
		{"18446744073709551616", loadForm, 0, "18446744073709551616"}, // 2^64: the high word
		{"-18446744073709551616", loadForm, 0, "-18446744073709551616"},
		{"-18446744073709551615", loadForm, 0, "-18446744073709551615"},
		{"1.2.3", loadForm, 2, "syntax"},
		{"1e3", loadForm, 0, "syntax"},
		{"", loadForm, 0, "syntax"},
	} {
		v, err := Decimal([]byte(c.in), c.form, c.scale)
		got := errName(err)
		if err == nil {
			got = text(v, c.scale)
		}
		if got != c.want {
			t.Errorf("Decimal(%q, %+v, %d) = %s, want %s", c.in, c.form, c.scale, got, c.want)
		}
	}
}

func TestInt128Int64(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"9223372036854775807", true}, {"-9223372036854775808", true}, {"9223372036854775808", false}, {"-9223372036854775809", false}, {"0", true}, {"-1", true}} {
		v, err := Decimal([]byte(c.in), loadForm, 0)
		i, ok := v.Int64()
		if err != nil || ok != c.ok || ok && fmt.Sprint(i) != c.in {
			t.Errorf("%s: %d %v %v", c.in, i, ok, err)
		}
	}
}

// The forms of the callers: LOAD DATA's YYYY-MM-DD, DATE literals, exec's CAST.
var (
	loadDate = DateForm{Space: UnicodeSpace, Year4: true, MonthDay2: true}
	sqlDate  = DateForm{Space: UnicodeSpace, Year4: true}
	execDate = DateForm{Space: Blanks}
)

func TestDate(t *testing.T) {
	forms := map[string]DateForm{"load": loadDate, "sql": sqlDate, "exec": execDate}
	for _, c := range []struct {
		in   string
		want map[string]string // by form: the date, or the error; missing: as "all"
	}{
		{"1995-03-15", map[string]string{"all": "1995-03-15"}},
		{"1998-12-01", map[string]string{"all": "1998-12-01"}},
		{"0001-01-01", map[string]string{"all": "0001-01-01"}},
		{"9999-12-31", map[string]string{"all": "9999-12-31"}},
		{"2000-02-29", map[string]string{"all": "2000-02-29"}},
		{"2262-04-12", map[string]string{"all": "2262-04-12"}}, // beyond time.Duration
		{"1995-3-5", map[string]string{"all": "1995-03-05", "load": "syntax"}},
		{"1995-03-5", map[string]string{"all": "1995-03-05", "load": "syntax"}},
		{"95-01-01", map[string]string{"all": "syntax", "exec": "0095-01-01"}}, // no two-digit years
		{"1-01-01", map[string]string{"all": "syntax", "exec": "0001-01-01"}},
		{" 1995-03-15 ", map[string]string{"all": "1995-03-15"}},
		{"\t1995-03-15", map[string]string{"all": "1995-03-15", "exec": "syntax"}},
		{"\u00a01995-03-15\r\n", map[string]string{"all": "1995-03-15", "exec": "syntax"}},
		{"0000-00-00", map[string]string{"all": "range"}}, // the zero date
		{"0000-01-01", map[string]string{"all": "range"}},
		{"1995-00-10", map[string]string{"all": "range"}},
		{"1995-01-00", map[string]string{"all": "range"}},
		{"1995-02-29", map[string]string{"all": "range"}},
		{"1998-02-30", map[string]string{"all": "range"}},
		{"1995-13-01", map[string]string{"all": "range"}},
		{"2021-13-45", map[string]string{"all": "range"}},
		{"10000-01-01", map[string]string{"all": "syntax"}},
		{"19955-01-01", map[string]string{"all": "syntax"}},
		{"1995-001-01", map[string]string{"all": "syntax"}},
		{"1995-01-001", map[string]string{"all": "syntax"}},
		{"1995/01/01", map[string]string{"all": "syntax"}},
		{"1995-1", map[string]string{"all": "syntax"}},
		{"1995-01-", map[string]string{"all": "syntax"}},
		{"1995--01", map[string]string{"all": "syntax"}},
		{"-1995-01-01", map[string]string{"all": "syntax"}},
		{"1995-01-01-", map[string]string{"all": "syntax"}},
		{"1995-03-15x", map[string]string{"all": "syntax"}},
		{"1995-03-15 10:00:00", map[string]string{"all": "syntax"}},
		{"19950315", map[string]string{"all": "syntax"}},
		{"x", map[string]string{"all": "syntax"}},
		{"", map[string]string{"all": "syntax"}},
	} {
		for name, f := range forms {
			want, ok := c.want[name]
			if !ok {
				want = c.want["all"]
			}
			d, err := Date([]byte(c.in), f)
			got := errName(err)
			if err == nil {
				got = civil.Format(d)
			}
			if got != want {
				t.Errorf("Date(%q, %s) = %s, want %s", c.in, name, got, want)
			}
		}
	}
}

// TestNoAllocs: the readers allocate nothing, on good text or bad.
func TestNoAllocs(t *testing.T) {
	good := [][]byte{[]byte(" 123456789 "), []byte("-90123.455"), []byte("1998-12-01"), []byte("1.5e3")}
	bad := [][]byte{[]byte("x"), []byte("1.2.3"), []byte("1998-02-30")}
	for _, in := range append(good, bad...) {
		if n := testing.AllocsPerRun(100, func() {
			Int(in, UnicodeSpace)
			IntPrefix(in, BlanksTabs)
			Decimal(in, execForm, 2)
			Decimal(in, loadForm, 2)
			Date(in, loadDate)
			Date(in, execDate)
		}); n != 0 {
			t.Errorf("%q: %v allocations", in, n)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	i, d, dt := []byte("123456789"), []byte("90123.45"), []byte("1998-12-01")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Int(i, UnicodeSpace); err != nil {
			b.Fatal(err)
		}
		if _, err := Decimal(d, loadForm, 2); err != nil {
			b.Fatal(err)
		}
		if _, err := Date(dt, loadDate); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDatetime: a date alone is its midnight; a time of day follows ' ' or 'T' with one or
// two digits a part, seconds optional, up to six fraction digits kept (more dropped); an
// hour past 23 or a minute or second past 59 is out of range; anything else is malformed.
// The microseconds spell back through civil.FormatDatetime.
func TestDatetime(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2024-01-02", "2024-01-02 00:00:00.000000"},
		{"2024-01-02 10:30:00", "2024-01-02 10:30:00.000000"},
		{"2024-01-02T10:30", "2024-01-02 10:30:00.000000"},
		{" 2024-01-02 1:2:3 ", "2024-01-02 01:02:03.000000"},
		{"2024-01-02 10:30:00.5", "2024-01-02 10:30:00.500000"},
		{"2024-01-02 10:30:00.123456789", "2024-01-02 10:30:00.123456"},
		{"1969-12-31 23:59:59.999999", "1969-12-31 23:59:59.999999"},
		{"0001-01-01 00:00:00", "0001-01-01 00:00:00.000000"},
		{"9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999"},
		{"2024-01-02 24:00:00", "range"},
		{"2024-01-02 10:60:00", "range"},
		{"2024-02-30 10:00:00", "range"},
		{"2024-01-02 10", "syntax"},
		{"2024-01-02 10:30:00.", "syntax"},
		{"2024-01-02 10:30:00:00", "syntax"},
		{"2024-01-02 100:30", "syntax"},
		{"2024-01-02  10:30", "syntax"},
		{"2024-01-02 10:30 pm", "syntax"},
		{"", "syntax"},
	} {
		us, err := Datetime([]byte(c.in), DateForm{Space: Blanks, Year4: true})
		got := errName(err)
		if err == nil {
			got = civil.FormatDatetime(us, 6)
		}
		if got != c.want {
			t.Errorf("Datetime(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := civil.FormatDatetime(civil.TruncateMicros(-1, 3), 3); got != "1969-12-31 23:59:59.999" {
		t.Errorf("truncating before the epoch: %s", got)
	}
}
