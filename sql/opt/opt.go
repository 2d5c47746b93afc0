// Package opt owns the optimiser: rules that rewrite a bound logical plan, each a small
// named value, applied in order. The default rules decorrelate subqueries into joins, fold
// constants, push predicates down into scans and join sides, order joins by estimated
// cardinality, prune unused columns, and choose for each join between a PM join (broadcast
// the small side to every primproc) and a UM join (stream both sides to exemgr), building
// the side whose choice costs less CPU (hashed rows weigh more than shipped bytes; see
// ChooseJoinStrategy).
package opt

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// DefaultPmMaxMemorySmallSide is the largest estimated build side, in bytes, that a PM
// join broadcasts to the primprocs. ColumnStore's PmMaxMemorySmallSide defaults to 64 MiB;
// colink's estimates run high on filtered joins (Q3's orders of customers at SF 10, 23 MB
// on the link, was estimated past 64 MiB and joined in exemgr: 2.6 s, against 0.5–0.7 s
// as a PM join), and a build side costs a primproc about three times its bytes, within its
// query memory, so the default is 256 MiB.
const DefaultPmMaxMemorySmallSide = 256 << 20

// Options tune the optimiser.
type Options struct {
	// PmMaxMemorySmallSide is the largest estimated build side, in bytes, of a PM join;
	// zero means DefaultPmMaxMemorySmallSide.
	PmMaxMemorySmallSide int64
	// Primprocs is the number of primprocs a PM join's build side is broadcast to and
	// hashed on, for the cost of choosing it (0 means 1).
	Primprocs int
}

// Context is what rules see besides the plan: the query's column metadata, statistics and
// options. It also caches cardinality estimates, so use one Context per query.
type Context struct {
	MD    *plan.Metadata
	Stats catalog.Stats
	Opts  Options
}

// Rule is one rewrite of the plan.
type Rule interface {
	Name() string
	Apply(c *Context, root plan.Node) (plan.Node, error)
}

// DefaultRules returns the rules Optimize applies, in order.
func DefaultRules() []Rule {
	return []Rule{
		Decorrelate{},
		FoldConstants{},
		PushDownPredicates{},
		ReorderJoins{},
		ReduceGroupedJoins{},
		PruneColumns{},
		ChooseJoinStrategy{},
	}
}

// RuleByName returns one of the default rules.
func RuleByName(name string) (Rule, bool) {
	for _, r := range DefaultRules() {
		if r.Name() == name {
			return r, true
		}
	}
	return nil, false
}

// Optimize applies the rules to a query's plan in order.
func Optimize(ctx context.Context, c *Context, q *plan.Query, rules []Rule) (*plan.Query, error) {
	root := q.Root
	for _, r := range rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		root, err = r.Apply(c, root)
		if err != nil {
			var se *sqlerr.Error
			if asSQLErr(err, &se) {
				return nil, se
			}
			return nil, fmt.Errorf("opt: rule %s: %w", r.Name(), err)
		}
	}
	out := *q
	out.Root = root
	return &out, nil
}
