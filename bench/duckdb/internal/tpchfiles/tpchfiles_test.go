package tpchfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	names := []string{"part", "supplier", "partsupp", "customer", "orders", "lineitem", "nation", "region"}
	touch := func(dir string, files ...string) {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	single := t.TempDir()
	for _, n := range names {
		touch(single, n+".parquet")
	}
	touch(single, "lineitem.tbl", ".lineitem.parquet.tmp-1", "orders.x.parquet")
	ts, err := Find(single)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 8 || ts[5].Name != "lineitem" || !slices.Equal(ts[5].Paths, []string{filepath.Join(single, "lineitem.parquet")}) {
		t.Errorf("single files: %+v", ts)
	}

	chunked := t.TempDir()
	for _, n := range names {
		if n == "nation" || n == "region" {
			touch(chunked, n+".parquet")
			continue
		}
		for _, k := range []string{"1", "2", "10", "3", "4", "5", "6", "7", "8", "9"} {
			touch(chunked, n+"."+k+".parquet")
		}
	}
	ts, err = Find(chunked)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts[0].Paths) != 10 || ts[0].Paths[9] != filepath.Join(chunked, "part.10.parquet") ||
		ts[0].Paths[1] != filepath.Join(chunked, "part.2.parquet") {
		t.Errorf("chunks out of order: %q", ts[0].Paths)
	}
	want := "create view part as select * from read_parquet(['" + filepath.Join(chunked, "part.1.parquet") + "', "
	if got := ViewSQL(ts[0]); !strings.HasPrefix(got, want) {
		t.Errorf("createViewSQL = %s, want prefix %s", got, want)
	}
	if got := ViewSQL(Table{Name: "nation", Paths: []string{"/d/o'k/nation.parquet"}}); !strings.Contains(got, `'/d/o''k/nation.parquet'`) {
		t.Errorf("quote in path: %s", got)
	}

	for name, setup := range map[string]struct {
		mutate func(dir string)
		err    string
	}{
		"missing table": {func(d string) { os.Remove(filepath.Join(d, "region.parquet")) }, "has no region.parquet"},
		"both forms":    {func(d string) { touch(d, "orders.parquet") }, "both orders.parquet and orders.<K>.parquet"},
		"missing chunk": {func(d string) { os.Remove(filepath.Join(d, "lineitem.2.parquet")) }, "chunk 2 is missing"},
	} {
		dir := t.TempDir()
		entries, _ := os.ReadDir(chunked)
		for _, e := range entries {
			touch(dir, e.Name())
		}
		setup.mutate(dir)
		if _, err := Find(dir); err == nil || !strings.Contains(err.Error(), setup.err) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, setup.err)
		}
	}
	if _, err := Find(filepath.Join(single, "nope")); err == nil {
		t.Error("a missing directory gave no error")
	}
}
