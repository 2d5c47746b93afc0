package exemgr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	f, err := root.Open(rel)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, loadErr(29, "HY000", "File '%s' not found (Errcode: 2 \"No such file or directory\")", path)
	case strings.Contains(err.Error(), "escapes"):
		// os.Root's error for a symbolic link that leads out of dir.
		return nil, outsideDir(dir, path)
	}
	return nil, loadErr(29, "HY000", "File '%s' cannot be read: %v", path, err)
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
