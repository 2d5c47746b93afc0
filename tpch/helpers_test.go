package tpch

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedTPCH returns the TPC-H reference directory (../shared/tpch from the repository
// root), skipping the test when it is absent: a user's checkout has no shared/.
func sharedTPCH(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	ref := filepath.Join(dir, "..", "shared", "tpch")
	if _, err := os.Stat(ref); err != nil {
		t.Skipf("TPC-H reference data not available (%s): %v", ref, err)
	}
	return ref
}

// readMD5s reads an md5sum listing into file name → checksum.
func readMD5s(t testing.TB, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 {
			out[fields[1]] = fields[0]
		}
	}
	return out
}

func mustScale(t testing.TB, s string) Scale {
	t.Helper()
	sc, err := ParseScale(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
