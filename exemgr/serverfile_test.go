package exemgr

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestOpenServerFileNotRegular: a FIFO under the directory is refused at once; opening it
// for reading would block until a writer came, beyond KILL's reach.
func TestOpenServerFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.tbl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := openServerFile(dir, fifo)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var fe *frontend.Error
		if !errors.As(err, &fe) || !strings.Contains(fe.Message, "not a regular file") {
			t.Errorf("a FIFO: %v, want an error saying it is not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("opening a FIFO blocked")
	}
	// A directory is not a file to load either.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := openServerFile(dir, "sub"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v, want an error saying it is not a regular file", err)
	}
}

// TestServerFileEscapeError: os.Root's refusal of a symbolic link leading out of the
// directory (possible when a link is swapped in after relativeTo checked the path) is
// reported as the path lying outside --secure-file-priv.
func TestServerFileEscapeError(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "load")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(dir, "out.tbl")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, openErr := root.Open("out.tbl")
	if openErr == nil {
		t.Fatal("os.Root opened a link out of its directory")
	}
	err = openFailure(dir, filepath.Join(dir, "out.tbl"), openErr)
	var fe *frontend.Error
	if !errors.As(err, &fe) || fe.Code != errOptionPrevents {
		t.Errorf("escape: %v, want error 1290", err)
	}
}
