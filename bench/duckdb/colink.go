package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/measure"
)

// colinkSide runs the same queries on a running colink (an exemgr over primprocs holding
// the same data) within the DuckDB run, so that every ratio is taken in one run: in each
// round the two engines take turns query by query, the one that goes first alternating
// from query to query and from round to round (firstIsColink), so that drift in the
// machine's speed falls on both alike.
type colinkSide struct {
	conn     *dbt3.Conn
	measurer *dbt3.Measurer
	verifier *dbt3.Verifier
	version  string
}

// openColink connects to exemgr at addr and checks that it holds the data at scale sf
// (suppliers / 10 000, as describe computes DuckDB's). answersDir, if set, holds the
// reference answers every colink result is checked against.
func openColink(ctx context.Context, addr string, sf float64, qs []query, answersDir string) (*colinkSide, error) {
	conn, err := dbt3.Dial(ctx, addr, dbt3.DefaultDatabase)
	if err != nil {
		return nil, fmt.Errorf("colink at %s: %w", addr, err)
	}
	c := &colinkSide{conn: conn, measurer: &dbt3.Measurer{Conn: conn, Stats: true}, verifier: &dbt3.Verifier{}}
	res, _, err := conn.Exec(ctx, "select count(*) from supplier")
	if err == nil && (len(res.Rows) != 1 || len(res.Rows[0]) != 1) {
		err = fmt.Errorf("count(*) gave %d rows", len(res.Rows))
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("colink at %s: counting suppliers: %w", addr, err)
	}
	suppliers, err := strconv.ParseFloat(res.Rows[0][0], 64)
	if err != nil || suppliers/10000 != sf {
		conn.Close()
		return nil, fmt.Errorf("colink at %s holds %s suppliers, SF %g; DuckDB's files are SF %g: the engines must hold the same data",
			addr, res.Rows[0][0], suppliers/10000, sf)
	}
	if res, _, err := conn.Exec(ctx, "select @@version, @@version_comment"); err == nil && len(res.Rows) == 1 {
		c.version = strings.Join(res.Rows[0], " ")
	}
	if answersDir != "" {
		ref, err := dbt3.LoadReference(answersDir, c.dbt3Queries(qs))
		if err != nil {
			conn.Close()
			return nil, err
		}
		c.verifier.Reference = ref
	}
	return c, nil
}

// dbt3Queries are qs as colink runs them: the scripts as read, without DuckDB's adaptations.
func (c *colinkSide) dbt3Queries(qs []query) []dbt3.Query {
	out := make([]dbt3.Query, len(qs))
	for i, q := range qs {
		out[i] = dbt3.Query{Name: q.Name, Number: q.Number, Script: q.Script}
	}
	return out
}

func (c *colinkSide) close() { c.conn.Close() }

// run executes q on colink and returns its sample (System "colink"): elapsed, each
// daemon's CPU and context switches from SHOW QUERY STATS, and how the result was
// verified. A cold sample first empties the primprocs' caches (calFlushCache), as DuckDB's
// cold sample starts in a fresh instance.
func (c *colinkSide) run(ctx context.Context, q *query, cold bool) (measure.Sample, *answers.Table, error) {
	if cold {
		if err := c.conn.DropCache(ctx); err != nil {
			return measure.Sample{System: "colink", Query: q.Name, Error: err.Error()}, nil, err
		}
	}
	ex, err := c.measurer.Run(ctx, dbt3.Query{Name: q.Name, Number: q.Number, Script: q.Script})
	c.verifier.Verify(ex)
	ex.Sample.System = "colink"
	if err == nil && ex.Sample.Error != "" {
		err = fmt.Errorf("%s", ex.Sample.Error)
	}
	var res *answers.Table
	if ex.Result != nil {
		res = ex.Result.Answers()
	}
	return ex.Sample, res, err
}

// verifiedDuckDB is measure.Sample.Verified of a colink result that has no reference
// answer and equals DuckDB's result of the same query in the same round.
const verifiedDuckDB = "duckdb"

