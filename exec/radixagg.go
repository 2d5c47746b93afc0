package exec

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"sync"

	"github.com/colinkdb/colink/exec/vec"
)

// Radix-partitioned aggregation: merging partial states with about as many groups as rows
// (Q18's inner l_orderkey: two workers' 1.5 M partial groups each at SF 1, 15 M at SF 10)
// in tables of all the groups makes every lookup and update several misses to memory.
// Instead the rows are dealt into radixParts partitions by bits of their key's hash and
// kept, and once the input has ended each partition is aggregated on its own in a table
// sized for it, which stays in cache; the rows were only written and read in order.
//
// Two producers of partitions: a fragment's scanning workers, each dealing its partial
// groups into its own radixSet of a Partitioner (no dealer, no Arrow records between
// them), which NewPartitionedAggregate's workers then share out partition by partition;
// and a ParallelAggregate's workers, each partitioning the share the dealer sends it,
// chosen when its input is partial states whose first rows are mostly distinct keys
// (manyGroups: exemgr merging several primprocs' groups). The price is that the input is
// held until it ends, charged to the budget.

const (
	// radixParts is the number of partitions of a set: Q18's inner aggregation gives a
	// partition about 12 K groups at SF 1 (a table within a core's 1 MiB cache) and 120 K
	// at SF 10 (a few MiB, within the shared cache).
	radixPartBits = 7
	radixParts    = 1 << radixPartBits
	// radixPartRows is the rows of each batch a partition is kept in, and radixFirstRows
	// the room its first batch starts with.
	radixPartRows  = 4096
	radixFirstRows = 256
	// radixSalt decorrelates the partition from the deal (dealSalt) and the tables' slots.
	radixSalt = 0x9fb21c651e98df25
	// radixAccountEvery is how many received batches pass between charges to the budget.
	radixAccountEvery = 16
	// manyGroupsShare is the share of distinct keys among the first rows from which the
	// input is aggregated by partitions: a denser input reduces well in streaming tables,
	// which need not hold it.
	manyGroupsShare = 0.75
	// distinctBits sizes the bitmap that estimates the first rows' distinct keys.
	distinctLog  = 20
	distinctBits = 1 << distinctLog
)

// manyGroups reports whether head's keys are mostly distinct, by linear counting over
// their hashes (a bitmap of distinctBits bits; exact enough for the head's 128 K rows).
func (p *ParallelAggregate) manyGroups(head []*vec.Batch) bool {
	bits := make([]uint64, distinctBits/64)
	keys := make([]*vec.Vec, len(p.keyCols))
	rows := 0
	for _, b := range head {
		// Head batches are dense copies (readHead).
		r := identity(&p.ident, b.N)
		p.h = growTo(p.h[:0], b.N)
		for k, c := range p.keyCols {
			keys[k] = b.Cols[c]
		}
		hashRows(keys, r, p.h, p.seed)
		for _, i := range r {
			x := mix64(p.h[i]^radixSalt) >> (64 - distinctLog)
			bits[x>>6] |= 1 << (x & 63)
		}
		rows += b.N
	}
	if rows == 0 {
		return false
	}
	set := 0
	for _, w := range bits {
		for ; w != 0; w &= w - 1 {
			set++
		}
	}
	zeros := float64(distinctBits - set)
	if zeros == 0 {
		return true
	}
	distinct := -float64(distinctBits) * math.Log(zeros/float64(distinctBits))
	return distinct >= p.radixShare*float64(rows)
}

// Partitioner holds the radix sets of one aggregation's producers (a fragment's scanning
// workers), which deal their partial groups into them for NewPartitionedAggregate.
type Partitioner struct {
	sets []*radixSet
}

// NewPartitioner makes sets for producers producers of rows of types, grouped by keyCols.
func NewPartitioner(producers int, types []vec.Type, keyCols []int, budget *Budget) *Partitioner {
	seed := maphash.MakeSeed()
	p := &Partitioner{}
	for range producers {
		p.sets = append(p.sets, newRadixSet(types, keyCols, seed, budget))
	}
	return p
}

