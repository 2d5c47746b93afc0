package primproc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// TestWriteErrorNotDurable: a commit storage applied but could not fsync (its error wraps
// storage.ErrNotDurable, as Txn.Commit and CommitPrepared wrap it) reaches the client as
// link.CodeNotDurable saying so; a prepare in that state is a plain failure (the
// coordinator aborts it); other failures keep their codes.
func TestWriteErrorNotDurable(t *testing.T) {
	d := &Daemon{cfg: Config{DataDir: "/d/pm0"}}
	fsync := fmt.Errorf("fsync directory %s: %w", "/d/pm0", &os.PathError{Op: "sync", Path: "/d/pm0", Err: syscall.EIO})
	notDurableErr := fmt.Errorf("storage: commit: %w", fmt.Errorf("%w: %w", storage.ErrNotDurable, fsync))
	for _, tc := range []struct {
		phase string
		err   error
		code  string
		msg   string
	}{
		{"commit", notDurableErr, link.CodeNotDurable,
			"write: table kv: commit: applied but not durable: fsync of /d/pm0 failed: input/output error; a crash may undo it"},
		{"prepare", notDurableErr, ipc.CodeInternal,
			"write: table kv: prepare not durable: fsync of /d/pm0 failed: input/output error"},
		{"commit", fmt.Errorf("storage: commit: %w", storage.ErrConflict), link.CodeConflict,
			"write: table kv: commit: commit: storage: conflicting concurrent change"},
		{"commit", fmt.Errorf("storage: commit: %w", fsync), ipc.CodeInternal,
			"write: table kv: commit: storage: commit: fsync directory /d/pm0: sync /d/pm0: input/output error"},
	} {
		var re *ipc.RemoteError
		if err := d.writeError("kv", tc.phase, tc.err); !errors.As(err, &re) || re.Code != tc.code || re.Message != tc.msg {
			t.Errorf("%s of %v:\ngot  %v\nwant remote error %s: %s", tc.phase, tc.err, err, tc.code, tc.msg)
		}
	}
	// A cause that is not a path error (an injected one) is named as it is.
	injected := fmt.Errorf("storage: commit of prepared transaction t1: %w", fmt.Errorf("%w: %w", storage.ErrNotDurable, errors.New("disk on fire")))
	want := "resolve: commit of t1: applied but not durable: fsync of /d/pm0 failed: disk on fire; a crash may undo it"
	if err := notDurable("/d/pm0", "resolve: commit of t1", injected); err.(*ipc.RemoteError).Message != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// fakeTxnStates is a store whose outcome of "tx1" is in doubt until settleFails runs out.
type fakeTxnStates struct {
	settleFails int
	settles     int
	settled     bool
}

func (f *fakeTxnStates) TxnState(id string) storage.TxnState {
	if f.settled {
		return storage.TxnCommitted
	}
	return storage.TxnInDoubt
}

func (f *fakeTxnStates) Settle() error {
	f.settles++
	if f.settleFails > 0 {
		f.settleFails--
		return fmt.Errorf("%w: %w", storage.ErrNotDurable, &os.PathError{Op: "sync", Path: "/d/pm0", Err: syscall.EIO})
	}
	f.settled = true
	return nil
}

// TestSettledState: resolve reports an outcome only once durable: an in-doubt one is
// settled first (the directory fsynced again), and if that fails resolve answers
// not_durable instead of the outcome, so that no coordinator commits the other primprocs on
// an outcome a crash here could undo.
func TestSettledState(t *testing.T) {
	f := &fakeTxnStates{settleFails: 1}
	if st, err := settledState(f, "tx1"); !errors.Is(err, storage.ErrNotDurable) {
		t.Fatalf("state %s, error %v: want ErrNotDurable while the fsync fails", st, err)
	}
	st, err := settledState(f, "tx1")
	if err != nil || st != storage.TxnCommitted {
		t.Fatalf("state %s, error %v: want committed once the fsync succeeds", st, err)
	}
	if _, err := settledState(f, "tx1"); err != nil || f.settles != 2 {
		t.Errorf("a settled outcome settled again: %d settles, error %v", f.settles, err)
	}
}
