package exec

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/vec"
)

// AggPhase says what a HashAggregate consumes and produces.
//
//	complete  raw rows      -> final values      (one-phase aggregation)
//	partial   raw rows      -> partial states    (primproc, per worker)
//	merge     partial states -> partial states   (primproc, combining its workers)
//	final     partial states -> final values     (exemgr, combining primprocs)
//
// The partial layout is the group keys followed by each aggregate's state columns (see
// aggTypes: one column per aggregate, two for AVG: sum then count). In the merge and final
// phases the input must have that layout; GroupBy and Col are then ignored.
type AggPhase uint8

// The aggregation phases.
const (
	AggComplete AggPhase = iota
	AggPartial
	AggMerge
	AggFinal
)

func (p AggPhase) String() string {
	return [...]string{"complete", "partial", "merge", "final"}[p]
}

func (p AggPhase) rawInput() bool    { return p == AggComplete || p == AggPartial }
func (p AggPhase) finalOutput() bool { return p == AggComplete || p == AggFinal }

// AggSpec describes an aggregation: group by the input columns GroupBy (none: one group,
// even over no rows), computing Aggs.
type AggSpec struct {
	GroupBy []int       `msgpack:"group_by"`
	Aggs    []Aggregate `msgpack:"aggs"`
}

// PartialTypes is the partial layout's column types for raw input of the given types.
func (s AggSpec) PartialTypes(input []vec.Type) ([]vec.Type, error) {
	return s.types(input, false)
}

// ResultTypes is the final output's column types (group keys, then one column per
// aggregate) for raw input of the given types.
func (s AggSpec) ResultTypes(input []vec.Type) ([]vec.Type, error) {
	return s.types(input, true)
}

func (s AggSpec) types(input []vec.Type, final bool) ([]vec.Type, error) {
	var out []vec.Type
	for _, c := range s.GroupBy {
		if c < 0 || c >= len(input) {
			return nil, fmt.Errorf("aggregate: group-by column #%d does not exist (input has %d columns)", c, len(input))
		}
		out = append(out, input[c])
	}
	for k, a := range s.Aggs {
		in := vec.Int64Type
		if a.Func != AggCountStar {
			if a.Col < 0 || a.Col >= len(input) {
				return nil, fmt.Errorf("aggregate %d (%s): column #%d does not exist (input has %d columns)", k, a.Func, a.Col, len(input))
			}
			in = input[a.Col]
		}
		st, res, err := aggTypes(a, in)
		if err != nil {
			return nil, fmt.Errorf("aggregate %d: %w", k, err)
		}
		if final {
			out = append(out, res)
		} else {
			out = append(out, st...)
		}
	}
	return out, nil
}

// HashAggregate groups its input in a hash table and computes aggregates per group. It
// buffers every group (charging the query's budget) and emits them after its input ends,
// in the order groups were first seen.
type HashAggregate struct {
	input     Operator
	spec      AggSpec
	phase     AggPhase
	batchRows int
	acct      *Account
	pool      *vec.Pool // the budget's: where the table and the states' arrays come from

	keyCols  []int   // input columns of the group keys
	argCols  [][]int // per aggregate: raw input column, or its state columns
	fns      []aggFn
	outTypes []vec.Type
	nstate   []int // per aggregate: number of state columns

	ht       *hashTable // nil without GROUP BY
	scratch  probeScratch
	gids     []int32
	ident    []int32
	keyVecs  []*vec.Vec
	live     []int32
	distinct []*distinctSet // per aggregate, nil unless Distinct

	groups  int
	emitted int
	out     vec.Batch
	outVecs []*vec.Vec

	// Rows of the current batch grouped by group (for few groups): sorted[runs[k].start:
	// runs[k].end] belong to group runs[k].g.
	runCount []int32
	sorted   []int32
	runs     []groupRun

	// Packed keys (see keyPacker); packer is nil once they do not apply.
	packer     *keyPacker
	words      *wordMap
	packedKeys []uint64
	oneRow     []int32
	heads      []int32

	// A partial aggregation whose table has stopped reducing its input (nearly every
	// lookup a new group, as when the input comes in key order: lineitem in dbgen's order,
	// grouped by l_orderkey) flushes: from then on it emits its groups whenever it holds flushGroups
	// and starts again with an empty table small enough to stay in cache, instead of
	// growing one table the size of the input. Its output may then hold a group more than
	// once, which the merge after it takes as it takes the workers' overlapping groups.
	flushing    bool
	inputDone   bool
	windowLooks int // hash lookups since the decision window began
	windowStart int // groups when it began
}

