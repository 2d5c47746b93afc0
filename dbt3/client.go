package dbt3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DropCacheStatement is the statement that empties every primproc's column cache (and the
// kernel's cached pages of its segment files) through exemgr, as ColumnStore's
// calFlushCache() does. The cold round of every driver runs it before each query.
const DropCacheStatement = "SELECT calFlushCache()"

// DefaultDatabase is the database exemgr keeps the TPC-H tables in.
const DefaultDatabase = "tpch"

// QueryStatsStatement returns the statistics of the session's previous statement, one row
// per process (see SHOW QUERY STATS in the README).
const QueryStatsStatement = "SHOW QUERY STATS"

// Conn is one MySQL session with exemgr. SHOW QUERY STATS describes the session's previous
// statement, so everything a measurement needs goes through one Conn.
type Conn struct {
	db   *sql.DB
	conn *sql.Conn
	addr string
}

// MySQLConfig returns the go-sql-driver configuration for exemgr at addr: "host:port" or
// "tcp://host:port" for TCP, "/path" or "unix:///path" for a unix socket. The user is root
// without a password (exemgr's default users file admits it from loopback and the socket).
func MySQLConfig(addr, database string) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.DBName = database
	cfg.Timeout = 10 * time.Second
	// The refresh functions may LOAD DATA LOCAL INFILE their sets: the driver then sends
	// the files exemgr asks for. (A driver talks to the exemgr it was pointed at.)
	cfg.AllowAllFiles = true
	switch {
	case strings.HasPrefix(addr, "unix://"):
		cfg.Net, cfg.Addr = "unix", strings.TrimPrefix(addr, "unix://")
	case strings.HasPrefix(addr, "/"):
		cfg.Net, cfg.Addr = "unix", addr
	default:
		hostPort := strings.TrimPrefix(addr, "tcp://")
		if _, port, err := net.SplitHostPort(hostPort); err != nil || port == "" {
			return nil, fmt.Errorf("MySQL address %q: want host:port, tcp://host:port, /path/to/socket or unix:///path", addr)
		}
		cfg.Net, cfg.Addr = "tcp", hostPort
	}
	if cfg.Addr == "" {
		return nil, fmt.Errorf("MySQL address %q: no socket path", addr)
	}
	return cfg, nil
}

// Dial opens a session with exemgr at addr (see MySQLConfig) and checks that it answers.
func Dial(ctx context.Context, addr, database string) (*Conn, error) {
	cfg, err := MySQLConfig(addr, database)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("exemgr at %s: %w", addr, err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.PingContext(ctx)
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		db.Close()
		return nil, fmt.Errorf("exemgr at %s: %w", addr, err)
	}
	return &Conn{db: db, conn: conn, addr: addr}, nil
}

// Addr is the address the session was opened with.
func (c *Conn) Addr() string { return c.addr }

// Close ends the session.
func (c *Conn) Close() error {
	err := c.conn.Close()
	return errors.Join(err, c.db.Close())
}

// Exec runs one statement (no trailing ";") and reads its whole result. elapsed runs from
// sending the statement to reading the last row into memory; formatting happens later.
// A statement without a result set returns a Result with no columns.
func (c *Conn) Exec(ctx context.Context, stmt string) (res *Result, elapsed time.Duration, err error) {
	start := time.Now()
	rows, err := c.conn.QueryContext(ctx, stmt)
	if err != nil {
		return nil, time.Since(start), err
	}
	res, err = readResult(rows)
	elapsed = time.Since(start)
	return res, elapsed, err
}

// ExecCount runs a statement without a result set (INSERT, DELETE, LOAD DATA) and returns
// the rows it affected.
func (c *Conn) ExecCount(ctx context.Context, stmt string) (affected int64, elapsed time.Duration, err error) {
	start := time.Now()
	r, err := c.conn.ExecContext(ctx, stmt)
	elapsed = time.Since(start)
	if err != nil {
		return 0, elapsed, err
	}
	affected, err = r.RowsAffected()
	return affected, elapsed, err
}

// readResult reads and closes rows.
func readResult(rows *sql.Rows) (*Result, error) {
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, ct := range types {
		res.Columns = append(res.Columns, ct.Name())
		res.Types = append(res.Types, ct.DatabaseTypeName())
	}
	if len(types) == 0 {
		return res, rows.Err()
	}
	raw := make([]sql.RawBytes, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]string, len(raw))
		for i, b := range raw {
			if b == nil {
				res.nulls = append(res.nulls, len(res.Rows)*len(raw)+i)
				continue
			}
			row[i] = string(b)
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, rows.Close()
}

// QueryStats runs SHOW QUERY STATS: the statistics of the session's previous statement.
func (c *Conn) QueryStats(ctx context.Context) ([]ProcStats, error) {
	res, _, err := c.Exec(ctx, QueryStatsStatement)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", QueryStatsStatement, err)
	}
	return ParseQueryStats(res)
}

// DropCache empties the primprocs' caches (DropCacheStatement).
func (c *Conn) DropCache(ctx context.Context) error {
	if _, _, err := c.Exec(ctx, DropCacheStatement); err != nil {
		return fmt.Errorf("drop caches (%s): %w", DropCacheStatement, err)
	}
	return nil
}
