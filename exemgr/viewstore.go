package exemgr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/sql/catalog"
)

// The views file: exemgr's view definitions under its data directory.
const (
	viewFileName    = "views.json"
	viewFileFormat  = "colink-exemgr-views"
	viewFileVersion = 1
	dataDirLockName = "LOCK"
)

// viewFile is the views file's contents. A reader refuses a format it does not know and a
// version newer than its own.
type viewFile struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	Views   []storedView `json:"views"`
}

// storedView is one view as written: its database, name, column list (empty: the query's
// own names) and query text as exemgr keeps it (the SELECT restored from its syntax tree,
// which the binder parses again at every use).
type storedView struct {
	DB      string   `json:"db"`
	Name    string   `json:"name"`
	Columns []string `json:"columns,omitempty"`
	Query   string   `json:"query"`
}

// viewStore keeps the views file of a data directory, which it holds locked (flock) so that
// two exemgrs cannot overwrite each other's views. Its methods are not safe for concurrent
// use: viewSet serializes them.
type viewStore struct {
	path  string
	lock  *os.File
	write func(path string, data []byte, perm os.FileMode) error // atomicfile.Write; tests fail it
}

// openViewStore locks dir (creating it) and reads its views file: none if there is none
// yet. A file that cannot be read or decoded is an error naming it, never an empty set.
func openViewStore(dir string) (*viewStore, []*catalog.View, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, dataDirLockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("data directory: lock %s: %w", dir, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, nil, fmt.Errorf("data directory %s is in use by another exemgr: %w", dir, err)
	}
	s := &viewStore{path: filepath.Join(dir, viewFileName), lock: lock, write: atomicfile.Write}
	// A crash during a write leaves its temporary file behind; the views file is whole.
	if tmps, err := filepath.Glob(filepath.Join(dir, atomicfile.TempPrefix(s.path)+"*")); err == nil {
		for _, tmp := range tmps {
			os.Remove(tmp)
		}
	}
	views, err := readViewFile(s.path)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, views, nil
}

// readViewFile decodes a views file; a missing file holds no views.
func readViewFile(path string) ([]*catalog.View, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the views file %s: %w", path, err)
	}
	views, err := decodeViews(data)
	if err != nil {
		return nil, fmt.Errorf("the views file %s is corrupt (fix or move it away; exemgr will not start without its views): %w", path, err)
	}
	return views, nil
}

// decodeViews parses and checks a views file's contents.
func decodeViews(data []byte) ([]*catalog.View, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f viewFile
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON document")
	}
	if f.Format != viewFileFormat {
		return nil, fmt.Errorf("format %q, want %q", f.Format, viewFileFormat)
	}
	if f.Version < 1 || f.Version > viewFileVersion {
		return nil, fmt.Errorf("version %d; this exemgr reads version %d", f.Version, viewFileVersion)
	}
	seen := map[string]bool{}
	out := make([]*catalog.View, 0, len(f.Views))
	for i, sv := range f.Views {
		if sv.DB == "" || sv.Name == "" || strings.TrimSpace(sv.Query) == "" {
			return nil, fmt.Errorf("view %d (%q.%q) lacks its database, name or query", i+1, sv.DB, sv.Name)
		}
		k := viewKey(sv.DB, sv.Name)
		if seen[k] {
			return nil, fmt.Errorf("view %s.%s appears twice", sv.DB, sv.Name)
		}
		seen[k] = true
		out = append(out, &catalog.View{DB: sv.DB, Name: sv.Name, Columns: sv.Columns, Query: sv.Query})
	}
	return out, nil
}

