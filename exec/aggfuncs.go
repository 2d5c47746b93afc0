package exec

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"

	"github.com/colinkdb/colink/exec/vec"
)

// AggFunc names an aggregate function. The spellings are part of the serialized forms.
type AggFunc string

// The aggregate functions.
const (
	AggCountStar AggFunc = "count_star" // COUNT(*)
	AggCount     AggFunc = "count"      // COUNT(x): non-NULL values
	AggSum       AggFunc = "sum"
	AggAvg       AggFunc = "avg"
	AggMin       AggFunc = "min"
	AggMax       AggFunc = "max"
	// AggGroupConcat is GROUP_CONCAT of a string column: each group's non-NULL values in
	// the order they arrive, joined by Sep and cut at MaxLen bytes. It has no partial state:
	// it runs in the complete phase only.
	AggGroupConcat AggFunc = "group_concat"
)

// Aggregate is one aggregate of an aggregation: Func over input column Col (ignored by
// count_star), over distinct values when Distinct.
type Aggregate struct {
	Func     AggFunc `msgpack:"func"`
	Col      int     `msgpack:"col"`
	Distinct bool    `msgpack:"distinct,omitempty"`
	Sep      string  `msgpack:"sep,omitempty"`     // group_concat's separator
	MaxLen   int64   `msgpack:"max_len,omitempty"` // group_concat's bound in bytes (0: 1024)
}

// aggTypes returns an aggregate's partial-state types and final type for an input type.
//
//	count, count_star   state int64                      result int64
//	sum   integer       state decimal(38,0)               result decimal(38,0) (MySQL: DECIMAL)
//	sum   decimal(p,s)  state decimal(38,s)               result decimal(38,s)
//	sum   double        state double                      result double
//	avg   integer/dec   state sum as above + count int64  result decimal(38, s+4)
//	avg   double        state double + count int64        result double
//	min/max             state = result = the input type (not bool)
func aggTypes(a Aggregate, in vec.Type) (state []vec.Type, result vec.Type, err error) {
	switch a.Func {
	case AggCountStar, AggCount:
		return []vec.Type{vec.Int64Type}, vec.Int64Type, nil
	case AggSum, AggAvg:
		var sum vec.Type
		switch {
		case in.ID == vec.Float64:
			sum = vec.Float64Type
		case in.IsInteger() || in.IsDecimal():
			sum = vec.Decimal(vec.MaxPrecision, in.DecimalScale())
		default:
			return nil, vec.Type{}, fmt.Errorf("%s of %s", a.Func, in)
		}
		if a.Func == AggSum {
			return []vec.Type{sum}, sum, nil
		}
		res := vec.Float64Type
		if sum.ID != vec.Float64 {
			res = vec.Decimal(vec.MaxPrecision, min(sum.Scale+4, vec.MaxScale))
		}
		return []vec.Type{sum, vec.Int64Type}, res, nil
	case AggMin, AggMax:
		if in.ID == vec.Bool || in.ID == vec.Invalid {
			return nil, vec.Type{}, fmt.Errorf("%s of %s", a.Func, in)
		}
		return []vec.Type{in}, in, nil
	case AggGroupConcat:
		if in.ID != vec.String {
			return nil, vec.Type{}, fmt.Errorf("%s of %s (want a string)", a.Func, in)
		}
		return []vec.Type{in}, in, nil
	}
	return nil, vec.Type{}, fmt.Errorf("unknown aggregate %q", a.Func)
}

// aggFn accumulates one aggregate for every group. rows list the batch positions to
// consume (for add: non-NULL input values only); gids[i] is row i's group. Its per-group
// state arrays come from the pool resize is given (nil: the Go heap); release gives them
// back, after which the aggregate must not be used.
type aggFn interface {
	resize(p *vec.Pool, groups int)
	release(p *vec.Pool)
	add(v *vec.Vec, rows []int32, gids []int32) error
	merge(states []*vec.Vec, rows []int32, gids []int32) error
	partial(out []*vec.Vec, start, end int) error
	final(out *vec.Vec, start, end int) error
	memSize() int64
}

