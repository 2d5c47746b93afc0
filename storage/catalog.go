package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/internal/atomicfile"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// catalogFile is the name of the current catalog inside the store directory.
const catalogFile = "CATALOG"

// catalogMagic starts the catalog's header line: "colink-catalog 1 <body length> <crc32c>\n".
const catalogMagic = "colink-catalog"

const catalogFormat = 1

// catalog is one immutable version of the store's contents. It is never modified after it
// has been published; a commit copies what it changes (copy on write).
type catalog struct {
	Version       uint64 `json:"version"`
	NextSegmentID uint64 `json:"next_segment_id"`
	NextTableID   uint64 `json:"next_table_id"`
	// StoreID names the store for good (random, made when the store is created): a
	// distributed transaction names the store that decides its outcome by it.
	StoreID string       `json:"store_id,omitempty"`
	Tables  []*tableMeta `json:"tables"` // sorted by name
	// Prepared holds the transactions in the first phase of a two-phase commit: their files
	// are durable and named here, their changes are not yet visible (sorted by ID).
	Prepared []*preparedTxn `json:"prepared,omitempty"`
	// Resolved remembers the outcome of the most recent prepared transactions (oldest
	// first, at most maxResolved), so that a coordinator asking again gets the same answer.
	Resolved []resolvedTxn `json:"resolved,omitempty"`
}

// tableMeta is one table in one catalog version.
type tableMeta struct {
	Name string `json:"name"`
	// ID names this incarnation of the table: a replace gives it a new one, so a transaction
	// that appended to or deleted from the old incarnation fails to commit instead of
	// mixing its changes into the new data.
	ID       uint64         `json:"id"`
	Fields   []fieldJSON    `json:"schema"`
	Segments []*segmentMeta `json:"segments"` // in load order

	schema *arrow.Schema // decoded Fields
	kinds  []colKind
}

// segmentMeta describes one immutable segment file.
type segmentMeta struct {
	ID        uint64         `json:"id"`
	File      string         `json:"file"` // relative to the store directory, slash-separated
	Rows      int64          `json:"rows"`
	Size      int64          `json:"size"`       // file size in bytes
	FileCRC   uint32         `json:"file_crc"`   // CRC-32C of the whole file
	FooterCRC uint32         `json:"footer_crc"` // CRC-32C of the Parquet footer (metadata + length + magic)
	RowGroups []rowGroupMeta `json:"row_groups"`
	// Sketches holds, per column, the encoded distinct-value sketch (package ndv) of the
	// segment's values, deleted rows included. Empty in segments written before sketches
	// were kept.
	Sketches [][]byte `json:"ndv,omitempty"`
	// Deletes, when set, names the file holding the bitmap of deleted rows (a later catalog
	// version points at a new file; the bitmap files are immutable like segments).
	Deletes *deleteMeta `json:"deletes,omitempty"`
}

// rowGroupMeta describes one row group of a segment.
type rowGroupMeta struct {
	Rows      int64     `json:"rows"`
	ChunkCRCs []uint32  `json:"crc"`  // per column: CRC-32C of the column chunk's bytes
	Zones     []zoneMap `json:"zone"` // per column
}

// deleteMeta describes a segment's delete bitmap file.
type deleteMeta struct {
	File  string `json:"file"`
	Count int64  `json:"count"` // rows marked deleted
	Size  int64  `json:"size"`
	CRC   uint32 `json:"crc"`
}

// zoneMap holds a column chunk's null count and value range. For zoneInt kinds the bounds are
// the stored integers (days for dates, unscaled values for decimals, 0/1 for booleans).
type zoneMap struct {
	Nulls     int64
	HasMinMax bool
	MinI      int64
	MaxI      int64
	MinF      float64
	MaxF      float64
	MinS      string
	MaxS      string
}

// zoneJSON is a zoneMap's compact JSON form: one of I, F, S (UTF-8) or B (other bytes).
type zoneJSON struct {
	N int64     `json:"n,omitempty"`
	I []int64   `json:"i,omitempty"`
	F []float64 `json:"f,omitempty"`
	S []string  `json:"s,omitempty"`
	B [][]byte  `json:"b,omitempty"`
}

func (z zoneMap) MarshalJSON() ([]byte, error) {
	j := zoneJSON{N: z.Nulls}
	if z.HasMinMax {
		switch {
		case z.MinS != "" || z.MaxS != "":
			if utf8.ValidString(z.MinS) && utf8.ValidString(z.MaxS) {
				j.S = []string{z.MinS, z.MaxS}
			} else {
				j.B = [][]byte{[]byte(z.MinS), []byte(z.MaxS)}
			}
		case z.MinF != 0 || z.MaxF != 0:
			j.F = []float64{z.MinF, z.MaxF}
		default:
			j.I = []int64{z.MinI, z.MaxI}
		}
	}
	return json.Marshal(j)
}

