package sql

import (
	"strings"
	"testing"
)

func TestLiftDerivedColumns(t *testing.T) {
	for _, c := range []struct {
		in, out string
		lists   string
	}{
		{"select a from (select 1, 2) as t (a, b)", "select a from (select 1, 2) as " + derivedMarker + "0", "t:a,b"},
		{"select * from (select 1) AS `odd name` (`x y`)", "select * from (select 1) AS " + derivedMarker + "0", "odd name:x y"},
		{"select f(x) as y from t", "select f(x) as y from t", ""},                       // a function call, not a list
		{"select ') as t (a)' from x", "select ') as t (a)' from x", ""},                 // inside a string
		{"select 1 -- ) as t (a)\n", "select 1 -- ) as t (a)\n", ""},                     // inside a comment
		{"select 1 from (select 2) as t (a, ", "select 1 from (select 2) as t (a, ", ""}, // unfinished
		{"select * from (select 1) as a (x) join (select 2) as b (y) on x = y",
			"select * from (select 1) as " + derivedMarker + "0 join (select 2) as " + derivedMarker + "1 on x = y", "a:x b:y"},
	} {
		got, lists := liftDerivedColumns(c.in)
		var ls []string
		for _, l := range lists {
			ls = append(ls, l.alias+":"+strings.Join(l.names, ","))
		}
		if got != c.out || strings.Join(ls, " ") != c.lists {
			t.Errorf("liftDerivedColumns(%q) = %q, %v; want %q, %s", c.in, got, ls, c.out, c.lists)
		}
	}
}