func newAggFn(a Aggregate, in vec.Type) (aggFn, error) {
	state, result, err := aggTypes(a, in)
	if err != nil {
		return nil, err
	}
	switch a.Func {
	case AggCountStar, AggCount:
		return &countFn{}, nil
	case AggSum, AggAvg:
		avg := a.Func == AggAvg
		if state[0].ID == vec.Float64 {
			return &sumFloatFn{avg: avg}, nil
		}
		return &sumDecFn{avg: avg, state: state[0], result: result}, nil
	case AggGroupConcat:
		maxLen := a.MaxLen
		if maxLen <= 0 {
			maxLen = 1024
		}
		return &groupConcatFn{sep: []byte(a.Sep), maxLen: int(maxLen)}, nil
	case AggMin, AggMax:
		isMax := a.Func == AggMax
		switch in.ID {
		case vec.Int32, vec.Date32:
			return &minMaxFn[int32]{isMax: isMax, t: in, get: func(v *vec.Vec) []int32 { return v.I32 },
				put: func(v *vec.Vec) []int32 { return v.I32 }}, nil
		case vec.Int64, vec.Decimal64, vec.Datetime:
			return &minMaxFn[int64]{isMax: isMax, t: in, get: func(v *vec.Vec) []int64 { return v.I64 },
				put: func(v *vec.Vec) []int64 { return v.I64 }}, nil
		case vec.Float64:
			return &minMaxFn[float64]{isMax: isMax, t: in, get: func(v *vec.Vec) []float64 { return v.F64 },
				put: func(v *vec.Vec) []float64 { return v.F64 }}, nil
		case vec.Decimal128:
			return &minMax128Fn{isMax: isMax, t: in}, nil
		case vec.String:
			return &minMaxStrFn{isMax: isMax}, nil
		}
	}
	return nil, fmt.Errorf("%s of %s is not supported", a.Func, in)
}

func growTo[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	if cap(s) >= n {
		return s[:n]
	}
	ns := make([]T, n, max(n, 2*cap(s), 16))
	copy(ns, s)
	return ns
}

// countFn is COUNT(*) and COUNT(x) (the caller passes only non-NULL rows for COUNT(x)).
type countFn struct{ counts []int64 }

func (f *countFn) resize(p *vec.Pool, n int) { f.counts = vec.GrowSlice(p, f.counts, n) }
func (f *countFn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.counts)
	f.counts = nil
}
func (f *countFn) add(v *vec.Vec, rows []int32, gids []int32) error {
	c := f.counts
	for _, i := range rows {
		c[gids[i]]++
	}
	return nil
}
func (f *countFn) addRuns(v *vec.Vec, rows []int32, runs []groupRun) error {
	for _, r := range runs {
		f.counts[r.g] += int64(r.end - r.start)
	}
	return nil
}

func (f *countFn) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	c, x := f.counts, st[0]
	for _, i := range rows {
		if !x.IsNull(int(i)) {
			c[gids[i]] += x.I64[i]
		}
	}
	return nil
}
func (f *countFn) partial(out []*vec.Vec, start, end int) error {
	return f.final(out[0], start, end)
}
func (f *countFn) final(out *vec.Vec, start, end int) error {
	out.Prepare(vec.Int64Type, end-start)
	copy(out.I64, f.counts[start:end])
	return nil
}
func (f *countFn) memSize() int64 { return int64(cap(f.counts)) * 8 }

// sumDecFn is SUM and AVG of integers and decimals: exact 128-bit sums (a 38-digit result
// is checked when emitted), plus a count for AVG.
type sumDecFn struct {
	avg    bool
	state  vec.Type // decimal(38,s)
	result vec.Type
	sums   []vec.Int128
	counts []int64 // rows summed per group; 0 means the sum is NULL
}

func (f *sumDecFn) resize(p *vec.Pool, n int) {
	f.sums = vec.GrowSlice(p, f.sums, n)
	f.counts = vec.GrowSlice(p, f.counts, n)
}

func (f *sumDecFn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.sums)
	vec.FreeSlice(p, f.counts)
	f.sums, f.counts = nil, nil
}

var errSumOverflow = vec.OutOfRange("DECIMAL", "SUM")

