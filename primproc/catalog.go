package primproc

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// catalog answers with this primproc's tables from one pinned catalog version.
func (d *Daemon) catalog(ctx context.Context, st *ipc.Stream) error {
	var a link.CatalogArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	snap := d.store.Snapshot()
	defer snap.Release()
	cat, err := buildCatalog(snap, a.Tables)
	if err != nil {
		return err
	}
	cat.Name = d.cfg.Name
	cat.StoreID = d.store.ID()
	cat.Layout = link.Layout{RowGroupRows: d.layout.RowGroupRows, SegmentRows: d.layout.SegmentRows, Compression: d.layout.Compression}
	b, err := msgpack.Marshal(cat)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "catalog: %v", err)
	}
	return st.CloseSend(b)
}

// buildCatalog describes the snapshot's tables (only those named, if any).
func buildCatalog(snap *storage.Snapshot, only []string) (*link.CatalogEnd, error) {
	cat := &link.CatalogEnd{Version: snap.Version(), Tables: []link.Table{}}
	var infos []storage.TableInfo
	if len(only) == 0 {
		infos = snap.Tables()
	} else {
		for _, name := range only {
			ti, err := snap.Table(name)
			if err != nil {
				if errors.Is(err, storage.ErrNoTable) {
					return nil, ipc.Errorf(ipc.CodeInvalidArgument, "catalog: unknown table %q", name)
				}
				return nil, ipc.Errorf(ipc.CodeInternal, "catalog: %v", err)
			}
			infos = append(infos, ti)
		}
	}
	for _, ti := range infos {
		t, err := describeTable(snap, ti)
		if err != nil {
			return nil, ipc.Errorf(ipc.CodeInternal, "catalog: table %s: %v", ti.Name, err)
		}
		cat.Tables = append(cat.Tables, t)
	}
	return cat, nil
}

func describeTable(snap *storage.Snapshot, ti storage.TableInfo) (link.Table, error) {
	schema, err := link.EncodeSchema(ti.Schema)
	if err != nil {
		return link.Table{}, err
	}
	t := link.Table{Name: ti.Name, Schema: schema, Rows: ti.Rows, Segments: len(ti.Segments)}
	for _, s := range ti.Segments {
		t.Deleted += s.Deleted
		t.RowGroups += s.RowGroups
		t.Bytes += s.Bytes
	}
	ranges, err := snap.ColumnRanges(ti.Name)
	if err != nil {
		return link.Table{}, err
	}
	sketches, err := snap.ColumnSketches(ti.Name)
	if err != nil {
		return link.Table{}, err
	}
	for i, f := range ti.Schema.Fields() {
		typ, err := vec.FromArrow(f.Type)
		if err != nil {
			// A column the engine cannot compute with (binary) is still listed.
			typ = vec.Type{}
		}
		c := link.Column{Name: f.Name, SQLType: vec.SQLTypeOf(f), Type: typ, Nullable: f.Nullable, Nulls: ranges[i].Nulls}
		if ranges[i].HasRange && typ.ID != vec.Invalid {
			lo, hi := rangeDatums(typ, ranges[i])
			c.Min, c.Max = &lo, &hi
		}
		if sk := sketches[i]; sk != nil {
			if c.NDVSketch, err = sk.MarshalBinary(); err != nil {
				return link.Table{}, err
			}
			c.Distinct = sk.Estimate()
		}
		t.Columns = append(t.Columns, c)
	}
	return t, nil
}

// rangeDatums converts a column range to typed bounds.
func rangeDatums(t vec.Type, r storage.ColumnRange) (lo, hi vec.Datum) {
	switch t.ID {
	case vec.Float64:
		return vec.Float64Datum(r.MinFloat), vec.Float64Datum(r.MaxFloat)
	case vec.String:
		return vec.StringDatum(r.MinString), vec.StringDatum(r.MaxString)
	default: // bool (0/1), ints, dates (days), decimals (unscaled): the stored integer
		return vec.Datum{Type: t, Int: r.MinInt}, vec.Datum{Type: t, Int: r.MaxInt}
	}
}

// errorf formats an invalid-argument error for method m.
func invalidf(m, format string, args ...any) error {
	return ipc.Errorf(ipc.CodeInvalidArgument, "%s: %s", m, fmt.Sprintf(format, args...))
}
