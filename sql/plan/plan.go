// Package plan owns colink's logical query plan: the nodes a SELECT becomes (Scan, Values,
// Filter, Project, Join, Aggregate, Distinct, Sort, Limit), the typed expressions they
// evaluate, the query-wide column identities that connect them, and how a plan prints
// itself (EXPLAIN).
//
// Every column a node produces has a ColumnID unique within the query; a ColumnRef names a
// column by that ID, so rules can move expressions between nodes without renumbering.
// A Project that passes a column through keeps its ID; computed columns get new IDs. Before
// execution, Resolve turns ColumnRefs into InputRefs: positions in the node's input.
//
// Plans are built per query and rewritten in place by the optimiser's rules; they are not
// safe for concurrent use.
package plan

import (
	"github.com/colinkdb/colink/sql/types"
)

// ColumnID identifies a column within one query. Zero is no column.
type ColumnID int32

// ColumnMeta describes a column of the query.
type ColumnMeta struct {
	ID ColumnID
	// Name is the column's name, or an expression's text for a computed column.
	Name string
	// Table is the qualifier the query used for the column's table (its alias), "" for a
	// computed column.
	Table string
	Type  types.Type
	// Nullable is false when the column can never hold NULL where it is produced.
	Nullable bool
	// DB, BaseTable and BaseColumn name the stored column a scan column reads, for
	// statistics; empty for computed columns.
	DB, BaseTable, BaseColumn string
}

// Metadata records every column of a query.
type Metadata struct {
	cols []ColumnMeta
}

// NewMetadata returns empty metadata.
func NewMetadata() *Metadata { return &Metadata{} }

// Add registers a column and returns its new ID.
func (m *Metadata) Add(c ColumnMeta) ColumnID {
	c.ID = ColumnID(len(m.cols) + 1)
	m.cols = append(m.cols, c)
	return c.ID
}

// Column returns a column's description.
func (m *Metadata) Column(id ColumnID) *ColumnMeta { return &m.cols[id-1] }

// NumColumns is the number of columns registered.
func (m *Metadata) NumColumns() int { return len(m.cols) }

// Ref returns a reference to a column.
func (m *Metadata) Ref(id ColumnID) *ColumnRef {
	return &ColumnRef{ID: id, T: m.Column(id).Type}
}

// Query is a bound SELECT: its plan, the names of its result columns (which are the root's
// output columns, in order) and its column metadata.
type Query struct {
	Root  Node
	Names []string
	MD    *Metadata
}

// Estimate is what the optimiser estimated about a node's output.
type Estimate struct {
	Rows  float64
	Valid bool
}

// Node is a logical plan operator.
type Node interface {
	// Inputs lists the node's input nodes.
	Inputs() []Node
	// SetInput replaces input i.
	SetInput(i int, n Node)
	// Output lists the columns the node produces, in order.
	Output() []ColumnID
	// Est gives access to the node's cardinality estimate.
	Est() *Estimate
}

// Scan reads a stored table: the columns Cols (Ordinals are their positions in the table),
// keeping only rows for which every condition in Filters holds. Filters may read columns
// that Cols does not output.
type Scan struct {
	DB, Table, Alias string
	Cols             []ColumnID
	Ordinals         []int
	Filters          []Expr
	est              Estimate
}

// Values produces literal rows; with no columns and one row it is the FROM of "SELECT 1".
type Values struct {
	Cols []ColumnID
	Rows [][]Expr
	est  Estimate
}

// Filter keeps the input rows for which every condition holds.
type Filter struct {
	Input Node
	Conds []Expr
	est   Estimate
}

// Project computes Exprs over each input row; Cols[i] is the ID of Exprs[i] (the input's ID
// when Exprs[i] is a plain column reference).
type Project struct {
	Input Node
	Exprs []Expr
	Cols  []ColumnID
	est   Estimate
}

// JoinKind is the kind of a join.
type JoinKind uint8

// The join kinds.
const (
	// InnerJoin outputs left ++ right columns of the pairs that satisfy On (all pairs with
	// no condition).
	InnerJoin JoinKind = iota + 1
	// LeftJoin also outputs each left row without a match, with NULL right columns.
	LeftJoin
	// SemiJoin outputs the left rows that have a match; left columns only.
	SemiJoin
	// AntiJoin outputs the left rows that have no match; left columns only.
	AntiJoin
	// MarkJoin outputs every left row plus the boolean column Mark. Among the right rows
	// that satisfy On, Mark is the three-valued OR of MarkCond (FALSE when there are none):
	// TRUE if one matches, else NULL if one compared with a NULL, else FALSE — the value of
	// "x IN (subquery)". Without MarkCond, Mark is whether any right row satisfies On
	// (EXISTS).
	MarkJoin
	// SingleJoin is a LeftJoin where a left row may match at most one right row; a second
	// match is an error (a scalar subquery that returns more than one row).
	SingleJoin
)

var joinKindNames = map[JoinKind]string{InnerJoin: "inner", LeftJoin: "left", SemiJoin: "semi",
	AntiJoin: "anti", MarkJoin: "mark", SingleJoin: "single"}

func (k JoinKind) String() string { return joinKindNames[k] }

