package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/internal/testbin"
)

// TestLoadDataSecureFilePriv: LOAD DATA INFILE (not LOCAL) reads a server-side file only
// under --secure-file-priv, never one outside it (directly, through .. or through a
// symbolic link), and nothing without the flag, where LOCAL still works.
func TestLoadDataSecureFilePriv(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	allowed := filepath.Join(dir, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	region := "5|ANTARCTICA|a region of ice|\n6|ATLANTIS|a region under the sea|\n"
	secret := filepath.Join(dir, "secret.tbl")
	for path, text := range map[string]string{filepath.Join(allowed, "region.tbl"): region, secret: "7|SECRET|not for clients|\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(allowed, "link.tbl")); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
	pm := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, "pm"), "--listen", url)
	pm.WaitLog(t, `primproc: serving`, 10*time.Second)
	ctx := context.Background()
	if err := loadTPCH(ctx, []string{url}, "0.01", 1024, "region"); err != nil {
		t.Fatal(err)
	}
	load := func(em *exemgrProc, path string, local bool) error {
		mysql.RegisterLocalFile(path)
		defer mysql.DeregisterLocalFile(path)
		kw := ""
		if local {
			kw = "LOCAL "
		}
		_, err := em.conn(t).ExecContext(ctx, "LOAD DATA "+kw+"INFILE '"+path+"' INTO TABLE region FIELDS TERMINATED BY '|'")
		return err
	}
	count := func(em *exemgrProc) int {
		var n int
		if err := em.conn(t).QueryRowContext(ctx, "select count(*) from region").Scan(&n); err != nil {
			t.Fatal(errorText(err))
		}
		return n
	}

	em := shared.startExemgr(t, []string{url}, "tcp", "--secure-file-priv", allowed)
	if err := load(em, filepath.Join(allowed, "region.tbl"), false); err != nil {
		t.Fatalf("a file under --secure-file-priv: %s", errorText(err))
	}
	if n := count(em); n != 7 {
		t.Fatalf("after loading 2 regions: %d rows, want 7", n)
	}
	for _, path := range []string{secret, filepath.Join(allowed, "..", "secret.tbl"), filepath.Join(allowed, "link.tbl"), "/etc/passwd"} {
		err := load(em, path, false)
		if got := errorText(err); !strings.HasPrefix(got, "ERROR 1290 ") || !strings.Contains(got, "not under the --secure-file-priv directory") {
			t.Errorf("%s: %s, want 1290 (not under --secure-file-priv)", path, got)
		}
	}
	if n := count(em); n != 7 {
		t.Errorf("after the refused loads: %d rows, want 7", n)
	}
	em.Terminate(t, 10*time.Second)

	// Without the flag: every server-side file is refused, LOCAL still works.
	em = shared.startExemgr(t, []string{url}, "tcp")
	if got := errorText(load(em, filepath.Join(allowed, "region.tbl"), false)); !strings.HasPrefix(got, "ERROR 1290 ") || !strings.Contains(got, "--secure-file-priv DIR") {
		t.Errorf("without --secure-file-priv: %s, want 1290 naming the flag", got)
	}
	if err := load(em, filepath.Join(allowed, "region.tbl"), true); err != nil {
		t.Fatalf("LOCAL without --secure-file-priv: %s", errorText(err))
	}
	if n := count(em); n != 9 {
		t.Errorf("after the LOCAL load: %d rows, want 9", n)
	}
}
