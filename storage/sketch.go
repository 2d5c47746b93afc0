package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/colinkdb/colink/storage/ndv"
)

// SketchResult reports what AddMissingSketches did.
type SketchResult struct {
	Segments int    // segments that got sketches
	Rows     int64  // rows read for them
	Version  uint64 // the catalog version holding them (0 if nothing changed)
}

// AddMissingSketches computes the distinct-value sketches of the segments written before
// sketches were kept (every stored row, deleted ones included as a writer would have, except
// in row groups deleted whole) and records them in a new catalog version. It reads through a snapshot, so queries and writes go on
// meanwhile; a segment that a concurrent commit removed is skipped. A store whose segments
// all have sketches is left alone.
func (s *Store) AddMissingSketches(ctx context.Context) (SketchResult, error) {
	var res SketchResult
	snap := s.Snapshot()
	defer snap.Release()
	computed := map[uint64][][]byte{} // segment ID → encoded sketch per column
	for _, t := range snap.cat.Tables {
		var missing []uint64
		for _, sg := range t.Segments {
			if len(sg.Sketches) == 0 {
				missing = append(missing, sg.ID)
			}
		}
		if len(missing) == 0 {
			continue
		}
		cols := make([]string, t.schema.NumFields())
		for i, f := range t.schema.Fields() {
			cols[i] = f.Name
		}
		for _, id := range missing {
			sks, rows, err := sketchSegment(ctx, snap, t.Name, cols, id)
			if err != nil {
				return res, fmt.Errorf("storage: sketches of table %q segment %d: %w", t.Name, id, err)
			}
			enc := make([][]byte, len(sks))
			for i := range sks {
				if enc[i], err = sks[i].MarshalBinary(); err != nil {
					return res, err
				}
			}
			computed[id] = enc
			res.Rows += rows
		}
	}
	if len(computed) == 0 {
		return res, nil
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cur := s.catalog()
	next := cur.clone()
	next.Version = cur.Version + 1
	for i, t := range next.Tables {
		var nt *tableMeta
		for j, sg := range t.Segments {
			enc, ok := computed[sg.ID]
			if !ok || len(sg.Sketches) != 0 || len(enc) != len(t.kinds) {
				continue
			}
			if nt == nil {
				c := *t
				c.Segments = slices.Clone(t.Segments)
				nt = &c
			}
			seg := *sg
			seg.Sketches = enc
			nt.Segments[j] = &seg
			res.Segments++
		}
		if nt != nil {
			next.Tables[i] = nt
		}
	}
	if res.Segments == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	published, err := s.installCatalog(next)
	if published {
		res.Version = next.Version
	}
	if err != nil {
		return res, fmt.Errorf("storage: record sketches: %w", err)
	}
	return res, nil
}

// sketchSegment reads every stored row of one segment and returns its columns' sketches.
func sketchSegment(ctx context.Context, snap *Snapshot, table string, cols []string, seg uint64) ([]ndv.Sketch, int64, error) {
	sc, err := snap.Scan(ScanRequest{Table: table, Columns: cols, Segments: []uint64{seg}})
	if err != nil {
		return nil, 0, err
	}
	defer sc.Close()
	sks := make([]ndv.Sketch, len(cols))
	var rows int64
	for _, ref := range sc.RowGroups() {
		rec, err := sc.ReadWithDeleted(ctx, ref)
		if err != nil {
			return nil, 0, err
		}
		for c := range sks {
			addToSketch(&sks[c], rec.Column(c))
		}
		rows += rec.NumRows()
		rec.Release()
	}
	return sks, rows, nil
}
