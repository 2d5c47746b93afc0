package exec

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// HashJoin probes a JoinTable with the batches of its probe input.
//
// When every build key is unique (the common key/foreign-key case) the output keeps the
// probe batch's vectors as they are and attaches the build columns at the matching rows;
// otherwise matching pairs are expanded into dense batches. A residual condition is
// evaluated on the candidate pairs.
type HashJoin struct {
	probe      Operator
	builds     []Operator
	table      *JoinTable
	ownsTable  bool
	budget     *Budget
	spec       JoinSpec
	probeTypes []vec.Type
	buildTypes []vec.Type
	outTypes   []vec.Type
	residual   *expr.Filter
	markKeys   int
	batchRows  int
	ready      bool

	scratch probeScratch
	keyVecs []*vec.Vec
	gids    []int32
	ident   []int32
	ident2  []int32
	live    []int32
	matched []int32
	brows   []int32
	hit     []bool
	rest    []int32
	cands   []int32
	heads   []int32
	passed  []int32 // the rows the table's key filter lets through

	buildVecs []*vec.Vec
	probeVecs []*vec.Vec
	nullVecs  []*vec.Vec
	markVec   vec.Vec
	cols      []*vec.Vec
	out       vec.Batch

	// Pair expansion of the current probe batch.
	cur     *vec.Batch
	curRows []int32
	k       int
	cursor  int32
	pi, bi  []int32

	// Right outer join: build rows matched so far, and the emission of the others.
	buildHit  []bool
	probeDone bool
	emitPos   int
}

// NewHashJoin joins probe with the rows of the build operators (hashed when the join
// first runs, charged to budget).
func NewHashJoin(probe Operator, builds []Operator, buildTypes []vec.Type, spec JoinSpec, budget *Budget) (*HashJoin, error) {
	for i, b := range builds {
		if !typesEqual(b.Types(), buildTypes) {
			return nil, fmt.Errorf("join: build input %d has types %v, expected %v", i, b.Types(), buildTypes)
		}
	}
	j, err := newHashJoin(probe, buildTypes, spec)
	if err != nil {
		return nil, err
	}
	j.builds, j.ownsTable, j.budget = builds, true, budget
	return j, nil
}

// NewHashJoinWithTable probes an already built (possibly shared) table. The table's key
// columns must be spec.BuildKeys.
func NewHashJoinWithTable(probe Operator, table *JoinTable, spec JoinSpec) (*HashJoin, error) {
	if len(table.keyCols) != len(spec.BuildKeys) {
		return nil, fmt.Errorf("join: table hashed on %d keys, spec has %d", len(table.keyCols), len(spec.BuildKeys))
	}
	for i, c := range table.keyCols {
		if spec.BuildKeys[i] != c {
			return nil, fmt.Errorf("join: table hashed on column #%d, spec's key %d is #%d", c, i, spec.BuildKeys[i])
		}
	}
	j, err := newHashJoin(probe, table.types, spec)
	if err != nil {
		return nil, err
	}
	j.table, j.ready = table, true
	return j, nil
}

