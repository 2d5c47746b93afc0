package expr

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/colinkdb/colink/exec/vec"
)

// doubles is a batch of one double column holding vs (NaN for none: NULL).
func doubles(vs ...float64) *vec.Batch {
	col := &vec.Vec{Type: vec.Float64Type, F64: vs}
	for i, v := range vs {
		if math.IsNaN(v) {
			if col.Nulls == nil {
				col.Nulls = make([]bool, len(vs))
			}
			col.Nulls[i] = true
		}
	}
	return &vec.Batch{Cols: []*vec.Vec{col}, N: len(vs)}
}

// TestSleep: SLEEP waits its argument once per row, in order, and yields 0; it is never
// folded at compile time; a NULL or negative argument is error 1210; the evaluation's
// context ends a wait at once, with its cause.
func TestSleep(t *testing.T) {
	ctx := context.Background()
	ev, err := Compile(Call("sleep", ColRef(0)), []vec.Type{vec.Float64Type})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v, err := ev.Eval(ctx, doubles(0.03, 0, 0.03, 0.03))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took < 90*time.Millisecond {
		t.Errorf("three rows of SLEEP(0.03) took %v, want at least 90ms", took)
	}
	for i := range 4 {
		if v.IsNull(i) || v.I64[i] != 0 {
			t.Errorf("row %d: %v, want 0", i, v.Datum(i))
		}
	}

	// Over a constant: compiling does not run it, and it is not a constant.
	start = time.Now()
	cev, err := Compile(Call("sleep", Const(vec.Float64Datum(10))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cev.Constant(); ok || time.Since(start) > time.Second {
		t.Fatalf("SLEEP(10) folded at compile time (in %v)", time.Since(start))
	}

	for _, bad := range [][]float64{{-1}, {0, math.NaN()}} {
		_, err := ev.Eval(ctx, doubles(bad...))
		var ve *vec.Error
		if !errors.As(err, &ve) || ve.Code != 1210 || ve.Msg != "Incorrect arguments to sleep." {
			t.Errorf("SLEEP over %v: %v, want error 1210 'Incorrect arguments to sleep.'", bad, err)
		}
	}
	if _, err := Compile(Call("sleep", Const(vec.NullDatum(vec.Float64Type))), nil); err != nil {
		t.Errorf("SLEEP(NULL) does not compile: %v", err)
	}

	// A cancelled wait: the constant SLEEP(10) of a one-row batch, cancelled after 50ms.
	cause := errors.New("killed")
	cctx, cancel := context.WithCancelCause(ctx)
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	start = time.Now()
	_, err = cev.Eval(cctx, &vec.Batch{N: 1})
	if !errors.Is(err, cause) {
		t.Errorf("a cancelled SLEEP(10): %v, want the context's cause", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a cancelled SLEEP(10) returned after %v", took)
	}

	// In a filter too.
	f, err := CompileFilter(Call(OpEq, Call("sleep", Const(vec.Float64Datum(10))), Const(vec.Int64Datum(0))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Select(cctx, &vec.Batch{N: 1}); !errors.Is(err, cause) {
		t.Errorf("a filter's SLEEP(10) under a cancelled context: %v, want the context's cause", err)
	}
	sel, err := CompileFilter(Call(OpEq, Call("sleep", ColRef(0)), Const(vec.Int64Datum(0))), []vec.Type{vec.Float64Type})
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := sel.Select(ctx, doubles(0, 0.001)); err != nil || len(rows) != 2 {
		t.Errorf("SLEEP(x) = 0 kept %v, %v; want both rows", rows, err)
	}
}