// Drain deals all of op's output into producer i's set; op is neither initialized nor
// closed here.
func (p *Partitioner) Drain(ctx context.Context, i int, op Operator) error {
	if err := p.add(ctx, i, op); err != nil {
		return err
	}
	return p.sets[i].finish()
}

// add deals all of op's output into producer i's set, which takes more (then finish) later;
// op is neither initialized nor closed here.
func (p *Partitioner) add(ctx context.Context, i int, op Operator) error {
	s := p.sets[i]
	for {
		b, err := op.Next(ctx)
		if err != nil || b == nil {
			return err
		}
		if err := s.add(b); err != nil {
			return err
		}
	}
}

// Release recycles what the sets still hold; the aggregation over them must be closed.
func (p *Partitioner) Release() {
	if p == nil {
		return
	}
	for _, s := range p.sets {
		s.release()
	}
}

// radixPartition is one partition's rows: the batches it is kept in, the last one being
// filled.
type radixPartition struct {
	batches []*vec.Batch
	rows    int
}

// radixSet is one producer's rows dealt into radixParts partitions by their key's hash
// (seeded, so that every set of one aggregation agrees on a key's partition). Only its
// producer adds to it; the arrays come from the budget's pool and are charged to it.
type radixSet struct {
	types   []vec.Type
	keyCols []int
	seed    maphash.Seed
	pool    *vec.Pool
	acct    *Account
	parts   []radixPartition
	mu      sync.Mutex // guards sealed and acct once the set is finished (drop)
	sealed  int64      // bytes of the batches no longer appended to
	added   int        // batches added
	h       []uint64
	ident   []int32
	sel     [radixParts][]int32
	keys    []*vec.Vec
}

func newRadixSet(types []vec.Type, keyCols []int, seed maphash.Seed, budget *Budget) *radixSet {
	return &radixSet{types: types, keyCols: keyCols, seed: seed, pool: budget.Pool(),
		acct: budget.NewAccount("aggregate partitions"), parts: make([]radixPartition, radixParts),
		keys: make([]*vec.Vec, len(keyCols))}
}

// add deals b's active rows into the partitions.
func (s *radixSet) add(b *vec.Batch) error {
	rows := activeRowsOf(b.Sel, b.N, &s.ident)
	s.h = growTo(s.h[:0], b.N)
	for k, c := range s.keyCols {
		s.keys[k] = b.Cols[c]
	}
	hashRows(s.keys, rows, s.h, s.seed)
	for q := range s.sel {
		s.sel[q] = s.sel[q][:0]
	}
	for _, i := range rows {
		q := mix64(s.h[i]^radixSalt) >> (64 - radixPartBits)
		s.sel[q] = append(s.sel[q], i)
	}
	for q, r := range s.sel {
		if len(r) == 0 {
			continue
		}
		part := &s.parts[q]
		n := len(part.batches)
		if n == 0 || part.batches[n-1].N+len(r) > radixPartRows {
			if n > 0 {
				s.sealed += batchMemSize(part.batches[n-1])
			}
			// A partition's first batch starts small, so that a few groups do not
			// reserve every partition's full batch.
			room := radixPartRows
			if n == 0 {
				room = radixFirstRows
			}
			part.batches = append(part.batches, newReservedBatch(s.types, s.pool, max(room, len(r))))
		}
		fill := part.batches[len(part.batches)-1]
		for c, v := range fill.Cols {
			v.ReserveFrom(s.pool, len(r)) // doubling, up to radixPartRows
			v.AppendFrom(b.Cols[c], r, b.N)
		}
		fill.N += len(r)
		part.rows += len(r)
	}
	if s.added++; s.added%radixAccountEvery == 0 {
		return s.account()
	}
	return nil
}

// rows is the number of rows the set holds.
func (s *radixSet) rows() int {
	n := 0
	for q := range s.parts {
		n += s.parts[q].rows
	}
	return n
}

// account charges the rows held to the budget.
func (s *radixSet) account() error {
	return s.acct.Resize(s.sealed + openBytes(s.parts))
}

