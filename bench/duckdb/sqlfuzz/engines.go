package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/bench/duckdb/internal/tpchfiles"
	"github.com/colinkdb/colink/dbt3"
)

// engine answers SQL text.
type engine interface {
	name() string
	query(ctx context.Context, text string) (*result, error)
}

// maxRows bounds a result either engine may return: a generated query is meant to be small,
// and a larger answer is cut short and counted as skipped rather than held in memory.
const maxRows = 200_000

// errTooLarge reports a result of more than maxRows rows.
var errTooLarge = errors.New("result larger than the fuzzer's row bound")

// sqlEngine runs queries over database/sql and prints every value as text.
type sqlEngine struct {
	label string
	db    *sql.DB
	// text formats a scanned value; nil values are NULL.
	text func(v any) string
	// spent and calls total the time in query, and slow logs queries slower than a second.
	spent time.Duration
	calls int
	log   *slog.Logger
}

func (e *sqlEngine) name() string { return e.label }

func (e *sqlEngine) query(ctx context.Context, text string) (*result, error) {
	began := time.Now()
	defer func() {
		d := time.Since(began)
		e.spent += d
		e.calls++
		if d > time.Second && e.log != nil {
			e.log.Info("sqlfuzz: slow query", "engine", e.label, "elapsed", d, "sql", text)
		}
	}()
	rows, err := e.db.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &result{}
	for _, ct := range cts {
		res.types = append(res.types, ct.DatabaseTypeName())
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(res.rows) == maxRows {
			return nil, errTooLarge
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]cell, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = cell{null: true}
			} else {
				row[i] = cell{s: e.text(v)}
			}
		}
		res.rows = append(res.rows, row)
	}
	return res, rows.Err()
}

// colinkText formats a value from go-sql-driver's text protocol: bytes as sent.
func colinkText(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.Format(time.DateOnly)
	}
	return fmt.Sprint(v)
}

// duckText formats a value as DuckDB's Go driver returns it.
func duckText(v any) string {
	switch x := v.(type) {
	case duckdb.Decimal:
		return x.String()
	case *big.Int:
		return x.String()
	case time.Time:
		return x.Format(time.DateOnly)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// openColink connects to exemgr's MySQL protocol at addr (host:port or a unix socket path).
func openColink(addr, database string) (*sqlEngine, error) {
	cfg, err := dbt3.MySQLConfig(addr, database)
	if err != nil {
		return nil, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return &sqlEngine{label: "colink", db: db, text: colinkText}, nil
}

// colinkCode returns a MySQL error's number, or 0.
func colinkCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// openDuckDB starts an in-memory DuckDB with threads workers and the eight tables loaded
// into its own storage from the Parquet files (what a user who picks DuckDB would query).
func openDuckDB(ctx context.Context, tables []tpchfiles.Table, threads int) (*sqlEngine, time.Duration, error) {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, 0, fmt.Errorf("duckdb: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	start := time.Now()
	stmts := []string{"set threads = " + strconv.Itoa(threads)}
	for _, t := range tables {
		stmts = append(stmts, tpchfiles.LoadSQL(t))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, 0, fmt.Errorf("duckdb: %s: %w", s, err)
		}
	}
	return &sqlEngine{label: "duckdb", db: db, text: duckText}, time.Since(start), nil
}

// sampleValues returns, per "table.column", up to n distinct values chosen by hash (the
// same on every run), in the engines' text form, for the generator's literals.
func sampleValues(ctx context.Context, e engine, s *schema, n int) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range s.tables {
		for _, c := range s.cols[t] {
			q := fmt.Sprintf("select v from (select distinct %s as v from %s) order by hash(v) limit %d", c.name, t, n)
			res, err := e.query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("sampling %s.%s: %w", t, c.name, err)
			}
			for _, row := range res.rows {
				if !row[0].null {
					out[t+"."+c.name] = append(out[t+"."+c.name], row[0].s)
				}
			}
		}
	}
	return out, nil
}
