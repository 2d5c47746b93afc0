package main

import (
	"context"
	"unicode/utf8"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/load"
)

// runImport implements "dbt3 import": a user's Parquet or CSV files into a new table.
func runImport(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("import", out, "usage: dbt3 import --primproc EP [--primproc EP ...] --table NAME [--columns 'name type, ...'] [--header] [--replace] FILE ...", `
Imports Parquet or CSV files into a new table on the primprocs, with a progress bar: the
rows are cut into chunks dealt round robin across them, as dbt3 load deals TPC-H's, and
each primproc commits its share atomically (a failed import leaves nothing behind there).
The table is then queried, appended to (INSERT, LOAD DATA) and dropped like any other.

A Parquet file's schema gives the columns (integers, decimals up to 18 digits, doubles,
dates, strings, booleans); --columns declares them instead, by position, converting the
file's types. CSV files need --columns; an empty field is NULL, and a quoted field may hold
the separator but not a line break.`)
	c := load.DefaultConfig()
	var spec load.ImportSpec
	var comma string
	fs.StringVar(&spec.Table, "table", "", "name of the table to create")
	fs.StringVar(&spec.Columns, "columns", "", "the table's columns, 'name type [not null], ...' (int, bigint, decimal(p,s), double, date, datetime(fsp), char(n), varchar(n), text, boolean); required for CSV")
	fs.BoolVar(&spec.Header, "header", false, "CSV: each file's first line names the columns (skipped)")
	fs.StringVar(&comma, "delimiter", ",", "CSV: the field separator (one character)")
	fs.BoolVar(&spec.Replace, "replace", false, "replace a table of that name (without it an existing table is an error)")
	fs.StringArrayVar(&c.Primprocs, "primproc", nil, "primproc endpoint URL, repeatable (tcp://host:port, unix:///path)")
	fs.StringVar(&c.Transport, "transport", c.Transport, "link transport: tcp, unix, shm or auto")
	fs.StringVar(&c.AuthTokenFile, "auth-token-file", "", "shared secret for TCP primprocs that require one")
	fs.Int64Var(&c.ChunkRows, "chunk-rows", 0, "rows per dealt chunk (default: the smallest segment size among the primprocs)")
	fs.IntVar(&c.Workers, "workers", 0, "chunks read at once (default: GOMAXPROCS)")
	fs.BoolVar(&c.Stats, "stats", false, "print wall and CPU time of dbt3 and of the primprocs at the end")
	if err := parseFlagsAndArgs(fs, out, args); err != nil {
		return err
	}
	if utf8.RuneCountInString(comma) != 1 {
		return dbt3.Usagef("--delimiter %q: want one character", comma)
	}
	spec.Comma, _ = utf8.DecodeRuneInString(comma)
	spec.Files = fs.Args()
	return load.Import(ctx, c, spec, out)
}