func (f *sumDecFn) add(v *vec.Vec, rows []int32, gids []int32) error {
	s, c := f.sums, f.counts
	ok := true
	switch v.Type.ID {
	case vec.Int32:
		x := v.I32
		for _, i := range rows {
			g := gids[i]
			var k bool
			s[g], k = s[g].AddInt64(int64(x[i]))
			ok = ok && k
			c[g]++
		}
	case vec.Int64, vec.Decimal64:
		x := v.I64
		for _, i := range rows {
			g := gids[i]
			var k bool
			s[g], k = s[g].AddInt64(x[i])
			ok = ok && k
			c[g]++
		}
	case vec.Decimal128:
		x := v.D128
		for _, i := range rows {
			g := gids[i]
			var k bool
			s[g], k = s[g].Add(x[i])
			ok = ok && k
			c[g]++
		}
	}
	if !ok {
		return errSumOverflow
	}
	return nil
}

// addRuns sums each run in registers. Summing at most 2^31 int64 values cannot overflow
// 128 bits, so only the addition to the group's state is checked.
func (f *sumDecFn) addRuns(v *vec.Vec, rows []int32, runs []groupRun) error {
	ok := true
	switch v.Type.ID {
	case vec.Int32:
		x := v.I32
		for _, r := range runs {
			var lo uint64
			var hi int64
			for _, i := range rows[r.start:r.end] {
				var c uint64
				lo, c = bits.Add64(lo, uint64(int64(x[i])), 0)
				hi += int64(x[i])>>63 + int64(c)
			}
			var k bool
			f.sums[r.g], k = f.sums[r.g].Add(vec.Int128{Lo: lo, Hi: hi})
			ok = ok && k
			f.counts[r.g] += int64(r.end - r.start)
		}
	case vec.Int64, vec.Decimal64:
		x := v.I64
		for _, r := range runs {
			var lo uint64
			var hi int64
			for _, i := range rows[r.start:r.end] {
				var c uint64
				lo, c = bits.Add64(lo, uint64(x[i]), 0)
				hi += x[i]>>63 + int64(c)
			}
			var k bool
			f.sums[r.g], k = f.sums[r.g].Add(vec.Int128{Lo: lo, Hi: hi})
			ok = ok && k
			f.counts[r.g] += int64(r.end - r.start)
		}
	case vec.Decimal128:
		x := v.D128
		for _, r := range runs {
			acc := f.sums[r.g]
			for _, i := range rows[r.start:r.end] {
				var k bool
				acc, k = acc.Add(x[i])
				ok = ok && k
			}
			f.sums[r.g] = acc
			f.counts[r.g] += int64(r.end - r.start)
		}
	}
	if !ok {
		return errSumOverflow
	}
	return nil
}

func (f *sumDecFn) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	s, c := f.sums, f.counts
	x := st[0]
	ok := true
	for _, i := range rows {
		if x.IsNull(int(i)) {
			continue
		}
		g := gids[i]
		var k bool
		s[g], k = s[g].Add(x.D128[i])
		ok = ok && k
		if f.avg {
			c[g] += st[1].I64[i]
		} else {
			c[g]++
		}
	}
	if !ok {
		return errSumOverflow
	}
	return nil
}

func (f *sumDecFn) partial(out []*vec.Vec, start, end int) error {
	n := end - start
	o := out[0]
	o.Prepare(f.state, n)
	var nl []bool
	for k := 0; k < n; k++ {
		g := start + k
		if f.counts[g] == 0 {
			if nl == nil {
				nl = o.PrepareNulls(n)
			}
			nl[k] = true
			o.D128[k] = vec.Int128{}
			continue
		}
		if !f.sums[g].FitsPrecision(vec.MaxPrecision) {
			return errSumOverflow
		}
		o.D128[k] = f.sums[g]
	}
	if f.avg {
		out[1].Prepare(vec.Int64Type, n)
		copy(out[1].I64, f.counts[start:end])
	}
	return nil
}

