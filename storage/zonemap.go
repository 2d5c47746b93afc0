package storage

import (
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/storage/ndv"
)

// Op is a comparison a zone-map predicate applies: column op constant(s).
type Op uint8

// The predicate operators.
const (
	OpEq        Op = iota + 1 // col = v
	OpNe                      // col <> v
	OpLt                      // col < v
	OpLe                      // col <= v
	OpGt                      // col > v
	OpGe                      // col >= v
	OpIn                      // col IN (v1, v2, …)
	OpIsNull                  // col IS NULL
	OpIsNotNull               // col IS NOT NULL
)

var opNames = [...]string{OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpIn: "IN", OpIsNull: "IS NULL", OpIsNotNull: "IS NOT NULL"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

type valueKind uint8

const (
	valInt valueKind = iota + 1 // integer, or decimal when scale > 0
	valFloat
	valString
)

// Value is a predicate constant. Integers, dates and decimals compare exactly: a decimal
// constant of any scale is compared with a decimal column of another scale without rounding.
type Value struct {
	kind  valueKind
	i     int64
	scale int32
	f     float64
	s     string
}

// Int is an integer constant (for int, bigint, decimal and boolean columns; 0/1 for booleans).
func Int(v int64) Value { return Value{kind: valInt, i: v} }

// Decimal is the constant unscaled / 10^scale, e.g. Decimal(5, 2) is 0.05.
func Decimal(unscaled int64, scale int32) Value {
	return Value{kind: valInt, i: unscaled, scale: scale}
}

// Date is a date constant, in days since 1970-01-01 (the Date32 encoding).
func Date(days int32) Value { return Value{kind: valInt, i: int64(days)} }

// DateOf is the date constant for a calendar day.
func DateOf(year int, month time.Month, day int) Value {
	return Date(int32(time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Unix() / 86400))
}

// Float is a floating-point constant (for double columns).
func Float(v float64) Value { return Value{kind: valFloat, f: v} }

// Str is a string constant (for char, varchar and binary columns; compared byte-wise).
func Str(s string) Value { return Value{kind: valString, s: s} }

func (v Value) String() string {
	switch v.kind {
	case valInt:
		if v.scale > 0 {
			return fmt.Sprintf("%de-%d", v.i, v.scale)
		}
		return fmt.Sprint(v.i)
	case valFloat:
		return fmt.Sprint(v.f)
	case valString:
		return fmt.Sprintf("%q", v.s)
	}
	return "?"
}

// Predicate is one conjunct a scan may use to skip row groups: Column Op Values. Values holds
// one constant for comparisons, any number for OpIn, none for the null tests. Elimination is
// conservative: a row group is skipped only when no row in it can satisfy the predicate, so the
// caller must still filter the rows it reads.
type Predicate struct {
	Column string
	Op     Op
	Values []Value
}

func (p Predicate) String() string {
	switch p.Op {
	case OpIsNull, OpIsNotNull:
		return p.Column + " " + p.Op.String()
	case OpIn:
		return fmt.Sprintf("%s IN %v", p.Column, p.Values)
	}
	return fmt.Sprintf("%s %s %v", p.Column, p.Op, p.Values)
}

// boundPred is a predicate bound to a column, with its constants converted to the column's
// stored domain: for zoneInt columns, a set of closed integer intervals.
type boundPred struct {
	col   int
	op    Op
	class zoneClass
	ivals []interval // zoneInt: the satisfying values (empty: none can)
	fvals []float64  // zoneFloat
	svals []string   // zoneBytes
	// unusable is set when a constant cannot be compared exactly (overflow); the predicate
	// then eliminates nothing.
	unusable bool
}

type interval struct{ lo, hi int64 }

// bindPredicate checks a predicate against the table schema and converts its constants.
func bindPredicate(t *tableMeta, p Predicate) (boundPred, error) {
	col := t.schema.FieldIndices(p.Column)
	if len(col) != 1 {
		return boundPred{}, fmt.Errorf("storage: predicate %s: table %q has no column %q", p, t.Name, p.Column)
	}
	c := col[0]
	kind := t.kinds[c]
	bp := boundPred{col: c, op: p.Op, class: kind.zoneClass()}
	want := 1
	switch p.Op {
	case OpIsNull, OpIsNotNull:
		want = 0
	case OpIn:
		want = -1
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
	default:
		return bp, fmt.Errorf("storage: predicate on %q: unknown operator %s", p.Column, p.Op)
	}
	if want >= 0 && len(p.Values) != want {
		return bp, fmt.Errorf("storage: predicate %s needs %d constant(s), has %d", p, want, len(p.Values))
	}
	if p.Op == OpIn && len(p.Values) == 0 {
		return bp, fmt.Errorf("storage: predicate on %q: IN needs at least one constant", p.Column)
	}
	var scale int32
	if d, ok := t.schema.Field(c).Type.(*arrow.Decimal64Type); ok {
		scale = d.Scale
	}
	for _, v := range p.Values {
		switch bp.class {
		case zoneInt:
			if v.kind != valInt {
				return bp, fmt.Errorf("storage: predicate %s: column %q is %s, the constant %v is not an integer, date or decimal", p, p.Column, t.schema.Field(c).Type, v)
			}
			iv, ok := intRange(p.Op, v.i, v.scale, scale)
			if !ok {
				bp.unusable = true
			} else if iv.lo <= iv.hi {
				bp.ivals = append(bp.ivals, iv)
			}
		case zoneFloat:
			switch v.kind {
			case valFloat:
				bp.fvals = append(bp.fvals, v.f)
			case valInt:
				bp.fvals = append(bp.fvals, float64(v.i)/math.Pow10(int(v.scale)))
			default:
				return bp, fmt.Errorf("storage: predicate %s: column %q is double, the constant %v is not a number", p, p.Column, v)
			}
		case zoneBytes:
			if v.kind != valString {
				return bp, fmt.Errorf("storage: predicate %s: column %q is %s, the constant %v is not a string", p, p.Column, t.schema.Field(c).Type, v)
			}
			bp.svals = append(bp.svals, v.s)
		}
	}
	return bp, nil
}

// intRange converts "x op v/10^vscale" over integers x stored at scale colScale into the
// closed interval of x that satisfy it (lo > hi when none do). For OpNe it returns the point
// that is excluded. ok is false if the constant cannot be represented exactly.
func intRange(op Op, v int64, vscale, colScale int32) (iv interval, ok bool) {
	const lo, hi = math.MinInt64, math.MaxInt64
	// Bring v to the column's scale: x compares with the real number q + r/10^k.
	var q int64
	var exact bool // no fractional part at the column's scale
	var frac int   // sign of the fractional remainder
	switch {
	case vscale <= colScale:
		m, ovf := mulPow10(v, int(colScale-vscale))
		if ovf {
			return iv, false
		}
		q, exact = m, true
	default:
		p := pow10(int(vscale - colScale))
		q = v / p
		r := v % p
		exact = r == 0
		if r > 0 {
			frac = 1
		} else if r < 0 {
			frac = -1
		}
	}
	// floor and ceil of the real constant at the column's scale.
	floor, ceil := q, q
	if frac > 0 {
		ceil = q + 1
	} else if frac < 0 {
		floor = q - 1
	}
	switch op {
	case OpEq, OpIn, OpNe:
		if !exact {
			return interval{1, 0}, true // no integer equals it
		}
		return interval{q, q}, true
	case OpLt: // x < c  ⇔  x <= ceil(c) - 1
		if ceil == lo {
			return interval{1, 0}, true
		}
		return interval{lo, ceil - 1}, true
	case OpLe:
		return interval{lo, floor}, true
	case OpGt: // x > c  ⇔  x >= floor(c) + 1
		if floor == hi {
			return interval{1, 0}, true
		}
		return interval{floor + 1, hi}, true
	case OpGe:
		return interval{ceil, hi}, true
	}
	return iv, false
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// mulPow10 returns v*10^n and whether it overflowed int64.
func mulPow10(v int64, n int) (int64, bool) {
	if n > 18 {
		return 0, v != 0
	}
	p := pow10(n)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	h, l := bits.Mul64(u, uint64(p))
	if h != 0 || l > math.MaxInt64 {
		return 0, true
	}
	if neg {
		return -int64(l), false
	}
	return int64(l), false
}

// excludes reports whether the zone map proves that no row of a group with rows rows
// satisfies the predicate.
func (bp *boundPred) excludes(z zoneMap, rows int64) bool {
	allNull := z.Nulls >= 0 && z.Nulls == rows
	switch bp.op {
	case OpIsNull:
		return z.Nulls == 0
	case OpIsNotNull:
		return allNull
	}
	// Comparisons are never true on NULL.
	if allNull {
		return true
	}
	if bp.unusable || !z.HasMinMax {
		return false
	}
	switch bp.class {
	case zoneInt:
		if bp.op == OpNe {
			return len(bp.ivals) == 1 && z.MinI == z.MaxI && z.MinI == bp.ivals[0].lo
		}
		for _, iv := range bp.ivals {
			if iv.lo <= z.MaxI && z.MinI <= iv.hi {
				return false
			}
		}
		return true
	case zoneFloat:
		return excludesOrdered(bp.op, bp.fvals, z.MinF, z.MaxF)
	case zoneBytes:
		return excludesOrdered(bp.op, bp.svals, z.MinS, z.MaxS)
	}
	return false
}

func excludesOrdered[T float64 | string](op Op, vals []T, lo, hi T) bool {
	switch op {
	case OpNe:
		return lo == hi && lo == vals[0]
	case OpLt:
		return lo >= vals[0]
	case OpLe:
		return lo > vals[0]
	case OpGt:
		return hi <= vals[0]
	case OpGe:
		return hi < vals[0]
	}
	for _, v := range vals { // OpEq, OpIn
		if lo <= v && v <= hi {
			return false
		}
	}
	return true
}

// ColumnRange summarizes one column's zone maps over all segments of a table in a snapshot:
// the planner's view of its value range. Bounds come from every stored row, deleted ones
// included, so they may be wider than the live values but never narrower.
type ColumnRange struct {
	// Nulls counts NULLs; -1 if some row group's statistics do not say.
	Nulls int64
	// HasRange says the bounds below are known: every row group with a non-NULL value has
	// min/max statistics, and there is at least one non-NULL value.
	HasRange bool
	// Integer-class bounds: booleans (0/1), integers, dates (days since 1970-01-01) and
	// decimals (unscaled).
	MinInt, MaxInt int64
	// Float64 bounds.
	MinFloat, MaxFloat float64
	// String and binary bounds, compared bytewise.
	MinString, MaxString string
}

// ColumnRanges folds the zone maps of every row group of the named table into one range per
// column, in schema order.
func (sn *Snapshot) ColumnRanges(table string) ([]ColumnRange, error) {
	t := sn.cat.table(table)
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	out := make([]ColumnRange, len(t.kinds))
	for ci, kind := range t.kinds {
		r := &out[ci]
		zc := kind.zoneClass()
		unknown := false // a row group that may hold values lacks min/max
		for _, s := range t.Segments {
			for _, g := range s.RowGroups {
				z := g.Zones[ci]
				if z.Nulls < 0 || r.Nulls < 0 {
					r.Nulls = -1
				} else {
					r.Nulls += z.Nulls
				}
				if !z.HasMinMax {
					if z.Nulls < 0 || z.Nulls < g.Rows {
						unknown = true
					}
					continue
				}
				first := !r.HasRange
				r.HasRange = true
				switch zc {
				case zoneInt:
					if first || z.MinI < r.MinInt {
						r.MinInt = z.MinI
					}
					if first || z.MaxI > r.MaxInt {
						r.MaxInt = z.MaxI
					}
				case zoneFloat:
					if first || z.MinF < r.MinFloat {
						r.MinFloat = z.MinF
					}
					if first || z.MaxF > r.MaxFloat {
						r.MaxFloat = z.MaxF
					}
				case zoneBytes:
					if first || z.MinS < r.MinString {
						r.MinString = z.MinS
					}
					if first || z.MaxS > r.MaxString {
						r.MaxString = z.MaxS
					}
				}
			}
		}
		if unknown {
			r.HasRange = false
			r.MinInt, r.MaxInt, r.MinFloat, r.MaxFloat, r.MinString, r.MaxString = 0, 0, 0, 0, "", ""
		}
	}
	return out, nil
}

// ColumnSketches merges, per column in schema order, the distinct-value sketches of every
// segment of the named table in the snapshot: the planner's distinct-value counts. Like the
// ranges they cover every stored row, deleted ones included. A column's sketch is nil when
// some segment has none (it was written before sketches were kept). The result is the
// caller's.
func (sn *Snapshot) ColumnSketches(table string) ([]*ndv.Sketch, error) {
	t := sn.cat.table(table)
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	out := make([]*ndv.Sketch, len(t.kinds))
	for _, s := range t.Segments {
		if len(s.Sketches) == 0 {
			return make([]*ndv.Sketch, len(t.kinds)), nil
		}
	}
	for ci := range out {
		out[ci] = new(ndv.Sketch)
	}
	for _, s := range t.Segments {
		sks, err := sn.store.segmentSketches(s)
		if err != nil {
			return nil, err
		}
		for ci := range out {
			out[ci].Merge(&sks[ci])
		}
	}
	return out, nil
}

// segmentSketches returns a segment's decoded sketches (shared: read only), decoding them
// on first use.
func (s *Store) segmentSketches(seg *segmentMeta) ([]ndv.Sketch, error) {
	s.sketchMu.Lock()
	sks, ok := s.sketches[seg.ID]
	s.sketchMu.Unlock()
	if ok {
		return sks, nil
	}
	sks = make([]ndv.Sketch, len(seg.Sketches))
	for ci, b := range seg.Sketches {
		if err := sks[ci].UnmarshalBinary(b); err != nil {
			return nil, &CorruptionError{File: filepath.Join(s.dir, catalogFile),
				Detail: fmt.Sprintf("segment %d column %d: %v", seg.ID, ci, err)}
		}
	}
	s.sketchMu.Lock()
	s.sketches[seg.ID] = sks
	s.sketchMu.Unlock()
	return sks, nil
}