// encodeViews is the views file holding views, sorted by database and name so that the
// same set always writes the same bytes.
func encodeViews(views []*catalog.View) ([]byte, error) {
	f := viewFile{Format: viewFileFormat, Version: viewFileVersion, Views: []storedView{}}
	for _, v := range views {
		f.Views = append(f.Views, storedView{DB: v.DB, Name: v.Name, Columns: v.Columns, Query: v.Query})
	}
	slices.SortFunc(f.Views, func(a, b storedView) int {
		return strings.Compare(viewKey(a.DB, a.Name), viewKey(b.DB, b.Name))
	})
	data, err := json.MarshalIndent(f, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// save replaces the views file with views, durably (atomicfile: temp file, fsync, rename,
// fsync of the directory); on failure the previous file is intact.
func (s *viewStore) save(views []*catalog.View) error {
	data, err := encodeViews(views)
	if err != nil {
		return fmt.Errorf("encode the views: %w", err)
	}
	return s.write(s.path, data, 0o600)
}

// close releases the data directory.
func (s *viewStore) close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// viewKey identifies a view: names compare case-insensitively, as the catalog's do.
func viewKey(db, name string) string { return strings.ToLower(db) + "\x00" + strings.ToLower(name) }

// viewSet is the views every session shares: the catalog the planner reads (mem, which
// holds the engine's database only) and, with a data directory, their durable copy. Every
// change writes the file first and changes mem only once the write succeeded, under mu, so
// that concurrent CREATE and DROP VIEW apply one at a time and no session sees a view that
// would not survive a crash.
type viewSet struct {
	db    string
	mem   *catalog.Memory
	store *viewStore // nil: memory only

	mu  sync.Mutex
	all map[string]*catalog.View // every stored view by viewKey, other databases' too
}

// newViewSet returns the views of database db, loaded from store's file (store may be nil).
// Views of other databases (an exemgr once run with another --database) stay in the file
// but are not visible.
func newViewSet(db string, mem *catalog.Memory, store *viewStore, loaded []*catalog.View) (*viewSet, error) {
	vs := &viewSet{db: db, mem: mem, store: store, all: map[string]*catalog.View{}}
	for _, v := range loaded {
		vs.all[viewKey(v.DB, v.Name)] = v
		if !strings.EqualFold(v.DB, db) {
			continue
		}
		if err := mem.CreateView(v, false); err != nil {
			return nil, fmt.Errorf("view %s.%s: %w", v.DB, v.Name, err)
		}
	}
	return vs, nil
}

// errViewExists is CREATE VIEW of a name that is taken, without OR REPLACE.
var errViewExists = errors.New("the view exists")

// create adds v, replacing a view of that name if replace is set.
func (vs *viewSet) create(v *catalog.View, replace bool) error {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	k := viewKey(v.DB, v.Name)
	if _, ok := vs.all[k]; ok && !replace {
		return errViewExists
	}
	next := maps.Clone(vs.all)
	next[k] = v
	if err := vs.persist(next); err != nil {
		return err
	}
	vs.all = next
	return vs.mem.CreateView(v, true)
}

// drop removes the named views of the engine's database and returns those that did not
// exist; nothing is removed if the write fails.
func (vs *viewSet) drop(names []string) (missing []string, err error) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	next := maps.Clone(vs.all)
	var gone []string
	for _, n := range names {
		k := viewKey(vs.db, n)
		if _, ok := next[k]; !ok {
			missing = append(missing, n)
			continue
		}
		delete(next, k)
		gone = append(gone, n)
	}
	if len(gone) == 0 {
		return missing, nil
	}
	if err := vs.persist(next); err != nil {
		return nil, err
	}
	vs.all = next
	for _, n := range gone {
		vs.mem.DropView(vs.db, n)
	}
	return missing, nil
}

// persist writes views to the data directory, if there is one.
func (vs *viewSet) persist(views map[string]*catalog.View) error {
	if vs.store == nil {
		return nil
	}
	list := make([]*catalog.View, 0, len(views))
	for _, v := range views {
		list = append(list, v)
	}
	if err := vs.store.save(list); err != nil {
		return fmt.Errorf("cannot save the views: %w", err)
	}
	return nil
}