func (z *zoneMap) UnmarshalJSON(b []byte) error {
	var j zoneJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*z = zoneMap{Nulls: j.N}
	switch {
	case len(j.I) == 2:
		z.HasMinMax, z.MinI, z.MaxI = true, j.I[0], j.I[1]
	case len(j.F) == 2:
		z.HasMinMax, z.MinF, z.MaxF = true, j.F[0], j.F[1]
	case len(j.S) == 2:
		z.HasMinMax, z.MinS, z.MaxS = true, j.S[0], j.S[1]
	case len(j.B) == 2:
		z.HasMinMax, z.MinS, z.MaxS = true, string(j.B[0]), string(j.B[1])
	}
	return nil
}

// normalize makes a zone map of class zc self-consistent, so that the JSON form (which
// infers the class from which bounds are non-zero) round-trips: an all-zero range of any class
// is stored as integers and read back as the zero range of the column's class.
func (z zoneMap) normalize(zc zoneClass) zoneMap {
	if !z.HasMinMax {
		return zoneMap{Nulls: z.Nulls}
	}
	switch zc {
	case zoneInt:
		z.MinF, z.MaxF, z.MinS, z.MaxS = 0, 0, "", ""
	case zoneFloat:
		z.MinI, z.MaxI, z.MinS, z.MaxS = 0, 0, "", ""
	case zoneBytes:
		z.MinI, z.MaxI, z.MinF, z.MaxF = 0, 0, 0, 0
	}
	return z
}

