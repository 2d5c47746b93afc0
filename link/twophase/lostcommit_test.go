package twophase_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
)

// TestCommitConnectionLost: a connection lost after the commit request left makes the
// outcome unknown (OutcomeUnknownError), since the primproc may have committed; lost before
// it (during the upload or the prepare), the write is a plain failure, committed nowhere.
func TestCommitConnectionLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := []string{"s0", "s1"}
	for _, tc := range []struct {
		name    string
		members int
		lose    string // where the decider (or the single primproc) drops the connection
		unknown bool
		decider string // the resolves the decider got
	}{
		{"one phase, lost after the END commit", 1, "write-commit", true, ""},
		{"two phases, lost at the decider's commit", 2, "resolve-commit", true, "commit"},
		{"two phases, lost during the prepare", 2, "write-prepare", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pms := []*fakePM{startFakePM(t, 0)}
			if tc.members == 2 {
				pms = append(pms, startFakePM(t, 0))
			}
			pms[0].set(func(f *fakePM) { f.lose = tc.lose })
			cl := cluster(t, pms...)
			_, err := insert(ctx, cl, ids[:tc.members], 0, 10, nil)
			if err == nil {
				t.Fatal("the write succeeded over a lost connection")
			}
			if got := twophase.IsOutcomeUnknown(err); got != tc.unknown {
				t.Fatalf("IsOutcomeUnknown(%v) = %v, want %v", err, got, tc.unknown)
			}
			var ue *twophase.OutcomeUnknownError
			if tc.unknown {
				if !errors.As(err, &ue) || ue.Peer != cl[0].Peer() || !strings.HasPrefix(err.Error(), "outcome unknown: the connection to primproc "+cl[0].Peer()+" was lost during commit") ||
					!strings.Contains(err.Error(), "check before retrying") {
					t.Errorf("error %q: want an OutcomeUnknownError naming %s", err, cl[0].Peer())
				}
			}
			if tc.members == 2 {
				if got := pms[0].actions(); !strings.HasPrefix(got, tc.decider) {
					t.Errorf("the decider got %q, want %q first", got, tc.decider)
				}
				// The other primproc is told to commit only once the decider has answered.
				if got := pms[1].actions(); strings.Contains(got, "commit") {
					t.Errorf("the other primproc got %q with the decider's outcome unknown", got)
				}
			}
		})
	}

	t.Run("one phase, lost during the upload", func(t *testing.T) {
		pm := startFakePM(t, 0)
		pm.set(func(f *fakePM) { f.lose = "write-batch" })
		c, err := link.Dial(pm.url, ipc.ClientConfig{ConnsPerPeer: 1, BackoffMax: 100 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Link().WaitUp(ctx); err != nil {
			t.Fatal(err)
		}
		cl := link.Cluster{c}
		conns := c.Link().Conns() // the one connection the write runs on
		tx, err := twophase.Begin(ctx, cl, "kv", link.OpInsert, ids[:1])
		if err != nil {
			t.Fatal(err)
		}
		rec := kvRecord(0, 10)
		defer rec.Release()
		if err := tx.Send(0, rec); err != nil {
			t.Fatal(err)
		}
		// Once the connection has failed, the END cannot leave.
		select {
		case <-conns[0].Done():
		case <-ctx.Done():
			t.Fatal("the fake primproc's connection never failed")
		}
		_, err = tx.Commit(ctx, nil)
		if err == nil || twophase.IsOutcomeUnknown(err) {
			t.Fatalf("commit after the connection was lost during the upload: %v, want a plain error", err)
		}
	})

	// A statement cancelled while its commit request is out still learns the outcome: the
	// cancellation is held back (commitGrace) rather than making a committed write unknown.
	t.Run("cancelled while committing", func(t *testing.T) {
		pm := startFakePM(t, 0)
		committing, release := make(chan struct{}, 1), make(chan struct{})
		pm.set(func(f *fakePM) { f.committing, f.release = committing, release })
		cl := cluster(t, pm)
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		done := make(chan error, 1)
		go func() {
			_, err := insert(sctx, cl, ids[:1], 0, 10, nil)
			done <- err
		}()
		select {
		case <-committing:
		case <-ctx.Done():
			t.Fatal("the commit never reached the fake primproc")
		}
		scancel()
		// Give a cancellation that was not held back the time to reach the stream; the
		// result does not depend on this pause when the code is right.
		time.Sleep(50 * time.Millisecond)
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("a write whose commit was answered after the statement's cancellation: %v", err)
		}
	})
}
