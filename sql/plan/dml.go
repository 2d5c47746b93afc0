package plan

// RowIDOrdinal in Scan.Ordinals marks the row-identity pseudo column: an Int64 that the
// storage layer assigns to each stored row (its segment and position), which a Delete
// uses to name the rows it removes.
const RowIDOrdinal = -1

// Insert appends the rows of Input to a stored table. Input's columns are the table's
// columns, in the table's order and of their types. Insert outputs no columns; running it
// yields the number of rows inserted.
type Insert struct {
	DB, Table string
	Input     Node
	est       Estimate
}

// Delete removes from a stored table the rows whose identities Input produces in column
// RowID (a row-identity column of a Scan of that table). It outputs no columns; running it
// yields the number of rows deleted.
type Delete struct {
	DB, Table string
	Input     Node
	RowID     ColumnID
	est       Estimate
}

func (n *Insert) Inputs() []Node         { return []Node{n.Input} }
func (n *Delete) Inputs() []Node         { return []Node{n.Input} }
func (n *Insert) SetInput(_ int, c Node) { n.Input = c }
func (n *Delete) SetInput(_ int, c Node) { n.Input = c }
func (n *Insert) Output() []ColumnID     { return nil }
func (n *Delete) Output() []ColumnID     { return nil }
func (n *Insert) Est() *Estimate         { return &n.est }
func (n *Delete) Est() *Estimate         { return &n.est }
