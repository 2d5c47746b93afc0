// Package atomicfile owns colink's way of replacing a file's contents: write a temporary
// file in the same directory, fsync it, rename it over the target and fsync the directory.
// A crash leaves the old contents or the new, never a mixture, and once the write returns
// the new contents survive a power loss.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, giving it mode perm. The temporary file is
// removed if anything fails.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit(perm)
}

// File is a replacement of a file being written, for contents too large to hold in memory:
// a temporary file beside the target (write it through the embedded *os.File) that takes
// the target's place only when committed. Exactly one of Commit, CommitUnsynced or Abort
// ends it; Abort after a commit does nothing, so it can be deferred right after Create.
type File struct {
	*os.File
	path  string
	ended bool
}

// Create starts replacing path: it creates the temporary file in path's directory, named
// with TempPrefix(path).
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), TempPrefix(path)+"*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{File: f, path: path}, nil
}

// TempPrefix is how the names of path's temporary files begin, for a caller that removes
// the ones a crash left behind.
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// Commit gives the written file mode perm, fsyncs it, renames it over the target and
// fsyncs the directory. The temporary file is removed if anything fails.
func (f *File) Commit(perm os.FileMode) error { return f.commit(perm, true) }

// CommitUnsynced is Commit without the two fsyncs: the target is still never seen half
// written while the machine runs, but a power loss may leave it empty or lose the rename.
func (f *File) CommitUnsynced(perm os.FileMode) error { return f.commit(perm, false) }

func (f *File) commit(perm os.FileMode, sync bool) error {
	if f.ended {
		return fmt.Errorf("write %s: already committed or aborted", f.path)
	}
	f.ended = true
	tmp := f.Name()
	err := f.Chmod(perm)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if sync {
		if err := syncDir(filepath.Dir(f.path)); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the target as it was. It does
// nothing once the file was committed or aborted.
func (f *File) Abort() {
	if f.ended {
		return
	}
	f.ended = true
	f.Close()
	os.Remove(f.Name())
}

// syncDir fsyncs a directory, so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