func typesEqual(a, b []vec.Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func newHashJoin(probe Operator, buildTypes []vec.Type, spec JoinSpec) (*HashJoin, error) {
	pt := probe.Types()
	if err := spec.Validate(pt, buildTypes); err != nil {
		return nil, err
	}
	j := &HashJoin{probe: probe, spec: spec, probeTypes: pt, buildTypes: buildTypes,
		outTypes: spec.OutputTypes(pt, buildTypes), batchRows: vec.DefaultBatchRows, cursor: -1}
	if spec.Residual != nil {
		f, err := expr.CompileFilter(spec.Residual, append(append([]vec.Type(nil), pt...), buildTypes...))
		if err != nil {
			return nil, fmt.Errorf("join residual: %w", err)
		}
		j.residual = f
	}
	j.markKeys = spec.MarkKeys
	if j.markKeys == 0 {
		j.markKeys = len(spec.ProbeKeys)
	}
	j.keyVecs = make([]*vec.Vec, len(spec.ProbeKeys))
	for range buildTypes {
		j.buildVecs = append(j.buildVecs, &vec.Vec{})
		j.nullVecs = append(j.nullVecs, &vec.Vec{})
	}
	for range pt {
		j.probeVecs = append(j.probeVecs, &vec.Vec{})
	}
	return j, nil
}

// Types implements Operator.
func (j *HashJoin) Types() []vec.Type { return j.outTypes }

// Init implements Operator.
func (j *HashJoin) Init(ctx context.Context) error { return j.probe.Init(ctx) }

func (j *HashJoin) build(ctx context.Context) error {
	t, err := NewJoinTable(j.buildTypes, j.spec.BuildKeys, j.budget)
	if err != nil {
		return err
	}
	j.table = t
	for _, b := range j.builds {
		if err := t.AddOperator(ctx, b); err != nil {
			return err
		}
	}
	j.builds = nil
	return t.Finish()
}

// Next implements Operator.
func (j *HashJoin) Next(ctx context.Context) (*vec.Batch, error) {
	if !j.ready {
		j.ready = true
		if err := j.build(ctx); err != nil {
			return nil, err
		}
	}
	if j.spec.Kind == JoinRightOuter && j.buildHit == nil {
		j.buildHit = make([]bool, j.table.Rows())
	}
	for {
		if j.cur != nil {
			// One probe batch can expand into millions of pairs (keys with many matches), and
			// the operators above pull batch after batch without looking at the context: look
			// here, or a cancelled query's workers run on until the expansion ends (minutes,
			// for a self-join on a column of seven values).
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out, err := j.nextPairs(ctx)
			if err != nil || out != nil {
				return out, err
			}
			continue
		}
		if j.probeDone {
			return j.nextUnmatchedBuild(), nil
		}
		b, err := j.probe.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			j.probeDone = true
			if j.spec.Kind != JoinRightOuter {
				return nil, nil
			}
			continue
		}
		out, err := j.startBatch(ctx, b)
		if err != nil {
			return nil, err
		}
		if out != nil && out.Len() > 0 {
			return out, nil
		}
	}
}

