package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/ipc"
)

// Client talks to one primproc.
type Client struct {
	link  *ipc.Client
	owned bool // Close closes link
}

// Dial returns a client for the primproc at url (a link endpoint URL); it connects in the
// background, as ipc.NewClient does. A unix:// URL with no transport configured is dialled
// as unix (the compiled-in default transport may be tcp, which refuses unix URLs).
func Dial(url string, cfg ipc.ClientConfig) (*Client, error) {
	if cfg.Transport == "" && strings.HasPrefix(url, "unix://") {
		cfg.Transport = ipc.TransportUnix
	}
	c, err := ipc.NewClient(url, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{link: c, owned: true}, nil
}

// New wraps an existing link client (which Close then leaves open).
func New(link *ipc.Client) *Client { return &Client{link: link} }

// Link returns the underlying link client.
func (c *Client) Link() *ipc.Client { return c.link }

// Peer is the primproc's URL.
func (c *Client) Peer() string { return c.link.Peer() }

// Close closes the link client if Dial made it.
func (c *Client) Close() error {
	if c.owned {
		return c.link.Close()
	}
	return nil
}

// wrap names the primproc in an error and turns a query error back into an *vec.Error.
func (c *Client) wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	if ve := AsSQLError(err); ve != nil {
		return fmt.Errorf("primproc %s: %s: %w", c.Peer(), method, ve)
	}
	return fmt.Errorf("primproc %s: %s: %w", c.Peer(), method, err)
}

// call runs a method without uploads and decodes its END into end.
func (c *Client) call(ctx context.Context, method string, args any, end any) error {
	var b []byte
	if args != nil {
		var err error
		if b, err = msgpack.Marshal(args); err != nil {
			return fmt.Errorf("%s: encode args: %w", method, err)
		}
	}
	raw, err := c.link.Call(ctx, method, b)
	if err != nil {
		return c.wrap(method, err)
	}
	if err := msgpack.Unmarshal(raw, end); err != nil {
		return c.wrap(method, fmt.Errorf("decode END: %w", err))
	}
	return nil
}

// Catalog is a primproc's (or, merged, the system's) catalog with decoded schemas.
type Catalog struct {
	CatalogEnd
	// Schemas holds each table's Arrow schema, by name.
	Schemas map[string]*arrow.Schema
}

// Table returns the named table, or nil.
func (c *Catalog) Table(name string) *Table {
	for i := range c.Tables {
		if c.Tables[i].Name == name {
			return &c.Tables[i]
		}
	}
	return nil
}

// Catalog fetches the primproc's catalog (only the named tables, if any: an unknown one is
// an error).
func (c *Client) Catalog(ctx context.Context, tables ...string) (*Catalog, error) {
	var cat CatalogEnd
	if err := c.call(ctx, MethodCatalog, CatalogArgs{Tables: tables}, &cat); err != nil {
		return nil, err
	}
	out := &Catalog{CatalogEnd: cat, Schemas: map[string]*arrow.Schema{}}
	for _, t := range cat.Tables {
		sc, err := DecodeSchema(t.Schema)
		if err != nil {
			return nil, c.wrap(MethodCatalog, fmt.Errorf("table %s: %w", t.Name, err))
		}
		out.Schemas[t.Name] = sc
	}
	return out, nil
}

