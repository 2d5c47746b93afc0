package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// verdict is what one oracle concluded about one query.
type verdict uint8

const (
	agree   verdict = iota
	differ          // a wrong answer (or an error where the reference has an answer)
	skipped         // not comparable: see the reason
)

// outcome is an oracle's verdict, why, and the answers behind it.
type outcome struct {
	// sig names the kind of a disagreement: "wrong answer", or the error colink gave where
	// it should have answered ("error 1105"). Reduction keeps it, so that it does not wander
	// to another failure (a predicate left naming a table the reduction removed, say).
	sig    string
	v      verdict
	reason string // for skipped: the counted reason; for differ: what differs
	// The two sides' answers (for a finding's file).
	left, right         *result
	leftName, rightName string
	leftErr, rightErr   error
}

// oracles runs the three checks on queries.
type oracles struct {
	colink, duck engine
}

// unsupported reports whether colink refused a query as outside its SQL (1235: not
// supported; 1064: a syntax colink's parser rejects), which the fuzzer counts, not reports.
func unsupported(err error) bool {
	c := colinkCode(err)
	return c == 1235 || c == 1064
}

// differential runs q on colink and on DuckDB and compares the answers: in order where the
// ORDER BY fixes it, else as multisets. A LIMIT without a total order has no one answer and
// is skipped.
func (o *oracles) differential(ctx context.Context, q *query) outcome {
	if q.limit > 0 && !q.totalOrder() {
		return outcome{v: skipped, reason: "no defined answer (LIMIT without a total order)"}
	}
	dres, derr := o.duck.query(ctx, q.sql(duckdbDialect))
	cres, cerr := o.colink.query(ctx, q.sql(mysqlDialect))
	out := outcome{left: cres, right: dres, leftName: "colink", rightName: "duckdb", leftErr: cerr, rightErr: derr}
	switch {
	case errors.Is(derr, context.DeadlineExceeded) || errors.Is(cerr, context.DeadlineExceeded):
		out.v, out.reason = skipped, "timeout"
	case errors.Is(derr, errTooLarge) || errors.Is(cerr, errTooLarge):
		out.v, out.reason = skipped, "result too large"
	case derr != nil:
		out.v, out.reason = skipped, "DuckDB rejects it: "+firstLine(derr.Error())
	case cerr != nil && unsupported(cerr):
		out.v, out.reason = skipped, "colink does not support it: "+firstLine(cerr.Error())
	case cerr != nil:
		out.v, out.reason, out.sig = differ, "colink fails where DuckDB answers: "+firstLine(cerr.Error()), errSig(cerr)
	default:
		if d := sameAnswer(cres, dres, q.orderKeys(), q.limit > 0); d != "" {
			out.v, out.reason, out.sig = differ, d, "wrong answer"
		}
	}
	return out
}

// colinkOnly runs queries on colink alone: the skip reasons of an error, or the results.
func (o *oracles) colinkOnly(ctx context.Context, texts ...string) ([]*result, string, error) {
	var out []*result
	for _, t := range texts {
		r, err := o.colink.query(ctx, t)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return nil, "timeout", nil
		case errors.Is(err, errTooLarge):
			return nil, "result too large", nil
		case err != nil && unsupported(err):
			return nil, "colink does not support it: " + firstLine(err.Error()), nil
		case err != nil:
			return nil, "", err
		}
		out = append(out, r)
	}
	return out, "", nil
}

// tlpApplies reports whether q's answer can be rebuilt from its three partitions: no LIMIT
// or HAVING, and in a grouped query only group keys and COUNT, SUM, MIN and MAX.
func tlpApplies(q *query) bool {
	if q.tlp == nil || q.limit > 0 || q.having != nil {
		return false
	}
	if !q.grouped {
		return true
	}
	keys := map[int]bool{}
	for _, g := range q.groupBy {
		keys[g] = true
	}
	for i, it := range q.items {
		if keys[i+1] {
			continue
		}
		a, ok := it.e.(*op)
		if !ok || !a.aggregate {
			return false
		}
		switch a.name {
		case "count(*)", "count", "sum", "min", "max":
		default:
			return false
		}
	}
	return true
}