// startBatch looks up a probe batch's keys and either produces its output directly or
// starts the expansion of its matching pairs.
func (j *HashJoin) startBatch(ctx context.Context, b *vec.Batch) (*vec.Batch, error) {
	t := j.table
	rows := activeRowsOf(b.Sel, b.N, &j.ident)
	for k, c := range j.spec.ProbeKeys {
		j.keyVecs[k] = b.Cols[c]
	}
	live := rows
	if anyNulls(j.keyVecs) {
		live = j.live[:0]
		for _, i := range rows {
			if !rowHasNull(j.keyVecs, i) {
				live = append(live, i)
			}
		}
		j.live = live
	}
	j.gids = growTo(j.gids[:0], b.N)
	for _, i := range rows {
		j.gids[i] = -1
	}
	j.scratch.prepare(b.N)
	look := live
	runs := false
	if len(j.keyVecs) == 1 {
		// Probe rows clustered on the key (lineitem by l_orderkey) look up each run once.
		j.heads, runs = runHeads(j.keyVecs[0], live, j.heads[:0])
		if runs {
			look = j.heads
		}
	}
	if !t.ht.findDirect(j.keyVecs, look, j.gids) {
		if passed, ok := t.ht.filterRows(j.keyVecs, look, j.passed[:0]); ok {
			j.passed, look = passed, passed
		}
		hashRows(j.keyVecs, look, j.scratch.h, t.ht.seed)
		t.ht.find(j.keyVecs, look, j.gids, &j.scratch)
	}
	if runs {
		fillRuns(j.keyVecs[0], live, j.gids)
	}
	matched := nonNilSel(j.matched[:0]) // an empty selection must not read as "all rows"
	for _, i := range live {
		if j.gids[i] >= 0 {
			matched = append(matched, i)
		}
	}
	j.matched = matched
	kind := j.spec.Kind
	noPairs := (kind == JoinSemi || kind == JoinAnti || kind == JoinMark) && j.residual == nil
	if !t.unique && !noPairs {
		j.cur, j.curRows, j.k, j.cursor = b, matched, 0, -1
		j.hit = growTo(j.hit[:0], b.N)
		for _, i := range rows {
			j.hit[i] = false
		}
		return nil, nil
	}
	// Unique build keys, or no build columns needed: at most one candidate per probe row,
	// so the output keeps the probe batch's vectors.
	if !noPairs {
		j.brows = growTo(j.brows[:0], len(matched))
		for k, i := range matched {
			j.brows[k] = t.firstRow(j.gids[i])
		}
		if kind == JoinLeftOuter {
			j.gatherBuildAt(matched, j.brows, b.N)
		} else {
			j.gatherBuildListedAt(matched, j.brows, b.N)
		}
	}
	if j.residual != nil && len(matched) > 0 {
		pair := vec.Batch{Cols: j.concat(b.Cols, j.buildVecs), N: b.N, Sel: matched}
		sel, err := j.residual.Select(ctx, &pair)
		if err != nil {
			return nil, err
		}
		if sel != nil && len(sel) != len(matched) {
			// Keep the build rows of the surviving pairs.
			keep := j.brows[:0]
			k := 0
			for idx, i := range matched {
				if k < len(sel) && sel[k] == i {
					keep = append(keep, j.brows[idx])
					k++
				}
			}
			j.brows = keep
			matched = append(j.matched[:0], sel...)
			j.matched = matched
			if kind == JoinLeftOuter {
				j.gatherBuildAt(matched, j.brows, b.N)
			}
		}
	}
	switch kind {
	case JoinInner, JoinRightOuter:
		if kind == JoinRightOuter {
			for _, r := range j.brows {
				j.buildHit[r] = true
			}
		}
		return j.emit(j.concat(b.Cols, j.buildVecs), b.N, matched), nil
	case JoinLeftOuter:
		return j.emit(j.concat(b.Cols, j.buildVecs), b.N, b.Sel), nil
	case JoinSemi:
		return j.emit(b.Cols, b.N, matched), nil
	case JoinAnti:
		j.rest = subtractSorted(j.rest[:0], rows, matched)
		return j.emit(b.Cols, b.N, j.rest), nil
	}
	// Mark.
	j.hit = growTo(j.hit[:0], b.N)
	for _, i := range rows {
		j.hit[i] = false
	}
	for _, i := range matched {
		j.hit[i] = true
	}
	if err := j.computeMark(ctx, b, rows); err != nil {
		return nil, err
	}
	return j.emit(append(j.concat(b.Cols, nil), &j.markVec), b.N, b.Sel), nil
}

// gatherBuildAt attaches build rows brows to probe positions at (others NULL).
func (j *HashJoin) gatherBuildAt(at, brows []int32, n int) {
	for c, v := range j.buildVecs {
		v.GatherAt(j.table.store.cols[c], brows, at, n)
	}
}

// gatherBuildListedAt attaches build rows brows to probe positions at, leaving the other
// positions unspecified: for output whose selection is at.
func (j *HashJoin) gatherBuildListedAt(at, brows []int32, n int) {
	for c, v := range j.buildVecs {
		v.GatherListedAt(j.table.store.cols[c], brows, at, n)
	}
}

func (j *HashJoin) concat(a, b []*vec.Vec) []*vec.Vec {
	j.cols = append(append(j.cols[:0], a...), b...)
	return j.cols
}

// emit returns a batch over cols with the given selection (nil: all n rows); an empty
// selection yields nil.
func (j *HashJoin) emit(cols []*vec.Vec, n int, sel []int32) *vec.Batch {
	if sel != nil && len(sel) == 0 {
		return nil
	}
	j.out = vec.Batch{Cols: cols, N: n, Sel: sel}
	return &j.out
}