const (
	// flushWindow is how many lookups a decision to flush looks back on, and
	// flushMinGroups the groups below which a table is kept however little it reduces:
	// while small it costs little.
	flushWindow    = 1 << 16
	flushMinGroups = 1 << 16
	// flushGroups is the groups at which a flushing aggregation emits and starts again.
	flushGroups = 1 << 13
)

// maxPackedGroups bounds the groups found through packed keys; beyond it the general hash
// table is as good and the word map would only double the memory.
const maxPackedGroups = 1 << 16

// findPacked sets a.gids through packed keys, if the keys pack; it reports whether it did.
func (a *HashAggregate) findPacked(rows []int32, n int) (bool, error) {
	p := a.packer
	if p == nil {
		return false, nil
	}
	if a.words == nil {
		if !p.layout(a.keyVecs, rows) {
			a.packer = nil
			return false, nil
		}
		a.words = newWordMap()
	}
	a.packedKeys = growTo(a.packedKeys[:0], n)
	if a.ht.len() > maxPackedGroups || !p.pack(a.keyVecs, rows, a.packedKeys) {
		a.packer, a.words = nil, nil
		return false, nil
	}
	for _, i := range rows {
		k := a.packedKeys[i]
		g := a.words.get(k)
		if g < 0 {
			// A new key (for this map): find or insert it in the general table.
			one := a.oneRow[:0]
			one = append(one, i)
			a.oneRow = one
			hashRows(a.keyVecs, one, a.scratch.h, a.ht.seed)
			if err := a.ht.findOrInsert(a.keyVecs, one, a.gids, &a.scratch, nil); err != nil {
				return false, err
			}
			g = a.gids[i]
			a.words.put(k, g)
		}
		a.gids[i] = g
	}
	return true, nil
}

// maxRunGroups is the group count up to which a batch's rows are grouped into runs, so
// that each aggregate accumulates a run in a register instead of through memory.
const maxRunGroups = 512

// groupRun is a stretch of a batch's rows that belong to one group.
type groupRun struct {
	g          int32
	start, end int32
}

// runAdder is implemented by aggregates that can consume rows grouped into runs.
type runAdder interface {
	addRuns(v *vec.Vec, rows []int32, runs []groupRun) error
}

// groupRuns sorts the rows by group (a counting sort) into a.sorted and a.runs.
func (a *HashAggregate) groupRuns(rows []int32) {
	cnt := growTo(a.runCount[:0], a.groups+1)
	clear(cnt)
	for _, i := range rows {
		cnt[a.gids[i]+1]++
	}
	a.runs = a.runs[:0]
	for g := 0; g < a.groups; g++ {
		if n := cnt[g+1]; n > 0 {
			a.runs = append(a.runs, groupRun{g: int32(g), start: cnt[g], end: cnt[g] + n})
		}
		cnt[g+1] += cnt[g]
	}
	a.sorted = growTo(a.sorted[:0], len(rows))
	for _, i := range rows {
		g := a.gids[i]
		a.sorted[cnt[g]] = i
		cnt[g]++
	}
	a.runCount = cnt
}