// Stats fetches the primproc's process and cache counters.
func (c *Client) Stats(ctx context.Context) (*Stats, error) {
	var st Stats
	if err := c.call(ctx, MethodStats, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Usage fetches the primproc's process counters and catalog version (cheap: see Usage).
func (c *Client) Usage(ctx context.Context) (*Usage, error) {
	var u Usage
	if err := c.call(ctx, MethodUsage, nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// DropCache empties the primproc's column cache, and with pageCache the kernel's cached
// pages of its segment files.
func (c *Client) DropCache(ctx context.Context, pageCache bool) (*DropCacheEnd, error) {
	var end DropCacheEnd
	if err := c.call(ctx, MethodDropCache, DropCacheArgs{PageCache: pageCache}, &end); err != nil {
		return nil, err
	}
	return &end, nil
}

// LoadStream uploads one table's rows. Send batches, then Commit; Abort (or ctx) abandons
// the load, leaving the table as it was.
type LoadStream struct {
	c    *Client
	st   *ipc.Stream
	rows int64
	done bool
}

// Load starts loading a table. With args.Columns empty and mode replace, the schema of the
// first batch (or SendSchema's) becomes the table's.
func (c *Client) Load(ctx context.Context, args LoadArgs) (*LoadStream, error) {
	b, err := msgpack.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("load: encode args: %w", err)
	}
	st, err := c.link.Open(ctx, MethodLoad, b, false)
	if err != nil {
		return nil, c.wrap(MethodLoad, err)
	}
	return &LoadStream{c: c, st: st}, nil
}

// SendSchema announces the table's schema (needed only for an empty replace without
// declared columns).
func (l *LoadStream) SendSchema(sc *arrow.Schema) error {
	return l.err(l.st.SendSchema(sc))
}

// Send uploads a batch; it waits for the link's credit. The caller keeps ownership of rec.
func (l *LoadStream) Send(rec arrow.RecordBatch) error {
	if err := l.st.Send(rec); err != nil {
		return l.err(err)
	}
	l.rows += rec.NumRows()
	return nil
}

// err turns a send failure into the primproc's own error when it has ended the stream
// with one (a rejected batch shows as the server's ERROR, not as "stream closed").
func (l *LoadStream) err(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ipc.ErrStreamClosed) {
		if _, rerr := drain(l.st); rerr != nil {
			err = rerr
		}
	}
	return l.c.wrap(MethodLoad, err)
}

// Rows is the number of rows sent so far.
func (l *LoadStream) Rows() int64 { return l.rows }

// Commit ends the upload and waits for the primproc to commit: on success the table holds
// the rows (replace) or has them added (append).
func (l *LoadStream) Commit() (*LoadEnd, error) {
	defer l.close()
	rows := l.rows
	b, err := msgpack.Marshal(LoadClientEnd{Rows: &rows})
	if err != nil {
		return nil, err
	}
	if err := l.st.CloseSend(b); err != nil {
		return nil, l.err(err)
	}
	raw, err := drain(l.st)
	if err != nil {
		return nil, l.c.wrap(MethodLoad, err)
	}
	var end LoadEnd
	if err := msgpack.Unmarshal(raw, &end); err != nil {
		return nil, l.c.wrap(MethodLoad, fmt.Errorf("decode END: %w", err))
	}
	return &end, nil
}

// Abort abandons the load (a no-op after Commit).
func (l *LoadStream) Abort(reason string) {
	if !l.done {
		l.st.Cancel(reason)
		l.close()
	}
}

func (l *LoadStream) close() {
	l.done = true
	l.st.Close()
}

// drain discards the server's batches and returns its END payload or its error.
func drain(st *ipc.Stream) ([]byte, error) {
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			return st.End(), nil
		}
		if err != nil {
			return nil, err
		}
		rec.Release()
	}
}

// FragmentStream is a fragment running on a primproc: upload its build sides with
// SendBuild (if it has any), then read its output with Recv until io.EOF, then End.
//
// It is the one type a fragment's results arrive through: besides Recv it is an
// exec.RecordStream (Next), reports the primproc's END (Stats) and what arrived, as the
// link counted it (Received), so that the planner's runner needs no wrapper of its own.
type FragmentStream struct {
	c          *Client
	st         *ipc.Stream
	enc        *BuildEncoder
	buildsDone bool
	end        *FragmentEnd
	cancel     context.CancelCauseFunc // cancels the stream's context: the primproc stops
	rows       int64                   // rows Next handed out
	// uploaded is closed once a background upload (Upload) ends; uploadErr is its error,
	// written before.
	uploaded  chan struct{}
	uploadErr error
	ended     bool
	closed    bool
}

// ErrFragmentClosed is the cause a fragment's stream is cancelled with when its reader
// closes it before the end (the query finished early, failed, or was killed).
var ErrFragmentClosed = errors.New("the fragment's reader closed its stream")

// Fragment starts args on the primproc. buildSchemas are the Arrow schemas of the records
// SendBuild (or Upload) will upload for each of args.Builds (nil if the fragment has no
// build sides). Cancelling ctx, or closing the stream before its end, stops the primproc's
// work.
func (c *Client) Fragment(ctx context.Context, args *FragmentArgs, buildSchemas []*arrow.Schema) (*FragmentStream, error) {
	if len(buildSchemas) != len(args.Builds) {
		return nil, fmt.Errorf("fragment: %d build schemas for %d build sides", len(buildSchemas), len(args.Builds))
	}
	b, err := msgpack.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("fragment: encode args: %w", err)
	}
	fin := len(args.Builds) == 0
	sctx, cancel := context.WithCancelCause(ctx)
	st, err := c.link.Open(sctx, MethodFragment, b, fin)
	if err != nil {
		cancel(err)
		return nil, c.wrap(MethodFragment, err)
	}
	fs := &FragmentStream{c: c, st: st, buildsDone: fin, cancel: cancel}
	if !fin {
		fs.enc = NewBuildEncoder(buildSchemas, memory.DefaultAllocator)
	}
	return fs, nil
}

