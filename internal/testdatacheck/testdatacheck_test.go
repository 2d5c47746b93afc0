package testdatacheck

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLine is the longest line the data-driven runner reads: it scans lines with
// bufio.Scanner's default buffer and does not look at the scanner's error, so a longer line
// ends the file there without a word, and the cases after it (and its own) pass unchecked.
const maxLine = bufio.MaxScanTokenSize - 1

// dataDrivenDirs are the testdata directories read by the data-driven runner.
var dataDrivenDirs = []string{
	"enginetest/testdata", "exec/testdata", "exec/expr/testdata", "exemgr/frontend/testdata",
	"ipc/testdata/core", "sql/testdata", "sql/fold/testdata", "sql/physical/testdata", "storage/testdata",
}

// TestLinesFitTheRunner fails on a line the runner would silently cut the file at.
func TestLinesFitTheRunner(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, dir := range dataDrivenDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "fuzz" {
					return filepath.SkipDir // Go's fuzz corpora, not data-driven files
				}
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			checked++
			for i, line := range bytes.Split(b, []byte("\n")) {
				if len(line) > maxLine {
					t.Errorf("%s:%d: a line of %d bytes; the data-driven runner reads lines of at most %d and would end the file there unnoticed", strings.TrimPrefix(path, root+"/"), i+1, len(line), maxLine)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
	}
	if checked == 0 {
		t.Fatal("no data-driven test files found")
	}
}
