package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// TestOperators runs testdata/*: tables, and pipelines of operators over them with their
// expected output. Every pipeline runs with the input split into batches of several sizes
// (the output must not change), and every complete aggregation is re-run as partial
// aggregations over two halves of the input, merged and finalised (the result must equal
// the one-phase result). Some of the runs take their operators' arrays from a recycling
// pool that scribbles over what it gets back (as primproc's queries share one pool): a
// use of memory after it went back changes the output.
func TestOperators(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		tables := map[string]*vec.Table{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "table":
				tab, err := vec.ParseTable(d.Input)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				name := "t"
				d.MaybeScanArgs(t, "name", &name)
				tables[name] = tab
				return ""
			case "run":
				return runCase(t, d, tables)
			}
			t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
			return ""
		})
	})
}

func runCase(t *testing.T, d *datadriven.TestData, tables map[string]*vec.Table) string {
	ordered := d.HasArg("ordered")
	var budget int64
	d.MaybeScanArgs(t, "budget", &budget)
	var first string
	pool := vec.NewScribblingPool(0)
	for i, size := range []int{1000, 1, 2, 3, 7} {
		var p *vec.Pool
		if i%2 == 1 {
			p = pool
		}
		out := runPipeline(t, d, tables, size, budget, ordered, false, p)
		if i == 0 {
			first = out
			continue
		}
		if out != first {
			t.Errorf("%s: batches of %d rows give\n%s\nbut whole batches give\n%s", d.Pos, size, out, first)
		}
	}
	if strings.Contains(d.Input, "agg complete") && !strings.Contains(d.Input, "distinct") {
		for i, size := range []int{1000, 2} {
			var p *vec.Pool
			if i == 1 {
				p = pool
			}
			if out := runPipeline(t, d, tables, size, budget, ordered, true, p); out != first {
				t.Errorf("%s: partial+merge+final aggregation (batches of %d) gives\n%s\nbut complete gives\n%s", d.Pos, size, out, first)
			}
		}
	}
	return first
}

// tableSource yields a table's rows [start, end) in batches of size rows, each batch
// carrying a decoy row that its selection vector excludes.
func tableSource(tab *vec.Table, start, end, size int) Operator {
	var batches []*vec.Batch
	for s := start; s < end; s += size {
		e := min(s+size, end)
		b := vec.NewBatch(tab.Types)
		var sel []int32
		for r := s; r < e; r++ {
			if r == s {
				for c := range tab.Types {
					b.Cols[c].AppendDatum(tab.Rows[(r+1)%len(tab.Rows)][c])
				}
			}
			for c := range tab.Types {
				b.Cols[c].AppendDatum(tab.Rows[r][c])
			}
			sel = append(sel, int32(r-s+1))
		}
		b.N = e - s + 1
		b.Sel = sel
		batches = append(batches, b)
	}
	return NewBatchSource(tab.Types, batches...)
}

// splitExprs splits "(a b) #3 (c)" into s-expressions.
func splitExprs(s string) []string {
	var out []string
	depth, start := 0, -1
	inStr := false
	for i, c := range s {
		switch {
		case c == '\'':
			inStr = !inStr
			if start < 0 {
				start = i
			}
		case inStr:
		case c == '(':
			if depth == 0 && start < 0 {
				start = i
			}
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				out = append(out, s[start:i+1])
				start = -1
			}
		case c == ' ' && depth == 0:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			panic(err)
		}
		out = append(out, n)
	}
	return out
}

// parseAggs reads sum(2) count(*) avg(3) count(distinct:1) min(0).
func parseAggs(fields []string) (AggSpec, error) {
	var spec AggSpec
	for _, f := range fields {
		if g, ok := strings.CutPrefix(f, "group="); ok {
			spec.GroupBy = ints(g)
			continue
		}
		name, arg, ok := strings.Cut(strings.TrimSuffix(f, ")"), "(")
		if !ok {
			return spec, fmt.Errorf("bad aggregate %q", f)
		}
		a := Aggregate{Func: AggFunc(name)}
		if arg == "*" {
			a.Func = AggCountStar
		} else {
			if d, ok := strings.CutPrefix(arg, "distinct:"); ok {
				a.Distinct = true
				arg = d
			}
			n, err := strconv.Atoi(arg)
			if err != nil {
				return spec, fmt.Errorf("bad aggregate argument %q", f)
			}
			a.Col = n
		}
		spec.Aggs = append(spec.Aggs, a)
	}
	return spec, nil
}

