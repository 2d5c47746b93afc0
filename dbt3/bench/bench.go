package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/tpch"
)

// Bench is "dbt3 bench", the whole measurement on a fresh machine: it generates the TPC-H
// tables as Parquet (the files bench/duckdb reads too) into Data/sfF-parquet unless they are
// there, then runs Compare loading from them; a DuckDB run of the same scale is put beside
// colink unless cfg.DuckDB names one (DuckDBRuns: on its own tables if there is such a
// run, else over the Parquet files). cfg.From
// must be empty and cfg.Data set: Data is created if missing.
func Bench(ctx context.Context, cfg Config, out dbt3.Output) error {
	scale, err := tpch.ParseScale(cfg.SF)
	if err != nil {
		return dbt3.Usagef("--sf: %v", err)
	}
	// Check the other settings before generating anything.
	probe := cfg
	probe.Data = ""
	if _, err := probe.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return dbt3.Usagef("--data: %v", err)
	}
	genDir := filepath.Join(cfg.Data, "sf"+scale.String()+"-parquet")
	if missing := missingTables(genDir); len(missing) > 0 {
		fmt.Fprintf(out.Stderr, "dbt3 bench: generating SF %s into %s (missing: %s)\n", scale, genDir, strings.Join(missing, ", "))
		gen := dbt3.DefaultGenConfig()
		gen.SF, gen.Dir, gen.Format = scale.String(), genDir, "parquet"
		if err := dbt3.Generate(ctx, gen, out); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
	}
	cfg.From = genDir
	if cfg.DuckDB == "" {
		for _, p := range DuckDBRuns(scale.String()) {
			if dbt3.FileExists(p) {
				cfg.DuckDB = p
				break
			}
		}
	}
	return Compare(ctx, cfg, out)
}

// DuckDBRuns are the committed DuckDB runs bench puts beside colink at scale sf, in order of
// preference: DuckDB on its own tables (what a user who picks DuckDB runs), then DuckDB
// reading the Parquet files through views. The report says which storage the run used.
func DuckDBRuns(sf string) []string {
	return []string{
		filepath.Join("results", "duckdb-sf"+sf+"-native", "duckdb.json"),
		filepath.Join("results", "duckdb-sf"+sf, "duckdb.json"),
	}
}

// missingTables lists the tables without a Parquet file in dir.
func missingTables(dir string) []string {
	var out []string
	for _, t := range tpch.TableNames() {
		if !dbt3.FileExists(filepath.Join(dir, t+".parquet")) {
			out = append(out, t)
		}
	}
	return out
}
