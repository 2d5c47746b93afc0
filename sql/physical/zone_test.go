package physical

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/types"
)

func TestZonePredicates(t *testing.T) {
	md := plan.NewMetadata()
	qty := md.Add(plan.ColumnMeta{Name: "qty", Type: types.Dec(15, 2)})
	day := md.Add(plan.ColumnMeta{Name: "day", Type: types.DateType})
	key := md.Add(plan.ColumnMeta{Name: "key", Type: types.Int64Type})
	name := md.Add(plan.ColumnMeta{Name: "name", Type: types.CharType(10)})
	other := md.Add(plan.ColumnMeta{Name: "other", Type: types.Int64Type})
	cols := []plan.ColumnID{qty, day, key, name}
	ref := md.Ref
	lit := func(v types.Value) plan.Expr { return plan.Lit(v) }
	dec := func(u int64, s int) types.Value { return types.DecimalValue(big.NewInt(u), types.Dec(15, s)) }
	cases := []struct {
		e    plan.Expr
		want string
	}{
		{plan.NewBool(plan.FnLt, ref(qty), lit(dec(2400, 2))), "#0 < 24.00"},
		{plan.NewBool(plan.FnGe, lit(types.DateValue(9131)), ref(day)), "#1 <= 1995-01-01"},
		{plan.NewBool(plan.FnAnd, plan.NewBool(plan.FnGt, ref(key), lit(types.IntValue(5))),
			plan.NewBool(plan.FnEq, ref(name), lit(types.StringValue("x")))), "#2 > 5, #3 = x"},
		{plan.NewBool(plan.FnIn, ref(key), lit(types.IntValue(7)), lit(types.IntValue(3)), lit(types.IntValue(9))), "#2 >= 3, #2 <= 9"},
		// A widening cast keeps the order; a narrowing one may not.
		{plan.NewBool(plan.FnGt, &plan.Cast{Arg: ref(qty), T: types.Dec(38, 6)}, lit(dec(1, 0))), "#0 > 1"},
		{plan.NewBool(plan.FnGt, &plan.Cast{Arg: ref(key), T: types.Int32Type}, lit(types.IntValue(1))), ""},
		// Not usable: a column of another scan, two columns, OR, a NULL bound.
		{plan.NewBool(plan.FnEq, ref(other), lit(types.IntValue(1))), ""},
		{plan.NewBool(plan.FnLt, ref(key), ref(other)), ""},
		{plan.NewBool(plan.FnOr, plan.NewBool(plan.FnLt, ref(key), lit(types.IntValue(1))), plan.NewBool(plan.FnGt, ref(key), lit(types.IntValue(9)))), ""},
		{plan.NewBool(plan.FnLt, ref(key), lit(types.NullValue(types.Int64Type))), ""},
	}
	for i, c := range cases {
		var got []string
		for _, z := range zonePredicates(c.e, cols) {
			got = append(got, fmt.Sprintf("#%d %s %s", z.Col, z.Op, z.Value))
		}
		if g := strings.Join(got, ", "); g != c.want {
			t.Errorf("case %d: %q, want %q", i, g, c.want)
		}
	}
}
