package link

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/storage/ndv"
)

// Cluster is the primprocs that together hold the tables: each holds a share of every
// table's segments (see dbt3 load), so a table is the union of its shares.
type Cluster []*Client

// Each runs fn on every primproc concurrently and joins the errors.
func (cl Cluster) Each(fn func(i int, c *Client) error) error {
	errs := make([]error, len(cl))
	var wg sync.WaitGroup
	for i, c := range cl {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Catalog fetches every primproc's catalog and merges them (MergeCatalogs).
func (cl Cluster) Catalog(ctx context.Context) (*Catalog, error) {
	cats := make([]*Catalog, len(cl))
	err := cl.Each(func(i int, c *Client) error {
		cat, err := c.Catalog(ctx)
		cats[i] = cat
		return err
	})
	if err != nil {
		return nil, err
	}
	return MergeCatalogs(cats)
}

// DropCache empties every primproc's column cache (and page cache, with pageCache).
func (cl Cluster) DropCache(ctx context.Context, pageCache bool) error {
	return cl.Each(func(_ int, c *Client) error {
		_, err := c.DropCache(ctx, pageCache)
		return err
	})
}

// Stats fetches every primproc's stats, in cluster order.
func (cl Cluster) Stats(ctx context.Context) ([]*Stats, error) {
	out := make([]*Stats, len(cl))
	err := cl.Each(func(i int, c *Client) error {
		st, err := c.Stats(ctx)
		out[i] = st
		return err
	})
	return out, err
}

// MergedCatalog is the system's catalog: the union of the primprocs' shares.
type MergedCatalog struct {
	*Catalog
	// Partial lists, for a table some primprocs lack, the names of those primprocs (an
	// interrupted load; scans there fail with "unknown table").
	Partial map[string][]string
}

// MergeCatalogs adds up the primprocs' shares of every table: rows, deleted rows,
// segments, row groups, bytes and NULL counts add; value ranges widen; distinct-value
// sketches merge, and a column's Distinct is the merged sketch's estimate (0, unknown, when
// a share holding values has no sketch). A table must have the
// same columns everywhere it exists. The result's Name and Version are empty; its Layout is
// the first catalog's.
func MergeCatalogs(cats []*Catalog) (*Catalog, error) {
	m, err := Merge(cats)
	if err != nil {
		return nil, err
	}
	return m.Catalog, nil
}

// Merge is MergeCatalogs that also reports tables missing on some primprocs.
func Merge(cats []*Catalog) (*MergedCatalog, error) {
	out := &MergedCatalog{Catalog: &Catalog{Schemas: map[string]*arrow.Schema{}}, Partial: map[string][]string{}}
	if len(cats) == 0 {
		return out, nil
	}
	out.Layout = cats[0].Layout
	out.Tables = []Table{}
	index := map[string]int{}   // table → position in out.Tables
	holders := map[string]int{} // table → primprocs holding it
	// sketches holds the merged distinct-value sketches, by position in out.Tables and
	// column; nil where some share with values had none.
	var sketches [][]*ndv.Sketch
	for _, cat := range cats {
		for _, t := range cat.Tables {
			sc := cat.Schemas[t.Name]
			i, seen := index[t.Name]
			if !seen {
				index[t.Name] = len(out.Tables)
				t.Columns = slices.Clone(t.Columns)
				sks := make([]*ndv.Sketch, len(t.Columns))
				for c := range t.Columns {
					if !hasValues(t, t.Columns[c]) {
						t.Columns[c].Min, t.Columns[c].Max = nil, nil
					}
					sk, err := shareSketch(t, t.Columns[c])
					if err != nil {
						return nil, fmt.Errorf("primproc %s: table %s column %s: %w", cat.Name, t.Name, t.Columns[c].Name, err)
					}
					sks[c] = sk
				}
				out.Tables = append(out.Tables, t)
				sketches = append(sketches, sks)
				out.Schemas[t.Name] = sc
				holders[t.Name] = 1
				continue
			}
			holders[t.Name]++
			m := &out.Tables[i]
			if prev := out.Schemas[t.Name]; prev != nil && sc != nil && !sameFields(prev, sc) {
				return nil, fmt.Errorf("table %s has different columns on primproc %s (%s) than on another (%s)", t.Name, cat.Name, sc, prev)
			}
			if len(t.Columns) != len(m.Columns) {
				return nil, fmt.Errorf("table %s has %d columns on primproc %s, %d on another", t.Name, len(t.Columns), cat.Name, len(m.Columns))
			}
			for c := range m.Columns {
				sk, err := shareSketch(t, t.Columns[c])
				if err != nil {
					return nil, fmt.Errorf("primproc %s: table %s column %s: %w", cat.Name, t.Name, t.Columns[c].Name, err)
				}
				switch acc := sketches[i][c]; {
				case acc == nil || sk == nil:
					sketches[i][c] = nil
				default:
					acc.Merge(sk)
				}
				mergeColumn(m, c, t)
			}
			m.Rows += t.Rows
			m.Deleted += t.Deleted
			m.Segments += t.Segments
			m.RowGroups += t.RowGroups
			m.Bytes += t.Bytes
		}
	}
	for i := range out.Tables {
		for c := range out.Tables[i].Columns {
			col := &out.Tables[i].Columns[c]
			col.Distinct, col.NDVSketch = 0, nil
			if sk := sketches[i][c]; sk != nil {
				b, err := sk.MarshalBinary()
				if err != nil {
					return nil, err
				}
				col.Distinct, col.NDVSketch = sk.Estimate(), b
			}
		}
	}
	slices.SortFunc(out.Tables, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
	for name, n := range holders {
		if n == len(cats) {
			continue
		}
		for _, cat := range cats {
			if cat.Table(name) == nil {
				out.Partial[name] = append(out.Partial[name], cat.Name)
			}
		}
	}
	return out, nil
}

// shareSketch decodes one primproc's sketch of a column: an empty sketch for a share
// without values, nil when a share with values has none (unknown).
func shareSketch(t Table, c Column) (*ndv.Sketch, error) {
	if len(c.NDVSketch) == 0 {
		if hasValues(t, c) {
			return nil, nil
		}
		return new(ndv.Sketch), nil
	}
	return ndv.Decode(c.NDVSketch)
}

// hasValues says whether a table's column holds a non-NULL value (so that a missing range
// means "unknown", not "empty").
func hasValues(t Table, c Column) bool {
	return c.Nulls < 0 || t.Rows+t.Deleted > c.Nulls
}

// sameFields reports whether two schemas have the same column names and types.
func sameFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// mergeColumn widens column c of m (the merge so far; m.Rows still excludes t) by t's
// share.
func mergeColumn(m *Table, c int, t Table) {
	a, b := &m.Columns[c], t.Columns[c]
	mHas, tHas := hasValues(*m, *a) || a.Min != nil, hasValues(t, b)
	if a.Nulls < 0 || b.Nulls < 0 {
		a.Nulls = -1
	} else {
		a.Nulls += b.Nulls
	}
	switch {
	case !tHas: // t adds only NULLs: the range stays
	case !mHas: // the merge so far has no values: t's range
		a.Min, a.Max = b.Min, b.Max
	case a.Min == nil || b.Min == nil: // some share's range is unknown
		a.Min, a.Max = nil, nil
	default:
		a.Min, a.Max = pick(a.Min, b.Min, -1), pick(a.Max, b.Max, 1)
	}
}

// pick returns the lower (sign -1) or higher (sign 1) of two bounds (nil if they do not
// compare).
func pick(a, b *vec.Datum, sign int) *vec.Datum {
	c, err := vec.CompareDatums(*a, *b)
	if err != nil {
		return nil
	}
	if c*sign >= 0 {
		return a
	}
	return b
}
