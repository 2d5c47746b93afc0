package plan

import (
	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/sql/types"
)

// NotNull returns the output columns of n that can never be NULL, derived from the stored
// columns' nullability, the joins that can add NULLs, and the conditions that reject them.
func NotNull(n Node, md *Metadata) ColSet {
	switch x := n.(type) {
	case *Scan:
		var s ColSet
		for _, id := range x.Cols {
			if !md.Column(id).Nullable {
				s.Add(id)
			}
		}
		return s
	case *Values:
		var s ColSet
		for i, id := range x.Cols {
			all := len(x.Rows) > 0
			for _, r := range x.Rows {
				all = all && ExprNotNull(r[i], ColSet{})
			}
			if all {
				s.Add(id)
			}
		}
		return s
	case *Filter:
		s := NotNull(x.Input, md)
		for _, c := range x.Conds {
			s.UnionWith(NullRejected(c))
		}
		return s.Intersection(OutputSet(x))
	case *Project:
		in := NotNull(x.Input, md)
		var s ColSet
		for i, e := range x.Exprs {
			if ExprNotNull(e, in) {
				s.Add(x.Cols[i])
			}
		}
		return s
	case *Join:
		l := NotNull(x.Left, md)
		switch x.Kind {
		case InnerJoin:
			s := l.Union(NotNull(x.Right, md))
			for _, c := range x.On {
				s.UnionWith(NullRejected(c))
			}
			return s.Intersection(OutputSet(x))
		case SemiJoin:
			s := l.Copy()
			for _, c := range x.On {
				s.UnionWith(NullRejected(c))
			}
			return s.Intersection(OutputSet(x))
		case MarkJoin:
			if x.MarkCond == nil {
				s := l.Copy()
				s.Add(x.Mark)
				return s
			}
		}
		return l
	case *Aggregate:
		in := NotNull(x.Input, md)
		var s ColSet
		for i, g := range x.Groups {
			if ExprNotNull(g, in) {
				s.Add(x.GroupCols[i])
			}
		}
		for i, a := range x.Aggs {
			if a.Fn == AggCount || a.Fn == AggCountStar {
				s.Add(x.AggCols[i])
			}
		}
		return s
	}
	ins := n.Inputs()
	if len(ins) == 1 {
		return NotNull(ins[0], md).Intersection(OutputSet(n))
	}
	return ColSet{}
}

// ExprNotNull reports whether e is never NULL when the columns in notNull are not.
func ExprNotNull(e Expr, notNull ColSet) bool {
	switch x := e.(type) {
	case *ColumnRef:
		return notNull.Has(x.ID)
	case *Literal:
		return !x.V.Null
	case *Cast:
		return ExprNotNull(x.Arg, notNull) && !((x.T.Kind == types.Date || x.T.Kind == types.Datetime) && x.Arg.Type().IsString())
	case *Case:
		if x.Else == nil || !ExprNotNull(x.Else, notNull) {
			return false
		}
		for _, w := range x.Whens {
			if !ExprNotNull(w.Then, notNull) {
				return false
			}
		}
		return true
	case *AggCall:
		return x.Fn == AggCount || x.Fn == AggCountStar
	case *Subquery:
		return x.Kind == SubqueryExists
	case *Call:
		if d := x.Fn.Def(); d != nil {
			switch d.Nulls {
			case fn.Partial:
				return false // NULL for some non-NULL arguments: SQRT(-1), LN(0)
			case fn.NeverNull:
				return true // SLEEP of NULL is an error, not NULL
			}
		}
		switch x.Fn {
		case FnDiv, FnIntDiv, FnMod, FnAddDays, FnAddMonths, FnAddSeconds, FnAddMicros:
			// NULL for some non-NULL arguments: x/0, a date out of range.
			return false
		case FnIsNull, FnIsTrue, FnIsFalse, FnNullSafeEq:
			return true
		case FnCoalesce:
			for _, a := range x.Args {
				if ExprNotNull(a, notNull) {
					return true
				}
			}
			return false
		}
		for _, a := range x.Args {
			if !ExprNotNull(a, notNull) {
				return false
			}
		}
		return true
	}
	return false
}

// strict reports the operators and functions that give NULL (or fail) whenever an argument
// is NULL: every function of the registry (fn.Nulls), and the operators but these.
func strict(f Func) bool {
	switch f {
	case FnAnd, FnOr, FnXor, FnIsNull, FnIsTrue, FnIsFalse, FnNullSafeEq, FnCoalesce, FnIn:
		return false
	}
	return true
}

// NullRejected returns the columns that cannot be NULL in a row for which condition e is
// TRUE: e is FALSE or NULL whenever one of them is NULL.
func NullRejected(e Expr) ColSet {
	var s ColSet
	switch x := e.(type) {
	case *Call:
		switch x.Fn {
		case FnAnd:
			for _, a := range x.Args {
				s.UnionWith(NullRejected(a))
			}
			return s
		case FnOr:
			s = NullRejected(x.Args[0])
			for _, a := range x.Args[1:] {
				s = s.Intersection(NullRejected(a))
			}
			return s
		case FnIn:
			// The probe must not be NULL for IN to be TRUE.
			return strictRefs(x.Args[0])
		case FnIsTrue:
			return NullRejected(x.Args[0])
		}
		if x.Fn.IsComparison() && x.Fn != FnNullSafeEq || x.Fn == FnLike {
			for _, a := range x.Args {
				s.UnionWith(strictRefs(a))
			}
		}
	}
	return s
}

// strictRefs returns the columns whose NULL makes e NULL.
func strictRefs(e Expr) ColSet {
	var s ColSet
	switch x := e.(type) {
	case *ColumnRef:
		s.Add(x.ID)
	case *Cast:
		return strictRefs(x.Arg)
	case *Call:
		if strict(x.Fn) {
			for _, a := range x.Args {
				s.UnionWith(strictRefs(a))
			}
		}
	}
	return s
}
