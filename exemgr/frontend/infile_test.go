package frontend

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// infileEngine answers "load <name>" by reading the LOCAL file name: it reports the bytes
// it read and their SHA-256 (as the OK packet's info); "load <name> fail" fails after
// reading 10 bytes; "load <name> ignore" never reads it; anything else is an OK.
type infileEngine struct{}

func (infileEngine) CheckDatabase(context.Context, string) error { return nil }

func (infileEngine) Query(ctx context.Context, s *Session, query string) (*Result, error) {
	f := strings.Fields(query)
	if len(f) < 2 || f[0] != "load" {
		return &Result{}, nil
	}
	r, err := s.LocalFile(f[1])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	switch {
	case len(f) > 2 && f[2] == "fail":
		var b [10]byte
		io.ReadFull(r, b[:])
		return nil, Errorf(1366, "Incorrect integer value: 'x' for column 'k' at row 1")
	case len(f) > 2 && f[2] == "ignore":
		return &Result{AffectedRows: 0}, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return nil, err
	}
	return &Result{AffectedRows: uint64(n), Info: fmt.Sprintf("%x", h.Sum(nil))}, nil
}

func TestLoadDataLocal(t *testing.T) {
	ts := startServer(t, infileEngine{}, nil)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.tbl")
	os.WriteFile(small, []byte("1|a|\n2|b|\n"), 0o644)
	big := filepath.Join(dir, "big.tbl")
	var sb strings.Builder
	for i := 0; sb.Len() < 3<<20; i++ {
		fmt.Fprintf(&sb, "%d|some text of a line|%d|\n", i, i*7)
	}
	os.WriteFile(big, []byte(sb.String()), 0o644)
	empty := filepath.Join(dir, "empty.tbl")
	os.WriteFile(empty, nil, 0o644)

	for _, network := range []string{"tcp", "unix"} {
		db := open(t, ts, network, "root", "", "allowAllFiles=true")
		db.SetMaxOpenConns(1) // one connection: each statement must leave the protocol in step
		for _, c := range []struct {
			path string
			size int64
		}{{small, 10}, {big, int64(sb.Len())}, {empty, 0}, {small, 10}} {
			res, err := db.Exec("load " + c.path)
			if err != nil {
				t.Fatalf("%s: load %s: %v", network, c.path, err)
			}
			if n, _ := res.RowsAffected(); n != c.size {
				t.Errorf("%s: load %s: the engine read %d bytes, want %d", network, c.path, n, c.size)
			}
		}
		// The engine fails after reading part of the file, or never reads it: the client
		// gets the statement's answer and the connection goes on.
		if _, err := db.Exec("load " + big + " fail"); mysqlCode(err) != 1366 {
			t.Errorf("%s: a failing load: %v", network, err)
		}
		if _, err := db.Exec("load " + big + " ignore"); err != nil {
			t.Errorf("%s: a load that ignores the file: %v", network, err)
		}
		if _, err := db.Exec("load " + filepath.Join(dir, "missing.tbl")); err == nil {
			t.Errorf("%s: loading a missing file succeeded", network)
		}
		if _, err := db.Exec("select 1"); err != nil {
			t.Errorf("%s: the connection after the loads: %v", network, err)
		}
	}
	// A client that will not send the file answers with an empty one (go-sql-driver
	// without allowAllFiles then reports its own error); the session goes on.
	db := open(t, ts, "tcp", "root", "", "")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("load " + small); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("load without allowAllFiles: %v", err)
	}
	if _, err := db.Exec("select 1"); err != nil {
		t.Errorf("the connection after a refused load: %v", err)
	}
}
