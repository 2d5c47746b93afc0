package fn

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// TestRegistry checks that every entry is complete and that every key finds it: its Name,
// each SQL name, its ID, and its IR spelling.
func TestRegistry(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("empty registry")
	}
	for i, f := range all {
		switch {
		case f.Name == "" || f.Typing == nil || f.Kernel == nil || len(f.Args) == 0:
			t.Errorf("%q: incomplete entry", f.Name)
		case f.MinArgs < 0 || (f.MaxArgs >= 0 && f.MaxArgs < f.MinArgs):
			t.Errorf("%s: arity %d..%d", f.Name, f.MinArgs, f.MaxArgs)
		}
		if f.ID() != i || ByID(i) != f || Named(f.Name) != f {
			t.Errorf("%s: ID %d, ByID and Named disagree", f.Name, f.ID())
		}
		for _, s := range f.SQL {
			if Lookup(s) != f {
				t.Errorf("%s: Lookup(%q) = %v", f.Name, s, Lookup(s))
			}
		}
		unit := ""
		if f.Family != "" {
			unit = f.Name
		}
		if m, ok := Member(f.Op(), unit); !ok || m != f {
			t.Errorf("%s: Member(%q, %q) = %v, %v", f.Name, f.Op(), unit, m, ok)
		}
	}
	if m, ok := Member("year", ""); !ok || m != nil {
		t.Error("a family member is callable by its own name in the IR")
	}
	if _, ok := Member("extract", "hour_minute"); ok {
		t.Error("extract has an hour_minute")
	}
	// exec's error for an unknown unit lists the family in this order.
	want := []string{"year", "month", "day", "quarter", "year_month", "week", "dayofweek", "weekday", "dayofyear",
		"hour", "minute", "second", "microsecond"}
	if got := Units("extract"); !slices.Equal(got, want) {
		t.Errorf("extract's units: %v, want %v", got, want)
	}
	if Lookup("log") != nil || Lookup("ifnull") != nil || Lookup("trim") != nil {
		t.Error("a name the binder's syntax owns is in the registry")
	}
}

// TestSigArity checks the arity errors exec reports, Mode arguments not counted.
func TestSigArity(t *testing.T) {
	d := vec.DateDatum(0)
	date := Arg{Type: Type{Type: vec.DateType}, Const: &d}
	for _, c := range []struct {
		f    string
		n    int
		want string
	}{
		{"concat", 0, "concat takes 1 or more arguments, has 0"},
		{"left", 1, "left takes 2 arguments, has 1"},
		{"week", 2, "extract takes 1 arguments, has 2"},
		{"substring", 4, "substring takes 2 or more arguments, has 4"},
	} {
		args := make([]Arg, c.n)
		for i := range args {
			args[i] = date
		}
		_, err := Named(c.f).Sig(args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s with %d arguments: %v, want %s", c.f, c.n, err, c.want)
		}
	}
}

// TestSigLengths checks the string lengths the binder reports: a result no longer than its
// string argument, nor than a constant count.
func TestSigLengths(t *testing.T) {
	str := func(n int) Arg { return Arg{Type: Type{Type: vec.StringType, Len: n}} }
	count := func(n int64) Arg {
		d := vec.Int64Datum(n)
		return Arg{Type: Type{Type: vec.Int64Type}, Const: &d}
	}
	lit := func(s string) Arg {
		d := vec.StringDatum(s)
		return Arg{Type: Type{Type: vec.StringType, Len: len(s)}, Const: &d}
	}
	for _, c := range []struct {
		f    string
		args []Arg
		want int
	}{
		{"left", []Arg{str(25), count(3)}, 3},
		{"left", []Arg{str(25), count(300)}, 25},
		{"right", []Arg{str(0), count(7)}, 7},
		{"left", []Arg{str(25), count(-1)}, 0},
		{"substring", []Arg{str(10), count(2), count(4)}, 4},
		{"substring", []Arg{str(10), count(2)}, 10},
		{"replace", []Arg{str(10), lit("ab"), lit("c")}, 10},
		{"replace", []Arg{str(10), lit("a"), lit("bc")}, 0},
		{"concat", []Arg{str(10), lit("ab")}, 12},
		{"upper", []Arg{str(8)}, 8},
	} {
		s, err := Named(c.f).Sig(c.args)
		if err != nil || s.Result.ID != vec.String || s.Result.Len != c.want {
			t.Errorf("%s: %+v, %v; want a string of %d", c.f, s.Result, err, c.want)
		}
	}
}

// TestFoldPolicy: the planner folds what it always folded, and never a volatile function.
func TestFoldPolicy(t *testing.T) {
	one, null, neg := vec.Int64Datum(1), vec.NullDatum(vec.Int64Type), vec.Int64Datum(-2)
	x := vec.MustParseDecimal("1234.5")
	for _, c := range []struct {
		f    string
		args []vec.Datum
		want bool
	}{
		{"upper", []vec.Datum{vec.StringDatum("a")}, true},
		{"sleep", []vec.Datum{vec.Float64Datum(0)}, false},
		{"truncate", []vec.Datum{x, one}, false},
		{"truncate", []vec.Datum{x, null}, true},
		{"round", []vec.Datum{x, one}, true},
		{"round", []vec.Datum{x, neg}, false},
		{"round", []vec.Datum{vec.Float64Datum(2.5), neg}, true},
		{"greatest", []vec.Datum{one, one}, false},
		{"greatest", []vec.Datum{one, null}, true},
	} {
		if got := Named(c.f).Folds(c.args); got != c.want {
			t.Errorf("%s%v folds: %v, want %v", c.f, c.args, got, c.want)
		}
	}
}

// TestGreatestLeastAreDeclaredOnce shows the registry's claim on GREATEST and LEAST: their
// names, arity, argument conversion, typing, kernel and folding are their two entries in
// table.go and nothing else. No Go source of the module outside this package names them —
// no identifier (ast.Greatest, FnLeast, OpGreatest) and no string — except where the binder
// calls them, as any caller may, through the registry by their SQL names
// (fn.Lookup("least"): date ± INTERVAL clamps a column's amount with them). Adding a
// function is therefore an entry here and its tests.
func TestGreatestLeastAreDeclaredOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	ident := regexp.MustCompile(`(?i)greatest|least`)
	str := regexp.MustCompile("(?i)^[\"`](greatest|least)[\"`]$")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module (bench/duckdb)
			}
			if rel, _ := filepath.Rel(root, path); rel == filepath.Join("exec", "fn") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0) // comments are skipped
		var last []string                                     // the tokens before the current one
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			switch {
			case tok == token.IDENT && ident.MatchString(lit) && lit != "atLeast":
				t.Errorf("%s: identifier %s", fset.Position(pos), lit)
			case tok == token.STRING && str.MatchString(lit):
				if !slices.Equal(last, []string{"fn", ".", "Lookup", "("}) {
					t.Errorf("%s: string %s, not a call through fn.Lookup", fset.Position(pos), lit)
				}
			}
			if lit == "" {
				lit = tok.String()
			}
			last = append(last, lit)
			if len(last) > 4 {
				last = last[1:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"greatest", "least"} {
		if f := Lookup(n); f == nil || f.Name != n || f.Kernel == nil {
			t.Errorf("%s is not in the registry", n)
		}
	}
}
