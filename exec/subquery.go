package exec

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/vec"
)

// errSubqueryRows is the error of a scalar subquery that returns more than one row
// (MySQL error 1242, SQLSTATE 21000).
func errSubqueryRows() error {
	return &vec.Error{Code: vec.CodeSubqueryRows, SQLState: "21000", Msg: "Subquery returns more than 1 row"}
}

// SingleRow runs op and returns its only row (nil when it has no rows); more than one row
// is MySQL's error 1242. It initialises and closes op, and stops reading at the second row.
func SingleRow(ctx context.Context, op Operator) ([]vec.Datum, error) {
	if err := op.Init(ctx); err != nil {
		op.Close()
		return nil, err
	}
	var row []vec.Datum
	for {
		b, err := op.Next(ctx)
		if err != nil {
			op.Close()
			return nil, err
		}
		if b == nil {
			break
		}
		if row != nil || b.Len() > 1 {
			op.Close()
			return nil, errSubqueryRows()
		}
		i := 0
		if b.Sel != nil {
			i = int(b.Sel[0])
		}
		row = make([]vec.Datum, len(b.Cols))
		for c, v := range b.Cols {
			row[c] = v.Datum(i)
		}
	}
	return row, op.Close()
}

// ScalarSubquery runs a one-column operator as a scalar subquery: its value, NULL (of the
// column's type) when it has no rows, error 1242 when it has more than one. The planner
// substitutes the result as a constant (expr.Const) into the outer query.
func ScalarSubquery(ctx context.Context, op Operator) (vec.Datum, error) {
	types := op.Types()
	if len(types) != 1 {
		op.Close()
		return vec.Datum{}, fmt.Errorf("scalar subquery has %d columns, needs 1", len(types))
	}
	row, err := SingleRow(ctx, op)
	if err != nil {
		return vec.Datum{}, err
	}
	if row == nil {
		return vec.NullDatum(types[0]), nil
	}
	return row[0], nil
}
