package fold_test

import (
	"testing"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/sql/fold"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/types"
)

func TestFoldAndEval(t *testing.T) {
	md := plan.NewMetadata()
	x := md.Ref(md.Add(plan.ColumnMeta{Name: "x", Type: types.BoolType}))
	d, _ := types.ParseDate("1998-12-01")
	sub := &plan.Call{Fn: plan.FnAddDays, Args: []plan.Expr{plan.Lit(types.DateValue(d)), plan.Lit(types.IntValue(-90))}, T: types.DateType}
	if got := plan.FormatExpr(fold.Expr(sub), md); got != "date '1998-09-02'" {
		t.Errorf("fold date arithmetic: %s", got)
	}
	f := plan.NewBool(plan.FnOr, plan.NewBool(plan.FnEq, plan.Lit(types.IntValue(1)), plan.Lit(types.IntValue(2))), x)
	if got := plan.FormatExpr(fold.Expr(f), md); got != "x" {
		t.Errorf("FALSE OR x folds to %s", got)
	}
	// NULL AND FALSE is FALSE; NULL OR TRUE is TRUE; NOT NULL is NULL.
	null := plan.Lit(types.NullValue(types.BoolType))
	cases := []struct {
		e    plan.Expr
		want string
	}{
		{plan.NewBool(plan.FnAnd, null, plan.Lit(types.BoolValue(false))), "FALSE"},
		{plan.NewBool(plan.FnOr, null, plan.Lit(types.BoolValue(true))), "TRUE"},
		{plan.Not(null), "NULL"},
		{plan.NewBool(plan.FnIn, plan.Lit(types.IntValue(3)), plan.Lit(types.IntValue(1)), plan.Lit(types.NullValue(types.Int64Type))), "NULL"},
		{plan.NewBool(plan.FnIn, plan.Lit(types.IntValue(1)), plan.Lit(types.IntValue(1)), plan.Lit(types.NullValue(types.Int64Type))), "TRUE"},
		{&plan.Call{Fn: plan.Named(fn.Named("substring")), Args: []plan.Expr{plan.Lit(types.StringValue("13-555")), plan.Lit(types.IntValue(1)), plan.Lit(types.IntValue(2))}, T: types.VarcharType(2)}, "'13'"},
		{&plan.Call{Fn: plan.Named(fn.Named("year")), Args: []plan.Expr{plan.Lit(types.DateValue(d))}, T: types.Int64Type}, "1998"},
	}
	for _, c := range cases {
		v, err := fold.Eval(c.e)
		if err != nil || v.String() != c.want {
			t.Errorf("Eval(%s) = %s, %v; want %s", plan.Key(c.e), v, err, c.want)
		}
	}
	if _, err := fold.Eval(x); err == nil {
		t.Error("a column evaluated as a constant")
	}
}