// subtractSorted appends to dst the members of a (ascending) not in b (an ascending subset).
func subtractSorted(dst, a, b []int32) []int32 {
	k := 0
	for _, v := range a {
		if k < len(b) && b[k] == v {
			k++
			continue
		}
		dst = append(dst, v)
	}
	if dst == nil {
		dst = []int32{}
	}
	return dst
}

// nextPairs expands the current probe batch's matches into dense pair batches.
func (j *HashJoin) nextPairs(ctx context.Context) (*vec.Batch, error) {
	t := j.table
	b := j.cur
	kind := j.spec.Kind
	for j.k < len(j.curRows) {
		pi, bi := j.pi[:0], j.bi[:0]
		for j.k < len(j.curRows) && len(pi) < j.batchRows {
			i := j.curRows[j.k]
			r := j.cursor
			if r < 0 {
				r = t.firstRow(j.gids[i])
			}
			for r >= 0 && len(pi) < j.batchRows {
				pi, bi = append(pi, i), append(bi, r)
				r = t.nextRow[r]
			}
			if r < 0 {
				j.k++
				j.cursor = -1
			} else {
				j.cursor = r
			}
		}
		j.pi, j.bi = pi, bi
		for c, v := range j.probeVecs {
			v.Gather(b.Cols[c], pi)
		}
		for c, v := range j.buildVecs {
			v.Gather(t.store.cols[c], bi)
		}
		pair := vec.Batch{Cols: j.concat(j.probeVecs, j.buildVecs), N: len(pi)}
		var sel []int32
		if j.residual != nil {
			var err error
			if sel, err = j.residual.Select(ctx, &pair); err != nil {
				return nil, err
			}
		}
		selected := activeRowsOf(sel, len(pi), &j.ident2)
		for _, s := range selected {
			j.hit[pi[s]] = true
			if kind == JoinRightOuter {
				j.buildHit[bi[s]] = true
			}
		}
		if kind == JoinInner || kind == JoinLeftOuter || kind == JoinRightOuter {
			if out := j.emit(pair.Cols, pair.N, sel); out != nil {
				return out, nil
			}
		}
	}
	// Every pair of the batch is done: the rows that depend on the whole batch.
	j.cur = nil
	rows := activeRowsOf(b.Sel, b.N, &j.ident)
	switch kind {
	case JoinLeftOuter:
		j.rest = j.rest[:0]
		for _, i := range rows {
			if !j.hit[i] {
				j.rest = append(j.rest, i)
			}
		}
		for c, v := range j.nullVecs {
			nullVec(v, j.buildTypes[c], b.N)
		}
		return j.emit(j.concat(b.Cols, j.nullVecs), b.N, nonNilSel(j.rest)), nil
	case JoinSemi, JoinAnti:
		want := kind == JoinSemi
		j.rest = j.rest[:0]
		for _, i := range rows {
			if j.hit[i] == want {
				j.rest = append(j.rest, i)
			}
		}
		return j.emit(b.Cols, b.N, nonNilSel(j.rest)), nil
	case JoinMark:
		if err := j.computeMark(ctx, b, rows); err != nil {
			return nil, err
		}
		return j.emit(append(j.concat(b.Cols, nil), &j.markVec), b.N, b.Sel), nil
	}
	return nil, nil
}