// partitions returns q restricted to p, NOT p and p IS NULL, without ORDER BY.
func partitions(q *query) []*query {
	p := q.tlp
	var out []*query
	for _, part := range []expr{
		p,
		&op{name: "not", mysql: "(not %s)", args: []expr{p}, k: kBool},
		&op{name: "is null", mysql: "(%s is null)", args: []expr{p}, k: kBool},
	} {
		c := q.clone()
		c.where = and(q.where, part)
		c.orderBy = nil
		c.tlp = nil
		out = append(out, c)
	}
	return out
}

// tlp is SQLancer's ternary logic partitioning on colink alone: a query's answer equals the
// union of its answers under WHERE p, WHERE NOT p and WHERE p IS NULL (re-aggregated by
// group for COUNT, SUM, MIN and MAX; de-duplicated for DISTINCT).
// whole, if not nil, is colink's answer to q already at hand (from the differential oracle).
func (o *oracles) tlp(ctx context.Context, q *query, whole *result) outcome {
	if !tlpApplies(q) {
		return outcome{v: skipped, reason: "TLP does not apply"}
	}
	var texts []string
	if whole == nil {
		texts = append(texts, q.sql(mysqlDialect))
	}
	for _, p := range partitions(q) {
		texts = append(texts, p.sql(mysqlDialect))
	}
	rs, reason, err := o.colinkOnly(ctx, texts...)
	if err != nil {
		return outcome{v: differ, reason: "colink fails on the query or a partition: " + firstLine(err.Error()), sig: errSig(err),
			leftErr: err, leftName: "colink", rightName: "colink partitions"}
	}
	if reason != "" {
		return outcome{v: skipped, reason: reason}
	}
	if whole == nil {
		whole, rs = rs[0], rs[1:]
	}
	union := combine(q, whole.types, rs)
	out := outcome{left: whole, right: union, leftName: "colink", rightName: "colink, union of the TLP partitions"}
	if d := sameAnswer(whole, union, nil, false); d != "" {
		out.v, out.reason, out.sig = differ, d, "wrong answer"
	}
	return out
}

// combine unions the partitions' rows as tlp says.
func combine(q *query, types []string, parts []*result) *result {
	out := &result{types: types}
	cls := make([]colClass, len(types))
	for i, t := range types {
		cls[i] = classify(t)
	}
	if !q.grouped {
		seen := map[string]bool{}
		for _, p := range parts {
			for _, row := range p.rows {
				if q.distinct {
					k := sortKey(row, cls)
					if seen[k] {
						continue
					}
					seen[k] = true
				}
				out.rows = append(out.rows, row)
			}
		}
		return out
	}
	keyCol := map[int]bool{}
	for _, g := range q.groupBy {
		keyCol[g-1] = true
	}
	groups := map[string][]cell{}
	var order []string
	for _, p := range parts {
		for _, row := range p.rows {
			var kb strings.Builder
			for i, c := range row {
				if keyCol[i] {
					kb.WriteString(sortKey([]cell{c}, cls[i:i+1]))
					kb.WriteByte('|')
				}
			}
			k := kb.String()
			acc, ok := groups[k]
			if !ok {
				groups[k] = append([]cell(nil), row...)
				order = append(order, k)
				continue
			}
			for i, c := range row {
				if keyCol[i] {
					continue
				}
				acc[i] = fold(q.items[i].e.(*op).name, acc[i], c, cls[i])
			}
		}
	}
	for _, k := range order {
		out.rows = append(out.rows, groups[k])
	}
	return out
}