// Strategy says where a join runs.
type Strategy uint8

// The join strategies.
const (
	// StrategyUnset: not decided yet.
	StrategyUnset Strategy = iota
	// PMJoin broadcasts the build side to every primproc, which probes it with the rows of
	// the probe side as it scans them (ColumnStore's PM join). The probe side must run on the
	// primprocs and the build side must fit under the small-side limit.
	PMJoin
	// UMJoin streams both sides to exemgr, which joins them (ColumnStore's UM join).
	UMJoin
)

func (s Strategy) String() string {
	switch s {
	case PMJoin:
		return "PM"
	case UMJoin:
		return "UM"
	}
	return "?"
}

// Side is a join input.
type Side uint8

// The join sides.
const (
	Right Side = iota
	Left
)

func (s Side) String() string {
	if s == Left {
		return "left"
	}
	return "right"
}

// Join combines two inputs. On is a list of conjuncts. Strategy and Build are decided by
// the optimiser: the build side is hashed, the other side probes it. Building the left
// side of a left, semi or anti join means the probe side records which build rows matched
// (the primprocs' match sets are merged when the join runs as a PM join).
type Join struct {
	Kind        JoinKind
	Left, Right Node
	On          []Expr
	Mark        ColumnID // MarkJoin's output column
	MarkCond    Expr     // MarkJoin's IN comparison, nil for EXISTS
	Strategy    Strategy
	Build       Side
	est         Estimate
}

// Aggregate groups its input by Groups and computes Aggs per group; it outputs GroupCols
// then AggCols. With no groups it outputs exactly one row, even for empty input.
type Aggregate struct {
	Input     Node
	Groups    []Expr
	GroupCols []ColumnID
	Aggs      []*AggCall
	AggCols   []ColumnID
	est       Estimate
}

// Distinct removes duplicate rows.
type Distinct struct {
	Input Node
	est   Estimate
}

// SortKey is an ORDER BY item. NULLs sort first ascending and last descending, as in MySQL.
type SortKey struct {
	Expr Expr
	Desc bool
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
	est   Estimate
}

// Limit skips Offset rows, then passes at most Count rows (Count < 0: no limit).
type Limit struct {
	Input         Node
	Offset, Count int64
	est           Estimate
}

func (n *Scan) Inputs() []Node      { return nil }
func (n *Values) Inputs() []Node    { return nil }
func (n *Filter) Inputs() []Node    { return []Node{n.Input} }
func (n *Project) Inputs() []Node   { return []Node{n.Input} }
func (n *Join) Inputs() []Node      { return []Node{n.Left, n.Right} }
func (n *Aggregate) Inputs() []Node { return []Node{n.Input} }
func (n *Distinct) Inputs() []Node  { return []Node{n.Input} }
func (n *Sort) Inputs() []Node      { return []Node{n.Input} }
func (n *Limit) Inputs() []Node     { return []Node{n.Input} }

func (n *Scan) SetInput(int, Node)        { panic("plan: Scan has no inputs") }
func (n *Values) SetInput(int, Node)      { panic("plan: Values has no inputs") }
func (n *Filter) SetInput(_ int, c Node)  { n.Input = c }
func (n *Project) SetInput(_ int, c Node) { n.Input = c }
func (n *Join) SetInput(i int, c Node) {
	if i == 0 {
		n.Left = c
	} else {
		n.Right = c
	}
}
func (n *Aggregate) SetInput(_ int, c Node) { n.Input = c }
func (n *Distinct) SetInput(_ int, c Node)  { n.Input = c }
func (n *Sort) SetInput(_ int, c Node)      { n.Input = c }
func (n *Limit) SetInput(_ int, c Node)     { n.Input = c }

func (n *Scan) Output() []ColumnID    { return n.Cols }
func (n *Values) Output() []ColumnID  { return n.Cols }
func (n *Filter) Output() []ColumnID  { return n.Input.Output() }
func (n *Project) Output() []ColumnID { return n.Cols }
func (n *Join) Output() []ColumnID {
	l := n.Left.Output()
	switch n.Kind {
	case SemiJoin, AntiJoin:
		return l
	case MarkJoin:
		return append(append([]ColumnID(nil), l...), n.Mark)
	}
	return append(append([]ColumnID(nil), l...), n.Right.Output()...)
}
func (n *Aggregate) Output() []ColumnID {
	return append(append([]ColumnID(nil), n.GroupCols...), n.AggCols...)
}
func (n *Distinct) Output() []ColumnID { return n.Input.Output() }
func (n *Sort) Output() []ColumnID     { return n.Input.Output() }
func (n *Limit) Output() []ColumnID    { return n.Input.Output() }

func (n *Scan) Est() *Estimate      { return &n.est }
func (n *Values) Est() *Estimate    { return &n.est }
func (n *Filter) Est() *Estimate    { return &n.est }
func (n *Project) Est() *Estimate   { return &n.est }
func (n *Join) Est() *Estimate      { return &n.est }
func (n *Aggregate) Est() *Estimate { return &n.est }
func (n *Distinct) Est() *Estimate  { return &n.est }
func (n *Sort) Est() *Estimate      { return &n.est }
func (n *Limit) Est() *Estimate     { return &n.est }
