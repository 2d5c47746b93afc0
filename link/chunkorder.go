package link

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// chunkOrder hands one upload the records of the chunks dealt to it in chunk order, while
// up to window of them are produced at once. Sent as they came, two workers' chunks would
// interleave in the primproc's segments: a table generated in key order (lineitem by
// l_orderkey) would then have every segment span two chunks' keys, overlapping its
// neighbours, where in order each segment holds a run of keys that no other segment does
// (which lets a fragment finish the groups of such a key segment by segment; see exec's
// KeyedRecordStream). The chunk being sent holds at most queue records waiting; the chunks
// after it, produced ahead, hold theirs until their turn, so the buffer is at most about
// window-1 chunks.
type chunkOrder struct {
	ctx    context.Context
	window int
	queue  int
	pos    map[int]int // chunk -> its place among the upload's chunks
	chunks []chunkQueue

	mu      sync.Mutex
	cond    *sync.Cond
	head    int  // the place of the chunk being sent
	stopped bool // no more chunks will be produced
}

// chunkQueue is one chunk's records waiting to be sent.
type chunkQueue struct {
	o        *chunkOrder
	place    int
	recs     []arrow.RecordBatch
	finished bool
}

func newChunkOrder(ctx context.Context, chunks []int, window, queue int) *chunkOrder {
	o := &chunkOrder{ctx: ctx, window: max(window, 1), queue: max(queue, 1), pos: make(map[int]int, len(chunks)),
		chunks: make([]chunkQueue, len(chunks))}
	o.cond = sync.NewCond(&o.mu)
	for i, k := range chunks {
		o.pos[k] = i
		o.chunks[i] = chunkQueue{o: o, place: i}
	}
	context.AfterFunc(ctx, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.cond.Broadcast()
	})
	return o
}

// admit waits until chunk k is within the window of the chunk being sent (or the load is
// cancelled) and returns its queue.
func (o *chunkOrder) admit(k int) *chunkQueue {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := &o.chunks[o.pos[k]]
	for q.place >= o.head+o.window && o.ctx.Err() == nil {
		o.cond.Wait()
	}
	return q
}

// push adds a record to the chunk's queue, waiting while the chunk is being sent and its
// queue is full; false if the load was cancelled (the record was not taken).
func (q *chunkQueue) push(rec arrow.RecordBatch) bool {
	o := q.o
	o.mu.Lock()
	defer o.mu.Unlock()
	for q.place == o.head && len(q.recs) >= o.queue && o.ctx.Err() == nil {
		o.cond.Wait()
	}
	if o.ctx.Err() != nil {
		return false
	}
	q.recs = append(q.recs, rec)
	o.cond.Broadcast()
	return true
}

// finish marks chunk k produced (completely, or given up on).
func (o *chunkOrder) finish(k int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.chunks[o.pos[k]].finished = true
	o.cond.Broadcast()
}

// stop says that no chunk will be produced beyond those finished: the sender ends after
// them.
func (o *chunkOrder) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	o.cond.Broadcast()
}

// next returns the next record to send, in chunk order, or nil at the end: every chunk
// sent, or the load cancelled or stopped before the chunk due (what is still buffered is
// released then).
func (o *chunkOrder) next() arrow.RecordBatch {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.head < len(o.chunks) {
		q := &o.chunks[o.head]
		switch {
		case o.ctx.Err() != nil:
			o.releaseLocked()
			return nil
		case len(q.recs) > 0:
			rec := q.recs[0]
			q.recs[0] = nil
			q.recs = q.recs[1:]
			o.cond.Broadcast()
			return rec
		case q.finished:
			o.head++
			o.cond.Broadcast()
		case o.stopped:
			o.releaseLocked()
			return nil
		default:
			o.cond.Wait()
		}
	}
	return nil
}

func (o *chunkOrder) releaseLocked() {
	for i := range o.chunks {
		for _, rec := range o.chunks[i].recs {
			rec.Release()
		}
		o.chunks[i].recs = nil
	}
}
