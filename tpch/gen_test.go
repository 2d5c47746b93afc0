package tpch

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func fileMD5(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkAgainst compares every file named in the md5 listing with the file in dir.
func checkAgainst(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if got := fileMD5(t, filepath.Join(dir, n)); got != want[n] {
			t.Errorf("%s: md5 %s, dbgen's is %s", n, got, want[n])
		}
	}
}

func generateAndCheck(t *testing.T, sf string, refresh int) {
	ref := sharedTPCH(t)
	dir := t.TempDir()
	err := Generate(context.Background(), Options{Scale: mustScale(t, sf), Dir: dir, Refresh: refresh, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, dir, readMD5s(t, filepath.Join(ref, "MD5SUMS-sf"+sf)))
	if refresh > 0 {
		checkAgainst(t, dir, readMD5s(t, filepath.Join(ref, "MD5SUMS-refresh-sf"+sf)))
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name()[0] == '.' {
			t.Errorf("leftover temporary file %s", e.Name())
		}
	}
}

func TestGenerateMatchesDbgenSF001(t *testing.T) { generateAndCheck(t, "0.01", 2) }

func TestGenerateMatchesDbgenSF01(t *testing.T) {
	if testing.Short() {
		t.Skip("SF 0.1 skipped in -short mode")
	}
	generateAndCheck(t, "0.1", 2)
}

// TestGenerateMatchesDbgenSF1 checks SF 1 (about 1 GiB of output); run with COLINK_SF1=1.
func TestGenerateMatchesDbgenSF1(t *testing.T) {
	if os.Getenv("COLINK_SF1") == "" {
		t.Skip("set COLINK_SF1=1 to generate and check SF 1")
	}
	generateAndCheck(t, "1", 2)
}

// TestChunksConcatenate checks dbgen -C semantics: chunk files, concatenated in order, are
// the whole table, both from Generate and from per-chunk Generators.
func TestChunksConcatenate(t *testing.T) {
	ref := sharedTPCH(t)
	want := readMD5s(t, filepath.Join(ref, "MD5SUMS-sf0.01"))
	sc := mustScale(t, "0.01")
	dir := t.TempDir()
	const chunks = 3
	if err := Generate(context.Background(), Options{Scale: sc, Dir: dir, Chunks: chunks, NoSync: true,
		Tables: []string{"lineitem", "orders", "partsupp", "customer", "nation"}}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"lineitem", "orders", "partsupp", "customer"} {
		h := md5.New()
		for k := 1; k <= chunks; k++ {
			b, err := os.ReadFile(filepath.Join(dir, table+".tbl."+string(rune('0'+k))))
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want[table+".tbl"] {
			t.Errorf("%s: concatenated chunk files differ from dbgen's table", table)
		}
		h.Reset()
		for k := 1; k <= chunks; k++ {
			g, err := NewGenerator(sc, table, k, chunks, WithBatchRows(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := g.WriteTbl(h); err != nil {
				t.Fatal(err)
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want[table+".tbl"] {
			t.Errorf("%s: concatenated Generator chunks differ from dbgen's table", table)
		}
	}
	if got := fileMD5(t, filepath.Join(dir, "nation.tbl")); got != want["nation.tbl"] {
		t.Errorf("nation.tbl under chunking differs from dbgen's")
	}
}

func TestGenerateRejects(t *testing.T) {
	sc := mustScale(t, "0.01")
	cases := []struct {
		name string
		o    Options
	}{
		{"unknown table", Options{Scale: sc, Dir: t.TempDir(), Tables: []string{"lineitems"}}},
		{"missing dir", Options{Scale: sc, Dir: filepath.Join(t.TempDir(), "nope")}},
		{"negative refresh", Options{Scale: sc, Dir: t.TempDir(), Refresh: -1}},
	}
	for _, c := range cases {
		if err := Generate(context.Background(), c.o); err == nil {
			t.Errorf("%s: Generate accepted it", c.name)
		}
	}
}

func TestGenerateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	err := Generate(ctx, Options{Scale: mustScale(t, "0.01"), Dir: dir, NoSync: true})
	if err == nil {
		t.Fatal("Generate with a cancelled context succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("cancelled Generate left %d files", len(entries))
	}
}
