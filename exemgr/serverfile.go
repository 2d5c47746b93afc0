package exemgr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/colinkdb/colink/exemgr/frontend"
)

// errOptionPrevents is MySQL's ER_OPTION_PREVENTS_STATEMENT, which mysqld answers when
// secure_file_priv forbids a server-side file.
const errOptionPrevents = 1290

// openServerFile opens the file a non-LOCAL LOAD DATA INFILE names, which exemgr reads
// with its own permissions, so only from under dir (--secure-file-priv, like MySQL's
// secure_file_priv). Unlike MySQL, where an empty secure_file_priv means "anywhere", an
// empty dir refuses every such file: only LOCAL, which reads the client's file with the
// client's permissions, works. A relative path is relative to dir. The path is resolved
// (symbolic links, "..") and must lie under dir; the file is then opened through an
// os.Root on dir, so that a symbolic link swapped in meanwhile cannot lead outside either.
func openServerFile(dir, path string) (*os.File, error) {
	if dir == "" {
		return nil, loadErr(errOptionPrevents, "HY000",
			"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement: exemgr reads no server-side file unless it runs with --secure-file-priv DIR (and the file lies under DIR); use LOAD DATA LOCAL INFILE to send a file from the client")
	}
	rel, err := relativeTo(dir, path)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(realDir(dir))
	if err != nil {
		return nil, loadErr(29, "HY000", "File '%s' cannot be read: --secure-file-priv directory: %v", path, err)
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, and a
	// device's reads may never end; either would hold the statement beyond KILL's reach.
	// For a regular file the flag changes nothing.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openFailure(dir, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, loadErr(29, "HY000", "File '%s' cannot be read: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, loadErr(29, "HY000", "File '%s' is not a regular file (%v): colink reads only regular files from --secure-file-priv, as a FIFO or device could block the statement where KILL cannot end it", path, fi.Mode().Type())
	}
	return f, nil
}

// openFailure is the MySQL error for os.Root's failure err to open path under dir. os.Root
// refuses a symbolic link leading out of dir with an error it does not export, so such a
// failure is recognised by resolving the path again: it lies outside now (a link swapped in
// after relativeTo checked it).
func openFailure(dir, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return loadErr(29, "HY000", "File '%s' not found (Errcode: 2 \"No such file or directory\")", path)
	}
	if _, outside := relativeTo(dir, path); outside != nil {
		return outside
	}
	return loadErr(29, "HY000", "File '%s' cannot be read: %v", path, err)
}

// relativeTo returns path relative to dir once ".." and symbolic links are resolved in
// both, or the 1290 error if it lies outside. (A path that does not exist is judged as
// written, cleaned of "..".)
func relativeTo(dir, path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	base, err := filepath.Abs(dir)
	if err != nil {
		return "", outsideDir(dir, path)
	}
	target := filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
		if real, err := filepath.EvalSymlinks(target); err == nil {
			target = real
		}
	}
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", outsideDir(dir, path)
	}
	return rel, nil
}

// realDir is dir with its symbolic links resolved, as relativeTo measures from.
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

func outsideDir(dir, path string) error {
	return loadErr(errOptionPrevents, "HY000",
		"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement: '%s' is not under the --secure-file-priv directory %s", path, dir)
}

// CheckSecureFilePriv checks a --secure-file-priv value: empty, or an existing directory.
func CheckSecureFilePriv(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--secure-file-priv: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--secure-file-priv %s: not a directory", dir)
	}
	return nil
}

// loadErr is a LOAD DATA error with MySQL's code and SQLSTATE.
func loadErr(code uint16, state, format string, args ...any) error {
	return &frontend.Error{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}
