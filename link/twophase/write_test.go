package twophase_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
	"github.com/colinkdb/colink/primproc"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/storage"
)

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// testPM is an in-process primproc.
type testPM struct {
	dir, url string
	cfg      primproc.Config
	stop     func()
}

func startPM(t *testing.T, dir string, mod func(*primproc.Config)) *testPM {
	t.Helper()
	p := &testPM{dir: dir, url: "unix://" + filepath.Join(dir, "pm.sock")}
	p.cfg = primproc.Config{DataDir: filepath.Join(dir, "data"), Listen: []string{p.url}, Threads: 2,
		RowGroupRows: 64, SegmentRows: 256, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&p.cfg)
	}
	p.start(t)
	return p
}

func (p *testPM) start(t *testing.T) {
	t.Helper()
	d, err := primproc.New(p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	p.stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(p.stop)
}

func (p *testPM) addr() string { return p.url }

// cluster dials each primproc (a testPM or a fakePM), closing the links at cleanup.
func cluster[P interface{ addr() string }](t *testing.T, pms ...P) link.Cluster {
	t.Helper()
	var cl link.Cluster
	for _, p := range pms {
		c, err := link.Dial(p.addr(), ipc.ClientConfig{BackoffMax: 100 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cl = append(cl, c)
	}
	return cl
}

func kvRecord(from, to int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, kvSchema)
	defer b.Release()
	for k := from; k < to; k++ {
		b.Field(0).(*array.Int64Builder).Append(k)
		b.Field(1).(*array.StringBuilder).Append("v" + string(rune('a'+k%26)))
	}
	return b.NewRecordBatch()
}

// createKV makes an empty kv table on every primproc.
func createKV(t *testing.T, ctx context.Context, cl link.Cluster) {
	t.Helper()
	for _, c := range cl {
		ls, err := c.Load(ctx, link.LoadArgs{Table: "kv"})
		if err != nil {
			t.Fatal(err)
		}
		if err := ls.SendSchema(kvSchema); err != nil {
			t.Fatal(err)
		}
		if _, err := ls.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// insert places keys [from, to) on the cluster in one transaction.
func insert(ctx context.Context, cl link.Cluster, ids []string, from, to int64, gate sync.Locker) (*twophase.TxnResult, error) {
	tx, err := twophase.Begin(ctx, cl, "kv", link.OpInsert, ids)
	if err != nil {
		return nil, err
	}
	rec := kvRecord(from, to)
	defer rec.Release()
	parts, err := link.Place(rec, len(cl), memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	for m, p := range parts {
		if p == nil {
			continue
		}
		err := tx.Send(m, p)
		p.Release()
		if err != nil {
			tx.Abort("send failed")
			return nil, err
		}
	}
	return tx.Commit(ctx, gate)
}

// scanKV returns every primproc's keys and row IDs (on pins, if given).
func scanKV(t *testing.T, ctx context.Context, cl link.Cluster, pins []uint64) (keys [][]int64, rowIDs [][]int64) {
	t.Helper()
	keys, rowIDs = make([][]int64, len(cl)), make([][]int64, len(cl))
	for m, c := range cl {
		args := &link.FragmentArgs{Fragment: exec.Fragment{Scan: exec.Scan{Table: "kv",
			Columns: []string{"k", link.RowIDColumn}, Types: []vec.Type{vec.Int64Type, vec.Int64Type}}}, Member: m}
		if pins != nil {
			args.Pin = pins[m]
		}
		fs, err := c.Fragment(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = fs.Each(func(rec arrow.RecordBatch) error {
			keys[m] = append(keys[m], rec.Column(0).(*array.Int64).Int64Values()...)
			rowIDs[m] = append(rowIDs[m], rec.Column(1).(*array.Int64).Int64Values()...)
			return nil
		})
		fs.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return keys, rowIDs
}

func count(keys [][]int64) int {
	n := 0
	for _, k := range keys {
		n += len(k)
	}
	return n
}

func storeIDs(t *testing.T, ctx context.Context, cl link.Cluster) []string {
	t.Helper()
	p, err := twophase.Pin(ctx, cl, "ids")
	if err != nil {
		t.Fatal(err)
	}
	twophase.Unpin(ctx, cl, p)
	return p.StoreIDs()
}

// startKV starts two primprocs with table kv and returns them, their cluster and store IDs.
func startKV(t *testing.T, ctx context.Context) (pm0, pm1 *testPM, cl link.Cluster, ids []string) {
	t.Helper()
	pm0, pm1 = startPM(t, t.TempDir(), nil), startPM(t, t.TempDir(), nil)
	cl = cluster(t, pm0, pm1)
	createKV(t, ctx, cl)
	return pm0, pm1, cl, storeIDs(t, ctx, cl)
}

func TestDistributedWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, cl, ids := startKV(t, ctx)
	if ids[0] == ids[1] || !strings.HasPrefix(ids[0], "st-") {
		t.Fatalf("store IDs %v", ids)
	}
	var gate sync.RWMutex

	// An insert spreads over both primprocs by key and commits in two phases.
	res, err := insert(ctx, cl, ids, 0, 1000, &gate)
	if err != nil {
		t.Fatal(err)
	}
	if res.Participants != 2 || res.Affected != 1000 || len(res.Pending) != 0 {
		t.Fatalf("insert result %+v", res)
	}
	keys, rowIDs := scanKV(t, ctx, cl, nil)
	if len(keys[0]) == 0 || len(keys[1]) == 0 || count(keys) != 1000 {
		t.Fatalf("placement: %d and %d rows", len(keys[0]), len(keys[1]))
	}
	for m := range keys {
		for _, k := range keys[m] {
			if link.MemberOfInt(k, 2) != m {
				t.Fatalf("key %d on member %d", k, m)
			}
		}
	}

	// A query pinned before a commit sees the state before it, on every primproc.
	pins, err := twophase.Pin(ctx, cl, "before")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := insert(ctx, cl, ids, 1000, 1100, &gate); err != nil {
		t.Fatal(err)
	}
	if got, _ := scanKV(t, ctx, cl, pins.IDs()); count(got) != 1000 {
		t.Errorf("pinned scan sees %d rows, want 1000", count(got))
	}
	if got, _ := scanKV(t, ctx, cl, nil); count(got) != 1100 {
		t.Errorf("unpinned scan sees %d rows, want 1100", count(got))
	}
	twophase.Unpin(ctx, cl, pins)
	args := &link.FragmentArgs{Fragment: exec.Fragment{Scan: exec.Scan{Table: "kv", Columns: []string{"k"}, Types: []vec.Type{vec.Int64Type}}}, Pin: pins.Ends[0].Pin}
	if fs, err := cl[0].Fragment(ctx, args, nil); err == nil {
		_, err = fs.Recv()
		fs.Close()
		if err == nil || !strings.Contains(err.Error(), "pin") {
			t.Errorf("fragment on a dropped pin: %v", err)
		}
	}

	// A delete by row IDs: every key divisible by 3.
	keys, rowIDs = scanKV(t, ctx, cl, nil)
	tx, err := twophase.Begin(ctx, cl, "kv", link.OpDelete, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for m := range keys {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i, k := range keys[m] {
			if k%3 == 0 {
				b.Append(rowIDs[m][i])
				want++
			}
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: link.RowIDColumn, Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(col.Len()))
		col.Release()
		b.Release()
		if err := tx.Send(m, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	res, err = tx.Commit(ctx, &gate)
	if err != nil {
		t.Fatal(err)
	}
	if res.Affected != int64(want) {
		t.Errorf("delete affected %d, want %d", res.Affected, want)
	}
	keys, _ = scanKV(t, ctx, cl, nil)
	for m := range keys {
		for _, k := range keys[m] {
			if k%3 == 0 {
				t.Fatalf("deleted key %d is still there", k)
			}
		}
	}
	if count(keys) != 1100-want {
		t.Errorf("%d rows after the delete, want %d", count(keys), 1100-want)
	}

	// A batch one primproc refuses fails the statement everywhere.
	tx, _ = twophase.Begin(ctx, cl, "kv", link.OpInsert, ids)
	good := kvRecord(5000, 5010)
	bad := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil),
		[]arrow.Array{array.NewInt32Builder(memory.DefaultAllocator).NewArray()}, 0)
	tx.Send(0, good)
	tx.Send(1, bad)
	if _, err := tx.Commit(ctx, &gate); err == nil || !strings.Contains(err.Error(), "batch 1") {
		t.Errorf("a refused batch: %v", err)
	}
	good.Release()
	bad.Release()
	if got, _ := scanKV(t, ctx, cl, nil); count(got) != 1100-want {
		t.Errorf("%d rows after a failed insert, want %d", count(got), 1100-want)
	}
	p, _ := twophase.Pin(ctx, cl, "check")
	if d := p.InDoubt(nil); len(d) != 0 {
		t.Errorf("transactions left prepared: %v", d)
	}
	twophase.Unpin(ctx, cl, p)
}

// prepareOnly runs the first phase of an insert on every member and returns its ID, as a
// coordinator that dies right after it would leave it.
func prepareOnly(t *testing.T, ctx context.Context, cl link.Cluster, ids []string, from int64) string {
	t.Helper()
	id := twophase.NewTxnID()
	for m, c := range cl {
		ws, err := c.Write(ctx, link.WriteArgs{Table: "kv", Op: link.OpInsert, Txn: id, Member: m})
		if err != nil {
			t.Fatal(err)
		}
		rec := kvRecord(from+int64(m)*10, from+int64(m)*10+10)
		if err := ws.Send(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		end, err := ws.Finish(link.WriteClientEnd{Decider: ids[0]})
		if err != nil || end.State != link.TxnPrepared {
			t.Fatalf("prepare on %d: %+v %v", m, end, err)
		}
	}
	return id
}

func TestRecovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, pm1, cl, ids := startKV(t, ctx)

	// Coordinator died after the decision reached the decider only: the others commit.
	committed := prepareOnly(t, ctx, cl, ids, 0)
	if _, err := cl[0].Resolve(ctx, committed, link.ResolveCommit); err != nil {
		t.Fatal(err)
	}
	// Coordinator died before deciding: everyone aborts.
	undecided := prepareOnly(t, ctx, cl, ids, 100)

	// The primproc holding the half-committed transaction restarts: it is still prepared.
	pm1.stop()
	pm1.start(t)
	var pins *twophase.Pins
	var err error
	for i := 0; i < 100; i++ {
		if pins, err = twophase.Pin(ctx, cl, "recover"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	live := func(id string) bool { return false }
	if d := pins.InDoubt(live); len(d) != 2 {
		t.Fatalf("in doubt: %v, want 2 transactions", d)
	}
	if d := pins.InDoubt(func(id string) bool { return id == undecided }); len(d) != 1 || d[0] != committed {
		t.Fatalf("in doubt besides a live one: %v", d)
	}
	got, err := twophase.Recover(ctx, cl, pins, live)
	twophase.Unpin(ctx, cl, pins)
	if err != nil || got.Committed != 1 || got.Aborted != 1 {
		t.Fatalf("recover: %+v %v", got, err)
	}
	keys, _ := scanKV(t, ctx, cl, nil)
	if len(keys[0]) != 10 || len(keys[1]) != 10 {
		t.Errorf("after recovery: %d and %d rows, want 10 and 10", len(keys[0]), len(keys[1]))
	}
	for _, c := range cl {
		for _, id := range []string{committed, undecided} {
			end, err := c.Resolve(ctx, id, link.ResolveStatus)
			if err != nil {
				t.Fatal(err)
			}
			want := link.TxnCommitted
			if id == undecided {
				want = link.TxnAborted
			}
			if end.State != want {
				t.Errorf("%s on %s: %s, want %s", id, c.Peer(), end.State, want)
			}
		}
	}
	// A commit of an aborted transaction is refused.
	if _, err := cl[1].Resolve(ctx, undecided, link.ResolveCommit); err == nil {
		t.Error("committing an aborted transaction succeeded")
	}
}

func TestCompactionAfterWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pm0 := startPM(t, t.TempDir(), func(c *primproc.Config) {
		c.Compaction = storage.CompactionPolicy{MinSmall: 3}
	})
	cl := cluster(t, pm0)
	createKV(t, ctx, cl)
	ids := storeIDs(t, ctx, cl)
	for k := int64(0); k < 6; k++ {
		res, err := insert(ctx, cl, ids, k*10, k*10+10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Participants != 1 || res.Ends[0].State != link.TxnCommitted {
			t.Fatalf("one-phase insert: %+v", res.Ends[0])
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cat, err := cl[0].Catalog(ctx, "kv")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := cl[0].Stats(ctx)
		if tb := cat.Table("kv"); tb != nil && tb.Segments < 3 && st.Compact > 0 {
			if tb.Rows != 60 {
				t.Fatalf("%d rows after compaction", tb.Rows)
			}
			// The catalog's distinct-value count covers the compacted segment's keys.
			if d := tb.Columns[0].Distinct; d < 59 || d > 61 {
				t.Errorf("%s: %v distinct values after compaction, want 60", tb.Columns[0].Name, d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction: %d segments", cat.Table("kv").Segments)
		}
		time.Sleep(20 * time.Millisecond)
	}
	keys, _ := scanKV(t, ctx, cl, nil)
	if count(keys) != 60 {
		t.Errorf("%d rows", count(keys))
	}
}

// TestRowIDMember checks that the member link.RowIDMember reads is the tag storage packs.
func TestRowIDMember(t *testing.T) {
	for _, tag := range []uint8{0, 1, 7, 255} {
		id, err := storage.MakeRowID(tag, storage.MaxRowIDSegment, storage.MaxRowIDRow)
		if err != nil {
			t.Fatal(err)
		}
		if m := link.RowIDMember(id); m != int(tag) {
			t.Errorf("tag %d read back as %d", tag, m)
		}
	}
	if link.RowIDColumn != storage.RowIDColumn || physical.RowIDColumn != storage.RowIDColumn {
		t.Errorf("wire names the row ID %q, sql/physical %q, storage %q", link.RowIDColumn, physical.RowIDColumn, storage.RowIDColumn)
	}
}