// table returns the named table, or nil.
func (c *catalog) table(name string) *tableMeta {
	i, ok := slices.BinarySearchFunc(c.Tables, name, func(t *tableMeta, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return nil
	}
	return c.Tables[i]
}

// clone copies the catalog's table list (not the tables) for a commit to change.
func (c *catalog) clone() *catalog {
	n := *c
	n.Tables = slices.Clone(c.Tables)
	return &n
}

// setTable inserts or replaces t (or removes the table when t is only a name to drop).
func (c *catalog) setTable(name string, t *tableMeta) {
	i, ok := slices.BinarySearchFunc(c.Tables, name, func(t *tableMeta, n string) int { return strings.Compare(t.Name, n) })
	switch {
	case t == nil && ok:
		c.Tables = slices.Delete(c.Tables, i, i+1)
	case t == nil:
	case ok:
		c.Tables[i] = t
	default:
		c.Tables = slices.Insert(c.Tables, i, t)
	}
}

// files lists every file (relative path) the catalog names, prepared transactions' included.
func (c *catalog) files(yield func(string)) {
	for _, t := range c.Tables {
		for _, s := range t.Segments {
			yield(s.File)
			if s.Deletes != nil {
				yield(s.Deletes.File)
			}
		}
	}
	for _, p := range c.Prepared {
		for _, a := range p.Appends {
			for _, s := range a.Segments {
				yield(s.File)
			}
		}
		for _, d := range p.Deletes {
			yield(d.File)
		}
	}
}

// encodeCatalog renders the catalog file: header line with length and CRC-32C, then JSON.
func encodeCatalog(c *catalog) ([]byte, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %d %d %08x\n", catalogMagic, catalogFormat, len(body), crc32c(body))
	buf.Write(body)
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// decodeCatalog parses and verifies a catalog file's contents; path names it in errors.
func decodeCatalog(path string, data []byte) (*catalog, error) {
	bad := func(format string, args ...any) error {
		return &CorruptionError{File: path, Detail: fmt.Sprintf(format, args...)}
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, bad("no header line")
	}
	hdr := strings.Fields(string(data[:nl]))
	if len(hdr) != 4 || hdr[0] != catalogMagic {
		return nil, bad("header %q is not a colink catalog header", data[:min(nl, 80)])
	}
	if hdr[1] != strconv.Itoa(catalogFormat) {
		return nil, fmt.Errorf("catalog %s has format %s; this build reads format %d", path, hdr[1], catalogFormat)
	}
	n, err1 := strconv.Atoi(hdr[2])
	sum, err2 := strconv.ParseUint(hdr[3], 16, 32)
	if err1 != nil || err2 != nil {
		return nil, bad("malformed header %q", data[:nl])
	}
	body := data[nl+1:]
	if len(body) < n {
		return nil, bad("truncated: body has %d bytes, header says %d", len(body), n)
	}
	body = body[:n]
	if got := crc32c(body); got != uint32(sum) {
		return nil, bad("checksum mismatch: %08x, header says %08x", got, sum)
	}
	var c catalog
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, bad("body: %v", err)
	}
	for i, t := range c.Tables {
		if i > 0 && c.Tables[i-1].Name >= t.Name {
			return nil, bad("tables out of order at %q", t.Name)
		}
		if err := t.decode(); err != nil {
			return nil, bad("table %q: %v", t.Name, err)
		}
	}
	for i, p := range c.Prepared {
		if i > 0 && c.Prepared[i-1].ID >= p.ID {
			return nil, bad("prepared transactions out of order at %q", p.ID)
		}
	}
	return &c, nil
}

// decode derives the Arrow schema and column kinds and checks the table's shape.
func (t *tableMeta) decode() error {
	sc, err := schemaFromJSON(t.Fields)
	if err != nil {
		return err
	}
	kinds, err := validateSchema(sc)
	if err != nil {
		return err
	}
	t.schema, t.kinds = sc, kinds
	for _, s := range t.Segments {
		var rows int64
		for gi, g := range s.RowGroups {
			if len(g.ChunkCRCs) != len(kinds) || len(g.Zones) != len(kinds) {
				return fmt.Errorf("segment %d row group %d describes %d/%d columns, schema has %d",
					s.ID, gi, len(g.ChunkCRCs), len(g.Zones), len(kinds))
			}
			for ci := range g.Zones {
				g.Zones[ci] = g.Zones[ci].normalize(kinds[ci].zoneClass())
			}
			rows += g.Rows
		}
		if rows != s.Rows {
			return fmt.Errorf("segment %d: row groups hold %d rows, segment says %d", s.ID, rows, s.Rows)
		}
		if len(s.Sketches) != 0 && len(s.Sketches) != len(kinds) {
			return fmt.Errorf("segment %d has %d distinct-value sketches, schema has %d columns", s.ID, len(s.Sketches), len(kinds))
		}
	}
	return nil
}

// rows is the table's row count, deleted rows excluded.
func (t *tableMeta) rows() int64 {
	var n int64
	for _, s := range t.Segments {
		n += s.Rows
		if s.Deletes != nil {
			n -= s.Deletes.Count
		}
	}
	return n
}

// readCatalog loads DIR/CATALOG, or returns an empty catalog if the store is new.
func readCatalog(dir string) (*catalog, error) {
	path := filepath.Join(dir, catalogFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &catalog{NextSegmentID: 1, NextTableID: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	return decodeCatalog(path, data)
}

// commitStep names a step of a commit at which a test may inject a failure (Store.failAt).
type commitStep string

const (
	stepSegmentSync    commitStep = "segment fsync"           // a finished segment file
	stepSegmentDirSync commitStep = "segment directory fsync" // the directory of new segments
	stepDeleteFile     commitStep = "delete file"             // a delete bitmap, written, not yet in place
	stepCatalogWrite   commitStep = "catalog write"           // the temporary catalog, written, before its fsync
	stepCatalogRename  commitStep = "catalog rename"          // just before the rename over CATALOG
	stepCatalogDirSync commitStep = "catalog directory fsync" // after the rename, before DIR's fsync
)

// writeCatalog durably replaces DIR/CATALOG with c: temp file, fsync, rename, fsync DIR.
// The file stays private to the store's owner (0600). renamed reports whether the new
// catalog took CATALOG's place: if it did and err is set (DIR's fsync failed), the store is
// in doubt — a crash may bring back either the old catalog or the new one — so the files of
// both must be kept. fault, if not nil, may fail any step (tests).
func writeCatalog(dir string, c *catalog, fault func(commitStep) error) (renamed bool, err error) {
	data, err := encodeCatalog(c)
	if err != nil {
		return false, err
	}
	if fault == nil {
		fault = func(commitStep) error { return nil }
	}
	path := filepath.Join(dir, catalogFile)
	f, err := atomicfile.Create(path)
	if err != nil {
		return false, err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := fault(stepCatalogWrite); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	if err := fault(stepCatalogRename); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	// The file is already synced: CommitUnsynced only renames, so that its error means the
	// rename did not happen, and DIR's fsync below is the one step that can fail after it.
	if err := f.CommitUnsynced(0o600); err != nil {
		return false, err
	}
	if err := fault(stepCatalogDirSync); err != nil {
		return true, fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	if err := syncDir(dir); err != nil {
		return true, err
	}
	return true, nil
}

// syncDir fsyncs a directory so that entries created or renamed in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// CorruptionError reports a damaged store file: a checksum mismatch, a truncated or
// malformed file. errors.Is(err, ErrCorrupt) is true for it.
type CorruptionError struct {
	File   string // path of the damaged file
	Detail string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("storage: %s is damaged: %s", e.File, e.Detail)
}

// Is makes errors.Is(err, ErrCorrupt) match.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// ErrCorrupt is matched (errors.Is) by every CorruptionError.
var ErrCorrupt = errors.New("storage: damaged file")
