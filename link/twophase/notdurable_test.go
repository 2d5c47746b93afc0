package twophase_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
)

// fakePM answers write and resolve like a primproc whose storage may commit without being
// able to fsync its directory: commitFails is how many of its next commits (a one-phase
// write's, or a resolve's) answer link.CodeNotDurable, statusFails how many of its next
// status resolves do (the outcome is decided but the fsync that would make it durable
// fails); a status resolve otherwise answers status. It records the resolves it gets.
type fakePM struct {
	url string
	mu  sync.Mutex
	// commitFails and statusFails count down; resolves lists the actions as they come.
	commitFails int
	statusFails int
	status      string
	resolves    []string
	// lose names the request on which the fake closes its connection instead of answering
	// (lostcommit_test.go): "write-batch" (a write's first batch), "write-prepare" or
	// "write-commit" (a write's END), "resolve-commit".
	lose string
	// committing, if not nil, receives a value when a write's END commit arrives, and the
	// answer waits for release to be closed.
	committing chan struct{}
	release    chan struct{}
}

// set changes the fake's behaviour (under its lock: its handlers read it concurrently).
func (f *fakePM) set(fn func(f *fakePM)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// loses reports whether the fake closes its connection at point, and then does.
func (f *fakePM) loses(st *ipc.Stream, point string) bool {
	f.mu.Lock()
	lose := f.lose == point
	f.mu.Unlock()
	if lose {
		st.Conn().Close()
	}
	return lose
}

func (f *fakePM) statusOf() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statusFails > 0 {
		f.statusFails--
		return "", ipc.Errorf(link.CodeNotDurable, "resolve: status of tx1: its outcome is decided here: applied but not durable: fsync of /d failed: input/output error; a crash may undo it")
	}
	return f.status, nil
}

func (f *fakePM) commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.commitFails > 0 {
		f.commitFails--
		return ipc.Errorf(link.CodeNotDurable, "applied but not durable: fsync of /d failed: input/output error; a crash may undo it")
	}
	return nil
}

func (f *fakePM) actions() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.resolves, ", ")
}

func startFakePM(t *testing.T, commitFails int) *fakePM {
	t.Helper()
	f := &fakePM{commitFails: commitFails}
	srv := ipc.NewServer(ipc.ServerConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.Handle(link.MethodWrite, func(ctx context.Context, st *ipc.Stream) error {
		var a link.WriteArgs
		if err := st.DecodeArgs(&a); err != nil {
			return err
		}
		var rows int64
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			rows += rec.NumRows()
			rec.Release()
			if f.loses(st, "write-batch") {
				return nil
			}
		}
		var ce link.WriteClientEnd
		if err := msgpack.Unmarshal(st.End(), &ce); err != nil {
			return err
		}
		if ce.Commit {
			if err := f.commit(); err != nil {
				return err
			}
			f.mu.Lock()
			committing, release := f.committing, f.release
			f.mu.Unlock()
			if committing != nil {
				committing <- struct{}{}
				<-release
			}
			if f.loses(st, "write-commit") {
				return nil
			}
		} else if f.loses(st, "write-prepare") {
			return nil
		}
		b, _ := msgpack.Marshal(&link.WriteEnd{Table: a.Table, Op: a.Op, Txn: a.Txn, Rows: rows, Affected: rows})
		return st.CloseSend(b)
	})
	srv.Handle(link.MethodResolve, func(ctx context.Context, st *ipc.Stream) error {
		var a link.ResolveArgs
		if err := st.DecodeArgs(&a); err != nil {
			return err
		}
		f.mu.Lock()
		f.resolves = append(f.resolves, a.Action)
		f.mu.Unlock()
		state := link.TxnAborted
		switch a.Action {
		case link.ResolveCommit:
			if err := f.commit(); err != nil {
				return err
			}
			if f.loses(st, "resolve-commit") {
				return nil
			}
			state = link.TxnCommitted
		case link.ResolveStatus:
			var err error
			if state, err = f.statusOf(); err != nil {
				return err
			}
		}
		b, _ := msgpack.Marshal(&link.ResolveEnd{Txn: a.Txn, State: state})
		return st.CloseSend(b)
	})
	sock := filepath.Join(t.TempDir(), "pm.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	f.url = "unix://" + sock
	return f
}

func (p *fakePM) addr() string { return p.url }

// TestCommitNotDurable: a commit applied but not durable is reported as such (IsNotDurable),
// not as a failure; in two phases, a decider that cannot make its commit durable is asked
// again (which fsyncs), and until it can, the other primprocs are not told to commit.
func TestCommitNotDurable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := []string{"s0", "s1"}
	for _, tc := range []struct {
		name              string
		members           int
		deciderFails      int
		wantErr           string // "" for success
		decider, follower string // the resolves each got
	}{
		{"one phase", 1, 1, "applied but not durable", "", ""},
		{"decider settles when asked again", 2, 1, "", "commit, commit", "commit"},
		{"decider stays in doubt", 2, 2, "committed on primproc", "commit, commit", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pms := []*fakePM{startFakePM(t, tc.deciderFails)}
			if tc.members == 2 {
				pms = append(pms, startFakePM(t, 0))
			}
			cl := cluster(t, pms...)
			// Keys 0..9 spread over both members.
			res, err := insert(ctx, cl, ids[:tc.members], 0, 10, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if res.Affected != 10 {
					t.Errorf("affected %d, want 10", res.Affected)
				}
			} else if err == nil || !link.IsNotDurable(err) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want a not-durable one saying %q", err, tc.wantErr)
			}
			if tc.members == 2 {
				if got := pms[0].actions(); got != tc.decider {
					t.Errorf("the decider got %q, want %q", got, tc.decider)
				}
				if got := pms[1].actions(); got != tc.follower {
					t.Errorf("the other primproc got %q, want %q", got, tc.follower)
				}
			}
		})
	}
}

