package physical

import (
	"fmt"

	"github.com/colinkdb/colink/sql/plan"
)

// RowIDColumn is the name under which a fragment's scan reads the row-identity pseudo column
// (plan.RowIDOrdinal): storage's row ID, which a DELETE hands back to the primproc that
// produced it (storage.RowIDColumn; primproc/link.RowIDColumn).
const RowIDColumn = "_rowid"

// isRowID reports whether column id of scan s is the row-identity pseudo column.
func isRowID(s *plan.Scan, id plan.ColumnID) bool {
	for i, c := range s.Cols {
		if c == id {
			return s.Ordinals[i] == plan.RowIDOrdinal
		}
	}
	return false
}

// DML operations.
const (
	Insert = "insert"
	Delete = "delete"
)

// DML is the physical plan of an INSERT or DELETE. Input is an ordinary plan whose result
// is what the statement writes: for an insert, the rows to add, one column per table column
// in the table's order and of its type (named after the columns); for a delete, the row IDs
// of the rows to remove, one BIGINT column named RowIDColumn. The caller runs Input and hands
// its rows to the primprocs.
type DML struct {
	Op        string // Insert or Delete
	DB, Table string
	Input     *Plan
}

// BuildDML cuts an optimised INSERT or DELETE (a plan.Insert or plan.Delete at the root)
// into its physical plan.
func BuildDML(q *plan.Query, opts Options) (*DML, error) {
	var d DML
	in := &plan.Query{MD: q.MD}
	switch root := q.Root.(type) {
	case *plan.Insert:
		d.Op, d.DB, d.Table = Insert, root.DB, root.Table
		in.Root = root.Input
		for _, id := range root.Input.Output() {
			in.Names = append(in.Names, q.MD.Column(id).Name)
		}
	case *plan.Delete:
		d.Op, d.DB, d.Table = Delete, root.DB, root.Table
		out := root.Input.Output()
		if len(out) != 1 || out[0] != root.RowID {
			return nil, fmt.Errorf("physical: the delete's input yields %d columns, not its row IDs", len(out))
		}
		in.Root = root.Input
		in.Names = []string{RowIDColumn}
	default:
		return nil, fmt.Errorf("physical: %T is not an INSERT or DELETE", q.Root)
	}
	p, err := Build(in, opts)
	if err != nil {
		return nil, err
	}
	d.Input = p
	return &d, nil
}

// Explain prints the statement and its input plan.
func (d *DML) Explain() string {
	verb := "Insert into "
	if d.Op == Delete {
		verb = "Delete from "
	}
	return verb + d.DB + "." + d.Table + "  (exemgr → primprocs: write)\n" + d.Input.Explain()
}
