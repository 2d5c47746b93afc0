package link

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// tagged is a one-row record holding v.
func tagged(mem memory.Allocator, v int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(v)
	return b.NewRecordBatch()
}

// TestChunkOrder: chunks produced by several workers at once, the later ones faster, reach
// the sender in chunk order, every record once; no more than window chunks are produced
// at a time; and a cancelled load ends the sender and releases what was buffered.
func TestChunkOrder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	const chunks, per, workers = 12, 5, 3
	dealt := make([]int, chunks)
	for i := range dealt {
		dealt[i] = 2 * i // the chunks of one primproc of two
	}
	o := newChunkOrder(context.Background(), dealt, workers, 2)
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	running, most := 0, 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				q := o.admit(k)
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				for i := range per {
					if k%4 == 0 {
						time.Sleep(time.Millisecond) // the earlier chunks are slow
					}
					if !q.push(tagged(mem, int64(k*100+i))) {
						t.Error("push refused")
					}
				}
				mu.Lock()
				running--
				mu.Unlock()
				o.finish(k)
			}
		}()
	}
	go func() {
		for _, k := range dealt {
			jobs <- k
		}
		close(jobs)
		wg.Wait()
		o.stop()
	}()
	var got []int64
	for rec := o.next(); rec != nil; rec = o.next() {
		got = append(got, rec.Column(0).(*array.Int64).Value(0))
		rec.Release()
	}
	if len(got) != chunks*per {
		t.Fatalf("%d records, want %d", len(got), chunks*per)
	}
	for i, v := range got {
		if want := int64(dealt[i/per]*100 + i%per); v != want {
			t.Fatalf("record %d is %d, want %d (in chunk order)", i, v, want)
		}
	}
	if most > workers {
		t.Errorf("%d chunks produced at once, window %d", most, workers)
	}
	mem.AssertSize(t, 0)

	// Cancelled with chunks buffered ahead of one never finished.
	ctx, cancel := context.WithCancel(context.Background())
	o = newChunkOrder(ctx, []int{0, 1}, 2, 2)
	q1 := o.admit(1)
	q1.push(tagged(mem, 1))
	q0 := o.admit(0)
	q0.push(tagged(mem, 0))
	if rec := o.next(); rec == nil || rec.Column(0).(*array.Int64).Value(0) != 0 {
		t.Fatal("the first chunk's record did not come first")
	} else {
		rec.Release()
	}
	done := make(chan arrow.RecordBatch)
	go func() { done <- o.next() }() // waits for chunk 0
	cancel()
	select {
	case rec := <-done:
		if rec != nil {
			t.Fatal("a record after the cancel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the sender did not end on cancel")
	}
	late := tagged(mem, 2)
	if q0.push(late) {
		t.Error("a push after the cancel was taken")
	}
	late.Release() // refused: still the caller's
	mem.AssertSize(t, 0)
}
