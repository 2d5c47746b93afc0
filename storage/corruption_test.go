package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/colinkdb/colink/tpch"
)

// TestCorruption damages store files in different ways and checks that reading gives an
// error that names the damaged file, never data.
func TestCorruption(t *testing.T) {
	lineitem, _ := tpch.LookupTable("lineitem")
	sc := lineitem.ArrowSchema()
	const rows = 5000

	// chunkOffset returns the middle byte of row group rg, column col of a segment file.
	chunkOffset := func(t *testing.T, path string, rg, col int) int64 {
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ext, err := chunkExtents(r.MetaData(), mustSize(t, path))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ext {
			if e.rg == rg && e.col == col {
				return e.start + e.length/2
			}
		}
		t.Fatalf("no chunk %d/%d", rg, col)
		return 0
	}
	flip := func(t *testing.T, path string, off int64) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x40
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name string
		// damage changes the files; seg is the first segment's path, dir the store's.
		damage func(t *testing.T, dir, seg string)
		// openErr: the store itself fails to open with an error containing this.
		openErr string
		// readErr: scanning column readCol fails with an error containing this.
		readCol string
		readErr string
		// okCol, if set, is a column of the same row group that must still read correctly.
		okCol string
	}{
		{
			name:    "flipped byte in a data chunk",
			damage:  func(t *testing.T, dir, seg string) { flip(t, seg, chunkOffset(t, seg, 0, 10)) },
			readCol: "l_shipdate", readErr: "checksum mismatch in row group 0 column 10",
			okCol: "l_orderkey",
		},
		{
			name:    "flipped byte in a string chunk",
			damage:  func(t *testing.T, dir, seg string) { flip(t, seg, chunkOffset(t, seg, 1, 15)) },
			readCol: "l_comment", readErr: "checksum mismatch in row group 1 column 15",
			okCol: "l_quantity",
		},
		{
			name: "flipped byte in the footer",
			damage: func(t *testing.T, dir, seg string) {
				flip(t, seg, mustSize(t, seg)-parquetTrailer-20)
			},
			readCol: "l_orderkey", readErr: "footer checksum mismatch",
		},
		{
			name: "truncated segment",
			damage: func(t *testing.T, dir, seg string) {
				if err := os.Truncate(seg, mustSize(t, seg)-100); err != nil {
					t.Fatal(err)
				}
			},
			readCol: "l_orderkey", readErr: "(truncated or overwritten)",
		},
		{
			name: "segment replaced by garbage of the same size",
			damage: func(t *testing.T, dir, seg string) {
				if err := os.WriteFile(seg, make([]byte, mustSize(t, seg)), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			readCol: "l_orderkey", readErr: "no valid Parquet footer",
		},
		{
			name:    "missing segment",
			damage:  func(t *testing.T, dir, seg string) { os.Remove(seg) },
			readCol: "l_orderkey", readErr: "the file is missing",
		},
		{
			name: "flipped byte in the catalog",
			damage: func(t *testing.T, dir, seg string) {
				flip(t, filepath.Join(dir, catalogFile), mustSize(t, filepath.Join(dir, catalogFile))/2)
			},
			openErr: "CATALOG is damaged: checksum mismatch",
		},
		{
			name: "truncated catalog",
			damage: func(t *testing.T, dir, seg string) {
				p := filepath.Join(dir, catalogFile)
				if err := os.Truncate(p, mustSize(t, p)-10); err != nil {
					t.Fatal(err)
				}
			},
			openErr: "CATALOG is damaged: truncated",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{RowGroupRows: 1000, SegmentRows: 2500}
			s := openTest(t, dir, opts)
			loadTable(t, s, "lineitem", sc, 1, rows, 1000)
			snap := s.Snapshot()
			ti, _ := snap.Table("lineitem")
			snap.Release()
			seg := filepath.Join(dir, ti.Segments[0].File)
			s.Close()
			c.damage(t, dir, seg)

			s2, err := Open(dir, opts)
			if c.openErr != "" {
				if err == nil {
					s2.Close()
					t.Fatalf("Open succeeded, want error containing %q", c.openErr)
				}
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.openErr) {
					t.Fatalf("Open error %q, want ErrCorrupt containing %q", err, c.openErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if c.okCol != "" {
				if err := scanColumn(s2, c.okCol, ti.Segments[0].ID); err != nil {
					t.Fatalf("undamaged column %s: %v", c.okCol, err)
				}
			}
			err = scanColumn(s2, c.readCol, ti.Segments[0].ID)
			if err == nil {
				t.Fatalf("scan of %s succeeded, want error containing %q", c.readCol, c.readErr)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), c.readErr) {
				t.Fatalf("error %q, want ErrCorrupt naming %s and containing %q", err, seg, c.readErr)
			}
			// Undamaged segments still read, and the whole-store check finds the damage.
			if err := scanColumn(s2, c.readCol, ti.Segments[1].ID); err != nil {
				t.Fatalf("other segment: %v", err)
			}
			if err := s2.Verify(context.Background()); err == nil || !strings.Contains(err.Error(), seg) {
				t.Fatalf("Verify: %v, want an error naming %s", err, seg)
			}
		})
	}
}

func mustSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// scanColumn reads one column of one lineitem segment, checking the values.
func scanColumn(s *Store, col string, seg uint64) error {
	snap := s.Snapshot()
	defer snap.Release()
	sc, err := snap.Scan(ScanRequest{Table: "lineitem", Columns: []string{col}, Segments: []uint64{seg}})
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.ForEach(context.Background(), 2, func(RowGroupRef, arrow.Record) error { return nil })
}