// NewHashAggregate builds an aggregation of input. budget may be nil.
func NewHashAggregate(input Operator, spec AggSpec, phase AggPhase, budget *Budget) (*HashAggregate, error) {
	in := input.Types()
	a := &HashAggregate{input: input, spec: spec, phase: phase, batchRows: vec.DefaultBatchRows,
		acct: budget.NewAccount("hash aggregate"), pool: budget.Pool()}
	var rawTypes []vec.Type // the raw input types each aggregate saw
	if phase.rawInput() {
		if _, err := spec.PartialTypes(in); err != nil {
			return nil, err
		}
		a.keyCols = spec.GroupBy
		for _, ag := range spec.Aggs {
			t := vec.Int64Type
			if ag.Func != AggCountStar {
				t = in[ag.Col]
			}
			rawTypes = append(rawTypes, t)
			a.argCols = append(a.argCols, []int{ag.Col})
		}
	} else {
		k := len(spec.GroupBy)
		for i := 0; i < k; i++ {
			a.keyCols = append(a.keyCols, i)
		}
		col := k
		for i, ag := range spec.Aggs {
			if col >= len(in) {
				return nil, fmt.Errorf("aggregate: %s input has %d columns, too few for the partial layout", phase, len(in))
			}
			// Recover the raw input type from the state type: what matters is the state.
			t := in[col]
			switch ag.Func {
			case AggCountStar, AggCount:
				t = vec.Int64Type
			case AggSum, AggAvg:
				if t.ID != vec.Float64 && !t.IsDecimal() {
					return nil, fmt.Errorf("aggregate %d: %s state is %s", i, ag.Func, t)
				}
			}
			st, _, err := aggTypes(ag, t)
			if err != nil {
				return nil, fmt.Errorf("aggregate %d: %w", i, err)
			}
			if col+len(st) > len(in) {
				return nil, fmt.Errorf("aggregate: %s input has %d columns, too few for the partial layout", phase, len(in))
			}
			for j, s := range st {
				if in[col+j] != s {
					return nil, fmt.Errorf("aggregate %d (%s): state column #%d is %s, expected %s", i, ag.Func, col+j, in[col+j], s)
				}
			}
			cols := make([]int, len(st))
			for j := range st {
				cols[j] = col + j
			}
			a.argCols = append(a.argCols, cols)
			rawTypes = append(rawTypes, t)
			col += len(st)
			if ag.Distinct {
				return nil, fmt.Errorf("aggregate %d: %s(DISTINCT) has no partial state; aggregate it in one complete phase", i, ag.Func)
			}
		}
		if col != len(in) {
			return nil, fmt.Errorf("aggregate: %s input has %d columns, the partial layout %d", phase, len(in), col)
		}
	}
	var keyTypes []vec.Type
	for _, c := range a.keyCols {
		keyTypes = append(keyTypes, in[c])
	}
	a.outTypes = append(a.outTypes, keyTypes...)
	for i, ag := range spec.Aggs {
		if ag.Distinct && phase != AggComplete {
			return nil, fmt.Errorf("aggregate %d: %s(DISTINCT) needs the complete phase", i, ag.Func)
		}
		if ag.Func == AggGroupConcat && phase != AggComplete {
			return nil, fmt.Errorf("aggregate %d: %s needs the complete phase", i, ag.Func)
		}
		fn, err := newAggFn(ag, rawTypes[i])
		if err != nil {
			return nil, fmt.Errorf("aggregate %d: %w", i, err)
		}
		a.fns = append(a.fns, fn)
		st, res, _ := aggTypes(ag, rawTypes[i])
		a.nstate = append(a.nstate, len(st))
		if phase.finalOutput() {
			a.outTypes = append(a.outTypes, res)
		} else {
			a.outTypes = append(a.outTypes, st...)
		}
		var ds *distinctSet
		if ag.Distinct {
			ds = newDistinctSet(rawTypes[i], a.pool)
		}
		a.distinct = append(a.distinct, ds)
	}
	if len(a.keyCols) > 0 {
		a.ht = newHashTable(keyTypes, nil, a.pool)
		a.keyVecs = make([]*vec.Vec, len(a.keyCols))
		a.packer = newKeyPacker(keyTypes)
	}
	for range a.outTypes {
		a.outVecs = append(a.outVecs, &vec.Vec{})
	}
	return a, nil
}

// Types implements Operator.
func (a *HashAggregate) Types() []vec.Type { return a.outTypes }