// finish ends the adding: every batch counts as sealed from now on.
func (s *radixSet) finish() error {
	s.sealed += openBytes(s.parts)
	s.added = 0
	return s.acct.Resize(s.sealed)
}

// drop recycles partition q's batches, once aggregated. The aggregation's workers drop
// partitions of one set concurrently (each its own partitions): mu guards the charge.
func (s *radixSet) drop(q int) error {
	var freed int64
	for _, b := range s.parts[q].batches {
		freed += batchMemSize(b)
		recycleBatch(b, s.pool)
	}
	s.parts[q] = radixPartition{}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealed -= freed
	return s.acct.Resize(s.sealed)
}

// release recycles everything the set holds.
func (s *radixSet) release() {
	for q := range s.parts {
		for _, b := range s.parts[q].batches {
			recycleBatch(b, s.pool)
		}
		s.parts[q] = radixPartition{}
	}
	s.acct.Close()
}

// workRadix is worker w's aggregation by partitions (see the comment above). Without
// producers' sets (p.sets) it first deals the rows it receives into a set of its own and
// then aggregates each of its partitions; with them, the producers have dealt the rows and
// worker w aggregates partitions w, w+W, w+2W, … of every set.
func (p *ParallelAggregate) workRadix(w *aggWorker, wi int) error {
	sets, first, step := p.sets, wi, len(p.workers)
	if sets == nil {
		own := newRadixSet(p.input.Types(), p.keyCols, p.seed, p.budget)
		defer own.release()
		for done := false; !done; {
			select {
			case b, ok := <-w.recv:
				if !ok {
					done = true
					break
				}
				err := own.add(b)
				select {
				case w.free <- b:
				default:
				}
				if err != nil {
					return err
				}
			case <-p.ctx.Done():
				return nil
			}
		}
		if err := own.finish(); err != nil {
			return err
		}
		sets, first, step = []*radixSet{own}, 0, 1
	}
	var batches []*vec.Batch
	for q := first; q < radixParts; q += step {
		batches = batches[:0]
		rows := 0
		for _, s := range sets {
			batches = append(batches, s.parts[q].batches...)
			rows += s.parts[q].rows
		}
		if rows == 0 {
			continue
		}
		if err := p.aggregatePartition(w, batches, rows); err != nil {
			return err
		}
		for _, s := range sets {
			if err := s.drop(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// aggregatePartition aggregates one partition's rows in a table sized for them and sends
// its groups to w.out.
func (p *ParallelAggregate) aggregatePartition(w *aggWorker, batches []*vec.Batch, rows int) error {
	agg, err := NewHashAggregate(NewBatchSource(p.input.Types(), batches...), p.spec, p.phase, p.budget)
	if err != nil {
		return err
	}
	defer agg.Close()
	agg.expect(rows)
	if err := agg.Init(p.ctx); err != nil {
		return err
	}
	for {
		b, err := agg.Next(p.ctx)
		if err != nil {
			return fmt.Errorf("aggregate worker: %w", err)
		}
		if b == nil {
			return nil
		}
		if !p.emit(w, b) {
			return nil
		}
	}
}

// newReservedBatch is an empty batch of types with room for n rows, from pool.
func newReservedBatch(types []vec.Type, pool *vec.Pool, n int) *vec.Batch {
	b := &vec.Batch{Cols: make([]*vec.Vec, len(types))}
	for c, t := range types {
		v := vec.NewVec(t)
		v.ReserveFrom(pool, n)
		b.Cols[c] = v
	}
	return b
}

// recycleBatch gives b's arrays back to pool.
func recycleBatch(b *vec.Batch, pool *vec.Pool) {
	for _, v := range b.Cols {
		v.Recycle(pool)
	}
}

func batchMemSize(b *vec.Batch) int64 {
	var n int64
	for _, v := range b.Cols {
		n += v.MemSize()
	}
	return n
}

// openBytes is the size of the batches the partitions are filling.
func openBytes(parts []radixPartition) int64 {
	var n int64
	for q := range parts {
		if k := len(parts[q].batches); k > 0 {
			n += batchMemSize(parts[q].batches[k-1])
		}
	}
	return n
}
