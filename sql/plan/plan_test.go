package plan

import (
	"testing"

	"github.com/colinkdb/colink/sql/types"
)

func TestColSet(t *testing.T) {
	a := MakeColSet(1, 5, 64, 130)
	b := MakeColSet(5, 130, 7)
	if got := a.Intersection(b).String(); got != "(5,130)" {
		t.Errorf("∩ = %s", got)
	}
	if got := a.Union(b).String(); got != "(1,5,7,64,130)" {
		t.Errorf("∪ = %s", got)
	}
	if got := a.Difference(b).String(); got != "(1,64)" {
		t.Errorf("\\ = %s", got)
	}
	if !MakeColSet(5).SubsetOf(a) || a.SubsetOf(b) || !a.Intersects(b) || a.Len() != 4 {
		t.Error("subset/intersects/len wrong")
	}
	c := a.Copy()
	c.Remove(64)
	if !a.Has(64) || c.Has(64) {
		t.Error("Copy shares storage")
	}
	var empty ColSet
	if !empty.Empty() || !empty.SubsetOf(a) || empty.Has(3) {
		t.Error("empty set wrong")
	}
}

func TestResolve(t *testing.T) {
	md := NewMetadata()
	x := md.Add(ColumnMeta{Name: "x", Type: types.Int64Type})
	y := md.Add(ColumnMeta{Name: "y", Type: types.Int64Type})
	e := &Call{Fn: FnAdd, Args: []Expr{md.Ref(x), md.Ref(y)}, T: types.Int64Type}
	r, err := Resolve(e, []ColumnID{y, x})
	if err != nil {
		t.Fatal(err)
	}
	c := r.(*Call)
	if c.Args[0].(*InputRef).Pos != 1 || c.Args[1].(*InputRef).Pos != 0 {
		t.Errorf("resolved to %s", Key(r))
	}
	if _, err := Resolve(e, []ColumnID{x}); err == nil {
		t.Error("a missing column resolved")
	}
	// The original is unchanged.
	if _, ok := e.Args[0].(*ColumnRef); !ok {
		t.Error("Resolve changed its argument")
	}
}

func TestNullRejected(t *testing.T) {
	md := NewMetadata()
	a := md.Ref(md.Add(ColumnMeta{Name: "a", Type: types.Int64Type}))
	b := md.Ref(md.Add(ColumnMeta{Name: "b", Type: types.Int64Type}))
	eq := NewBool(FnEq, a, b)
	if got := NullRejected(eq).String(); got != "(1,2)" {
		t.Errorf("a = b rejects %s", got)
	}
	isnull := NewBool(FnIsNull, b)
	if got := NullRejected(isnull); !got.Empty() {
		t.Errorf("b IS NULL rejects %s", got)
	}
	or := NewBool(FnOr, NewBool(FnGt, a, Lit(types.IntValue(1))), NewBool(FnLt, a, b))
	if got := NullRejected(or).String(); got != "(1)" {
		t.Errorf("a > 1 OR a < b rejects %s", got)
	}
	co := NewBool(FnEq, &Call{Fn: FnCoalesce, Args: []Expr{b, Lit(types.IntValue(0))}, T: types.Int64Type}, a)
	if got := NullRejected(co).String(); got != "(1)" {
		t.Errorf("coalesce(b, 0) = a rejects %s", got)
	}
}

func TestCheck(t *testing.T) {
	md := NewMetadata()
	a := md.Add(ColumnMeta{Name: "a", Table: "t", Type: types.Int64Type, BaseTable: "t", BaseColumn: "a"})
	b := md.Add(ColumnMeta{Name: "b", Table: "t", Type: types.Int64Type, BaseTable: "t", BaseColumn: "b"})
	scan := &Scan{Table: "t", Alias: "t", Cols: []ColumnID{a}, Ordinals: []int{0},
		Filters: []Expr{NewBool(FnGt, md.Ref(b), Lit(types.IntValue(1)))}}
	good := &Query{Root: &Project{Input: scan, Exprs: []Expr{md.Ref(a)}, Cols: []ColumnID{a}}, Names: []string{"a"}, MD: md}
	if err := Check(good); err != nil {
		t.Errorf("a valid plan: %v", err)
	}
	// b is filtered on but not produced: a Project cannot read it.
	bad := &Query{Root: &Project{Input: scan, Exprs: []Expr{md.Ref(b)}, Cols: []ColumnID{b}}, Names: []string{"b"}, MD: md}
	if err := Check(bad); err == nil {
		t.Error("a Project reading a pruned column passed")
	}
	sq := &Query{Root: &Filter{Input: scan, Conds: []Expr{&Subquery{Kind: SubqueryExists, Plan: scan, T: types.BoolType}}}, Names: []string{"a"}, MD: md}
	if err := Check(sq); err == nil {
		t.Error("a leftover subquery passed")
	}
}

func TestSplitJoin(t *testing.T) {
	md := NewMetadata()
	a := md.Add(ColumnMeta{Name: "a", Type: types.Int64Type})
	b := md.Add(ColumnMeta{Name: "b", Type: types.Int64Type})
	c := md.Add(ColumnMeta{Name: "c", Type: types.Int64Type})
	d := md.Add(ColumnMeta{Name: "d", Type: types.Int64Type})
	l := &Scan{Table: "l", Cols: []ColumnID{a, b}, Ordinals: []int{0, 1}}
	r := &Scan{Table: "r", Cols: []ColumnID{c, d}, Ordinals: []int{0, 1}}
	j := &Join{Kind: InnerJoin, Left: l, Right: r, On: []Expr{
		NewBool(FnEq, md.Ref(c), md.Ref(a)),              // key, sides swapped
		NewBool(FnNe, md.Ref(b), md.Ref(d)),              // residual
		NewBool(FnEq, md.Ref(a), md.Ref(b)),              // one side only: residual
		NewBool(FnEq, md.Ref(b), Lit(types.IntValue(1))), // constant: residual
		NewBool(FnEq, &Call{Fn: FnAdd, Args: []Expr{md.Ref(a), md.Ref(b)}, T: types.Int64Type}, md.Ref(d)),
	}}
	keys, rest := SplitJoin(j)
	if len(keys) != 2 || len(rest) != 3 {
		t.Fatalf("%d keys, %d residual", len(keys), len(rest))
	}
	if FormatExpr(keys[0].Left, md) != "a" || FormatExpr(keys[0].Right, md) != "c" {
		t.Errorf("first key %s = %s", FormatExpr(keys[0].Left, md), FormatExpr(keys[0].Right, md))
	}
	if FormatExpr(keys[1].Left, md) != "a + b" {
		t.Errorf("second key left %s", FormatExpr(keys[1].Left, md))
	}
}
