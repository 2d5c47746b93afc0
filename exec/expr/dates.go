package expr

import (
	"github.com/colinkdb/colink/exec/vec"
)

// dateAddNode is DATE_ADD / DATE_SUB with a DAY, MONTH or YEAR interval.
type dateAddNode struct {
	d, n node
	unit string
	sub  bool
	out  vec.Vec
	live []int32
}

func (n *dateAddNode) typ() vec.Type    { return vec.DateType }
func (n *dateAddNode) children() []node { return []node{n.d, n.n} }

func (c *compiler) compileDateAdd(e *Expr) (node, error) {
	if _, err := TypeOf(e, c.input); err != nil {
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
	return &dateAddNode{d: d, n: convert(k, vec.Int64Type), unit: e.Unit, sub: e.Op == OpDateSub}, nil
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
	out.Prepare(vec.DateType, b.N)
	live := nullRows(out, rows, b.N, &n.live, d, k)
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
