package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/colinkdb/colink/dbt3"
)

// Binaries are the daemons' executables, and ipcbench's if it was found ("" if not): dbt3
// compare runs its stream mode beside the queries, to check the fitted cost per GB.
type Binaries struct{ PrimProc, ExeMgr, IPCBench string }

// modulePath is colink's Go module, recognised to build the daemons from source.
const modulePath = "github.com/colinkdb/colink"

// FindBinariesFlag is FindBinaries for dbt3's --bin flag: when dir was given and does not
// hold the daemons, the error is the user's, a *dbt3.UsageError naming --bin.
func FindBinariesFlag(ctx context.Context, dir string, log *slog.Logger) (Binaries, error) {
	b, err := FindBinaries(ctx, dir, log)
	if err != nil && dir != "" {
		return b, dbt3.Usagef("--bin: %v", err)
	}
	return b, err
}

// FindBinaries locates primproc and exemgr. With dir set, they must be there. Otherwise,
// inside colink's source tree (a go.mod of colink's module in the working directory or
// above) they are built fresh into its bin/ with go build, so that "go run ./cmd/dbt3"
// always measures the daemons of the same tree; else they are taken from beside the
// running executable, else from PATH.
func FindBinaries(ctx context.Context, dir string, log *slog.Logger) (Binaries, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dir != "" {
		b := Binaries{PrimProc: filepath.Join(dir, "primproc"), ExeMgr: filepath.Join(dir, "exemgr")}
		for _, p := range []string{b.PrimProc, b.ExeMgr} {
			if !executable(p) {
				return Binaries{}, fmt.Errorf("no executable %s", p)
			}
		}
		b.IPCBench = optional(filepath.Join(dir, "ipcbench"))
		return b, nil
	}
	if root, ok := moduleRoot(); ok {
		if _, err := exec.LookPath("go"); err == nil {
			return Build(ctx, root, filepath.Join(root, "bin"), log)
		}
	}
	if self, err := os.Executable(); err == nil {
		d := filepath.Dir(self)
		b := Binaries{PrimProc: filepath.Join(d, "primproc"), ExeMgr: filepath.Join(d, "exemgr"), IPCBench: optional(filepath.Join(d, "ipcbench"))}
		if executable(b.PrimProc) && executable(b.ExeMgr) {
			return b, nil
		}
	}
	pp, err1 := exec.LookPath("primproc")
	em, err2 := exec.LookPath("exemgr")
	if err1 == nil && err2 == nil {
		ib, _ := exec.LookPath("ipcbench")
		return Binaries{PrimProc: pp, ExeMgr: em, IPCBench: ib}, nil
	}
	return Binaries{}, errors.New("cannot find primproc and exemgr: not in colink's source tree, not beside this executable, not on PATH (give --bin DIR)")
}

// Build compiles ./cmd/primproc, ./cmd/exemgr and ./cmd/ipcbench of the module at root into dir.
func Build(ctx context.Context, root, dir string, log *slog.Logger) (Binaries, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binaries{}, err
	}
	log.Info("cluster: building the daemons", "root", root, "into", dir)
	// -buildvcs=auto stamps the checkout's revision into the binaries (their --version, a
	// run's record) even where GOFLAGS turns stamping off; outside a checkout it does not.
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", dir+string(filepath.Separator), "./cmd/primproc", "./cmd/exemgr", "./cmd/ipcbench")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binaries{}, fmt.Errorf("go build ./cmd/primproc ./cmd/exemgr ./cmd/ipcbench in %s: %w\n%s", root, err, out)
	}
	return Binaries{PrimProc: filepath.Join(dir, "primproc"), ExeMgr: filepath.Join(dir, "exemgr"), IPCBench: filepath.Join(dir, "ipcbench")}, nil
}

// moduleRoot finds colink's module root at or above the working directory.
func moduleRoot() (string, bool) {
	d, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if f, err := os.Open(filepath.Join(d, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			var mod string
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					mod = strings.Trim(strings.TrimSpace(rest), `"`)
					break
				}
			}
			f.Close()
			return d, mod == modulePath
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// optional is path if it is an executable, else "".
func optional(path string) string {
	if executable(path) {
		return path
	}
	return ""
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// TestHooksTag is the build tag of primproc's test hooks (primproc/testhook.go).
const TestHooksTag = "colink_testhooks"

// TestHookPrimproc finds primproc built with the test hooks: in dir as
// primproc-colink_testhooks when dir is set, else built fresh into the source tree's bin/
// (found as FindBinaries finds it). It returns "" and no error when there is none to be had.
func TestHookPrimproc(ctx context.Context, dir string, log *slog.Logger) (string, error) {
	name := "primproc-" + TestHooksTag
	if dir != "" {
		if p := filepath.Join(dir, name); executable(p) {
			return p, nil
		}
		return "", nil
	}
	root, ok := moduleRoot()
	if !ok {
		return "", nil
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := filepath.Join(root, "bin", name)
	log.Info("cluster: building primproc with test hooks", "into", out)
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-tags", TestHooksTag, "-o", out, "./cmd/primproc")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -tags %s ./cmd/primproc in %s: %w\n%s", TestHooksTag, root, err, b)
	}
	return out, nil
}
