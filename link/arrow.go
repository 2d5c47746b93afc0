package link

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
)

// EncodeSchema returns sc in the Arrow IPC stream format: a schema message and the
// end-of-stream marker.
func EncodeSchema(sc *arrow.Schema) ([]byte, error) {
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(sc))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeSchema reads a schema EncodeSchema wrote.
func DecodeSchema(b []byte) (*arrow.Schema, error) {
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// SchemaFromColumns builds a table's Arrow schema from SQL column declarations (vec.SQLField
// for each).
func SchemaFromColumns(cols []ColumnDef) (*arrow.Schema, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("no columns declared")
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c.Name == "" {
			return nil, fmt.Errorf("column %d has no name", i)
		}
		f, err := vec.SQLField(c.Name, c.SQLType, c.Nullable)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if c.Default != nil {
			f.Metadata = arrow.NewMetadata(append(f.Metadata.Keys(), vec.DefaultKey), append(f.Metadata.Values(), *c.Default))
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil), nil
}

// ColumnDefOf is the declaration of a stored column, the inverse of SchemaFromColumns.
func ColumnDefOf(f arrow.Field) ColumnDef {
	c := ColumnDef{Name: f.Name, SQLType: vec.SQLTypeOf(f), Nullable: f.Nullable}
	if d, ok := f.Metadata.GetValue(vec.DefaultKey); ok {
		c.Default = &d
	}
	return c
}

// BuildEncoder wraps the records of a fragment's build sides into the single schema of the
// client's half of a fragment stream (see PROTOCOL.md, "Build sides"): column k,
// "build<k>", is a list of structs holding side k's columns, and each upload record has one
// row whose list for one side holds that record's rows while the other sides' lists are
// empty. The encoding costs a few bytes per record, nothing per row, and copies no data.
type BuildEncoder struct {
	sides  []*arrow.Schema
	schema *arrow.Schema
	empty  []arrow.Array // an empty list per side
	mem    memory.Allocator
}

// NewBuildEncoder returns an encoder for build sides with the given schemas (field names
// are kept; only the types matter to primproc).
func NewBuildEncoder(sides []*arrow.Schema, mem memory.Allocator) *BuildEncoder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	e := &BuildEncoder{sides: sides, mem: mem}
	fields := make([]arrow.Field, len(sides))
	for k, sc := range sides {
		lt := arrow.ListOf(arrow.StructOf(sc.Fields()...))
		fields[k] = arrow.Field{Name: "build" + strconv.Itoa(k), Type: lt}
		e.empty = append(e.empty, array.MakeArrayOfNull(mem, lt, 0))
	}
	e.schema = arrow.NewSchema(fields, nil)
	return e
}

// Schema is the upload schema.
func (e *BuildEncoder) Schema() *arrow.Schema { return e.schema }

// Encode wraps rec, rows of build side `side`, into a one-row upload record (the caller
// releases both). rec's column types must be side's.
func (e *BuildEncoder) Encode(side int, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if side < 0 || side >= len(e.sides) {
		return nil, fmt.Errorf("build side %d does not exist (%d sides)", side, len(e.sides))
	}
	want := e.sides[side]
	if int(rec.NumCols()) != want.NumFields() {
		return nil, fmt.Errorf("build side %d: record has %d columns, the side %d", side, rec.NumCols(), want.NumFields())
	}
	for i, f := range want.Fields() {
		if !arrow.TypeEqual(rec.Column(i).DataType(), f.Type) {
			return nil, fmt.Errorf("build side %d column %d: record has %s, the side %s", side, i, rec.Column(i).DataType(), f.Type)
		}
	}
	st, err := array.NewStructArrayWithFields(rec.Columns(), want.Fields())
	if err != nil {
		return nil, fmt.Errorf("build side %d: %w", side, err)
	}
	defer st.Release()
	offsets := memory.NewResizableBuffer(e.mem)
	offsets.Resize(8)
	o := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	o[0], o[1] = 0, int32(rec.NumRows())
	ld := array.NewData(e.schema.Field(side).Type, 1, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{st.Data()}, 0, 0)
	offsets.Release()
	defer ld.Release()
	list := array.MakeFromData(ld)
	defer list.Release()
	cols := make([]arrow.Array, len(e.sides))
	for k := range cols {
		if k == side {
			cols[k] = list
		} else {
			cols[k] = e.emptyRow(k)
			defer cols[k].Release()
		}
	}
	return array.NewRecordBatch(e.schema, cols, 1), nil
}

// emptyRow is a one-row list array whose only list is empty.
func (e *BuildEncoder) emptyRow(k int) arrow.Array {
	offsets := memory.NewResizableBuffer(e.mem)
	offsets.Resize(8)
	o := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	o[0], o[1] = 0, 0
	ld := array.NewData(e.schema.Field(k).Type, 1, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{e.empty[k].(*array.List).ListValues().Data()}, 0, 0)
	offsets.Release()
	defer ld.Release()
	return array.MakeFromData(ld)
}

// Release frees the encoder's empty arrays.
func (e *BuildEncoder) Release() {
	for _, a := range e.empty {
		a.Release()
	}
	e.empty = nil
}

// DecodeBuildUpload splits an upload record into build-side records: fn is called for
// every non-empty list, in column then row order, with the side's index and a record of its
// rows (valid during the call; Retain it to keep it). types[k] are side k's expected column
// types; a record that does not fit them is an error naming the side and column.
func DecodeBuildUpload(rec arrow.RecordBatch, types [][]vec.Type, fn func(side int, part arrow.RecordBatch) error) error {
	if int(rec.NumCols()) != len(types) {
		return fmt.Errorf("build upload has %d columns, the fragment declares %d build sides", rec.NumCols(), len(types))
	}
	for k := range types {
		list, ok := rec.Column(k).(*array.List)
		if !ok {
			return fmt.Errorf("build upload column %d is %s, want a list of structs", k, rec.Column(k).DataType())
		}
		values, ok := list.ListValues().(*array.Struct)
		if !ok {
			return fmt.Errorf("build upload column %d is %s, want a list of structs", k, rec.Column(k).DataType())
		}
		st := values.DataType().(*arrow.StructType)
		if st.NumFields() != len(types[k]) {
			return fmt.Errorf("build side %d has %d columns, the fragment declares %d", k, st.NumFields(), len(types[k]))
		}
		for c, f := range st.Fields() {
			t, err := vec.FromArrow(f.Type)
			if err != nil || t != types[k][c] {
				return fmt.Errorf("build side %d column %d is %s, the fragment declares %s", k, c, f.Type, types[k][c])
			}
		}
		for i := 0; i < list.Len(); i++ {
			if list.IsNull(i) {
				continue
			}
			start, end := list.ValueOffsets(i)
			if end <= start {
				continue
			}
			part := array.NewSlice(values, start, end).(*array.Struct)
			cols := make([]arrow.Array, st.NumFields())
			for c := range cols {
				cols[c] = part.Field(c)
			}
			r := array.NewRecordBatch(arrow.NewSchema(st.Fields(), nil), cols, end-start)
			part.Release()
			err := fn(k, r)
			r.Release()
			if err != nil {
				return err
			}
		}
	}
	return nil
}