// expect sizes the table for up to rows groups before the first batch, sparing the
// regrowths of a table whose size is known (a partition of a radix aggregation).
func (a *HashAggregate) expect(rows int) {
	if a.ht != nil && a.ht.len() == 0 {
		a.ht.reserve(rows)
	}
}

// Init implements Operator.
func (a *HashAggregate) Init(ctx context.Context) error { return a.input.Init(ctx) }

// consume adds input batches until the input ends or, for a partial aggregation, until
// its groups should be emitted before it goes on (see flushing).
func (a *HashAggregate) consume(ctx context.Context) error {
	for {
		b, err := a.input.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if err := a.addBatch(b); err != nil {
			return err
		}
		if a.flushing {
			if a.groups >= flushGroups {
				return nil
			}
		} else if a.startsFlushing() {
			return nil
		}
	}
	a.inputDone = true
	if a.ht == nil {
		a.groups = 1 // no GROUP BY: one group, even without rows
		for _, f := range a.fns {
			f.resize(a.pool, 1)
		}
	}
	return a.account()
}

// startsFlushing decides, once a window of lookups has passed, whether a partial
// aggregation turns to flushing: its table is large and nine in ten of the window's
// lookups were new groups.
func (a *HashAggregate) startsFlushing() bool {
	if a.phase != AggPartial || a.ht == nil || a.windowLooks < flushWindow {
		return false
	}
	fresh, looks := a.groups-a.windowStart, a.windowLooks
	a.windowLooks, a.windowStart = 0, a.groups
	if a.groups < flushMinGroups || fresh*10 < looks*9 {
		return false
	}
	a.flushing = true
	a.packer, a.words = nil, nil
	return true
}

// restart empties a flushing aggregation whose groups have all been emitted.
func (a *HashAggregate) restart() {
	a.ht.reset(slotsFor(flushGroups + a.batchRows))
	for _, f := range a.fns {
		f.release(a.pool)
	}
	a.groups, a.emitted = 0, 0
}

func (a *HashAggregate) account() error {
	var n int64
	if a.ht != nil {
		n += a.ht.memSize()
	}
	if a.words != nil {
		n += a.words.memSize()
	}
	for i, f := range a.fns {
		n += f.memSize()
		if a.distinct[i] != nil {
			n += a.distinct[i].t.memSize()
		}
	}
	return a.acct.Resize(n)
}

func (a *HashAggregate) addBatch(b *vec.Batch) error {
	rows := b.Sel
	if rows == nil {
		rows = identity(&a.ident, b.N)
	}
	a.gids = growTo(a.gids[:0], b.N)
	if a.ht != nil {
		for k, c := range a.keyCols {
			a.keyVecs[k] = b.Cols[c]
		}
		a.scratch.prepare(b.N)
		packed, err := a.findPacked(rows, b.N)
		if err != nil {
			return err
		}
		if !packed {
			look := rows
			runs := false
			if len(a.keyVecs) == 1 {
				a.heads, runs = runHeads(a.keyVecs[0], rows, a.heads[:0])
				if runs {
					look = a.heads
				}
			}
			a.windowLooks += len(look)
			hashRows(a.keyVecs, look, a.scratch.h, a.ht.seed)
			if err := a.ht.findOrInsert(a.keyVecs, look, a.gids, &a.scratch, nil); err != nil {
				return err
			}
			if runs {
				fillRuns(a.keyVecs[0], rows, a.gids)
			}
		}
		a.groups = a.ht.len()
	} else {
		for _, i := range rows {
			a.gids[i] = 0
		}
		a.groups = 1
	}
	useRuns := a.groups <= maxRunGroups && a.phase.rawInput()
	if useRuns {
		a.groupRuns(rows)
	}
	for k, f := range a.fns {
		f.resize(a.pool, a.groups)
		ag := a.spec.Aggs[k]
		var err error
		if ra, ok := f.(runAdder); ok && useRuns && a.distinct[k] == nil {
			if ag.Func == AggCountStar {
				err = ra.addRuns(nil, a.sorted, a.runs)
			} else if v := b.Cols[ag.Col]; v.Nulls == nil {
				err = ra.addRuns(v, a.sorted, a.runs)
			} else {
				goto general
			}
			if err != nil {
				return err
			}
			continue
		}
	general:
		switch {
		case !a.phase.rawInput():
			states := make([]*vec.Vec, len(a.argCols[k]))
			for j, c := range a.argCols[k] {
				states[j] = b.Cols[c]
			}
			err = f.merge(states, rows, a.gids)
		case ag.Func == AggCountStar:
			err = f.add(nil, rows, a.gids)
		default:
			v := b.Cols[ag.Col]
			live := rows
			if v.Nulls != nil {
				live = a.live[:0]
				for _, i := range rows {
					if !v.Nulls[i] {
						live = append(live, i)
					}
				}
				a.live = live
			}
			if ds := a.distinct[k]; ds != nil {
				if live, err = ds.filter(v, live, a.gids, b.N); err != nil {
					return err
				}
			}
			err = f.add(v, live, a.gids)
		}
		if err != nil {
			return err
		}
	}
	return a.account()
}

