package storage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var errInjected = errors.New("injected failure")

// faultOp is a change whose commit TestCommitFaults fails at each step in turn.
type faultOp struct {
	name  string
	setup func(t *testing.T, s *Store)       // before the change (not failed)
	run   func(t *testing.T, s *Store) error // the change, ending in the commit under test
}

func faultOps() []faultOp {
	ctx := context.Background()
	sc := allKindsSchema()
	base := func(t *testing.T, s *Store) { loadTable(t, s, "t", sc, 1, 1000, 500) }
	appendAndDelete := func(t *testing.T, s *Store) *Txn {
		tx := s.Begin()
		appendRows(t, tx, "t", 1, 1000, 1300)
		deleteByRowID(t, s, tx, "t", 0, func(r int64) bool { return r%3 == 0 })
		return tx
	}
	prepare := func(t *testing.T, s *Store) {
		base(t, s)
		if _, err := appendAndDelete(t, s).Prepare(ctx, "p1", nil); err != nil {
			t.Fatal(err)
		}
	}
	return []faultOp{
		{"replace", base, func(t *testing.T, s *Store) error {
			tx := s.Begin()
			w, err := tx.Replace("t", sc)
			if err != nil {
				t.Fatal(err)
			}
			rec := genRecord(w.tx.store.alloc, sc, 2, 0, 700)
			defer rec.Release()
			if err := w.Write(ctx, rec); err != nil {
				t.Fatal(err)
			}
			return tx.Commit(ctx)
		}},
		{"append and delete", base, func(t *testing.T, s *Store) error {
			return appendAndDelete(t, s).Commit(ctx)
		}},
		{"prepare", base, func(t *testing.T, s *Store) error {
			_, err := appendAndDelete(t, s).Prepare(ctx, "p1", nil)
			return err
		}},
		{"commit prepared", prepare, func(t *testing.T, s *Store) error {
			_, err := s.CommitPrepared(ctx, "p1")
			return err
		}},
		{"abort prepared", prepare, func(t *testing.T, s *Store) error {
			return s.AbortPrepared("p1")
		}},
	}
}