// checkAgainstDuckDB compares colink's result of a query that has no reference answer
// with DuckDB's of the same round, as dbt3's answer checker compares a result with an
// answer file (DuckDB's the expected one; the column names are not compared: the engines
// name an unaliased column each its own way, count(*) against count_star()). It marks s
// verified or sets its error and reports whether they agree.
func checkAgainstDuckDB(s *measure.Sample, colink *answers.Table, duck *table) bool {
	if s.Error != "" || s.Verified == dbt3.VerifiedReference || colink == nil || duck == nil {
		return true
	}
	want := &answers.Table{Columns: colink.Columns, Rows: duck.Rows}
	if len(duck.Columns) != len(colink.Columns) {
		want.Columns = duck.Columns
	}
	if err := answers.Compare(colink, want); err != nil {
		s.Error = "differs from DuckDB's result in the same round: " + err.Error()
		return false
	}
	s.Verified = verifiedDuckDB
	return true
}

// firstIsColink says which engine runs query i of round first: the order alternates from
// one query to the next and from one round to the next.
func firstIsColink(round, i int) bool { return (round+i)%2 == 1 }

// pairedRatio is colink's time over DuckDB's, per warm round in which both ran the
// query without error.
type pairedRatio struct {
	colink, duck []float64 // warm elapsed seconds, paired by round
	ratios       []float64
}

// pairedSummary writes the side-by-side table of a run that holds both engines' samples:
// per query the warm medians of each engine and the median [min–max] of the per-round
// ratios, and for the queries' total the per-round ratio of the sums with a 95 % bootstrap
// interval of its median (resampling rounds). Empty when the run has no colink samples.
func pairedSummary(run *measure.Run, qs []query) string {
	byQuery := map[string]*pairedRatio{}
	totals := map[int][2]float64{} // round → colink, DuckDB sums over queries that both ran
	complete := map[int]int{}      // round → queries both ran
	hasColink := false
	for _, q := range qs {
		p := &pairedRatio{}
		byQuery[q.Name] = p
		rounds := map[int][2]float64{}
		for _, s := range run.Samples {
			if s.Query != q.Name || s.Cold || s.Error != "" {
				continue
			}
			r := rounds[s.Round]
			switch s.System {
			case "colink":
				hasColink = true
				r[0] = s.Elapsed
			case "duckdb":
				r[1] = s.Elapsed
			}
			rounds[s.Round] = r
		}
		for _, round := range slices.Sorted(maps.Keys(rounds)) {
			r := rounds[round]
			if r[0] <= 0 || r[1] <= 0 {
				continue
			}
			p.colink, p.duck = append(p.colink, r[0]), append(p.duck, r[1])
			p.ratios = append(p.ratios, r[0]/r[1])
			t := totals[round]
			totals[round] = [2]float64{t[0] + r[0], t[1] + r[1]}
			complete[round]++
		}
	}
	if !hasColink {
		return ""
	}
	var b strings.Builder
	b.WriteString("\ncolink against DuckDB in the same run, warm rounds (the engines alternate query by query; ratio = colink / DuckDB elapsed, per round, then median [min–max])\n\n")
	b.WriteString("| query | colink warm elapsed | DuckDB warm elapsed | colink / DuckDB |\n|---|--:|--:|--:|\n")
	for _, q := range qs {
		p := byQuery[q.Name]
		if len(p.ratios) == 0 {
			fmt.Fprintf(&b, "| %s | – | – | no paired round |\n", q.Name)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", q.Name, medianRange(p.colink, 3), medianRange(p.duck, 3), medianRange(p.ratios, 2))
	}
	var ratios []float64
	for _, round := range slices.Sorted(maps.Keys(totals)) {
		if complete[round] != len(qs) {
			continue // a round where a query failed on either side has no comparable total
		}
		t := totals[round]
		ratios = append(ratios, t[0]/t[1])
	}
	if len(ratios) > 0 {
		lo, hi := measure.BootstrapMedianCI(ratios, 0.95, 2000)
		fmt.Fprintf(&b, "| **total (%d queries)** | | | **%s**, 95 %% CI [%.2f–%.2f] (bootstrap of the median over %d rounds) |\n",
			len(qs), medianRange(ratios, 2), lo, hi, len(ratios))
		if len(ratios) < 5 {
			fmt.Fprintf(&b, "\n**Only %d warm rounds: too few for a stable interval; run with --runs 6 or more.**\n", len(ratios))
		}
	}
	return b.String()
}

// medianRange formats values as "median [min–max]" with prec decimals.
func medianRange(v []float64, prec int) string {
	s := slices.Sorted(slices.Values(v))
	f := "%." + strconv.Itoa(prec) + "f"
	if len(s) == 1 {
		return fmt.Sprintf(f, s[0])
	}
	return fmt.Sprintf(f+" ["+f+"–"+f+"]", median(s), s[0], s[len(s)-1])
}

// median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