// Next implements Operator.
func (a *HashAggregate) Next(ctx context.Context) (*vec.Batch, error) {
	for a.emitted >= a.groups {
		if a.inputDone {
			return nil, nil
		}
		if a.flushing && a.groups > 0 {
			a.restart()
		}
		if err := a.consume(ctx); err != nil {
			return nil, err
		}
	}
	start := a.emitted
	end := min(start+a.batchRows, a.groups)
	a.emitted = end
	cols := a.out.Cols[:0]
	for c := range a.keyCols {
		v := a.outVecs[c]
		v.View(a.ht.keys[c], start, end)
		cols = append(cols, v)
	}
	o := len(a.keyCols)
	for k, f := range a.fns {
		if a.phase.finalOutput() {
			if err := f.final(a.outVecs[o], start, end); err != nil {
				return nil, err
			}
			cols = append(cols, a.outVecs[o])
			o++
			continue
		}
		outs := a.outVecs[o : o+a.nstate[k]]
		if err := f.partial(outs, start, end); err != nil {
			return nil, err
		}
		cols = append(cols, outs...)
		o += a.nstate[k]
	}
	a.out = vec.Batch{Cols: cols, N: end - start}
	return &a.out, nil
}

// Close implements Operator. The groups' memory goes back to the pool: no batch the
// aggregate returned may be used afterwards.
func (a *HashAggregate) Close() error {
	a.ht.release()
	for i, f := range a.fns {
		f.release(a.pool)
		if d := a.distinct[i]; d != nil {
			d.t.release()
		}
	}
	a.acct.Close()
	return a.input.Close()
}

// distinctSet remembers (group, value) pairs for an aggregate over DISTINCT values.
type distinctSet struct {
	t       *hashTable
	gidVec  vec.Vec
	keys    []*vec.Vec
	scratch probeScratch
	ids     []int32
	fresh   []int32
}

func newDistinctSet(t vec.Type, pool *vec.Pool) *distinctSet {
	return &distinctSet{t: newHashTable([]vec.Type{vec.Int64Type, t}, nil, pool)}
}

// filter returns the rows whose (group, value) pair has not been seen before.
func (d *distinctSet) filter(v *vec.Vec, rows []int32, gids []int32, n int) ([]int32, error) {
	d.gidVec.Prepare(vec.Int64Type, n)
	for _, i := range rows {
		d.gidVec.I64[i] = int64(gids[i])
	}
	d.keys = append(d.keys[:0], &d.gidVec, v)
	d.scratch.prepare(n)
	d.ids = growTo(d.ids[:0], n)
	hashRows(d.keys, rows, d.scratch.h, d.t.seed)
	d.fresh = d.fresh[:0]
	if err := d.t.findOrInsert(d.keys, rows, d.ids, &d.scratch, &d.fresh); err != nil {
		return nil, err
	}
	return d.fresh, nil
}
