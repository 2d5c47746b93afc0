package main

import (
	"context"
	"crypto/tls"
	dsql "database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/internal/testbin"
)

// TestAuthenticationPlugins: a real exemgr started with --tls-cert/--tls-key and a users file
// of one caching_sha2_password account (the default), one mysql_native_password account and
// root: the mariadb client (Debian's default MySQL client) logs in by each plugin over TLS,
// verifying the certificate, over plain TCP and over the unix socket; go-sql-driver and
// Perl's DBD::MariaDB log in by caching_sha2_password over TLS; a wrong password is
// refused on each. (Which plugin and proof each login took is checked in the frontend's
// TestCachingSHA2 and TestMariadbClientPlugins, from the server's debug log.)
func TestAuthenticationPlugins(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	certFile, keyFile, pool := testbin.TLSCert(t, dir, false)
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("alice:s3cret\nmysql_native_password legacy:oldpw\nroot:\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t)) // no primproc: SELECT 1 needs none
	em := shared.spawnExemgr(t, []string{url}, "tcp", "--primproc-timeout", "1s",
		"--users-file", users, "--tls-cert", certFile, "--tls-key", keyFile)
	t.Cleanup(em.Kill)
	host, port, _ := strings.Cut(em.addr, ":")

	t.Run("mariadb", func(t *testing.T) {
		needMariadb(t)
		tcp := []string{"-h", host, "-P", port, "--protocol=tcp"}
		verified := append([]string{"--ssl", "--ssl-ca", certFile, "--ssl-verify-server-cert"}, tcp...)
		plain := append([]string{"--skip-ssl"}, tcp...)
		sock := []string{"--skip-ssl", "-S", em.socket, "--protocol=socket"}
		for _, c := range []struct {
			what string
			args []string
			tls  bool
		}{
			{"caching_sha2_password, first login, over the unix socket (the password in clear)", append(sock, "-u", "alice", "-ps3cret"), false},
			{"caching_sha2_password over TLS", append(verified, "-u", "alice", "-ps3cret"), true},
			{"caching_sha2_password over plain TCP", append(plain, "-u", "alice", "-ps3cret"), false},
			{"mysql_native_password account over TLS", append(verified, "-u", "legacy", "-poldpw"), true},
			{"mysql_native_password client, plain TCP", append(plain, "--default-auth=mysql_native_password", "-u", "legacy", "-poldpw"), false},
			{"mysql_native_password over the unix socket", append(sock, "-u", "legacy", "-poldpw"), false},
		} {
			out, stderr, _ := runMariadb(t, em, "", true, append(c.args, "-e", "status; select current_user()")...)
			if !strings.Contains(out, "Current user:") {
				t.Errorf("%s: %s%s", c.what, out, stderr)
				continue
			}
			if c.tls != strings.Contains(out, "Cipher in use") {
				t.Errorf("%s: TLS %v, but status says:\n%s", c.what, c.tls, out)
			}
		}
		for _, args := range [][]string{append(verified, "-u", "alice", "-pwrong"), append(plain, "-u", "legacy", "-pwrong")} {
			_, stderr, _ := runMariadb(t, em, "", true, append(args, "-e", "select 1")...)
			if !strings.Contains(stderr, "ERROR 1045 (28000): Access denied for user") {
				t.Errorf("mariadb %v: %q, want 1045", args, stderr)
			}
		}
	})

	t.Run("go-sql-driver over TLS", func(t *testing.T) {
		for _, c := range []struct {
			user, password string
			ok             bool
		}{{"alice", "s3cret", true}, {"legacy", "oldpw", true}, {"alice", "bad", false}} {
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = c.user, c.password, "tcp", em.addr
			cfg.TLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
			conn, err := mysql.NewConnector(cfg)
			if err != nil {
				t.Fatal(err)
			}
			db := dsql.OpenDB(conn)
			var user string
			err = db.QueryRowContext(context.Background(), "select current_user()").Scan(&user)
			db.Close()
			var me *mysql.MySQLError
			switch {
			case c.ok && (err != nil || !strings.HasPrefix(user, c.user+"@")):
				t.Errorf("%s: %q, %v", c.user, user, err)
			case !c.ok && (!errors.As(err, &me) || me.Number != 1045):
				t.Errorf("%s with a wrong password: %v, want 1045", c.user, err)
			}
		}
	})

	t.Run("perl-DBD-MariaDB over TLS", func(t *testing.T) {
		if err := exec.Command("perl", "-MDBD::MariaDB", "-e", "1").Run(); err != nil {
			t.Skip("Perl's DBD::MariaDB is not installed: apt-get install -y libdbd-mariadb-perl to run this test")
		}
		script := `use DBI;
my ($host, $port, $ca) = @ARGV;
my $dbh = DBI->connect("DBI:MariaDB:host=$host;port=$port;mariadb_ssl=1;mariadb_ssl_ca_file=$ca;mariadb_ssl_verify_server_cert=1",
  "alice", "s3cret", {RaiseError => 1, PrintError => 0});
my ($u) = $dbh->selectrow_array("select current_user()");
print "$u\n";`
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "perl", "-e", script, host, port, certFile).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "alice@") {
			t.Errorf("perl: %v\n%s", err, out)
		}
	})
}