func (f *sumDecFn) final(o *vec.Vec, start, end int) error {
	if !f.avg {
		return f.partial([]*vec.Vec{o}, start, end)
	}
	n := end - start
	o.Prepare(f.result, n)
	shift := vec.Pow10(f.result.Scale - f.state.Scale)
	var nl []bool
	for k := 0; k < n; k++ {
		g := start + k
		if f.counts[g] == 0 {
			if nl == nil {
				nl = o.PrepareNulls(n)
			}
			nl[k] = true
			continue
		}
		num, ok := f.sums[g].Mul(shift)
		var q vec.Int128
		if ok {
			q, ok = num.QuoRound(vec.I128(f.counts[g]))
		}
		if !ok || !q.FitsPrecision(vec.MaxPrecision) {
			return vec.OutOfRange("DECIMAL", "AVG")
		}
		o.D128[k] = q
	}
	return nil
}

func (f *sumDecFn) memSize() int64 { return int64(cap(f.sums))*16 + int64(cap(f.counts))*8 }

// sumFloatFn is SUM and AVG of doubles.
type sumFloatFn struct {
	avg    bool
	sums   []float64
	counts []int64
}

func (f *sumFloatFn) resize(p *vec.Pool, n int) {
	f.sums = vec.GrowSlice(p, f.sums, n)
	f.counts = vec.GrowSlice(p, f.counts, n)
}

func (f *sumFloatFn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.sums)
	vec.FreeSlice(p, f.counts)
	f.sums, f.counts = nil, nil
}

func (f *sumFloatFn) add(v *vec.Vec, rows []int32, gids []int32) error {
	s, c, x := f.sums, f.counts, v.F64
	for _, i := range rows {
		g := gids[i]
		s[g] += x[i]
		c[g]++
	}
	return nil
}

func (f *sumFloatFn) addRuns(v *vec.Vec, rows []int32, runs []groupRun) error {
	x := v.F64
	for _, r := range runs {
		acc := f.sums[r.g]
		for _, i := range rows[r.start:r.end] {
			acc += x[i]
		}
		f.sums[r.g] = acc
		f.counts[r.g] += int64(r.end - r.start)
	}
	return nil
}

func (f *sumFloatFn) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	s, c, x := f.sums, f.counts, st[0]
	for _, i := range rows {
		if x.IsNull(int(i)) {
			continue
		}
		g := gids[i]
		s[g] += x.F64[i]
		if f.avg {
			c[g] += st[1].I64[i]
		} else {
			c[g]++
		}
	}
	return nil
}

func (f *sumFloatFn) partial(out []*vec.Vec, start, end int) error {
	f.sumsTo(out[0], start, end)
	if f.avg {
		n := end - start
		out[1].Prepare(vec.Int64Type, n)
		copy(out[1].I64, f.counts[start:end])
	}
	return nil
}

// sumsTo writes groups [start,end)'s sums to o, NULL where a group saw no value.
func (f *sumFloatFn) sumsTo(o *vec.Vec, start, end int) {
	n := end - start
	o.Prepare(vec.Float64Type, n)
	copy(o.F64, f.sums[start:end])
	for k := 0; k < n; k++ {
		if f.counts[start+k] == 0 {
			if o.Nulls == nil {
				o.PrepareNulls(n)
			}
			o.Nulls[k] = true
		}
	}
}

// final has one output vector (AVG's result), not partial's two (sum and count).
func (f *sumFloatFn) final(o *vec.Vec, start, end int) error {
	f.sumsTo(o, start, end)
	if f.avg {
		for k := range o.F64 {
			if c := f.counts[start+k]; c > 0 {
				o.F64[k] /= float64(c)
			}
		}
	}
	return nil
}

func (f *sumFloatFn) memSize() int64 { return int64(cap(f.sums))*8 + int64(cap(f.counts))*8 }

// minMaxFn is MIN/MAX over a fixed-width ordered payload.
type minMaxFn[T int32 | int64 | float64] struct {
	isMax bool
	t     vec.Type
	get   func(*vec.Vec) []T
	put   func(*vec.Vec) []T
	vals  []T
	seen  []bool
	live  []int32 // merge's non-NULL rows
}

func (f *minMaxFn[T]) resize(p *vec.Pool, n int) {
	f.vals = vec.GrowSlice(p, f.vals, n)
	f.seen = vec.GrowSlice(p, f.seen, n)
}

