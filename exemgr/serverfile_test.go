package exemgr

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exemgr/frontend"
)

// TestOpenServerFile: non-LOCAL LOAD DATA reads only under --secure-file-priv, whatever
// ".." or symbolic links the path holds, and nothing at all without it.
func TestOpenServerFile(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "load")
	outside := filepath.Join(top, "secret")
	for _, d := range []string{filepath.Join(dir, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.tbl"), "a")
	write(filepath.Join(dir, "sub", "b.tbl"), "b")
	write(filepath.Join(outside, "shadow"), "secret")
	for link, target := range map[string]string{
		"in.tbl":   filepath.Join(dir, "sub", "b.tbl"),
		"out.tbl":  filepath.Join(outside, "shadow"),
		"rel.tbl":  "../secret/shadow",
		"outdir":   outside,
		"alias":    dir,
		"sub/up":   "..",
		"sub/upup": "../..",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	aliasDir := filepath.Join(top, "aliasdir")
	if err := os.Symlink(dir, aliasDir); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		dir, path string
		want      string // the file's text, or "error NNNN: part of the message"
	}{
		{dir, filepath.Join(dir, "a.tbl"), "a"},
		{dir, "a.tbl", "a"},
		{dir, "sub/../a.tbl", "a"},
		{dir, filepath.Join(dir, "sub", "b.tbl"), "b"},
		{dir, filepath.Join(dir, "in.tbl"), "b"},
		{dir, filepath.Join(dir, "sub", "up", "a.tbl"), "a"},
		{dir + "/", filepath.Join(dir, "a.tbl"), "a"},
		{aliasDir, filepath.Join(dir, "a.tbl"), "a"},
		{dir, filepath.Join(aliasDir, "a.tbl"), "a"},
		{dir, filepath.Join(dir, "missing.tbl"), "error 29: not found"},
		{"", filepath.Join(dir, "a.tbl"), "error 1290: unless it runs with --secure-file-priv DIR"},
		{dir, filepath.Join(outside, "shadow"), "error 1290: is not under the --secure-file-priv directory"},
		{dir, "/etc/passwd", "error 1290: is not under"},
		{dir, filepath.Join(dir, "..", "secret", "shadow"), "error 1290: is not under"},
		{dir, "../secret/shadow", "error 1290: is not under"},
		{dir, filepath.Join(dir, "out.tbl"), "error 1290: is not under"},
		{dir, filepath.Join(dir, "rel.tbl"), "error 1290: is not under"},
		{dir, filepath.Join(dir, "outdir", "shadow"), "error 1290: is not under"},
		{dir, filepath.Join(dir, "sub", "upup", "secret", "shadow"), "error 1290: is not under"},
	} {
		got := ""
		f, err := openServerFile(tc.dir, tc.path)
		if err != nil {
			var fe *frontend.Error
			if !errors.As(err, &fe) {
				t.Errorf("dir %q path %q: %v is not a MySQL error", tc.dir, tc.path, err)
				continue
			}
			got = "error " + strconv.Itoa(int(fe.Code)) + ": " + fe.Message
		} else {
			b, _ := io.ReadAll(f)
			f.Close()
			got = string(b)
		}
		if strings.HasPrefix(tc.want, "error ") {
			code, part, _ := strings.Cut(tc.want, ": ")
			if !strings.HasPrefix(got, code+":") || !strings.Contains(got, part) {
				t.Errorf("dir %q path %q: %q, want %s …%s…", tc.dir, tc.path, got, code, part)
			}
		} else if got != tc.want {
			t.Errorf("dir %q path %q: %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}

func TestCheckSecureFilePriv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckSecureFilePriv(""); err != nil {
		t.Errorf("empty: %v", err)
	}
	if err := CheckSecureFilePriv(dir); err != nil {
		t.Errorf("a directory: %v", err)
	}
	if err := CheckSecureFilePriv(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v", err)
	}
	if err := CheckSecureFilePriv(filepath.Join(dir, "nonesuch")); err == nil {
		t.Errorf("a missing directory: no error")
	}
}
