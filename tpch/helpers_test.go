package tpch

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/colinkdb/colink/internal/testref"
)

// sharedTPCH returns the TPC-H reference directory (../shared/tpch from the repository
// root), skipping the test when it is absent: a user's checkout has no shared/.
func sharedTPCH(t testing.TB) string { return testref.TPCH(t) }

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
