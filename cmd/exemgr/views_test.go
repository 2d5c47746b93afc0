package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// TestViewsSurviveRestart checks --data-dir: a view a client created answers the same
// after exemgr is killed with SIGKILL and started again on the same directory; a dropped
// view stays dropped; a view whose query no longer binds is loaded and fails clearly when
// used; a corrupt views file stops exemgr at start (exit 2) naming the file.
func TestViewsSurviveRestart(t *testing.T) {
	needDaemons(t)
	ctx := context.Background()
	pm := shared.startPrimproc(t, "views-pm", filepath.Join(testbin.TempDir(t), "pm"), "0.01")
	t.Cleanup(pm.Kill)
	if err := loadTPCH(ctx, []string{pm.tcp}, "0.01", 1024, "nation", "region"); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(testbin.TempDir(t), "exemgr")
	start := func() *exemgrProc {
		t.Helper()
		e := shared.startExemgr(t, []string{pm.tcp}, "tcp", "--data-dir", dataDir)
		t.Cleanup(e.Kill)
		return e
	}
	query := func(e *exemgrProc, q string) ([][]string, error) {
		t.Helper()
		rows, err := e.conn(t).QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		tb, err := result(rows, "NULL")
		if err != nil {
			return nil, err
		}
		return tb.Rows, nil
	}
	const asiaQuery = "select * from asia order by 1"

	em := start()
	c := em.conn(t)
	for _, stmt := range []string{
		"create view asia (nation) as select n_name from nation, region where n_regionkey = r_regionkey and r_name = 'ASIA'",
		"create view tmp as select 1 as x",
		"create or replace view tmp as select r_name from region",
		"drop view tmp",
	} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %s", stmt, errorText(err))
		}
	}
	want, err := query(em, asiaQuery)
	if err != nil || len(want) != 5 {
		t.Fatalf("the view before the restart: %v, %s; want the 5 Asian nations", want, errorText(err))
	}
	em.Kill() // SIGKILL: nothing is flushed at exit

	em = start()
	if got, err := query(em, asiaQuery); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the view after kill -9 and a restart: %v, %s; want %v\n%s", got, errorText(err), want, em.Log())
	}
	if _, err := query(em, "select * from tmp"); err == nil || !strings.HasPrefix(errorText(err), "ERROR 1146 ") {
		t.Fatalf("a view dropped before the restart: %s, want 1146", errorText(err))
	}
	if _, err := em.conn(t).ExecContext(ctx, "drop view asia"); err != nil {
		t.Fatalf("drop view asia: %s", errorText(err))
	}
	em.Kill()

	em = start()
	if _, err := query(em, asiaQuery); err == nil || !strings.HasPrefix(errorText(err), "ERROR 1146 ") {
		t.Fatalf("a view dropped before the restart: %s, want 1146", errorText(err))
	}
	em.Kill()

	// A view over a table the primprocs no longer hold is loaded, listed, and fails when
	// used with 1356, as MySQL's does.
	stale := `{"format": "colink-exemgr-views", "version": 1, "views": [{"db": "tpch", "name": "stale", "query": "SELECT ` + "`x`" + ` FROM ` + "`droppedtable`" + `"}]}`
	if err := os.WriteFile(filepath.Join(dataDir, "views.json"), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	em = start()
	if _, err := query(em, "select * from stale"); err == nil || !strings.HasPrefix(errorText(err), "ERROR 1356 ") || !strings.Contains(errorText(err), "'tpch.stale'") {
		t.Fatalf("a view over a dropped table: %s, want MySQL's 1356 naming the view", errorText(err))
	} else {
		t.Logf("a view over a dropped table: %s", errorText(err))
	}
	if rows, err := query(em, "show full tables"); err != nil || !strings.Contains(strings.Join(flat(rows), " "), "stale") {
		t.Fatalf("SHOW FULL TABLES: %v, %s; want it to list the view", rows, errorText(err))
	}
	em.Kill()

	// A corrupt file is a startup error naming it, never an empty set of views.
	if err := os.WriteFile(filepath.Join(dataDir, "views.json"), []byte(`{"format": "colink-exemgr-views", "vers`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := testbin.Start(t, shared.bin(t, "./cmd/exemgr"), "--primproc", pm.tcp, "--transport", "tcp",
		"--mysql-listen", "127.0.0.1:"+strconv.Itoa(testbin.FreePort(t)), "--data-dir", dataDir)
	if code := bad.Wait(t, 10*time.Second); code != 2 || !strings.Contains(bad.Log(), filepath.Join(dataDir, "views.json")) {
		t.Fatalf("exemgr on a corrupt views file: exit %d, want 2 and a log naming the file:\n%s", code, bad.Log())
	}
}

// TestNoDataDirSaysViewsAreVolatile checks that an exemgr without --data-dir says at start
// that its views will not survive a restart.
func TestNoDataDirSaysViewsAreVolatile(t *testing.T) {
	needDaemons(t)
	bin := shared.bin(t, "./cmd/exemgr")
	e := testbin.Start(t, bin, "--primproc", "tcp://127.0.0.1:"+strconv.Itoa(testbin.FreePort(t)), "--transport", "tcp",
		"--mysql-listen", "127.0.0.1:"+strconv.Itoa(testbin.FreePort(t)))
	e.WaitLog(t, `level=INFO msg="exemgr: no --data-dir: views are kept in memory only and will not survive a restart"`, 10*time.Second)
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}
