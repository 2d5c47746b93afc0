package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/colinkdb/colink", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	in := fromBuildInfo(bi)
	if got, want := in.Line("primproc"), "primproc (devel) rev 0123456789ab+dirty, 2026-12-01T10:00:00Z, go1.26.8"; got != want {
		t.Errorf("Line: %q, want %q", got, want)
	}
	bi.Settings = nil
	if got := fromBuildInfo(bi).ShortRevision(); got != "unstamped" {
		t.Errorf("no vcs settings: %q, want unstamped", got)
	}
}

// TestStampedBinary builds a tiny program of this module with `go build` inside the
// checkout and checks that it reads the checkout's revision, as a daemon's --version does.
func TestStampedBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to read the checkout's revision")
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to stamp", err)
	}
	exe := filepath.Join(t.TempDir(), "version")
	cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", exe, "./testdata/version")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(rev))[:12]; !strings.Contains(string(out), "rev "+want) {
		t.Errorf("the stamped binary says %q, want revision %s", out, want)
	}
}