func (f *minMaxFn[T]) release(p *vec.Pool) {
	vec.FreeSlice(p, f.vals)
	vec.FreeSlice(p, f.seen)
	f.vals, f.seen = nil, nil
}

func (f *minMaxFn[T]) add(v *vec.Vec, rows []int32, gids []int32) error {
	vals, seen, x := f.vals, f.seen, f.get(v)
	if f.isMax {
		for _, i := range rows {
			g := gids[i]
			if !seen[g] || x[i] > vals[g] {
				vals[g], seen[g] = x[i], true
			}
		}
	} else {
		for _, i := range rows {
			g := gids[i]
			if !seen[g] || x[i] < vals[g] {
				vals[g], seen[g] = x[i], true
			}
		}
	}
	return nil
}

func (f *minMaxFn[T]) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	return f.add(st[0], nonNullRows(st[0], rows, &f.live), gids)
}

// nonNullRows returns the rows where x is not NULL (rows itself when x has no NULLs),
// keeping the list in *scratch.
func nonNullRows(x *vec.Vec, rows []int32, scratch *[]int32) []int32 {
	if x.Nulls == nil {
		return rows
	}
	live := (*scratch)[:0]
	for _, i := range rows {
		if !x.Nulls[i] {
			live = append(live, i)
		}
	}
	*scratch = live
	return live
}

func (f *minMaxFn[T]) partial(out []*vec.Vec, start, end int) error {
	return f.final(out[0], start, end)
}

func (f *minMaxFn[T]) final(o *vec.Vec, start, end int) error {
	n := end - start
	o.Prepare(f.t, n)
	copy(f.put(o), f.vals[start:end])
	markUnseen(o, f.seen[start:end])
	return nil
}

// markUnseen makes row k of o NULL where seen[k] is false (a group without a value).
func markUnseen(o *vec.Vec, seen []bool) {
	for k, s := range seen {
		if !s {
			if o.Nulls == nil {
				o.PrepareNulls(len(seen))
			}
			o.Nulls[k] = true
		}
	}
}

func (f *minMaxFn[T]) memSize() int64 { return int64(cap(f.vals))*8 + int64(cap(f.seen)) }

// minMax128Fn is MIN/MAX of Decimal128.
type minMax128Fn struct {
	isMax bool
	t     vec.Type
	vals  []vec.Int128
	seen  []bool
	live  []int32 // merge's non-NULL rows
}

func (f *minMax128Fn) resize(p *vec.Pool, n int) {
	f.vals = vec.GrowSlice(p, f.vals, n)
	f.seen = vec.GrowSlice(p, f.seen, n)
}

func (f *minMax128Fn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.vals)
	vec.FreeSlice(p, f.seen)
	f.vals, f.seen = nil, nil
}

func (f *minMax128Fn) add(v *vec.Vec, rows []int32, gids []int32) error {
	for _, i := range rows {
		g := gids[i]
		x := v.D128[i]
		if !f.seen[g] || (f.isMax && f.vals[g].Less(x)) || (!f.isMax && x.Less(f.vals[g])) {
			f.vals[g], f.seen[g] = x, true
		}
	}
	return nil
}

func (f *minMax128Fn) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	return f.add(st[0], nonNullRows(st[0], rows, &f.live), gids)
}

func (f *minMax128Fn) partial(out []*vec.Vec, start, end int) error {
	return f.final(out[0], start, end)
}

func (f *minMax128Fn) final(o *vec.Vec, start, end int) error {
	n := end - start
	o.Prepare(f.t, n)
	copy(o.D128, f.vals[start:end])
	markUnseen(o, f.seen[start:end])
	return nil
}

func (f *minMax128Fn) memSize() int64 { return int64(cap(f.vals))*16 + int64(cap(f.seen)) }

// minMaxStrFn is MIN/MAX of strings (bytewise); each group keeps its own copy, reusing
// its capacity when the value changes.
type minMaxStrFn struct {
	isMax bool
	vals  [][]byte
	seen  []bool
	bytes int64
	live  []int32 // merge's non-NULL rows
}

// resize keeps the values (which hold pointers) on the Go heap.
func (f *minMaxStrFn) resize(p *vec.Pool, n int) {
	f.vals = growTo(f.vals, n)
	f.seen = vec.GrowSlice(p, f.seen, n)
}

