package expr

import (
	"context"
	"math"
	"time"

	"github.com/colinkdb/colink/exec/vec"
)

// evalContext carries the context of the evaluation in progress to the nodes that wait
// (sleep). The Evaluator or Filter that owns them sets it for the length of each call; a
// compiled expression is used by one goroutine at a time, as its nodes' buffers are.
type evalContext struct {
	ctx context.Context
}

// codeWrongArguments is MySQL's ER_WRONG_ARGUMENTS, which strict mode raises for SLEEP(NULL)
// and a negative SLEEP.
const codeWrongArguments = 1210

// minSleep is the shortest wait SLEEP makes; MySQL returns at once below 10 µs too.
const minSleep = 0.00001

// sleepNode is MySQL's SLEEP(seconds): for each row it waits that long and yields 0. It is
// evaluated row by row, in order, like MySQL's (a query over n rows waits n times), and its
// wait ends early, with the context's cause as the error, when the evaluation's context is
// done (KILL QUERY, the client gone). A NULL or negative argument is error 1210, as in
// MySQL's strict mode. It has no children() on purpose: the compiler's fold must never run
// it at compile time, whatever its argument.
type sleepNode struct {
	x   node // seconds, as a double
	ec  *evalContext
	out vec.Vec
}

func (n *sleepNode) typ() vec.Type { return vec.Int64Type }

func (n *sleepNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	ctx := n.ec.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	n.out.Prepare(vec.Int64Type, b.N)
	for _, r := range rows {
		if x.IsNull(int(r)) || x.F64[r] < 0 || math.IsNaN(x.F64[r]) {
			return nil, &vec.Error{Code: codeWrongArguments, SQLState: "HY000", Msg: "Incorrect arguments to sleep."}
		}
		if err := sleep(ctx, x.F64[r]); err != nil {
			return nil, err
		}
		n.out.I64[r] = 0
	}
	return &n.out, nil
}

// sleep waits seconds unless ctx ends first, which it reports with its cause.
func sleep(ctx context.Context, seconds float64) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if seconds < minSleep {
		return nil
	}
	d := time.Duration(math.Min(seconds, float64(math.MaxInt64/int64(time.Second))) * float64(time.Second))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// compileSleep compiles SLEEP(seconds); the argument is read as a double.
func (c *compiler) compileSleep(e *Expr) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if c.ec == nil {
		c.ec = &evalContext{}
	}
	return &sleepNode{x: convert(x, vec.Float64Type), ec: c.ec}, nil
}
