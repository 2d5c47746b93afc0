package exemgr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/sql/catalog"
)

// openViews opens the views of database "tpch" in dir, as NewEngine does.
func openViews(t *testing.T, dir string) *viewSet {
	t.Helper()
	store, loaded, err := openViewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	mem := catalog.NewMemory()
	mem.CreateDatabase("tpch")
	vs, err := newViewSet("tpch", mem, store, loaded)
	if err != nil {
		store.close()
		t.Fatal(err)
	}
	t.Cleanup(func() { store.close() })
	return vs
}

// visible lists the views the planner sees, as db.name(columns): query.
func visible(vs *viewSet) []string {
	names, _ := vs.mem.Tables("tpch")
	var out []string
	for _, n := range names {
		v, _ := vs.mem.View("tpch", n)
		out = append(out, fmt.Sprintf("%s.%s(%s): %s", v.DB, v.Name, strings.Join(v.Columns, ","), v.Query))
	}
	return out
}

func TestViewStoreRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "em") // created by the store
	vs := openViews(t, dir)
	if got := visible(vs); got != nil {
		t.Fatalf("a new data directory holds views %v", got)
	}
	steps := []struct {
		v       *catalog.View
		replace bool
		err     error
	}{
		{&catalog.View{DB: "tpch", Name: "Asia", Columns: []string{"nation"}, Query: "SELECT `n_name` FROM `nation` WHERE `n_regionkey`=2"}, false, nil},
		{&catalog.View{DB: "tpch", Name: "one", Query: "SELECT 1 AS `x`"}, false, nil},
		{&catalog.View{DB: "tpch", Name: "ONE", Query: "SELECT 2 AS `x`"}, false, errViewExists},
		{&catalog.View{DB: "tpch", Name: "ONE", Query: "SELECT 3 AS `y`"}, true, nil},
		{&catalog.View{DB: "tpch", Name: "gone", Query: "SELECT 4"}, false, nil},
	}
	for _, s := range steps {
		if err := vs.create(s.v, s.replace); !errors.Is(err, s.err) {
			t.Fatalf("create %s (replace %v): %v, want %v", s.v.Name, s.replace, err, s.err)
		}
	}
	missing, err := vs.drop([]string{"GONE", "nosuch", "gone"})
	if err != nil || !reflect.DeepEqual(missing, []string{"nosuch", "gone"}) {
		t.Fatalf("drop: missing %v, %v; want [nosuch gone]", missing, err)
	}
	want := []string{
		"tpch.Asia(nation): SELECT `n_name` FROM `nation` WHERE `n_regionkey`=2",
		"tpch.ONE(): SELECT 3 AS `y`",
	}
	if got := visible(vs); !reflect.DeepEqual(got, want) {
		t.Fatalf("views before the restart:\n%q\nwant\n%q", got, want)
	}
	vs.store.close()
	again := openViews(t, dir)
	if got := visible(again); !reflect.DeepEqual(got, want) {
		t.Fatalf("views after the restart:\n%q\nwant\n%q", got, want)
	}
	// The file says what it is, so that a reader can refuse one it does not understand.
	data, err := os.ReadFile(filepath.Join(dir, viewFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"format": "colink-exemgr-views"`) || !strings.Contains(string(data), `"version": 1`) {
		t.Errorf("views file lacks its format or version:\n%s", data)
	}
}

// TestViewStoreOtherDatabase checks that views of a database exemgr does not serve now stay
// in the file, unseen, and survive the next write.
func TestViewStoreOtherDatabase(t *testing.T) {
	dir := t.TempDir()
	data, err := encodeViews([]*catalog.View{{DB: "other", Name: "v", Query: "SELECT 1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, viewFileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	vs := openViews(t, dir)
	if got := visible(vs); got != nil {
		t.Fatalf("views of database other are visible in tpch: %v", got)
	}
	if err := vs.create(&catalog.View{DB: "tpch", Name: "w", Query: "SELECT 2"}, false); err != nil {
		t.Fatal(err)
	}
	got, err := readViewFile(filepath.Join(dir, viewFileName))
	if err != nil || len(got) != 2 || got[0].DB != "other" || got[1].Name != "w" {
		t.Fatalf("file after a write: %+v, %v; want other.v and tpch.w", got, err)
	}
}

// TestViewStoreFailedWrite checks that a CREATE or DROP VIEW whose file cannot be written
// changes nothing: the previous file stays whole, no temporary file is left, and the
// catalog the sessions see is as before.
func TestViewStoreFailedWrite(t *testing.T) {
	dir := t.TempDir()
	vs := openViews(t, dir)
	if err := vs.create(&catalog.View{DB: "tpch", Name: "kept", Query: "SELECT 1"}, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, viewFileName)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device")
	// The write fails half way, as a full disk would: part of the new file is written.
	vs.store.write = func(path string, data []byte, perm os.FileMode) error {
		f, err := atomicfile.Create(path)
		if err != nil {
			return err
		}
		defer f.Abort()
		if _, err := f.Write(data[:len(data)/2]); err != nil {
			return err
		}
		return fmt.Errorf("write %s: %w", path, diskFull)
	}
	if err := vs.create(&catalog.View{DB: "tpch", Name: "new", Query: "SELECT 2"}, false); !errors.Is(err, diskFull) {
		t.Fatalf("create with a failing write: %v, want %v", err, diskFull)
	}
	if err := vs.create(&catalog.View{DB: "tpch", Name: "kept", Query: "SELECT 3"}, true); !errors.Is(err, diskFull) {
		t.Fatalf("replace with a failing write: %v, want %v", err, diskFull)
	}
	if _, err := vs.drop([]string{"kept"}); !errors.Is(err, diskFull) {
		t.Fatalf("drop with a failing write: %v, want %v", err, diskFull)
	}
	want := []string{"tpch.kept(): SELECT 1"}
	if got := visible(vs); !reflect.DeepEqual(got, want) {
		t.Fatalf("views after failed writes: %q, want %q", got, want)
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the views file changed after failed writes (%v):\n%s\nwas\n%s", err, after, before)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != viewFileName && e.Name() != dataDirLockName {
			t.Errorf("file %s left in the data directory", e.Name())
		}
	}
	// The next write that succeeds sees the state as it was.
	vs.store.write = atomicfile.Write
	if err := vs.create(&catalog.View{DB: "tpch", Name: "new", Query: "SELECT 2"}, false); err != nil {
		t.Fatal(err)
	}
	got, err := readViewFile(path)
	if err != nil || len(got) != 2 || got[0].Query != "SELECT 1" {
		t.Fatalf("file after recovery: %+v, %v", got, err)
	}
}

func TestViewStoreCorruptFile(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"truncated", `{"format": "colink-exemgr-views", "version": 1, "views": [{"db": "tpch"`, "unexpected EOF"},
		{"empty", ``, "EOF"},
		{"not json", "views\n", "invalid character"},
		{"other format", `{"format": "something", "version": 1, "views": []}`, `format "something"`},
		{"newer version", `{"format": "colink-exemgr-views", "version": 2, "views": []}`, "version 2"},
		{"no version", `{"format": "colink-exemgr-views", "views": []}`, "version 0"},
		{"unknown field", `{"format": "colink-exemgr-views", "version": 1, "views": [], "extra": 1}`, `unknown field "extra"`},
		{"trailing data", `{"format": "colink-exemgr-views", "version": 1, "views": []} {}`, "data after"},
		{"no query", `{"format": "colink-exemgr-views", "version": 1, "views": [{"db": "tpch", "name": "v", "query": " "}]}`, "lacks"},
		{"twice", `{"format": "colink-exemgr-views", "version": 1, "views": [{"db": "tpch", "name": "v", "query": "SELECT 1"}, {"db": "TPCH", "name": "V", "query": "SELECT 2"}]}`, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, viewFileName)
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			s, _, err := openViewStore(dir)
			if err == nil {
				s.close()
				t.Fatal("a corrupt views file opened")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to name %s, say corrupt and %q", err, path, tc.want)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, viewFileName), 0o700); err != nil { // a directory in its place
			t.Fatal(err)
		}
		if s, _, err := openViewStore(dir); err == nil || !strings.Contains(err.Error(), viewFileName) {
			s.close()
			t.Fatalf("open with a directory for a views file: %v", err)
		}
	})
}

// TestViewStoreLocked checks that two exemgrs cannot share a data directory, and that the
// temporary file a crash left behind is removed.
func TestViewStoreLocked(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, atomicfile.TempPrefix(filepath.Join(dir, viewFileName))+"123")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	openViews(t, dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
	if s, _, err := openViewStore(dir); err == nil || !strings.Contains(err.Error(), "in use by another exemgr") {
		s.close()
		t.Fatalf("second open of a data directory: %v, want in use", err)
	}
}

// TestViewStoreConcurrent creates and drops views from many goroutines: every change that
// was acknowledged is in the file, and memory and file agree.
func TestViewStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	vs := openViews(t, dir)
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("v%d_%d", w, i)
				if err := vs.create(&catalog.View{DB: "tpch", Name: name, Query: "SELECT " + name}, false); err != nil {
					errs <- err
				}
				// Every worker also races for one shared name; exactly one create wins.
				if err := vs.create(&catalog.View{DB: "tpch", Name: "shared", Query: "SELECT 1"}, false); err != nil && !errors.Is(err, errViewExists) {
					errs <- err
				}
				if i%2 == 1 {
					if missing, err := vs.drop([]string{name}); err != nil || missing != nil {
						errs <- fmt.Errorf("drop %s: missing %v, %v", name, missing, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mem := visible(vs)
	if len(mem) != workers*each/2+1 {
		t.Fatalf("%d views in memory, want %d", len(mem), workers*each/2+1)
	}
	vs.store.close()
	if got := visible(openViews(t, dir)); !reflect.DeepEqual(got, mem) {
		t.Fatalf("file and memory differ:\n%q\n%q", got, mem)
	}
}

// TestViewSetMemoryOnly checks that without a data directory views still work, in memory.
func TestViewSetMemoryOnly(t *testing.T) {
	mem := catalog.NewMemory()
	mem.CreateDatabase("tpch")
	vs, err := newViewSet("tpch", mem, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.create(&catalog.View{DB: "tpch", Name: "v", Query: "SELECT 1"}, false); err != nil {
		t.Fatal(err)
	}
	if missing, err := vs.drop([]string{"v", "w"}); err != nil || !reflect.DeepEqual(missing, []string{"w"}) {
		t.Fatalf("drop: %v, %v", missing, err)
	}
	if got := visible(vs); got != nil {
		t.Fatalf("views after drop: %v", got)
	}
}
