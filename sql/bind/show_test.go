package bind_test

import (
	"context"
	"testing"

	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
)

// TestUnsupportedShowNamed: a SHOW colink does not answer is 1235 naming which SHOW, in the
// manual's words.
func TestUnsupportedShowNamed(t *testing.T) {
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	for q, want := range map[string]string{
		"show engines":                     "SHOW ENGINES",
		"show privileges":                  "SHOW PRIVILEGES",
		"show global status like 'Uptime'": "SHOW GLOBAL STATUS",
		"show index from nation":           "SHOW INDEX",
		"show processlist":                 "SHOW PROCESSLIST",
		"show grants for current_user()":   "SHOW GRANTS",
		"show plugins":                     "SHOW PLUGINS",
		"show create database tpch":        "SHOW CREATE DATABASE",
		"show events":                      "SHOW EVENTS",
	} {
		stmts, err := sql.NewParser().Parse(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		_, err = planner.Plan(context.Background(), env{}, stmts[0])
		if got := errorText(err); got != "ERROR 1235 (42000): This version of colink doesn't yet support '"+want+"'" {
			t.Errorf("%s: %s, want 1235 naming %s", q, got, want)
		}
	}
}
