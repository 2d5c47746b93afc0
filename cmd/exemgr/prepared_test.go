package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPreparedStatementsTPCH runs queries with parameters through the binary protocol of a
// real exemgr (two primprocs, SF 0.01): go-sql-driver without interpolateParams prepares and
// executes each (its default), and the rows come back in the binary format, typed. The same
// queries through the text protocol give the same answers. Then Perl's DBD::MariaDB with
// server-side prepares (mariadb_server_prepare=1), a client of another language on
// MariaDB's C library, does the same.
func TestPreparedStatementsTPCH(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	db := em.db(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type nationRow struct {
		key    int64
		name   string
		region int64
	}
	rows, err := db.QueryContext(ctx, "select n_nationkey, n_name, n_regionkey from nation where n_regionkey = ? and n_name like ? order by n_nationkey", 2, "%A%")
	if err != nil {
		t.Fatal(errorText(err))
	}
	var got []nationRow
	for rows.Next() {
		var r nationRow
		if err := rows.Scan(&r.key, &r.name, &r.region); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	rows.Close()
	want := []nationRow{{8, "INDIA", 2}, {9, "INDONESIA", 2}, {12, "JAPAN", 2}, {18, "CHINA", 2}, {21, "VIETNAM", 2}}
	if len(got) != len(want) {
		t.Fatalf("nations: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("nation %d: %v, want %v", i, got[i], want[i])
		}
	}

	// Every value type of the result in the binary format, and parameters of each type:
	// a DATE column, a DECIMAL, an aggregate's DECIMAL(38,s), a DOUBLE, a COUNT.
	var day, price, sum string
	var ratio float64
	var n int64
	err = db.QueryRowContext(ctx, `select l_shipdate, l_extendedprice, sum(l_quantity), avg(l_discount) * 1e0, count(*)
		from lineitem where l_orderkey = ? and l_linenumber = ? and l_shipdate > ? and l_discount >= ? group by 1, 2`,
		int64(1), 1, "1990-01-01", 0.0).Scan(&day, &price, &sum, &ratio, &n)
	if err != nil {
		t.Fatal(errorText(err))
	}
	var tday, tprice, tsum string
	var tratio float64
	var tn int64
	err = db.QueryRowContext(ctx, `select l_shipdate, l_extendedprice, sum(l_quantity), avg(l_discount) * 1e0, count(*)
		from lineitem where l_orderkey = 1 and l_linenumber = 1 and l_shipdate > '1990-01-01' and l_discount >= 0.0 group by 1, 2`).Scan(&tday, &tprice, &tsum, &tratio, &tn)
	if err != nil {
		t.Fatal(errorText(err))
	}
	if day != tday || price != tprice || sum != tsum || ratio != tratio || n != tn || n != 1 {
		t.Errorf("binary protocol: %s %s %s %v %d; text protocol: %s %s %s %v %d",
			day, price, sum, ratio, n, tday, tprice, tsum, tratio, tn)
	}

	// A statement prepared once, executed with many values (a SQL-shaped string among them,
	// which stays one string).
	st, err := db.PrepareContext(ctx, "select count(*) from customer where c_mktsegment = ?")
	if err != nil {
		t.Fatal(errorText(err))
	}
	total := int64(0)
	for _, seg := range []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY", "x' or '1' = '1"} {
		var k int64
		if err := st.QueryRowContext(ctx, seg).Scan(&k); err != nil {
			t.Fatal(errorText(err))
		}
		total += k
	}
	st.Close()
	var customers int64
	if err := db.QueryRowContext(ctx, "select count(*) from customer").Scan(&customers); err != nil || total != customers {
		t.Errorf("the five segments' counts add to %d, customers %d (%v)", total, customers, err)
	}

	// SQL's PREPARE, EXECUTE … USING and DEALLOCATE PREPARE on one session.
	conn := em.conn(t)
	for _, q := range []string{"SET @r = 2, @p = '%A%'", "PREPARE s FROM 'select count(*) from nation where n_regionkey = ? and n_name like ?'"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %s", q, errorText(err))
		}
	}
	if err := conn.QueryRowContext(ctx, "EXECUTE s USING @r, @p").Scan(&n); err != nil || n != 5 {
		t.Errorf("EXECUTE s USING @r, @p: %d, %s", n, errorText(err))
	}
	for q, want := range map[string]string{
		"EXECUTE s USING @r":  "1210",
		"EXECUTE nosuch":      "1243",
		"PREPARE t FROM @sql": "1064", // @sql is NULL: no statement
	} {
		if _, err := conn.ExecContext(ctx, q); !strings.Contains(errorText(err), want) {
			t.Errorf("%s: %s, want error %s", q, errorText(err), want)
		}
	}
	// PREPARE … FROM @v takes the statement's text from a user variable, as dynamic SQL in
	// scripts and stored-procedure ports does.
	for _, q := range []string{"SET @sql = concat('select count(*) from nation where n_regionkey ', '= ?')", "PREPARE t FROM @sql"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %s", q, errorText(err))
		}
	}
	if err := conn.QueryRowContext(ctx, "EXECUTE t USING @r").Scan(&n); err != nil || n != 5 {
		t.Errorf("EXECUTE t USING @r (prepared from @sql): %d, %s", n, errorText(err))
	}
	if _, err := conn.ExecContext(ctx, "DEALLOCATE PREPARE s"); err != nil {
		t.Errorf("DEALLOCATE PREPARE s: %s", errorText(err))
	}
	if _, err := conn.ExecContext(ctx, "EXECUTE s USING @r, @p"); !strings.Contains(errorText(err), "1243") {
		t.Errorf("EXECUTE after DEALLOCATE: %s, want error 1243", errorText(err))
	}

	t.Run("perl-DBD-MariaDB", func(t *testing.T) {
		if err := exec.Command("perl", "-MDBD::MariaDB", "-e", "1").Run(); err != nil {
			t.Skip("Perl's DBD::MariaDB is not installed: apt-get install -y libdbd-mariadb-perl to run this test")
		}
		script := `
use strict; use warnings; use DBI;
my $dbh = DBI->connect("DBI:MariaDB:database=tpch;mariadb_socket=$ARGV[0];mariadb_server_prepare=1", "root", "", {RaiseError => 1, PrintError => 0});
my $sth = $dbh->prepare("select n_name, n_regionkey from nation where n_nationkey between ? and ? order by n_nationkey");
$sth->execute(3, 5);
while (my @r = $sth->fetchrow_array) { print join("|", @r), "\n"; }
$sth->execute(24, 30);
while (my @r = $sth->fetchrow_array) { print join("|", @r), "\n"; }
my ($d) = $dbh->selectrow_array("select max(o_orderdate) from orders where o_orderkey < ?", undef, 100);
print "max $d\n";
eval { $dbh->selectrow_array("select * from nosuch where x = ?", undef, 1) };
print "error ", ($@ =~ /nosuch/ ? "names the table" : $@), "\n";
`
		out, err := exec.Command("perl", "-e", script, em.socket).CombinedOutput()
		if err != nil {
			t.Fatalf("perl: %v\n%s", err, out)
		}
		want := "CANADA|1\nEGYPT|4\nETHIOPIA|0\nUNITED STATES|1\nmax "
		if !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "error names the table") {
			t.Errorf("perl printed\n%s\nwant it to start with\n%s", out, want)
		}
	})
}