func parseSortKeys(s string) []SortKey {
	var keys []SortKey
	for _, f := range strings.Split(s, ",") {
		desc := strings.HasPrefix(f, "-")
		n, _ := strconv.Atoi(strings.TrimPrefix(f, "-"))
		keys = append(keys, SortKey{Col: n, Desc: desc})
	}
	return keys
}

// runPipeline builds the case's operators over tables split into batches of size rows and
// returns the output table as text (rows sorted unless ordered). With twoPhase, the first
// "agg complete" step becomes partial aggregations over the two halves of the scanned
// table, a merge and a final aggregation. pool, if not nil, is the budget's pool.
func runPipeline(t *testing.T, d *datadriven.TestData, tables map[string]*vec.Table, size int, budgetLimit int64, ordered, twoPhase bool, pool *vec.Pool) string {
	budget := NewBudgetPool(budgetLimit, pool)
	lines := strings.Split(d.Input, "\n")
	var op Operator
	var names []string
	var err error
	if twoPhase {
		op, names, err = twoPhaseAgg(t, d, tables, lines, size, budget)
	} else {
		op, names, err = buildPipeline(t, d, tables, lines, size, budget, -1, false)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	out := formatOutput(t, op, names, ordered)
	if budget.Used() != 0 {
		t.Errorf("%s: %d bytes still charged to the budget after Close", d.Pos, budget.Used())
	}
	return out
}

// buildPipeline builds operators from the case's lines. half (0 or 1) scans only that half
// of the table; stopAtAgg builds the steps before the first aggregation and returns the
// remaining lines' position through the names slice (see twoPhaseAgg).
func buildPipeline(t *testing.T, d *datadriven.TestData, tables map[string]*vec.Table, lines []string, size int, budget *Budget, half int, stopAtAgg bool) (Operator, []string, error) {
	var op Operator
	var names []string // the current columns' names, for parsing expressions and output
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fields[0]))
		var err error
		switch fields[0] {
		case "scan":
			tab := tables[fields[1]]
			if tab == nil {
				t.Fatalf("%s: no table %s", d.Pos, fields[1])
			}
			lo, hi := 0, len(tab.Rows)
			switch half {
			case 0:
				hi = len(tab.Rows) / 2
			case 1:
				lo = len(tab.Rows) / 2
			}
			op = tableSource(tab, lo, hi, size)
			names = tab.Names
		case "filter":
			op, err = NewFilter(op, expr.MustParse(rest, names))
		case "project":
			var es []*expr.Expr
			var nn []string
			for k, s := range splitExprs(rest) {
				es = append(es, expr.MustParse(s, names))
				if strings.HasPrefix(s, "(") {
					nn = append(nn, fmt.Sprintf("p%d", k))
				} else {
					nn = append(nn, s)
				}
			}
			op, err = NewProject(op, es)
			names = nn
		case "agg":
			if stopAtAgg {
				return op, names, nil
			}
			spec, perr := parseAggs(fields[2:])
			if perr != nil {
				t.Fatalf("%s: %v", d.Pos, perr)
			}
			phase := map[string]AggPhase{"complete": AggComplete, "partial": AggPartial, "final": AggFinal, "merge": AggMerge}[fields[1]]
			op, err = NewHashAggregate(op, spec, phase, budget)
			if err == nil {
				names = aggNames(names, spec, op.Types())
			}
		case "join":
			// join KIND build=TABLE probe=0,1 keys=0,1 [mark=N] [residual=EXPR...]
			var spec JoinSpec
			spec.Kind = JoinKind(fields[1])
			var buildTab *vec.Table
			for i := 2; i < len(fields); i++ {
				k, v, _ := strings.Cut(fields[i], "=")
				switch k {
				case "build":
					buildTab = tables[v]
				case "probe":
					spec.ProbeKeys = ints(v)
				case "keys":
					spec.BuildKeys = ints(v)
				case "mark":
					spec.MarkKeys, _ = strconv.Atoi(v)
				case "residual":
					_, rs, _ := strings.Cut(line, "residual=")
					spec.Residual = expr.MustParse(rs, append(append([]string(nil), names...), buildTab.Names...))
					i = len(fields)
				}
			}
			build := tableSource(buildTab, 0, len(buildTab.Rows), size)
			op, err = NewHashJoin(op, []Operator{build}, buildTab.Types, spec, budget)
			switch spec.Kind {
			case JoinSemi, JoinAnti:
			case JoinMark:
				names = append(append([]string(nil), names...), "mark")
			default:
				names = append(append([]string(nil), names...), buildTab.Names...)
			}
		case "sort":
			op, err = NewSort(op, parseSortKeys(fields[1]), budget)
		case "topn":
			lim, _ := strconv.ParseInt(fields[2], 10, 64)
			off := int64(0)
			if len(fields) > 3 {
				off, _ = strconv.ParseInt(fields[3], 10, 64)
			}
			op, err = NewTopN(op, parseSortKeys(fields[1]), lim, off, budget)
		case "limit":
			lim, _ := strconv.ParseInt(fields[1], 10, 64)
			off := int64(0)
			if len(fields) > 2 {
				off, _ = strconv.ParseInt(fields[2], 10, 64)
			}
			op, err = NewLimit(op, lim, off)
		case "distinct":
			op = NewDistinct(op, budget)
		case "concat":
			tab := tables[fields[1]]
			op, err = NewConcat(op, tableSource(tab, 0, len(tab.Rows), size))
		case "materialize":
			// Through Arrow records and back, with a recycling allocator.
			mem := memory.NewCheckedAllocator(vec.NewPool(0))
			m := NewMaterializer(op, nil, 5, mem)
			op = NewSource(m, op.Types(), size)
			// Checked when the file's cases are done (they share one testing.T), so the
			// message says which case.
			t.Cleanup(func() {
				if mem.CurrentAlloc() != 0 {
					t.Errorf("%s: materialize left %d bytes allocated", d.Pos, mem.CurrentAlloc())
				}
				mem.AssertSize(t, 0)
			})
		default:
			t.Fatalf("%s: unknown operator %s", d.Pos, fields[0])
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return op, names, nil
}

