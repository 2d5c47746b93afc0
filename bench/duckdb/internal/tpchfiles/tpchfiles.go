// Package tpchfiles owns how the bench module's DuckDB programs find and open the TPC-H
// tables that `dbt3 gen --format parquet` writes: locating each table's files, the DuckDB
// statements that expose them (a view over the files, or a table loaded into DuckDB's own
// storage), and the check that DuckDB sees the TPC-H schema.
package tpchfiles

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/tpch"
)

// Table is one TPC-H table and the Parquet files that hold it, in chunk order.
type Table struct {
	Name  string
	Paths []string
}

// Find locates the eight tables' Parquet files in dir, as `dbt3 gen --format parquet`
// writes them: <table>.parquet, or <table>.<K>.parquet (K = 1 … N) with --chunks N.
func Find(dir string) ([]Table, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	var out []Table
	for _, name := range tpch.TableNames() {
		var single string
		var chunks []int
		for _, e := range entries {
			if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			fn := e.Name()
			if fn == name+".parquet" {
				single = fn
				continue
			}
			mid, ok := strings.CutPrefix(fn, name+".")
			if !ok {
				continue
			}
			mid, ok = strings.CutSuffix(mid, ".parquet")
			if !ok {
				continue
			}
			if k, err := strconv.Atoi(mid); err == nil && k > 0 && strconv.Itoa(k) == mid {
				chunks = append(chunks, k)
			}
		}
		switch {
		case single != "" && len(chunks) > 0:
			return nil, fmt.Errorf("data directory %s holds both %s and %s.<K>.parquet chunks: which is table %s?",
				dir, single, name, name)
		case single != "":
			out = append(out, Table{Name: name, Paths: []string{filepath.Join(dir, single)}})
		case len(chunks) > 0:
			slices.Sort(chunks)
			for i, k := range chunks {
				if k != i+1 {
					return nil, fmt.Errorf("data directory %s: table %s has chunks %v: chunk %d is missing",
						dir, name, chunks, i+1)
				}
			}
			tf := Table{Name: name}
			for _, k := range chunks {
				tf.Paths = append(tf.Paths, filepath.Join(dir, name+"."+strconv.Itoa(k)+".parquet"))
			}
			out = append(out, tf)
		default:
			return nil, fmt.Errorf("data directory %s has no %s.parquet (generate it with "+
				"`go run ./cmd/dbt3 gen --format parquet --out %s`)", dir, name, dir)
		}
	}
	return out, nil
}

// ViewSQL returns the statement that exposes t to DuckDB as a view over read_parquet.
func ViewSQL(t Table) string {
	return "create view " + t.Name + " as select * from read_parquet([" + t.pathList() + "])"
}

// LoadSQL returns the statement that loads t into a DuckDB table of its own (DuckDB's
// native storage, what a user who picks DuckDB queries).
func LoadSQL(t Table) string {
	return "create table " + t.Name + " as select * from read_parquet([" + t.pathList() + "])"
}

func (t Table) pathList() string {
	quoted := make([]string, len(t.Paths))
	for i, p := range t.Paths {
		quoted[i] = Quote(p)
	}
	return strings.Join(quoted, ", ")
}

// Quote quotes s as an SQL string literal.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// DuckDBType is the DuckDB type a column of SQL type t must have when read from the files
// dbt3 gen writes: money stays an exact DECIMAL(15,2), dates stay DATE.
func DuckDBType(t tpch.Type) string {
	switch t.Kind {
	case tpch.KindInt32:
		return "INTEGER"
	case tpch.KindInt64:
		return "BIGINT"
	case tpch.KindDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case tpch.KindDate:
		return "DATE"
	case tpch.KindChar, tpch.KindVarchar:
		return "VARCHAR"
	}
	return "?"
}

// CheckSchemas compares every view's columns, as DuckDB describes them, with the TPC-H schema
// and returns one line per table saying what DuckDB sees. A column with another name or type
// is an error: the queries' results would not be comparable.
func CheckSchemas(ctx context.Context, conn *sql.Conn, tables []Table) ([]string, error) {
	var lines []string
	var errs []error
	for _, tf := range tables {
		def, ok := tpch.LookupTable(tf.Name)
		if !ok {
			return nil, fmt.Errorf("no TPC-H table %q", tf.Name)
		}
		rows, err := conn.QueryContext(ctx,
			"select column_name, column_type from (describe "+tf.Name+")")
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", tf.Name, err)
		}
		var got [][2]string
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				rows.Close()
				return nil, fmt.Errorf("describe %s: %w", tf.Name, err)
			}
			got = append(got, [2]string{name, typ})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("describe %s: %w", tf.Name, err)
		}
		if len(got) != len(def.Columns) {
			errs = append(errs, fmt.Errorf("table %s: DuckDB sees %d columns in %s, the TPC-H schema has %d",
				tf.Name, len(got), strings.Join(tf.Paths, ", "), len(def.Columns)))
			continue
		}
		parts := make([]string, len(got))
		for i, c := range def.Columns {
			want := DuckDBType(c.Type)
			if got[i][0] != c.Name || got[i][1] != want {
				errs = append(errs, fmt.Errorf("table %s column %d: DuckDB sees %s %s, want %s %s (%s)",
					tf.Name, i+1, got[i][0], got[i][1], c.Name, want, c.Type.SQL()))
			}
			parts[i] = got[i][0] + " " + got[i][1]
		}
		lines = append(lines, tf.Name+": "+strings.Join(parts, ", "))
	}
	return lines, errors.Join(errs...)
}
