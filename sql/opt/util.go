package opt

import (
	"errors"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
)

func asSQLErr(err error, se **sqlerr.Error) bool { return errors.As(err, se) }

// conjunctsOf flattens a list of conditions into conjuncts.
func conjunctsOf(es []plan.Expr) []plan.Expr {
	var out []plan.Expr
	for _, e := range es {
		out = append(out, plan.Conjuncts(e)...)
	}
	return out
}
