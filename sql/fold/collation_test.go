package fold_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
)

// TestFoldedComparisonsMatchKernels checks that comparing two string constants folds to
// what the execution kernels compute for the same comparison over column data: colink's
// one collation is binary (byte order, trailing spaces significant) in both places.
func TestFoldedComparisonsMatchKernels(t *testing.T) {
	p := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	pairs := [][2]string{{"a", "a "}, {"a ", "a"}, {"a", "B"}, {"a", "A"}, {"", "  "}, {"é", "e"},
		{"b", "a"}, {"abc", "abc"}, {"ab", "abc"}, {"z", "é"}}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	for _, pair := range pairs {
		l, r := pair[0], pair[1]
		for _, op := range ops {
			q, err := planSelect(t, p, fmt.Sprintf("select '%s' %s '%s'", l, op, r))
			if err != nil {
				t.Fatal(err)
			}
			lit, ok := projectExprs(q)[0].(*plan.Literal)
			if !ok {
				t.Fatalf("'%s' %s '%s' did not fold", l, op, r)
			}
			folded, _ := lit.V.Truth()

			ev, err := expr.Compile(expr.MustParse(fmt.Sprintf("(%s s '%s')", op, r), []string{"s"}), []vec.Type{vec.StringType})
			if err != nil {
				t.Fatal(err)
			}
			b := vec.NewBatch([]vec.Type{vec.StringType})
			b.Cols[0].AppendDatum(vec.StringDatum(l))
			b.N = 1
			v, err := ev.Eval(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if kernel := v.Datum(0).Bool(); kernel != folded {
				t.Errorf("'%s' %s '%s': folded %v, kernel over a column %v", l, op, r, folded, kernel)
			}
		}
	}
}
