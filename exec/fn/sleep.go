package fn

import (
	"context"
	"math"
	"time"

	"github.com/colinkdb/colink/exec/vec"
)

// codeWrongArguments is MySQL's ER_WRONG_ARGUMENTS, which strict mode raises for SLEEP(NULL)
// and a negative SLEEP.
const codeWrongArguments = 1210

// minSleep is the shortest wait SLEEP makes; MySQL returns at once below 10 µs too.
const minSleep = 0.00001

// sleepKernel is MySQL's SLEEP(seconds): for each row it waits that long and yields 0. It
// runs row by row, in order, like MySQL's (a query over n rows waits n times), and its wait
// ends early, with the context's cause as the error, when the evaluation's context is done
// (KILL QUERY, the client gone). A NULL or negative argument is error 1210, as in MySQL's
// strict mode (SLEEP is NeverNull: it sees those rows).
func sleepKernel(s *Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		x := args[0]
		ctx := s.Context()
		for _, r := range live {
			if x.IsNull(int(r)) || x.F64[r] < 0 || math.IsNaN(x.F64[r]) {
				return &vec.Error{Code: codeWrongArguments, SQLState: "HY000", Msg: "Incorrect arguments to sleep."}
			}
			if err := sleep(ctx, x.F64[r]); err != nil {
				return err
			}
			out.I64[r] = 0
		}
		return nil
	}
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