// TestRecoverNotDurable: Recover commits a transaction's holders only once its decider has
// made the commit durable. A decider whose outcome is decided but not durable (its status
// fails not-durable, answers in doubt, or the commit asked again fails not-durable) leaves
// the holders prepared and Recover fails saying so — without looking like a not-durable
// commit of the statement that ran it.
func TestRecoverNotDurable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name                     string
		status                   string
		statusFails, commitFails int
		wantErr                  string // "" for success
		committed, aborted       int
		decider, holder          string // the resolves each got
	}{
		{"committed and durable", link.TxnCommitted, 0, 0, "", 1, 0, "status, commit", "commit"},
		{"status cannot settle", link.TxnCommitted, 1, 0, "ask its decider: its outcome is decided on primproc", 0, 0, "status", ""},
		{"commit at the decider cannot settle", link.TxnCommitted, 0, 1, "commit at its decider: its outcome is decided on primproc", 0, 0, "status, commit", ""},
		{"decider answers in doubt", link.TxnInDoubt, 0, 0, "not yet durable at its decider", 0, 0, "status", ""},
		{"prepared at the decider", link.TxnPrepared, 0, 0, "", 0, 1, "status, abort", "abort"},
		{"unknown at the decider", link.TxnUnknown, 0, 0, "", 0, 1, "status, abort", "abort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decider := startFakePM(t, tc.commitFails)
			decider.status, decider.statusFails = tc.status, tc.statusFails
			holder := startFakePM(t, 0)
			cl := cluster(t, decider, holder)
			pins := &twophase.Pins{Ends: []*link.PinEnd{
				{StoreID: "s0"},
				{StoreID: "s1", Prepared: []link.PreparedTxn{{Txn: "tx1", Decider: "s0", Tables: []string{"kv"}}}},
			}}
			res, err := twophase.Recover(ctx, cl, pins, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "stay prepared") {
					t.Fatalf("error %v, want one saying %q and that the others stay prepared", err, tc.wantErr)
				}
				if link.IsNotDurable(err) {
					t.Errorf("Recover's error %v is a not-durable commit (of the statement that ran it)", err)
				}
			}
			if res.Committed != tc.committed || res.Aborted != tc.aborted {
				t.Errorf("recovered %+v, want %d committed, %d aborted", res, tc.committed, tc.aborted)
			}
			if got := decider.actions(); got != tc.decider {
				t.Errorf("the decider got %q, want %q", got, tc.decider)
			}
			if got := holder.actions(); got != tc.holder {
				t.Errorf("the holder got %q, want %q", got, tc.holder)
			}
		})
	}
}