func nonNilSel(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// computeMark fills markVec for the batch's rows from j.hit (rows with a TRUE match) and
// the NULL rules of IN.
func (j *HashJoin) computeMark(ctx context.Context, b *vec.Batch, rows []int32) error {
	t := j.table
	m := &j.markVec
	m.Prepare(vec.BoolType, b.N)
	nkeys := len(j.spec.ProbeKeys)
	corr := nkeys - j.markKeys
	for _, i := range rows {
		m.Bool[i] = false
		if j.hit[i] {
			m.Bool[i] = true
			continue
		}
		if t.Rows() == 0 {
			continue
		}
		corrNull, inNull := false, false
		for k, c := range j.spec.ProbeKeys {
			if b.Cols[c].IsNull(int(i)) {
				if k < corr {
					corrNull = true
				} else {
					inNull = true
				}
			}
		}
		if corrNull || (!inNull && len(t.nullRows) == 0) {
			continue // no build row can make the comparison unknown
		}
		// With one IN key and nothing else selecting build rows, a NULL on either side
		// (the probe's, or some build row's) makes the result unknown.
		unknown := false
		if corr == 0 && j.residual == nil && j.markKeys == 1 {
			unknown = true
		} else {
			var err error
			if unknown, err = j.maybeMatch(ctx, b, i, inNull, corr); err != nil {
				return err
			}
		}
		if unknown {
			if m.Nulls == nil {
				m.PrepareNulls(b.N)
			}
			m.Nulls[i] = true
		}
	}
	return nil
}

// maybeMatch reports whether some build row in probe row i's set compares as unknown:
// correlation keys equal, each IN key equal or NULL on a side, residual TRUE.
func (j *HashJoin) maybeMatch(ctx context.Context, b *vec.Batch, i int32, inNull bool, corr int) (bool, error) {
	t := j.table
	cands := j.cands[:0]
	consider := func(r int32) {
		for k, pc := range j.spec.ProbeKeys {
			bc := t.keyCols[k]
			pv, bv := b.Cols[pc], t.store.cols[bc]
			if k < corr {
				if bv.IsNull(int(r)) || !vec.RowsEqual(pv, int(i), bv, int(r)) {
					return
				}
				continue
			}
			if pv.IsNull(int(i)) || bv.IsNull(int(r)) {
				continue
			}
			if !vec.RowsEqual(pv, int(i), bv, int(r)) {
				return
			}
		}
		cands = append(cands, r)
	}
	if inNull {
		for r := int32(0); r < int32(t.Rows()); r++ {
			consider(r)
		}
	} else {
		for _, r := range t.nullRows {
			consider(r)
		}
	}
	j.cands = cands
	if len(cands) == 0 {
		return false, nil
	}
	if j.residual == nil {
		return true, nil
	}
	for start := 0; start < len(cands); start += j.batchRows {
		chunk := cands[start:min(start+j.batchRows, len(cands))]
		pi := j.pi[:0]
		for range chunk {
			pi = append(pi, i)
		}
		j.pi = pi
		for c, v := range j.probeVecs {
			v.Gather(b.Cols[c], pi)
		}
		for c, v := range j.buildVecs {
			v.Gather(t.store.cols[c], chunk)
		}
		pair := vec.Batch{Cols: j.concat(j.probeVecs, j.buildVecs), N: len(chunk)}
		sel, err := j.residual.Select(ctx, &pair)
		if err != nil {
			return false, err
		}
		if sel == nil || len(sel) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// nextUnmatchedBuild emits, after the probe side ends, the build rows no probe row matched
// (right outer join), with NULL probe columns.
func (j *HashJoin) nextUnmatchedBuild() *vec.Batch {
	t := j.table
	idx := j.bi[:0]
	for j.emitPos < t.Rows() && len(idx) < j.batchRows {
		if !j.buildHit[j.emitPos] {
			idx = append(idx, int32(j.emitPos))
		}
		j.emitPos++
	}
	j.bi = idx
	if len(idx) == 0 {
		return nil
	}
	for c, v := range j.buildVecs {
		v.Gather(t.store.cols[c], idx)
	}
	for c, v := range j.probeVecs {
		nullVec(v, j.probeTypes[c], len(idx))
	}
	return j.emit(j.concat(j.probeVecs, j.buildVecs), len(idx), nil)
}

// Close implements Operator.
func (j *HashJoin) Close() error {
	var err error
	for _, b := range j.builds {
		if e := b.Close(); e != nil && err == nil {
			err = e
		}
	}
	if j.ownsTable && j.table != nil {
		j.table.Release()
	}
	if e := j.probe.Close(); e != nil && err == nil {
		err = e
	}
	return err
}