// fold combines two partial values of an aggregate.
func fold(name string, a, b cell, cl colClass) cell {
	if b.null {
		return a
	}
	if a.null {
		return b
	}
	switch name {
	case "count(*)", "count", "sum":
		if cl == classFloat {
			x, _ := strconv.ParseFloat(a.s, 64)
			y, _ := strconv.ParseFloat(b.s, 64)
			return cell{s: strconv.FormatFloat(x+y, 'g', -1, 64)}
		}
		x, ok1 := new(big.Rat).SetString(a.s)
		y, ok2 := new(big.Rat).SetString(b.s)
		if !ok1 || !ok2 {
			return cell{s: "unparsable " + a.s + " + " + b.s}
		}
		return cell{s: x.Add(x, y).RatString()}
	case "min", "max":
		c := compareCells(a, b, cl)
		if (name == "min") == (c <= 0) {
			return a
		}
		return b
	}
	return a
}

// compareCells orders two non-NULL values of a column.
func compareCells(a, b cell, cl colClass) int {
	switch cl {
	case classExact:
		x, ok1 := new(big.Rat).SetString(a.s)
		y, ok2 := new(big.Rat).SetString(b.s)
		if ok1 && ok2 {
			return x.Cmp(y)
		}
	case classFloat:
		x, err1 := strconv.ParseFloat(a.s, 64)
		y, err2 := strconv.ParseFloat(b.s, 64)
		if err1 == nil && err2 == nil {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a.s, b.s)
}

// norecQueries returns NoREC's pair for q's FROM and WHERE: the optimised form (COUNT(*)
// under WHERE p) and the unoptimised one (SUM of CASE WHEN p THEN 1 ELSE 0 END over every
// row), which must count alike.
func norecQueries(q *query) (*query, *query) {
	counted := &query{from: q.from, where: q.where, grouped: true,
		items: []selectItem{{e: &op{name: "count(*)", mysql: "count(*)", k: kInt, aggregate: true}}}}
	summed := &query{from: q.from, grouped: true,
		items: []selectItem{{e: &op{name: "sum", mysql: "sum(%s)", aggregate: true, k: kInt,
			args: []expr{&caseExpr{whens: []expr{q.where, &lit{text: "1", k: kInt}}, els: &lit{text: "0", k: kInt}, k: kInt}}}}}}
	return counted, summed
}

// norec is SQLancer's non-optimising reference engine construction on colink alone.
func (o *oracles) norec(ctx context.Context, q *query) outcome {
	if q.where == nil {
		return outcome{v: skipped, reason: "NoREC does not apply (no WHERE)"}
	}
	a, b := norecQueries(q)
	rs, reason, err := o.colinkOnly(ctx, a.sql(mysqlDialect), b.sql(mysqlDialect))
	if err != nil {
		return outcome{v: differ, reason: "colink fails on a NoREC form: " + firstLine(err.Error()), sig: errSig(err), leftErr: err, leftName: "colink"}
	}
	if reason != "" {
		return outcome{v: skipped, reason: reason}
	}
	count := func(r *result) string {
		if len(r.rows) != 1 || r.rows[0][0].null {
			return "0"
		}
		return r.rows[0][0].s
	}
	out := outcome{left: rs[0], right: rs[1], leftName: "colink count(*) where p", rightName: "colink sum(case when p then 1 else 0 end)"}
	if x, y := count(rs[0]), count(rs[1]); !cellsEqual(cell{s: x}, cell{s: y}, classExact) {
		out.v, out.reason, out.sig = differ, fmt.Sprintf("count %s against sum %s", x, y), "wrong answer"
	}
	return out
}

// errSig is an error's kind for reduction: its MySQL code, or its text's start.
func errSig(err error) string {
	if c := colinkCode(err); c != 0 {
		return fmt.Sprintf("error %d", c)
	}
	s := firstLine(err.Error())
	if len(s) > 40 {
		s = s[:40]
	}
	return "error " + s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