func (f *minMaxStrFn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.seen)
	f.vals, f.seen = nil, nil
}

func (f *minMaxStrFn) add(v *vec.Vec, rows []int32, gids []int32) error {
	for _, i := range rows {
		g := gids[i]
		s := v.String(int(i))
		if f.seen[g] {
			c := bytes.Compare(s, f.vals[g])
			if (f.isMax && c <= 0) || (!f.isMax && c >= 0) {
				continue
			}
		}
		before := cap(f.vals[g])
		f.vals[g] = append(f.vals[g][:0], s...)
		f.bytes += int64(cap(f.vals[g]) - before)
		f.seen[g] = true
	}
	return nil
}

func (f *minMaxStrFn) merge(st []*vec.Vec, rows []int32, gids []int32) error {
	return f.add(st[0], nonNullRows(st[0], rows, &f.live), gids)
}

func (f *minMaxStrFn) partial(out []*vec.Vec, start, end int) error {
	return f.final(out[0], start, end)
}

func (f *minMaxStrFn) final(o *vec.Vec, start, end int) error {
	finalStrings(o, f.vals, f.seen, start, end)
	return nil
}

// finalStrings writes groups [start, end) of per-group strings into o, NULL where a group
// saw no value.
func finalStrings(o *vec.Vec, vals [][]byte, seen []bool, start, end int) {
	n := end - start
	o.Prepare(vec.StringType, n)
	for k := 0; k < n; k++ {
		g := start + k
		if !seen[g] {
			if o.Nulls == nil {
				o.PrepareNulls(n)
			}
			o.Nulls[k] = true
		} else {
			o.Bytes = append(o.Bytes, vals[g]...)
		}
		o.Offsets[k+1] = int32(len(o.Bytes))
	}
	o.FinishString()
}

func (f *minMaxStrFn) memSize() int64 { return int64(cap(f.vals))*24 + int64(cap(f.seen)) + f.bytes }

// groupConcatFn is GROUP_CONCAT: each group's values appended in arrival order, sep
// between them, the whole cut at maxLen bytes, on a character boundary (MySQL cuts at
// @@group_concat_max_len and warns; colink cuts silently). A group without values is NULL.
type groupConcatFn struct {
	sep    []byte
	maxLen int
	vals   [][]byte
	seen   []bool
	bytes  int64
}

var errGroupConcatPartial = errors.New("group_concat has no partial state: it aggregates in one complete phase")

func (f *groupConcatFn) resize(p *vec.Pool, n int) {
	f.vals = growTo(f.vals, n)
	f.seen = vec.GrowSlice(p, f.seen, n)
}

func (f *groupConcatFn) release(p *vec.Pool) {
	vec.FreeSlice(p, f.seen)
	f.vals, f.seen, f.bytes = nil, nil, 0
}

func (f *groupConcatFn) add(v *vec.Vec, rows []int32, gids []int32) error {
	for _, i := range rows {
		g := gids[i]
		cur := f.vals[g]
		if f.seen[g] {
			if len(cur) >= f.maxLen {
				continue
			}
			cur = append(cur, f.sep...)
		}
		before := cap(cur)
		cur = append(cur, v.String(int(i))...)
		if len(cur) > f.maxLen {
			cur = cur[:cutAt(cur, f.maxLen)]
		}
		f.bytes += int64(cap(cur) - before)
		f.vals[g], f.seen[g] = cur, true
	}
	return nil
}

// cutAt is the largest length at most n that ends s's prefix on a UTF-8 character
// boundary.
func cutAt(s []byte, n int) int {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

func (f *groupConcatFn) merge([]*vec.Vec, []int32, []int32) error { return errGroupConcatPartial }
func (f *groupConcatFn) partial([]*vec.Vec, int, int) error       { return errGroupConcatPartial }
func (f *groupConcatFn) memSize() int64                           { return int64(cap(f.vals))*24 + int64(cap(f.seen)) + f.bytes }
func (f *groupConcatFn) final(o *vec.Vec, start, end int) error {
	finalStrings(o, f.vals, f.seen, start, end)
	return nil
}
