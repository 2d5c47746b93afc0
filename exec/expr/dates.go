package expr

import (
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/civil"
)

// dateAddNode is DATE_ADD / DATE_SUB of an interval of one unit. A DATE plus years,
// months or days stays a DATE; anything else is computed, and returned, as a DATETIME.
type dateAddNode struct {
	d, n node
	unit string
	sub  bool
	to   vec.Type
	out  vec.Vec
	live []int32
}

func (n *dateAddNode) typ() vec.Type    { return n.to }
func (n *dateAddNode) children() []node { return []node{n.d, n.n} }

func (c *compiler) compileDateAdd(e *Expr) (node, error) {
	to, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	d, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	k, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	return &dateAddNode{d: convert(d, to), n: convert(k, vec.Int64Type), unit: e.Unit, sub: e.Op == OpDateSub, to: to}, nil
}

// microsPer is the length of a unit of fixed length in microseconds.
func microsPer(unit string) int64 {
	switch unit {
	case UnitDay:
		return civil.MicrosPerDay
	case UnitHour:
		return 3600 * civil.MicrosPerSecond
	case UnitMinute:
		return 60 * civil.MicrosPerSecond
	case UnitSecond:
		return civil.MicrosPerSecond
	}
	return 1
}

func (n *dateAddNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	d, err := n.d.eval(b, rows)
	if err != nil {
		return nil, err
	}
	k, err := n.n.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(n.to, b.N)
	live := nullRows(out, rows, b.N, &n.live, d, k)
	if n.to.ID == vec.Datetime {
		n.addToDatetimes(d, k, out, live, b.N)
		return out, nil
	}
	for _, i := range live {
		cnt := k.I64[i]
		if n.sub {
			cnt = -cnt
		}
		var r int32
		ok := true
		switch n.unit {
		case UnitDay:
			v := int64(d.I32[i]) + cnt
			ok = v >= int64(vec.MinDate) && v <= int64(vec.MaxDate)
			r = int32(v)
		case UnitMonth:
			r, ok = vec.AddMonths(d.I32[i], cnt)
		case UnitYear:
			if cnt > 10000 || cnt < -10000 {
				ok = false
			} else {
				r, ok = vec.AddMonths(d.I32[i], cnt*12)
			}
		}
		if !ok || r < vec.MinDate || r > vec.MaxDate {
			out.SetNull(b.N, i)
			continue
		}
		out.I32[i] = r
	}
	return out, nil
}

// addToDatetimes adds the intervals to datetimes: months and years move the day (clamped
// to the month's length) and keep the time of day; the units of fixed length add
// microseconds. A result outside 0001 … 9999 is NULL, as in MySQL.
func (n *dateAddNode) addToDatetimes(d, k, out *vec.Vec, live []int32, rows int) {
	// |cnt| beyond the range's span in a fixed unit always leaves it; below that the
	// product cannot overflow.
	per := microsPer(n.unit)
	span := (civil.MaxMicros - civil.MinMicros) / per
	for _, i := range live {
		cnt := k.I64[i]
		if n.sub {
			cnt = -cnt
		}
		us := d.I64[i]
		var r int64
		ok := true
		switch n.unit {
		case UnitMonth, UnitYear:
			if n.unit == UnitYear {
				if cnt > 10000 || cnt < -10000 {
					ok = false
				}
				cnt *= 12
			}
			days, tod := civil.SplitMicros(us)
			var nd int64
			if ok {
				nd, ok = civil.AddMonths(days, cnt)
			}
			r = nd*civil.MicrosPerDay + tod
		default:
			if cnt > span || cnt < -span {
				ok = false
			} else {
				r = us + cnt*per
			}
		}
		if !ok || !civil.MicrosInRange(r) {
			out.SetNull(rows, i)
			continue
		}
		out.I64[i] = r
	}
}
