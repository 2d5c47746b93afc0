package opt

import (
	"github.com/colinkdb/colink/sql/fold"
	"github.com/colinkdb/colink/sql/plan"
)

// FoldConstants evaluates the parts of expressions that read no columns (date '1998-12-01'
// - interval '90' day becomes date '1998-09-02'), simplifies AND, OR, NOT and CASE around
// constant conditions, and drops conditions that are always true (and Filters left empty).
// A constant that cannot be evaluated (BIGINT overflow, MySQL's error 1690) fails the query.
type FoldConstants struct{}

// Name implements Rule.
func (FoldConstants) Name() string { return "fold-constants" }

// Apply implements Rule.
func (FoldConstants) Apply(c *Context, root plan.Node) (plan.Node, error) {
	root = fold.Plan(root)
	return root, fold.ConstantError(root)
}
