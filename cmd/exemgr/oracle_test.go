package main

import (
	"bufio"
	"context"
	dsql "database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/tpch"
)

// TestMariaDBOracle is a differential test of colink's expression semantics: every SELECT
// of testdata/oracle.sql runs in colink (two primprocs, TPC-H SF 0.01) and in a private
// MariaDB server started for the test, over copies of the same rows, and the two answers
// must agree in values, column types and decimal scales, or in the error code. A case
// marked "known TAG" is a documented deviation (knownDeviations says why); it must still
// differ, so that a mark cannot outlive its reason.
//
// The rows MariaDB holds: all of region and nation, orders and lineitem with orderkey <= 7,
// customer with c_custkey <= 5. A case over orders, lineitem or customer filters to them.
func TestMariaDBOracle(t *testing.T) {
	needDaemons(t)
	mdb := startMariaDB(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	col := em.db(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	start := time.Now()
	copyRows(ctx, t, col, mdb, map[string]string{
		"region":   "",
		"nation":   "",
		"orders":   "o_orderkey <= 7",
		"lineitem": "l_orderkey <= 7",
		"customer": "c_custkey <= 5",
	})
	t.Logf("copied the rows into MariaDB in %v", time.Since(start).Round(time.Millisecond))

	cases, err := readOracleCases(filepath.Join("testdata", "oracle.sql"))
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	var agree, known, differ int
	typeDiffs := map[string]int{} // typeOnly's reason → cases
	for _, tc := range cases {
		want := oracleRun(ctx, mdb, tc.sql)
		got := oracleRun(ctx, col, tc.sql)
		if zeroed := positiveZeros(want); zeroed.String() != want.String() && zeroed.String() == got.String() {
			typeDiffs[negZero]++
			t.Logf("%s:%d: %s: %s\ncolink:\n%sMariaDB:\n%s", "testdata/oracle.sql", tc.line, negZero, tc.sql, got.detail(), want.detail())
			continue
		}
		same := want.String() == got.String()
		if !same && tc.known == "" {
			if why := typeOnly(got, want); why != "" {
				typeDiffs[why]++
				t.Logf("%s:%d: %s: %s\ncolink:\n%sMariaDB:\n%s", "testdata/oracle.sql", tc.line, why, tc.sql, got.detail(), want.detail())
				continue
			}
		}
		switch {
		case tc.known == "" && same:
			agree++
		case tc.known == "":
			differ++
			t.Errorf("%s:%d: colink and MariaDB differ on\n  %s\ncolink:\n%s\nMariaDB:\n%s", "testdata/oracle.sql", tc.line, tc.sql, got.detail(), want.detail())
		case same:
			t.Errorf("%s:%d: marked known %s (%s) but colink now agrees with MariaDB: remove the mark\n  %s\n%s",
				"testdata/oracle.sql", tc.line, tc.known, knownDeviations[tc.known], tc.sql, got)
		default:
			known++
			t.Logf("%s:%d: known %s: %s\ncolink:\n%sMariaDB:\n%s", "testdata/oracle.sql", tc.line, tc.known, tc.sql, got.detail(), want.detail())
		}
	}
	t.Logf("%d cases in %v: %d agree, %d documented deviations, differ only in types as documented %v, %d differ", len(cases),
		time.Since(start).Round(time.Millisecond), agree, known, typeDiffs, differ)
}

// Documented type differences that the comparison accepts on every case, as long as the
// values agree (typeOnly):
const (
	// intWidth: colink types integer results BIGINT and comparisons TINYINT(1) (its
	// booleans); MariaDB narrows integer results to INT where they fit. Clients read the
	// same numbers.
	intWidth = "integer width"
	// decimal38: colink's sums and averages are DECIMAL(38,s) (Decimal128), and its decimal
	// precision stops at 38 digits; MariaDB's grow to 65. The scale, hence the printed value,
	// is the same.
	decimal38 = "decimal precision 38"
	// nullType: a column that is NULL in every row; MariaDB types NULL's results its own
	// way (NULL + 1 is DOUBLE, COALESCE(NULL, NULL) is NULL), colink by its operand rules.
	nullType = "type of an all-NULL column"
	// textResult: colink types GROUP_CONCAT's result VARCHAR; MySQL and MariaDB type it
	// TEXT when @@group_concat_max_len is over 512 (the default). Clients read the same
	// string.
	textResult = "GROUP_CONCAT as VARCHAR"
	// negZero: a DOUBLE negative zero prints as 0 in colink and in MariaDB 10.11.19, as -0
	// in MariaDB 10.11.14: the MariaDB that apt installs decides.
	negZero = "negative zero printed as -0 by this MariaDB"
)

// positiveZeros returns r with every cell that is "-0" printed as "0".
func positiveZeros(r *oracleResult) *oracleResult {
	out := *r
	out.rows = make([][]string, len(r.rows))
	for i, row := range r.rows {
		out.rows[i] = slices.Clone(row)
		for j, v := range row {
			if v == "-0" {
				out.rows[i][j] = "0"
			}
		}
	}
	return &out
}

// allNull reports whether column i is NULL in every row (and there are rows).
func allNull(rows [][]string, i int) bool {
	for _, r := range rows {
		if r[i] != "NULL" {
			return false
		}
	}
	return len(rows) > 0
}

// isIntType reports an integer column type name.
func isIntType(name string) bool {
	switch name {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT":
		return true
	}
	return false
}

// typeOnly returns which documented type difference alone separates got (colink) from want
// (MariaDB), or "" if the values differ or a type differs otherwise.
func typeOnly(got, want *oracleResult) string {
	if got.err != "" || want.err != "" || len(got.types) != len(want.types) ||
		fmt.Sprint(got.rows) != fmt.Sprint(want.rows) {
		return ""
	}
	why := map[string]bool{}
	for i, g := range got.types {
		w := want.types[i]
		var gp, gs, wp, ws int
		gDec, _ := fmt.Sscanf(g, "DECIMAL(%d,%d)", &gp, &gs)
		wDec, _ := fmt.Sscanf(w, "DECIMAL(%d,%d)", &wp, &ws)
		switch {
		case g == w:
		case isIntType(g) && isIntType(w):
			why[intWidth] = true
		case allNull(got.rows, i):
			why[nullType] = true
		case gDec == 2 && wDec == 2 && gs == ws && gp == 38:
			why[decimal38] = true
		case g == "VARCHAR" && w == "TEXT":
			why[textResult] = true
		default:
			return ""
		}
	}
	var out []string
	for _, k := range []string{intWidth, decimal38, nullType, textResult} {
		if why[k] {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// knownDeviations are the documented ways colink deliberately differs from MariaDB (README,
// "SQL"); a case of testdata/oracle.sql marked "known TAG" must show the deviation.
var knownDeviations = map[string]string{
	"unsigned":  "there is no BIGINT UNSIGNED: CAST(x AS UNSIGNED) is a BIGINT, and of a negative x error 1690 where MariaDB wraps it to 2^64 + x",
	"warnings":  "colink raises no warnings; MariaDB's truncation warnings come with a differently converted value",
	"missing":   "a function or EXTRACT unit colink does not implement (yet): error 1305 or 1235",
	"datearith": "DATE - DATE and DATE + number are error 1210 (use DATEDIFF or INTERVAL); MySQL computes on YYYYMMDD numbers",
	"inlist": "MariaDB compares a quotient unrounded in an IN list of two or more values but rounded to its scale in = and a one-value IN " +
		"(1/3 = 0.3333 is 1); colink rounds in both, keeping x IN (a, b) the same as x = a OR x = b",
	// Differences not fixed yet, outside the paths of the change that found them (reported):
	"intervalparen": "TiDB's parser reads INTERVAL (expr) unit as the INTERVAL() function: error 1235 saying to drop the parentheses",
	"aggquotient": "OPEN: AVG and SUM of a quotient aggregate it rounded to its scale; MariaDB aggregates its intermediate digits " +
		"(AVG(x/3) differs in the 8th decimal)",
	"roundscale":   "OPEN: ROUND(decimal(p,s), d) with d > s keeps scale s (the same value, fewer printed zeros); MariaDB widens it to d (172799.49000)",
	"negprecision": "OPEN: ABS and unary minus of a decimal keep its precision (metadata only); MariaDB adds a digit (DECIMAL(16,2) for a DECIMAL(15,2))",
	"daterange":    "DATE starts at 0001-01-01 (README), so year 0 is NULL; MariaDB's dates go down to 0000-01-01",
	"concatorder":  "the GROUP_CONCATs of one SELECT that have an ORDER BY must have the same one: error 1235",
}

// oracleCase is one statement of testdata/oracle.sql.
type oracleCase struct {
	line  int
	sql   string
	known string // the deviation tag, or ""
}

// readOracleCases reads the cases: one statement per line; "#" starts a comment line; a line
// "known TAG" marks the next statement as the documented deviation TAG.
func readOracleCases(path string) ([]oracleCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []oracleCase
	known := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "known "):
			known = strings.TrimSpace(strings.TrimPrefix(l, "known "))
			if _, ok := knownDeviations[known]; !ok {
				return nil, fmt.Errorf("%s:%d: unknown deviation %q", path, n, known)
			}
		default:
			out = append(out, oracleCase{line: n, sql: strings.TrimSuffix(l, ";"), known: known})
			known = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	return out, nil
}

// oracleResult is what a client sees of a statement: the column types and rows, or the
// error code.
type oracleResult struct {
	types []string // DatabaseTypeName, with (precision,scale) for decimals
	rows  [][]string
	err   string // the error's code: what is compared
	msg   string // the error's message, for the log only
}

// String prints the result one line per row, the types first.
func (r *oracleResult) String() string {
	if r.err != "" {
		return "  " + r.err + "\n"
	}
	return r.table()
}

// detail is String with an error's message.
func (r *oracleResult) detail() string {
	if r.err != "" {
		return "  " + r.err + ": " + r.msg + "\n"
	}
	return r.table()
}

// table prints the types and rows.
func (r *oracleResult) table() string {
	var b strings.Builder
	b.WriteString("  " + strings.Join(r.types, " | ") + "\n")
	for _, row := range r.rows {
		b.WriteString("  " + strings.Join(row, " | ") + "\n")
	}
	return b.String()
}

// oracleRun runs one statement. Only the error's code counts: the messages differ.
func oracleRun(ctx context.Context, db *dsql.DB, q string) *oracleResult {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return &oracleResult{err: errorCode(err), msg: err.Error()}
	}
	defer rows.Close()
	r := &oracleResult{}
	cts, err := rows.ColumnTypes()
	if err != nil {
		return &oracleResult{err: errorCode(err), msg: err.Error()}
	}
	for _, ct := range cts {
		ty := ct.DatabaseTypeName()
		if p, s, ok := ct.DecimalSize(); ok && ty == "DECIMAL" {
			ty += fmt.Sprintf("(%d,%d)", p, s)
		}
		r.types = append(r.types, ty)
	}
	vals := make([]dsql.RawBytes, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return &oracleResult{err: errorCode(err), msg: err.Error()}
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		r.rows = append(r.rows, row)
	}
	if err := rows.Err(); err != nil {
		return &oracleResult{err: errorCode(err), msg: err.Error()}
	}
	return r
}

// errorCode is a MySQL error's number, or the whole error if it is not one.
func errorCode(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("ERROR %d", me.Number)
	}
	return "error: " + err.Error()
}

// lookBin finds a server binary on PATH or in /usr/sbin (where Debian puts mariadbd, and
// which a non-root PATH lacks).
func lookBin(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := filepath.Join("/usr/sbin", n); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startMariaDB starts a private MariaDB server on a unix socket in a temporary directory
// (no TCP, no grant tables) and returns a handle on its database tpch. The server is killed
// when the test ends.
func startMariaDB(t *testing.T) *dsql.DB {
	t.Helper()
	const install = "install mariadb-server (apt-get install -y mariadb-server) to run the MariaDB oracle test"
	server := lookBin("mariadbd", "mysqld")
	installDB := lookBin("mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		t.Skip(install + ": mariadbd and mariadb-install-db not found")
	}
	if out, err := exec.Command(server, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "MariaDB") {
		t.Skipf("%s: %s is not MariaDB (%v): %s", install, server, err, out)
	}
	dir := testbin.TempDir(t) // short: the socket path must fit in 107 bytes
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock")
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(installDB, "--no-defaults", "--datadir="+data, "--user="+u.Username,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", installDB, err, out)
	}
	p := testbin.Start(t, server, "--no-defaults", "--datadir="+data, "--socket="+sock,
		"--skip-networking", "--skip-grant-tables", "--user="+u.Username, "--pid-file="+filepath.Join(dir, "pid"),
		"--innodb-buffer-pool-size=16M", "--skip-log-bin", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_nopad_bin")
	p.WaitLog(t, `ready for connections`, 30*time.Second)
	t.Logf("MariaDB started in %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(firstLine(p.Log(), "Version:")))

	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", sock
	// colink compares strings byte-wise, trailing spaces included (README: its utf8mb4_bin
	// is what MySQL 8 calls utf8mb4_0900_bin, NO PAD): the server's tables and the
	// session's literals use MariaDB's equivalent, utf8mb4_nopad_bin, so that string
	// comparisons are checked rather than the documented difference.
	cfg.Params = map[string]string{"collation_connection": "'utf8mb4_nopad_bin'"}
	root, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := dsql.OpenDB(root)
	defer db.Close()
	if _, err := db.Exec("create database tpch"); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "tpch"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tdb := dsql.OpenDB(conn)
	t.Cleanup(func() { tdb.Close() })
	return tdb
}

// firstLine returns the first line of s containing sub.
func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// copyRows creates each TPC-H table in MariaDB with colink's schema (tpch.Table) and copies
// into it the rows of colink's table that the table's condition selects (all if "").
func copyRows(ctx context.Context, t *testing.T, from, to *dsql.DB, tables map[string]string) {
	t.Helper()
	for name, cond := range tables {
		def, ok := tpch.LookupTable(name)
		if !ok {
			t.Fatalf("no TPC-H table %s", name)
		}
		var cols, marks []string
		for _, c := range def.Columns {
			cols = append(cols, c.Name+" "+c.Type.SQL()+" not null")
			marks = append(marks, "?")
		}
		if _, err := to.ExecContext(ctx, fmt.Sprintf("create table %s (%s)", name, strings.Join(cols, ", "))); err != nil {
			t.Fatalf("MariaDB: create table %s: %v", name, err)
		}
		q := "select * from " + name
		if cond != "" {
			q += " where " + cond
		}
		rows, err := from.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("colink: %s: %v", q, err)
		}
		tb, err := result(rows, "NULL")
		rows.Close()
		if err != nil {
			t.Fatalf("colink: %s: %v", q, err)
		}
		ins := fmt.Sprintf("insert into %s values (%s)", name, strings.Join(marks, ", "))
		for _, r := range tb.Rows {
			args := make([]any, len(r))
			for i, v := range r {
				args[i] = v
			}
			if _, err := to.ExecContext(ctx, ins, args...); err != nil {
				t.Fatalf("MariaDB: %s %q: %v", ins, r, err)
			}
		}
	}
}