// SendBuild uploads records of build side `side`. The caller keeps ownership of rec.
func (f *FragmentStream) SendBuild(side int, rec arrow.RecordBatch) error {
	if f.buildsDone {
		return fmt.Errorf("fragment: build sides already closed")
	}
	up, err := f.enc.Encode(side, rec)
	if err != nil {
		return fmt.Errorf("fragment: %w", err)
	}
	err = f.st.Send(up)
	up.Release()
	if err != nil {
		if errors.Is(err, ipc.ErrStreamClosed) {
			if _, rerr := drain(f.st); rerr != nil {
				err = rerr
			}
		}
		return f.c.wrap(MethodFragment, err)
	}
	return nil
}

// CloseBuilds ends the upload: the primproc builds its hash tables and starts the scan.
// Recv calls it if needed.
func (f *FragmentStream) CloseBuilds() error {
	if f.buildsDone {
		return nil
	}
	f.buildsDone = true
	if err := f.st.CloseSend(nil); err != nil && !errors.Is(err, ipc.ErrStreamClosed) {
		return f.c.wrap(MethodFragment, err)
	}
	return nil
}

// Recv returns the next output record (the caller releases it), io.EOF after the last.
func (f *FragmentStream) Recv() (arrow.RecordBatch, error) {
	if !f.buildsDone {
		if err := f.CloseBuilds(); err != nil {
			return nil, err
		}
	}
	rec, err := f.st.Recv()
	if err == io.EOF {
		var end FragmentEnd
		if derr := msgpack.Unmarshal(f.st.End(), &end); derr != nil {
			return nil, f.c.wrap(MethodFragment, fmt.Errorf("decode END: %w", derr))
		}
		f.end = &end
		return nil, io.EOF
	}
	if err != nil {
		return nil, f.c.wrap(MethodFragment, err)
	}
	return rec, nil
}

// Each reads the output to its end: it calls fn with every record, releasing the record
// when fn returns (fn retains what it keeps), and returns the first error of Recv or fn.
// After a nil return, End holds the fragment's counters.
func (f *FragmentStream) Each(fn func(arrow.RecordBatch) error) error {
	for {
		rec, err := f.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// Schema is the output schema, once Recv has returned a record or io.EOF.
func (f *FragmentStream) Schema() *arrow.Schema { return f.st.Schema() }

// End returns the fragment's END (its counters) after Recv returned io.EOF, else nil.
func (f *FragmentStream) End() *FragmentEnd { return f.end }

// Close releases the stream, canceling the fragment if it has not ended: the primproc
// stops its workers.
func (f *FragmentStream) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if !f.ended {
		f.cancel(ErrFragmentClosed)
	}
	if f.uploaded != nil {
		<-f.uploaded // the upload fails fast once the stream is cancelled
	}
	if f.enc != nil {
		f.enc.Release()
		f.enc = nil
	}
	f.st.Close()
	f.cancel(nil)
	return nil
}

// Upload sends every build side on a goroutine of its own, then ends the upload; Next
// waits for it before the first record (the primproc reads every build row before it
// scans). The caller keeps builds valid until the stream is closed. One primproc's slow
// upload then does not hold back the others' (each stream has its own goroutine).
func (f *FragmentStream) Upload(builds [][]arrow.RecordBatch) {
	f.uploaded = make(chan struct{})
	go func() {
		defer close(f.uploaded)
		for side, recs := range builds {
			for _, rec := range recs {
				if err := f.SendBuild(side, rec); err != nil {
					f.uploadErr = err
					return
				}
			}
		}
		f.uploadErr = f.CloseBuilds()
	}()
}

// Next is exec.RecordStream's: the next output record (the caller releases it), or nil at
// the end, after a background upload (Upload) has finished.
func (f *FragmentStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.ended {
		return nil, nil
	}
	if f.uploaded != nil {
		select {
		case <-f.uploaded:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if f.uploadErr != nil {
			return nil, f.uploadErr
		}
	}
	// Recv waits under the stream's own context, the statement's; ctx may end first (a
	// merge of the primprocs' streams whose other stream failed): the stream is cancelled
	// then, so that the wait, and the primproc's work, end at once rather than when this
	// primproc finishes the fragment.
	stop := context.AfterFunc(ctx, func() { f.cancel(context.Cause(ctx)) })
	rec, err := f.Recv()
	stop()
	if err == io.EOF {
		f.ended = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.rows += rec.NumRows()
	return rec, nil
}

// Stats is the primproc's report on the fragment (its END), once Next returned nil; zero
// before.
func (f *FragmentStream) Stats() exec.FragmentStats {
	if f.end == nil {
		return exec.FragmentStats{}
	}
	return f.end.Stats
}

// Received is what arrived of the fragment's output: rows handed out by Next, and the
// batches and bytes the link counted on the stream (Arrow IPC messages as they crossed).
func (f *FragmentStream) Received() (rows, batches, bytes int64) {
	st := f.st.Stats()
	return f.rows, int64(st.BatchesIn), int64(st.BytesIn)
}
