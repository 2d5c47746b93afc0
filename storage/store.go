package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/internal/bufpool"
	"github.com/colinkdb/colink/storage/ndv"
)

// Default layout parameters. A row group of 128 Ki rows keeps one decoded int64 column at
// 1 MiB (cheap to cache, evict and hand to one worker) while leaving ~46 zone-map ranges and
// parallel work items per SF 1 lineitem; larger groups would cut per-group overhead a little but
// coarsen elimination and load balancing on few cores. A segment of 8 such groups (1 Mi rows)
// spreads SF 1 lineitem over 6 segments, enough to deal evenly across 2 or 3 primprocs.
const (
	DefaultRowGroupRows = 128 << 10
	DefaultSegmentRows  = 8 * DefaultRowGroupRows
	DefaultCompression  = "snappy"
)

// DefaultCacheSize is the column cache budget when Options.CacheSize is 0: a quarter of
// physical memory (6 GiB on a 24 GiB machine), at least 256 MiB; 1 GiB if memory size is
// unknown. The decoded columns live off the Go heap, so this is what they cost.
func DefaultCacheSize() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 1 << 30
	}
	total := int64(si.Totalram) * int64(si.Unit)
	return max(total/4, 256<<20)
}

// Options configure a Store. The zero value is usable.
type Options struct {
	// CacheSize bounds the decoded columns kept in memory, in bytes. 0 means
	// DefaultCacheSize(); negative disables caching (every read decodes from disk).
	CacheSize int64
	// RowGroupRows is the number of rows per Parquet row group (one zone map per column each).
	RowGroupRows int
	// SegmentRows is the number of rows after which a writer starts a new segment file.
	SegmentRows int
	// Compression is the Parquet codec for new segments: "none", "snappy", "zstd" or "lz4".
	Compression string
	// Allocator, if set, allocates every array the store makes: decoded columns, scans'
	// extra columns and writers' buffers (tests pass a checked allocator). By default the
	// decoded columns, which the column cache holds, come from an off-heap recycling pool
	// (see decodePool) and the rest from the Go heap.
	Allocator memory.Allocator
	// Logger receives notices (leftover files removed, etc.); default slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize()
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.SegmentRows == 0 {
		o.SegmentRows = max(DefaultSegmentRows, o.RowGroupRows)
	}
	if o.RowGroupRows < 1 || o.SegmentRows < o.RowGroupRows {
		return o, fmt.Errorf("storage: need 1 <= RowGroupRows (%d) <= SegmentRows (%d)", o.RowGroupRows, o.SegmentRows)
	}
	if o.Compression == "" {
		o.Compression = DefaultCompression
	}
	if _, err := codec(o.Compression); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

func codec(name string) (compress.Compression, error) {
	switch name {
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "lz4":
		return compress.Codecs.Lz4Raw, nil
	}
	return 0, fmt.Errorf("storage: unknown compression %q (want none, snappy, zstd or lz4)", name)
}

// Store is one directory of tables. It is safe for concurrent use: many scans, and
// transactions that commit one at a time.
type Store struct {
	dir   string
	opts  Options
	log   *slog.Logger
	lock  *os.File
	cache *columnCache
	// decode allocates decoded columns and alloc everything else the store makes (both
	// Options.Allocator when set). pool is decode when the store made it: an off-heap
	// bufpool, so that the column cache's bytes are its own size in the daemon's memory
	// and not a Go heap the garbage collector lets grow to twice their size.
	decode, alloc memory.Allocator
	pool          *bufpool.Pool

	nextSegmentID atomic.Uint64 // allocator for segment ids of uncommitted writes
	commitMu      sync.Mutex    // serializes commits

	// failAt is the fault-injection seam of the tests: when set (before the store is used),
	// it is called at each commitStep and an error it returns fails that step as an I/O error
	// would. Always nil outside tests.
	failAt func(commitStep) error

	// sketches caches segments' decoded distinct-value sketches by segment ID (a segment's
	// sketches never change), so that the catalog's statistics do not decode every segment
	// on every request.
	sketchMu sync.Mutex
	sketches map[uint64][]ndv.Sketch

	mu  sync.Mutex // guards the fields below
	cur *Snapshot
	// inDoubt pins the versions that were current when a catalog was renamed into place but
	// DIR's fsync then failed: until a later fsync of DIR succeeds, a crash may bring any of
	// them back, so their files must stay.
	inDoubt  []*Snapshot
	fileRefs map[string]int      // relative path → live snapshots naming it
	segs     map[uint64]*segment // open (or openable) segment files by id
	dels     map[string]bitmap   // loaded delete bitmaps by file
	closed   bool
}

// Open opens (creating if needed) the store in dir. It takes an exclusive lock on the
// directory and removes files left by transactions that never committed.
func Open(dir string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: lock %s: %w", dir, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("storage: %s is in use by another process: %w", dir, err)
	}
	cat, err := readCatalog(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	if cat.StoreID == "" { // a new store, or one made before stores had identities
		cat.StoreID = newStoreID()
		if _, err := writeCatalog(dir, cat, nil); err != nil {
			lock.Close()
			return nil, fmt.Errorf("storage: open %s: %w", dir, err)
		}
	}
	s := &Store{
		dir:      dir,
		opts:     opts,
		log:      opts.Logger,
		lock:     lock,
		cache:    newColumnCache(opts.CacheSize),
		fileRefs: make(map[string]int),
		segs:     make(map[uint64]*segment),
		dels:     make(map[string]bitmap),
		sketches: make(map[uint64][]ndv.Sketch),
		decode:   opts.Allocator,
		alloc:    opts.Allocator,
	}
	if s.alloc == nil {
		s.pool = decodePool(opts.CacheSize)
		s.decode, s.alloc = s.pool, memory.DefaultAllocator
	}
	s.nextSegmentID.Store(cat.NextSegmentID)
	if err := s.removeLeftovers(cat); err != nil {
		lock.Close()
		return nil, err
	}
	s.publishLocked(cat)
	return s, nil
}

// fault runs the test seam at step: nil unless a test injects a failure there.
func (s *Store) fault(step commitStep) error {
	if s.failAt == nil {
		return nil
	}
	return s.failAt(step)
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// removeLeftovers deletes every file under DIR/tables that cat does not name (segments of
// interrupted loads, obsolete segments whose deletion a crash cut short) and stray temporary
// catalogs.
func (s *Store) removeLeftovers(cat *catalog) error {
	keep := make(map[string]bool)
	cat.files(func(f string) { keep[f] = true })
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", s.dir, err)
	}
	for _, e := range entries {
		// atomicfile's temporary catalogs, and the CATALOG.tmp-* of builds before it.
		if strings.HasPrefix(e.Name(), atomicfile.TempPrefix(catalogFile)) || strings.HasPrefix(e.Name(), catalogFile+".tmp-") {
			s.removeLeftover(filepath.Join(s.dir, e.Name()))
		}
	}
	tables := filepath.Join(s.dir, "tables")
	err = filepath.WalkDir(tables, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(s.dir, path)
		if !keep[filepath.ToSlash(rel)] {
			s.removeLeftover(path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage: clean %s: %w", tables, err)
	}
	// Remove table directories left empty (dropped tables, loads that never committed).
	dirs, _ := os.ReadDir(tables)
	for _, d := range dirs {
		if d.IsDir() && cat.table(d.Name()) == nil {
			os.Remove(filepath.Join(tables, d.Name())) // fails harmlessly if not empty
		}
	}
	return nil
}

func (s *Store) removeLeftover(path string) {
	if err := os.Remove(path); err != nil {
		s.log.Warn("storage: cannot remove leftover file", "file", path, "err", err)
		return
	}
	s.log.Info("storage: removed file no committed catalog names", "file", path)
}

// Close releases the directory lock and open files. Snapshots and scans must be finished.
// If a commit left the catalog in doubt, Close fsyncs DIR once more and reports whether
// that failed.
func (s *Store) Close() error {
	s.commitMu.Lock()
	settleErr := s.settle()
	s.commitMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	segs := s.segs
	s.segs = map[uint64]*segment{}
	s.mu.Unlock()
	for _, sg := range segs {
		sg.close()
	}
	s.cache.drop()
	if s.pool != nil {
		s.pool.Close() // nothing decodes any more; arrays still held are unmapped when released
	}
	return errors.Join(settleErr, s.lock.Close())
}

// Snapshot pins the current catalog version. The caller must Release it.
func (s *Store) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.refs++
	return s.cur
}

// catalog returns the current catalog version, unpinned.
func (s *Store) catalog() *catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.cat
}

// publishLocked makes cat the current version. Caller holds s.mu or is Open.
func (s *Store) publishLocked(cat *catalog) {
	sn := &Snapshot{store: s, cat: cat, refs: 1} // the store's own reference
	cat.files(func(f string) { s.fileRefs[f]++ })
	old := s.cur
	s.cur = sn
	if old != nil {
		s.releaseLocked(old)
	}
}

// installCatalog writes next as the store's catalog and publishes it; the caller holds
// commitMu. published reports whether next took effect. If it did not, the old catalog is
// in place and the caller removes the files it wrote for next. If it did, those files belong
// to the catalog from then on, even when err is set: DIR's fsync failed after the rename,
// err wraps ErrNotDurable, and the previous version stays pinned (its files kept) until a
// later fsync of DIR succeeds, because a crash before that may bring it back.
func (s *Store) installCatalog(next *catalog) (published bool, err error) {
	renamed, err := writeCatalog(s.dir, next, s.fault)
	if !renamed {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.cur.refs++
		s.inDoubt = append(s.inDoubt, s.cur)
		s.publishLocked(next)
		return true, fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	s.publishLocked(next)
	s.settledLocked()
	return true, nil
}

// settle makes the current catalog durable if a commit left it in doubt (fsyncs DIR), so
// that an answer given after it (a prepared transaction's outcome, asked again) holds
// across a crash. The caller holds commitMu.
func (s *Store) settle() error {
	s.mu.Lock()
	doubt := len(s.inDoubt) > 0
	s.mu.Unlock()
	if !doubt {
		return nil
	}
	err := s.fault(stepCatalogDirSync)
	if err == nil {
		err = syncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	s.mu.Lock()
	s.settledLocked()
	s.mu.Unlock()
	return nil
}

// settledLocked releases the versions pinned while the catalog was in doubt: DIR's fsync
// has since succeeded, so no crash brings them back.
func (s *Store) settledLocked() {
	for _, sn := range s.inDoubt {
		s.releaseLocked(sn)
	}
	s.inDoubt = nil
}

// releaseLocked drops one reference to sn; when the last goes, files no other live version
// names are deleted, their handles closed and their cached columns dropped.
func (s *Store) releaseLocked(sn *Snapshot) {
	sn.refs--
	if sn.refs > 0 {
		return
	}
	if sn.refs < 0 {
		panic("storage: snapshot released more often than acquired")
	}
	sn.cat.files(func(f string) {
		s.fileRefs[f]--
		if s.fileRefs[f] > 0 {
			return
		}
		delete(s.fileRefs, f)
		delete(s.dels, f)
		path := filepath.Join(s.dir, filepath.FromSlash(f))
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("storage: cannot remove obsolete file", "file", path, "err", err)
		}
	})
	for _, t := range sn.cat.Tables {
		for _, sm := range t.Segments {
			if s.fileRefs[sm.File] > 0 {
				continue
			}
			if sg := s.segs[sm.ID]; sg != nil {
				delete(s.segs, sm.ID)
				sg.close()
			}
			s.cache.dropSegment(sm.ID)
			s.sketchMu.Lock()
			delete(s.sketches, sm.ID)
			s.sketchMu.Unlock()
		}
	}
}

// Snapshot is one pinned, consistent version of the store's catalog. Everything read through
// it (tables, segments, zone maps, data) belongs to that version, whatever commits meanwhile.
type Snapshot struct {
	store *Store
	cat   *catalog
	refs  int // guarded by store.mu
}

// Release unpins the snapshot. It must be called exactly once per Store.Snapshot.
func (sn *Snapshot) Release() {
	sn.store.mu.Lock()
	defer sn.store.mu.Unlock()
	sn.store.releaseLocked(sn)
}

// Version is the catalog version the snapshot pins; every commit increments it.
func (sn *Snapshot) Version() uint64 { return sn.cat.Version }

// TableInfo describes a table in a snapshot.
type TableInfo struct {
	Name     string
	Schema   *arrow.Schema // fields carry their metadata (colink.sql_type)
	Rows     int64         // deleted rows excluded
	Segments []SegmentInfo // in load order
}

// SegmentInfo describes one segment of a table.
type SegmentInfo struct {
	ID        uint64
	File      string // path relative to the store directory
	Rows      int64  // rows written, deleted ones included
	Deleted   int64
	RowGroups int
	Bytes     int64 // file size
}

// Tables lists the snapshot's tables, sorted by name.
func (sn *Snapshot) Tables() []TableInfo {
	out := make([]TableInfo, len(sn.cat.Tables))
	for i, t := range sn.cat.Tables {
		out[i] = tableInfo(t)
	}
	return out
}

// Table describes the named table.
func (sn *Snapshot) Table(name string) (TableInfo, error) {
	t := sn.cat.table(name)
	if t == nil {
		return TableInfo{}, fmt.Errorf("%w: %q", ErrNoTable, name)
	}
	return tableInfo(t), nil
}

// ErrNoTable is wrapped by errors about a table that does not exist.
var ErrNoTable = errors.New("storage: no such table")

func tableInfo(t *tableMeta) TableInfo {
	ti := TableInfo{Name: t.Name, Schema: t.schema, Rows: t.rows(), Segments: make([]SegmentInfo, len(t.Segments))}
	for i, s := range t.Segments {
		si := SegmentInfo{ID: s.ID, File: s.File, Rows: s.Rows, RowGroups: len(s.RowGroups), Bytes: s.Size}
		if s.Deletes != nil {
			si.Deleted = s.Deletes.Count
		}
		ti.Segments[i] = si
	}
	return ti
}

// segment returns the handle of a segment file, creating it (unopened) if needed.
func (s *Store) segment(table string, sm *segmentMeta) (*segment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("storage: store is closed")
	}
	sg := s.segs[sm.ID]
	if sg == nil {
		sg = &segment{path: filepath.Join(s.dir, filepath.FromSlash(sm.File)), table: table, meta: sm, alloc: s.decode}
		s.segs[sm.ID] = sg
	}
	return sg, nil
}

// dropPageCache asks the kernel to drop the cached pages of every live segment file.
func (s *Store) dropPageCache() error {
	s.mu.Lock()
	files := make([]string, 0, len(s.fileRefs))
	for f := range s.fileRefs {
		files = append(files, filepath.Join(s.dir, filepath.FromSlash(f)))
	}
	s.mu.Unlock()
	var errs []error
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			errs = append(errs, fmt.Errorf("fadvise %s: %w", path, err))
		}
		f.Close()
	}
	return errors.Join(errs...)
}

