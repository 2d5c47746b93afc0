package frontend

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// The engine compares strings byte-wise, so the front end must advertise a binary collation
// (utf8mb4_bin, 46) wherever it names one: the handshake, string column definitions and the
// collation variables. A client told utf8mb4_general_ci would expect 'a' = 'A'.

// TestHandshakeAdvertisesBinaryCollation reads the initial handshake's character_set byte.
func TestHandshakeAdvertisesBinaryCollation(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	nc, err := net.DialTimeout("tcp", ts.tcp, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(nc, p); err != nil {
		t.Fatal(err)
	}
	// protocol_version(1) server_version(NUL) connection_id(4) auth_data_1(8) filler(1)
	// capability_flags_lower(2) character_set(1)
	nul := bytes.IndexByte(p[1:], 0)
	if p[0] != 10 || nul < 0 || len(p) < 1+nul+1+4+8+1+2+1 {
		t.Fatalf("not a HandshakeV10: % x", p)
	}
	if cs := p[1+nul+1+4+8+1+2]; cs != 46 {
		t.Errorf("handshake character_set = %d, want 46 (utf8mb4_bin)", cs)
	}
}

// TestColumnsAndVariablesNameBinaryCollation checks string column definitions, from the
// engine and from the front end's own answers, and the collation variables, including
// after a client asks for a case-insensitive collation.
func TestColumnsAndVariablesNameBinaryCollation(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	c, err := client.Connect(ts.tcp, "root", "", "tpch")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"show databases", "select @@version", "show variables like 'collation%'"} {
		r, err := c.Execute(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, f := range r.Fields {
			if f.Charset != 46 {
				t.Errorf("%s: column %s has collation %d, want 46 (utf8mb4_bin)", q, f.Name, f.Charset)
			}
		}
	}

	db := open(t, ts, "tcp", "root", "", "")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const vars = "select @@collation_connection, @@collation_server, @@collation_database, @@character_set_connection"
	check := func(what string, want ...string) {
		t.Helper()
		_, rows := queryStrings(t, conn, vars)
		if len(rows) != 1 || len(rows[0]) != len(want) {
			t.Fatalf("%s: %v", what, rows)
		}
		for i := range want {
			if rows[0][i] != want[i] {
				t.Errorf("%s: %v, want %v", what, rows[0], want)
				break
			}
		}
	}
	check("on connect", "utf8mb4_bin", "utf8mb4_bin", "utf8mb4_bin", "utf8mb4")

	ctx := context.Background()
	for _, set := range []string{
		"SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
		"SET collation_connection = 'utf8mb4_unicode_ci'",
		// Another character set's collation: the character set stays utf8mb4.
		"SET collation_connection = 'latin1_swedish_ci'",
		"SET collation_connection = 'latin1_bin'",
	} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		_, warnings := queryStrings(t, conn, "show warnings")
		if len(warnings) != 1 || warnings[0][1] != "1273" {
			t.Errorf("%s: warnings %v, want one 1273 saying the collation is treated as utf8mb4_bin", set, warnings)
		}
		check(set, "utf8mb4_bin", "utf8mb4_bin", "utf8mb4_bin", "utf8mb4")
	}
	if _, err := conn.ExecContext(ctx, "SET NAMES latin1"); err != nil {
		t.Fatal(err)
	}
	if _, warnings := queryStrings(t, conn, "show warnings"); len(warnings) != 1 || warnings[0][1] != "1235" || !strings.Contains(warnings[0][2], "utf8mb4") {
		t.Errorf("SET NAMES latin1: warnings %v, want one saying colink uses utf8mb4", warnings)
	}
	check("SET NAMES latin1", "utf8mb4_bin", "utf8mb4_bin", "utf8mb4_bin", "utf8mb4")
}

// TestCharsetRequests: colink sends and expects UTF-8, so whatever character set a client
// asks for, @@character_set_client/_connection/_results stay utf8mb4; another MySQL
// character set gets a warning saying so, an unknown one error 1115.
func TestCharsetRequests(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	db := open(t, ts, "tcp", "root", "", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const vars = "select @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"
	for _, tc := range []struct {
		set      string
		code     uint16 // error; 0: none
		warnings string // codes of the warnings, space-separated
	}{
		{"SET NAMES utf8mb4", 0, ""},
		{"SET NAMES 'utf8'", 0, ""},
		{"SET NAMES utf8mb3 COLLATE utf8mb3_general_ci", 0, "1273"},
		{"SET NAMES latin1", 0, "1235"},
		{"SET NAMES 'cp1251' COLLATE 'cp1251_general_ci'", 0, "1235"},
		{"SET NAMES klingon", 1115, ""},
		{"SET CHARACTER SET latin1", 0, "1235"},
		{"SET CHARACTER SET utf8mb4", 0, ""},
		{"SET character_set_client = 'latin2', character_set_results = NULL", 0, "1235"},
		{"SET character_set_results = 'klingon'", 1115, ""},
		{"SET NAMES DEFAULT", 0, ""},
	} {
		_, err := conn.ExecContext(ctx, tc.set)
		if mysqlCode(err) != tc.code {
			t.Errorf("%s: %v, want error %d", tc.set, err, tc.code)
			continue
		}
		if err == nil {
			_, warnings := queryStrings(t, conn, "show warnings")
			var codes []string
			for _, w := range warnings {
				codes = append(codes, w[1])
			}
			if got := strings.Join(codes, " "); got != tc.warnings {
				t.Errorf("%s: warnings %v, want codes %q", tc.set, warnings, tc.warnings)
			}
		}
		_, rows := queryStrings(t, conn, vars)
		if len(rows) != 1 || strings.Join(rows[0], " ") != "utf8mb4 utf8mb4 utf8mb4 utf8mb4_bin" {
			t.Errorf("after %s: %v, want utf8mb4 everywhere", tc.set, rows)
		}
	}
}

// TestMariadbClientSeesBinaryCollation: the stock client's --column-type-info names each
// column's collation, and "status" the connection's.
func TestMariadbClientSeesBinaryCollation(t *testing.T) {
	client := mariadbClient(t)
	ts := startServer(t, newFakeEngine(), nil)
	args := append(connectArgs(ts, "unix"), "--column-type-info", "--table", "-e", "show databases; select @@collation_connection")
	out, stderr, code := runMariadb(t, client, args, "")
	if code != 0 {
		t.Fatalf("mariadb: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "general_ci") || strings.Count(out, "utf8mb4_bin") < 3 {
		t.Errorf("want utf8mb4_bin in both columns' type info and as @@collation_connection:\n%s", out)
	}
}
