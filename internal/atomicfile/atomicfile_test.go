package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := Write(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "two" {
		t.Fatalf("contents %q, %v; want the second write's", b, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// A directory that does not exist: an error naming the path, nothing left anywhere.
	bad := filepath.Join(dir, "missing", "b.json")
	if err := Write(bad, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %v, want one naming %s", err, bad)
	}
	// A target that cannot be replaced (a directory): the temporary file is removed.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(sub, []byte("x"), 0o644); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("after a failed write: %v", ents)
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.tbl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	entries := func() []string {
		var names []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	// Until it is committed, the target keeps its old contents and the temporary file is
	// named with TempPrefix.
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new, "); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("streamed"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "old" {
		t.Fatalf("target before commit: %q", got)
	}
	if names := entries(); len(names) != 2 || !strings.HasPrefix(names[0], TempPrefix(path)) {
		t.Fatalf("while writing: %v, want the target and a %s* file", names, TempPrefix(path))
	}
	if err := f.CommitUnsynced(0o640); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after a commit: nothing
	if got := read(); got != "new, streamed" {
		t.Fatalf("target after commit: %q", got)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", st.Mode(), err)
	}
	if err := f.Commit(0o644); err == nil {
		t.Fatal("a second commit succeeded")
	}

	// Aborted: the target is untouched and nothing is left.
	f, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("discarded")
	f.Abort()
	if got := read(); got != "new, streamed" {
		t.Fatalf("target after abort: %q", got)
	}
	if names := entries(); len(names) != 1 {
		t.Fatalf("after abort: %v", names)
	}
	if err := f.Commit(0o644); err == nil {
		t.Fatal("commit after abort succeeded")
	}
}
