package expr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec/vec"
)

// TestDataDriven runs testdata/*: tables of inputs and expressions with their expected
// values. Besides the expected output, every expression is checked for the engine's
// invariants: the same values whatever the batch boundaries or selection vector, filters
// that agree with the boolean values (and with NOT), and msgpack and text round trips.
func TestDataDriven(t *testing.T) {
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
			case "eval":
				name := "t"
				d.MaybeScanArgs(t, "table", &name)
				tab := tables[name]
				if tab == nil {
					t.Fatalf("%s: no table %q", d.Pos, name)
				}
				var sb strings.Builder
				for _, line := range strings.Split(d.Input, "\n") {
					if strings.TrimSpace(line) == "" {
						continue
					}
					sb.WriteString(evalCase(t, d.Pos, tab, line) + "\n")
				}
				return sb.String()
			}
			t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
			return ""
		})
	})
}

func evalCase(t *testing.T, pos string, tab *vec.Table, src string) string {
	e, err := Parse(src, tab.Names)
	if err != nil {
		return src + " -> parse error: " + err.Error()
	}
	head := e.String()
	ev, err := Compile(e, tab.Types)
	if err != nil {
		return head + " -> error: " + err.Error()
	}
	vals, err := evalSplit(ev, tab, len(tab.Rows)+1, false)
	if err != nil {
		return head + " -> error: " + err.Error()
	}
	want := formatVals(vals)
	// Invariant: batch boundaries and selection vectors do not change values.
	for _, size := range []int{1, 2, 3} {
		for _, sel := range []bool{false, true} {
			got, err := evalSplit(ev, tab, size, sel)
			if err != nil {
				t.Errorf("%s: %s split %d sel %v: %v", pos, head, size, sel, err)
				continue
			}
			if g := formatVals(got); g != want {
				t.Errorf("%s: %s split %d sel %v: %s, whole: %s", pos, head, size, sel, g, want)
			}
		}
	}
	// Invariant: the serialized forms read back to the same expression.
	raw, err := msgpack.Marshal(e)
	if err != nil {
		t.Fatalf("%s: marshal: %v", pos, err)
	}
	var back Expr
	if err := msgpack.Unmarshal(raw, &back); err != nil || back.String() != head {
		t.Errorf("%s: msgpack round trip gave %s (%v)", pos, back.String(), err)
	}
	if re, err := Parse(head, nil); err != nil || re.String() != head {
		t.Errorf("%s: text round trip of %s gave %v (%v)", pos, head, re, err)
	}
	if ev.Type().ID == vec.Bool {
		checkFilter(t, pos, e, tab, vals, false)
		checkFilter(t, pos, Call(OpNot, e), tab, vals, true)
	}
	return fmt.Sprintf("%s -> %s: %s", head, ev.Type(), want)
}

// evalSplit evaluates over batches of size rows; with sel, each batch holds every row twice
// (original and a decoy) and a selection vector picks the originals.
func evalSplit(ev *Evaluator, tab *vec.Table, size int, sel bool) ([]vec.Datum, error) {
	var out []vec.Datum
	for start := 0; start < len(tab.Rows) || start == 0; start += size {
		end := min(start+size, len(tab.Rows))
		b, rows := batchOf(tab, start, end, sel)
		v, err := ev.Eval(context.Background(), b)
		if err != nil {
			return nil, err
		}
		for _, i := range rows {
			out = append(out, v.Datum(int(i)))
		}
		if end == len(tab.Rows) {
			break
		}
	}
	return out, nil
}

// batchOf builds a batch of rows [start, end); with sel the rows are interleaved with
// copies of the previous row and only the real ones are selected.
func batchOf(tab *vec.Table, start, end int, sel bool) (*vec.Batch, []int32) {
	if !sel {
		b := tab.Batch(start, end)
		rows := make([]int32, end-start)
		for i := range rows {
			rows[i] = int32(i)
		}
		return b, rows
	}
	b := vec.NewBatch(tab.Types)
	var rows []int32
	for r := start; r < end; r++ {
		decoy := tab.Rows[(r+len(tab.Rows)-1)%len(tab.Rows)]
		for c := range tab.Types {
			b.Cols[c].AppendDatum(decoy[c])
		}
		for c := range tab.Types {
			b.Cols[c].AppendDatum(tab.Rows[r][c])
		}
		rows = append(rows, int32(2*(r-start)+1))
	}
	b.N = 2 * (end - start)
	b.Sel = rows
	if len(rows) == 0 {
		b.Sel = []int32{}
	}
	return b, rows
}

func formatVals(vals []vec.Datum) string {
	parts := make([]string, len(vals))
	for i, d := range vals {
		parts[i] = vec.FormatCell(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkFilter verifies that the filter of e keeps exactly the rows whose value is TRUE (or,
// for NOT e, whose value of e is FALSE), over whole and split batches.
func checkFilter(t *testing.T, pos string, e *Expr, tab *vec.Table, vals []vec.Datum, negated bool) {
	f, err := CompileFilter(e, tab.Types)
	if err != nil {
		t.Errorf("%s: filter %s: %v", pos, e, err)
		return
	}
	var want []int
	for i, d := range vals {
		if !d.Null && d.Bool() != negated {
			want = append(want, i)
		}
	}
	for _, size := range []int{len(tab.Rows) + 1, 1, 2, 3} {
		for _, sel := range []bool{false, true} {
			var got []int
			for start := 0; start < len(tab.Rows); start += size {
				end := min(start+size, len(tab.Rows))
				b, rows := batchOf(tab, start, end, sel)
				kept, err := f.Select(context.Background(), b)
				if err != nil {
					t.Errorf("%s: filter %s: %v", pos, e, err)
					return
				}
				if kept == nil {
					kept = rows
				}
				for _, k := range kept {
					idx := slices.Index(rows, k)
					if idx < 0 {
						t.Errorf("%s: filter %s kept unselected row %d", pos, e, k)
						return
					}
					got = append(got, start+idx)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: filter %s (split %d, sel %v) kept %v, values say %v", pos, e, size, sel, got, want)
			}
		}
	}
}

// TestOutOfRangeNamesText checks that an out-of-range error names a node's Text (the SQL
// text the planner attached), and the IR form when the node has none; the Text survives
// the msgpack form that fragments travel in.
func TestOutOfRangeNamesText(t *testing.T) {
	tab, err := vec.ParseTable("a:int64 b:double\n9223372036854775807 | 1e308")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src, text, want string
	}{
		{"(+ a 1)", "", "BIGINT value is out of range in '(+ #0 1)'"},
		{"(+ a 1)", "(o_orderkey + 1)", "BIGINT value is out of range in '(o_orderkey + 1)'"},
		{"(neg (+ a 1))", "-((o_orderkey + 1))", "BIGINT value is out of range in '(+ #0 1)'"},
		{"(* b 10)", "(x * 10)", "DOUBLE value is out of range in '(x * 10)'"},
		{"(exp (* b 10))", "exp(x)", "DOUBLE value is out of range in '(* #1 10)'"},
		{"(pow b 2)", "pow(x, 2)", "DOUBLE value is out of range in 'pow(x, 2)'"},
	} {
		e, err := Parse(c.src, tab.Names)
		if err != nil {
			t.Fatal(err)
		}
		e.Text = c.text
		raw, err := msgpack.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Expr
		if err := msgpack.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		ev, err := Compile(&back, tab.Types)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		_, err = evalSplit(ev, tab, 1, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with text %q: got %v, want %s", c.src, c.text, err, c.want)
		}
	}
}
