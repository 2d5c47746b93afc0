package dbt3

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/dbt3test"
)

func TestSQLRefresher(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"orders.tbl.u2": "1|x|\n", "lineitem.tbl.u2": "1|y|\n",
		"delete.2": "5|\n6|\n7|\n\n8|\n9|\n10|\n11|\n",
		"delete.3": "5|\nfive|\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := dbt3test.NewEngine()
	e.SetDefault(dbt3test.Canned{})
	conn, err := Dial(context.Background(), dbt3test.Serve(t, e), "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	var ran []string
	r := &SQLRefresher{Dir: dir, DeleteKeys: 3, OnStatement: func(s string, _ int64, _ time.Duration) { ran = append(ran, s) }}
	if err := r.RF1(ctx, conn, 2); err != nil {
		t.Fatal(err)
	}
	if err := r.RF2(ctx, conn, 2); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"LOAD DATA INFILE '" + filepath.Join(dir, "orders.tbl.u2") + "' INTO TABLE orders FIELDS TERMINATED BY '|'",
		"LOAD DATA INFILE '" + filepath.Join(dir, "lineitem.tbl.u2") + "' INTO TABLE lineitem FIELDS TERMINATED BY '|'",
		"DELETE FROM lineitem WHERE l_orderkey IN (5,6,7)", "DELETE FROM orders WHERE o_orderkey IN (5,6,7)",
		"DELETE FROM lineitem WHERE l_orderkey IN (8,9,10)", "DELETE FROM orders WHERE o_orderkey IN (8,9,10)",
		"DELETE FROM lineitem WHERE l_orderkey IN (11)", "DELETE FROM orders WHERE o_orderkey IN (11)",
	}
	if !slices.Equal(ran, want) {
		t.Errorf("statements:\n%s\nwant\n%s", strings.Join(ran, "\n"), strings.Join(want, "\n"))
	}
	r.Local = true
	ran = nil
	if err := r.RF1(ctx, conn, 2); err != nil || len(ran) != 2 || !strings.HasPrefix(ran[0], "LOAD DATA LOCAL INFILE") {
		t.Errorf("LOCAL RF1: %v %q", err, ran)
	}
	if err := r.RF2(ctx, conn, 3); err == nil || !strings.Contains(err.Error(), `line 2: "five|" is not an order key`) {
		t.Errorf("RF2 of a bad delete file: %v", err)
	}
	if err := r.RF1(ctx, conn, 4); err == nil || !strings.Contains(err.Error(), "dbt3 gen --refresh") {
		t.Errorf("RF1 of a missing set: %v", err)
	}
	if q := quoteString(`/a/it's\x`); q != `/a/it\'s\\x` {
		t.Errorf("quoted %q", q)
	}
}