// Verify reads every file of the current version in full and checks its size and whole-file
// checksum, returning an error naming each damaged or missing file.
func (s *Store) Verify(ctx context.Context) error {
	snap := s.Snapshot()
	defer snap.Release()
	var errs []error
	buf := make([]byte, 1<<20)
	check := func(rel string, size int64, sum uint32) {
		path := filepath.Join(s.dir, filepath.FromSlash(rel))
		bad := func(format string, args ...any) {
			errs = append(errs, &CorruptionError{File: path, Detail: fmt.Sprintf(format, args...)})
		}
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				bad("the file is missing")
			} else {
				errs = append(errs, err)
			}
			return
		}
		defer f.Close()
		var n int64
		var crc uint32
		for {
			k, err := f.Read(buf)
			crc = crc32.Update(crc, castagnoli, buf[:k])
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("storage: read %s: %w", path, err))
				return
			}
		}
		switch {
		case n != size:
			bad("size is %d bytes, the catalog records %d (truncated or overwritten)", n, size)
		case crc != sum:
			bad("checksum mismatch (%08x, catalog records %08x)", crc, sum)
		}
	}
	for _, t := range snap.cat.Tables {
		for _, sm := range t.Segments {
			if err := ctx.Err(); err != nil {
				return err
			}
			check(sm.File, sm.Size, sm.FileCRC)
			if sm.Deletes != nil {
				check(sm.Deletes.File, sm.Deletes.Size, sm.Deletes.CRC)
			}
		}
	}
	return errors.Join(errs...)
}
