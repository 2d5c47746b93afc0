package expr

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// funcSources are the string, date-part and double functions whose kernels must run
// without allocating once their output buffers have grown.
var funcSources = []string{
	"(left s n)", "(right s 3)", "(replace s 'é' 'ee')", "(reverse s)", "(strcmp s 'm')",
	"(extract quarter d)", "(extract week d)", "(extract dayofweek d)", "(extract weekday d)",
	"(extract dayofyear d)", "(extract year_month d)",
	"(sign f)", "(sign a)", "(sqrt f)", "(exp (/ f 1000))", "(ln f)", "(log2 f)", "(log10 f)",
	"(pow f 1.7)",
}

// funcBatch is a batch of n rows: a UTF-8 string, a count, a date, a double and a decimal,
// with NULLs.
func funcBatch(t testing.TB, n int) (*vec.Batch, []vec.Type, []string) {
	var sb strings.Builder
	sb.WriteString("s:string n:int64 d:date f:double a:decimal(15,2)\n")
	for i := range n {
		if i%17 == 0 {
			sb.WriteString("NULL | NULL | NULL | NULL | NULL\n")
			continue
		}
		fmt.Fprintf(&sb, "naïve café %d | %d | 1996-%02d-%02d | %d.25 | -%d.50\n", i, i%13-2, i%12+1, i%28+1, i, i)
	}
	tab, err := vec.ParseTable(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	return tab.Batch(0, n), tab.Types, tab.Names
}

func TestFuncsDoNotAllocate(t *testing.T) {
	b, types, names := funcBatch(t, 1024)
	for _, src := range funcSources {
		e, err := Parse(src, names)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Compile(e, types)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if _, err := ev.Eval(context.Background(), b); err != nil { // grows the output buffers
			t.Fatalf("%s: %v", src, err)
		}
		if n := testing.AllocsPerRun(10, func() {
			if _, err := ev.Eval(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per batch", src, n)
		}
	}
}

// BenchmarkFuncs times the kernels on a batch of 8192 rows.
func BenchmarkFuncs(b *testing.B) {
	const n = 8192
	batch, types, names := funcBatch(b, n)
	for _, src := range funcSources {
		b.Run(src, func(b *testing.B) { benchEval(b, src, names, types, batch, n) })
	}
}
