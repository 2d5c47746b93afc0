package link

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Placement of inserted rows. A row inserted by SQL (INSERT, LOAD DATA) goes to the primproc
// that the value of its table's first column picks: MemberOfInt for integer, decimal and
// date keys (their stored integer), MemberOfString for strings. In the TPC-H tables the first
// column is the key (o_orderkey, l_orderkey, …), so an order and its lineitems land on the
// same primproc and a refresh spreads evenly over all of them. Any placement would be correct
// — exemgr broadcasts complete build sides and unions every primproc's share — this one keeps
// the shares even and related rows together.

// MemberOfInt is the member (of n) that a row whose first column holds v goes to.
func MemberOfInt(v int64, n int) int {
	if n <= 1 {
		return 0
	}
	// splitmix64's finalizer: consecutive keys spread evenly.
	x := uint64(v)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return int(x % uint64(n))
}

// MemberOfString is the member (of n) that a row whose first column holds s goes to.
func MemberOfString(s string, n int) int {
	if n <= 1 {
		return 0
	}
	var h uint64 = 14695981039346656037 // FNV-1a
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return MemberOfInt(int64(h), n)
}

// Place splits rec's rows among n members by the value of its first column (see
// MemberOfInt); a NULL key goes to member 0. The result has one record per member, nil for
// members without rows; the caller releases them.
func Place(rec arrow.RecordBatch, n int, mem memory.Allocator) ([]arrow.RecordBatch, error) {
	out := make([]arrow.RecordBatch, n)
	if rec.NumRows() == 0 {
		return out, nil
	}
	if n <= 1 {
		rec.Retain()
		out[0] = rec
		return out, nil
	}
	rows := int(rec.NumRows())
	who := make([]int, rows)
	key := rec.Column(0)
	for i := 0; i < rows; i++ {
		if key.IsNull(i) {
			continue
		}
		switch k := key.(type) {
		case *array.Int32:
			who[i] = MemberOfInt(int64(k.Value(i)), n)
		case *array.Int64:
			who[i] = MemberOfInt(k.Value(i), n)
		case *array.Date32:
			who[i] = MemberOfInt(int64(k.Value(i)), n)
		case *array.Timestamp:
			who[i] = MemberOfInt(int64(k.Value(i)), n)
		case *array.Decimal64:
			who[i] = MemberOfInt(int64(k.Value(i)), n)
		case *array.String:
			who[i] = MemberOfString(k.Value(i), n)
		case *array.Float64:
			who[i] = MemberOfInt(int64(k.Value(i)), n)
		case *array.Boolean:
			if k.Value(i) {
				who[i] = MemberOfInt(1, n)
			}
		default:
			return nil, fmt.Errorf("place: a first column of type %s", key.DataType())
		}
	}
	idx := make([][]int, n)
	for i, m := range who {
		idx[m] = append(idx[m], i)
	}
	for m := range n {
		if len(idx[m]) == 0 {
			continue
		}
		if len(idx[m]) == rows {
			rec.Retain()
			out[m] = rec
			continue
		}
		r, err := takeRows(rec, idx[m], mem)
		if err != nil {
			for _, o := range out {
				if o != nil {
					o.Release()
				}
			}
			return nil, err
		}
		out[m] = r
	}
	return out, nil
}

// takeRows copies the rows idx of rec.
func takeRows(rec arrow.RecordBatch, idx []int, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c, col := range rec.Columns() {
		b := array.NewBuilder(mem, col.DataType())
		b.Reserve(len(idx))
		for _, i := range idx {
			if col.IsNull(i) {
				b.AppendNull()
				continue
			}
			switch a := col.(type) {
			case *array.Int32:
				b.(*array.Int32Builder).Append(a.Value(i))
			case *array.Int64:
				b.(*array.Int64Builder).Append(a.Value(i))
			case *array.Date32:
				b.(*array.Date32Builder).Append(a.Value(i))
			case *array.Timestamp:
				b.(*array.TimestampBuilder).Append(a.Value(i))
			case *array.Decimal64:
				b.(*array.Decimal64Builder).Append(a.Value(i))
			case *array.Float64:
				b.(*array.Float64Builder).Append(a.Value(i))
			case *array.String:
				b.(*array.StringBuilder).Append(a.Value(i))
			case *array.Boolean:
				b.(*array.BooleanBuilder).Append(a.Value(i))
			default:
				b.Release()
				return nil, fmt.Errorf("place: column %s of type %s", rec.ColumnName(c), col.DataType())
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(idx))), nil
}