// twoPhaseAgg runs the steps before the first aggregation over each half of the input,
// aggregates each partially, concatenates the partial states, merges and finalises them,
// then applies the steps after the aggregation.
func twoPhaseAgg(t *testing.T, d *datadriven.TestData, tables map[string]*vec.Table, lines []string, size int, budget *Budget) (Operator, []string, error) {
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "agg complete") })
	spec, err := parseAggs(strings.Fields(lines[at])[2:])
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var halves []Operator
	var names []string
	for h := 0; h < 2; h++ {
		op, nn, err := buildPipeline(t, d, tables, lines[:at+1], size, budget, h, true)
		if err != nil {
			return nil, nil, err
		}
		p, err := NewHashAggregate(op, spec, AggPartial, budget)
		if err != nil {
			return nil, nil, err
		}
		halves = append(halves, p)
		names = nn
	}
	cat, err := NewConcat(halves...)
	if err != nil {
		return nil, nil, err
	}
	merged, err := NewHashAggregate(cat, spec, AggMerge, budget)
	if err != nil {
		return nil, nil, err
	}
	final, err := NewParallelAggregate(merged, spec, AggFinal, 3, budget)
	if pa, ok := final.(*ParallelAggregate); ok {
		pa.minRows = 0    // deal even these small inputs out
		pa.radixShare = 0 // to workers that aggregate by partitions (every type, NULLs)
	}
	if err != nil {
		return nil, nil, err
	}
	if at+1 < len(lines) && strings.TrimSpace(strings.Join(lines[at+1:], "")) != "" {
		t.Fatalf("%s: the two-phase check supports nothing after the aggregation", d.Pos)
	}
	return final, aggNames(names, spec, final.Types()), nil
}

// aggNames names an aggregation's output columns: the group keys' names, then a0, a1, ...
func aggNames(in []string, spec AggSpec, types []vec.Type) []string {
	var out []string
	for _, c := range spec.GroupBy {
		out = append(out, in[c])
	}
	for len(out) < len(types) {
		out = append(out, fmt.Sprintf("a%d", len(out)-len(spec.GroupBy)))
	}
	return out
}

func formatOutput(t *testing.T, op Operator, names []string, ordered bool) string {
	if len(names) != len(op.Types()) {
		names = nil
	}
	tab, err := Collect(context.Background(), op, names)
	if errors.Is(err, ErrMemoryLimit) {
		// The details (bytes needed) depend on batch sizes.
		return "error: " + ErrMemoryLimit.Error()
	}
	if err != nil {
		return "error: " + err.Error()
	}
	s := tab.String()
	if ordered {
		return s
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	rows := lines[1:]
	slices.Sort(rows)
	return strings.Join(append(lines[:1], rows...), "\n")
}