// TestCommitFaults fails each step of each kind of commit and checks the store, in the
// process and reopened after a simulated crash, holds exactly the old version or the new
// one, with every file it names intact. A failure after the catalog's rename must leave the
// new version in place (it is on disk) while keeping the old version's files, since a crash
// that loses the rename brings the old catalog back.
func TestCommitFaults(t *testing.T) {
	steps := []commitStep{stepSegmentSync, stepSegmentDirSync, stepDeleteFile, stepCatalogWrite, stepCatalogRename, stepCatalogDirSync}
	for _, op := range faultOps() {
		// The expected new state: the change committed without faults; and the steps it
		// takes (only those are failed below).
		ref := openTest(t, t.TempDir(), testOptions())
		op.setup(t, ref)
		taken := map[commitStep]bool{}
		ref.failAt = func(st commitStep) error { taken[st] = true; return nil }
		if err := op.run(t, ref); err != nil {
			t.Fatalf("%s without faults: %v", op.name, err)
		}
		newState := storeDigest(t, ref)
		ref.Close()

		for _, step := range steps {
			if !taken[step] {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", op.name, step), func(t *testing.T) {
				dir := t.TempDir()
				s := openTest(t, dir, testOptions())
				op.setup(t, s)
				oldState := storeDigest(t, s)
				oldCatalog, err := os.ReadFile(filepath.Join(dir, catalogFile))
				if err != nil {
					t.Fatal(err)
				}
				hit := false
				s.failAt = func(st commitStep) error {
					if st == step && !hit {
						hit = true
						return errInjected
					}
					return nil
				}
				err = op.run(t, s)
				s.failAt = nil
				if !hit {
					t.Fatalf("the change did not reach step %s this time", step)
				}
				if !errors.Is(err, errInjected) {
					t.Fatalf("failure at %s: error %v, want the injected one", step, err)
				}
				renamed := step == stepCatalogDirSync
				want, wantName := oldState, "old"
				if renamed {
					want, wantName = newState, "new"
					if !errors.Is(err, ErrNotDurable) {
						t.Errorf("failure after the rename: %v, want ErrNotDurable", err)
					}
				}
				if got := storeDigest(t, s); got != want {
					t.Fatalf("after the failure the store holds\n%s\nwant the %s state\n%s", got, wantName, want)
				}
				checkComplete(t, s)

				// Crash now: the directory as it is. A crash that loses the rename: the same
				// with the old catalog back.
				crashed := copyDir(t, dir)
				var lost string
				if renamed {
					lost = copyDir(t, dir)
					if err := os.WriteFile(filepath.Join(lost, catalogFile), oldCatalog, 0o600); err != nil {
						t.Fatal(err)
					}
				}

				if renamed && (op.name == "commit prepared" || op.name == "abort prepared") {
					// The coordinator asks again: the same answer, now durable, and the
					// previous version's files (p1's own delete file) are released.
					if err := op.run(t, s); err != nil {
						t.Fatalf("%s again: %v", op.name, err)
					}
					checkOnlyCatalogFiles(t, s)
				}

				// The store goes on: the next commit succeeds and leaves no stray files.
				loadTable(t, s, "u", allKindsSchema(), 3, 100, 100)
				checkComplete(t, s)
				checkOnlyCatalogFiles(t, s)
				s.Close()

				reopen := func(dir, state, name string) {
					s := openTest(t, dir, testOptions())
					defer s.Close()
					if got := storeDigest(t, s); got != state {
						t.Fatalf("reopened after a crash (%s), the store holds\n%s\nwant the %s state\n%s", name, got, wantName, state)
					}
					checkComplete(t, s)
					checkOnlyCatalogFiles(t, s)
					if s.TxnState("p1") == TxnPrepared {
						if _, err := s.CommitPrepared(context.Background(), "p1"); err != nil {
							t.Fatalf("commit of p1 after reopening: %v", err)
						}
						checkComplete(t, s)
					}
				}
				reopen(crashed, want, "rename kept")
				if renamed {
					wantName = "old"
					reopen(lost, oldState, "rename lost")
				}
			})
		}
	}
}

// storeDigest renders the snapshot's tables (every value) and prepared transactions.
func storeDigest(t *testing.T, s *Store) string {
	t.Helper()
	snap := s.Snapshot()
	defer snap.Release()
	var out string
	for _, ti := range snap.Tables() {
		h := sha256.New()
		if err := hashTable(snap, ti, h); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("table %s: %d rows, %x\n", ti.Name, ti.Rows, h.Sum(nil)[:8])
	}
	var ids []string
	for _, p := range snap.Prepared() {
		ids = append(ids, p.ID)
	}
	return out + fmt.Sprintf("prepared %v", ids)
}

func hashTable(snap *Snapshot, ti TableInfo, h hash.Hash) error {
	names := make([]string, ti.Schema.NumFields())
	for i, f := range ti.Schema.Fields() {
		names[i] = f.Name
	}
	sc, err := snap.Scan(ScanRequest{Table: ti.Name, Columns: names})
	if err != nil {
		return err
	}
	defer sc.Close()
	for _, ref := range sc.RowGroups() {
		rec, err := sc.Read(context.Background(), ref)
		if err != nil {
			return err
		}
		for i := range int(rec.NumRows()) {
			for c := range names {
				fmt.Fprintf(h, "%v|", cellValue(rec.Column(c), i))
			}
		}
		rec.Release()
	}
	return nil
}

// checkComplete fails unless every file the current catalog names is on disk and intact
// (prepared transactions' files included).
func checkComplete(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	defer snap.Release()
	snap.cat.files(func(f string) {
		if _, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("the catalog names %s: %v", f, err)
		}
	})
}

// copyDir copies a store directory, as a crash at this moment would leave it, to a new
// temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
