package exemgr

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql/physical"
)

// errStreamClosed is the cause of a fragment stream's cancellation when exemgr no longer
// wants its rows (the plan finished early, failed, or was killed).
var errStreamClosed = errors.New("exemgr closed the fragment stream")

// linkRunner runs a statement's fragments on every primproc over the link: it implements
// physical.Runner. Each fragment opens one stream per primproc; the build sides go up the
// stream under the link's flow control (a goroutine per primproc, so one slow primproc does
// not hold the others back), and the output comes down it. Cancelling the statement's
// context, or closing a stream early, cancels the primproc's work.
type linkRunner struct {
	cl     link.Cluster
	memory int64  // the query's memory bound, passed to every primproc (0: the primproc's own)
	query  string // names the statement in primproc's debug log
	// pins, if not nil, are the snapshots each primproc runs the statement's fragments on
	// (per primproc, in cluster order).
	pins []uint64
}

// Run implements physical.Runner.
func (r *linkRunner) Run(ctx context.Context, frag *exec.Fragment, builds [][]arrow.RecordBatch) ([]physical.Stream, error) {
	if len(builds) != len(frag.Builds) {
		return nil, fmt.Errorf("fragment has %d build sides, %d were given", len(frag.Builds), len(builds))
	}
	schemas := make([]*arrow.Schema, len(frag.Builds))
	for i, b := range frag.Builds {
		if len(builds[i]) > 0 {
			schemas[i] = builds[i][0].Schema()
		} else {
			schemas[i] = vec.SchemaOf(nil, b.Types)
		}
	}
	args := &link.FragmentArgs{Fragment: *frag, MemoryLimit: r.memory, Query: r.query}
	out := make([]physical.Stream, 0, len(r.cl))
	fail := func(err error) ([]physical.Stream, error) {
		for _, s := range out {
			s.Close()
		}
		return nil, err
	}
	for i, c := range r.cl {
		sctx, cancel := context.WithCancelCause(ctx)
		args := args
		if i > 0 || r.pins != nil {
			a := *args // per primproc: its pin, and the tag of its row IDs
			a.Member = i
			if r.pins != nil {
				a.Pin = r.pins[i]
			}
			args = &a
		}
		fs, err := c.Fragment(sctx, args, schemas)
		if err != nil {
			cancel(err)
			return fail(err)
		}
		s := &linkStream{fs: fs, cancel: cancel}
		if len(frag.Builds) > 0 {
			s.sent = make(chan struct{})
			go s.sendBuilds(builds)
		}
		out = append(out, s)
	}
	return out, nil
}

// linkStream is one primproc's output of a fragment (physical.Stream). One goroutine reads
// it; the build sides are sent by a goroutine of their own, which finishes before the
// first record is read (the primproc reads every build row before it scans).
type linkStream struct {
	fs     *link.FragmentStream
	cancel context.CancelCauseFunc // cancels the stream's context, and so the primproc's work
	sent   chan struct{}           // closed once the build sides are uploaded (nil: none)
	// sendErr is the upload's failure; written before sent is closed.
	sendErr error
	stats   exec.FragmentStats
	ended   bool
	closed  bool
}

// sendBuilds uploads every build side, then ends the upload.
func (s *linkStream) sendBuilds(builds [][]arrow.RecordBatch) {
	defer close(s.sent)
	for side, recs := range builds {
		for _, rec := range recs {
			if err := s.fs.SendBuild(side, rec); err != nil {
				s.sendErr = err
				return
			}
		}
	}
	s.sendErr = s.fs.CloseBuilds()
}

// Next implements exec.RecordStream: the next record (the caller releases it), or nil at
// the end.
func (s *linkStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.ended {
		return nil, nil
	}
	if s.sent != nil {
		select {
		case <-s.sent:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if s.sendErr != nil {
			return nil, s.sendErr
		}
		s.sent = nil
	}
	// Recv waits under the stream's own context, the statement's; ctx may end first (a
	// merge of the primprocs' streams whose other stream failed): the stream is cancelled
	// then, so that the wait, and the primproc's work, end at once rather than when this
	// primproc finishes the fragment.
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	rec, err := s.fs.Recv()
	stop()
	if err == io.EOF {
		s.ended = true
		if end := s.fs.End(); end != nil {
			s.stats = end.Stats
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Stats implements physical.Stream.
func (s *linkStream) Stats() exec.FragmentStats { return s.stats }

// Close implements physical.Stream: a stream that has not ended is cancelled, which stops
// the primproc's workers; the upload goroutine is waited for before the stream is released.
func (s *linkStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.ended {
		s.cancel(errStreamClosed)
	}
	if s.sent != nil {
		<-s.sent
	}
	s.fs.Close()
	s.cancel(nil)
	return nil
}
