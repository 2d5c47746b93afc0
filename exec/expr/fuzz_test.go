package expr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// FuzzExpr parses, compiles and evaluates arbitrary expressions (seeded with the
// data-driven cases) over a table with NULLs: errors are fine, panics are not.
func FuzzExpr(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, file := range files {
		raw, _ := os.ReadFile(file)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "(") && !strings.Contains(line, "->") {
				f.Add(line)
			}
		}
	}
	tab, err := vec.ParseTable(`a:decimal(15,2) i:int64 j:int32 d:date s:string f:double b:bool w:decimal(38,3)
1.50 | 7 | 3 | 1995-03-15 | abc | 1.5 | true | 12345678901234567890.123
NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL
-99999999999.99 | 9223372036854775807 | -2147483648 | 9999-12-31 | '' | 0 | false | -0.001
`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src, tab.Names)
		if err != nil {
			return
		}
		ev, err := Compile(e, tab.Types)
		if err != nil {
			return
		}
		b := tab.Batch(0, len(tab.Rows))
		if _, err := ev.Eval(context.Background(), b); err != nil {
			return
		}
		b.Sel = []int32{0, 2}
		ev.Eval(context.Background(), b)
		if ev.Type().ID == vec.Bool {
			fl, err := CompileFilter(e, tab.Types)
			if err != nil {
				t.Fatalf("%s compiles but its filter does not: %v", e, err)
			}
			fl.Select(context.Background(), b)
		}
	})
}
