package main

import (
	"context"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/load"
)

// runLoad implements "dbt3 load": TPC-H tables, generated in process or read from .tbl or
// Parquet files, streamed over the link into the primprocs.
func runLoad(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("load", out, "usage: dbt3 load (--sf F | --from DIR) --primproc EP [--primproc EP ...] [--tables t1,t2] [--transport tcp|unix|shm|auto]", `
Loads TPC-H tables into primprocs over the link, replacing each table atomically on every
primproc. With --sf the rows are generated in process (dbgen-identical, every core); with
--from they are read from DIR's .tbl files (dbgen's text: name.tbl or name.tbl.1, .2, ...)
or Parquet files (name.parquet or name.K.parquet, as "dbt3 gen --format parquet" writes).

Every table is cut into chunks of about --chunk-rows rows (default: the primprocs' segment
size), dealt round robin across the primprocs, the first chunk of the t-th table to
primproc t mod N: each primproc holds a share of every table and a table is the union of
the shares. That makes every join a primproc can do correct as long as its build side is
complete (exemgr gathers it from all primprocs and broadcasts it) and the probe side is
the primproc's share. lineitem is clustered by l_shipdate and orders by o_orderdate within
each segment (--cluster=false keeps dbgen's order).`)
	c := load.DefaultConfig()
	fs.StringVar(&c.SF, "sf", "", "scale factor to generate (as dbt3 gen's --sf)")
	fs.StringVar(&c.From, "from", "", "directory of .tbl or .parquet files to load instead of generating")
	fs.StringArrayVar(&c.Primprocs, "primproc", nil, "primproc endpoint URL, repeatable (tcp://host:port, unix:///path)")
	fs.StringSliceVar(&c.Tables, "tables", nil, "tables to load (default all eight; with --from, all found)")
	fs.StringVar(&c.Transport, "transport", c.Transport, "link transport: tcp, unix, shm or auto")
	fs.StringVar(&c.AuthTokenFile, "auth-token-file", "", "shared secret for TCP primprocs that require one")
	fs.Int64Var(&c.ChunkRows, "chunk-rows", 0, "rows per dealt chunk (default: the smallest segment size among the primprocs)")
	fs.IntVar(&c.Workers, "workers", 0, "chunks generated or parsed at once (default: GOMAXPROCS)")
	fs.BoolVar(&c.Cluster, "cluster", c.Cluster, "sort lineitem by l_shipdate and orders by o_orderdate within each segment")
	fs.DurationVar(&c.HeartbeatTimeout, "heartbeat-timeout", c.HeartbeatTimeout, "give up on a primproc silent for this long")
	fs.BoolVar(&c.Stats, "stats", false, "print wall and CPU time of dbt3 and of the primprocs at the end")
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	return load.Run(ctx, c, out)
}
