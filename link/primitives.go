package link

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/ipc"
)

// The link's own primitives, which every primproc serves (with or without data): the link
// benchmark (ipcbench) measures the transport with them.
const (
	// MethodEcho answers END {"echo": args}, sending uploaded batches straight back first.
	MethodEcho = "echo"
	// MethodSynth streams copies of a synthetic batch (SynthArgs).
	MethodSynth = "synth"
)

// Echo answers END {"echo": args}. Batches the client uploads are sent straight back first,
// so echo also exercises the client→server direction and both directions' flow control.
func Echo(ctx context.Context, st *ipc.Stream) error {
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		err = st.Send(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	args := st.Args()
	end := make([]byte, 0, 8+len(args))
	end = append(end, 0x81, 0xa4, 'e', 'c', 'h', 'o') // msgpack {"echo": ...}
	end = append(end, args...)
	return st.CloseSend(end)
}

// EchoUnary is Echo for a request without uploads: END {"echo": args}, inline.
func EchoUnary(ctx context.Context, args []byte) ([]byte, error) {
	end := make([]byte, 0, 8+len(args))
	end = append(end, 0x81, 0xa4, 'e', 'c', 'h', 'o') // msgpack {"echo": ...}
	return append(end, args...), nil
}

// SynthArgs are the arguments of the synth primitive.
type SynthArgs struct {
	Batches    int   `msgpack:"batches"`     // batches to send (default 1)
	Rows       int   `msgpack:"rows"`        // rows per batch (default 65536)
	Int64Cols  int   `msgpack:"int64_cols"`  // int64 columns (default 4)
	StringCols int   `msgpack:"string_cols"` // string columns (default 1)
	StringLen  int   `msgpack:"string_len"`  // bytes per string value (default 40)
	Dict       bool  `msgpack:"dict"`        // string columns dictionary-encoded
	DelayMS    int   `msgpack:"delay_ms"`    // pause before each batch (tests)
	Seed       int64 `msgpack:"seed"`
}

// Defaults fills unset fields with the benchmark's standard shape: 64k rows of 4 int64
// columns and one string column of about 40 bytes.
func (a *SynthArgs) Defaults() {
	if a.Batches == 0 {
		a.Batches = 1
	}
	if a.Rows == 0 {
		a.Rows = 65536
	}
	if a.Int64Cols == 0 && a.StringCols == 0 {
		a.Int64Cols, a.StringCols = 4, 1
	}
	if a.StringLen == 0 {
		a.StringLen = 40
	}
}

// Validate checks the arguments are within the primitive's bounds.
func (a *SynthArgs) Validate() error {
	switch {
	case a.Batches < 0 || a.Batches > 1<<30:
		return fmt.Errorf("batches %d outside 0..2^30", a.Batches)
	case a.Rows < 0 || a.Rows > 1<<24:
		return fmt.Errorf("rows %d outside 0..2^24", a.Rows)
	case a.Int64Cols < 0 || a.StringCols < 0 || a.Int64Cols+a.StringCols > 1024 || a.Int64Cols+a.StringCols == 0:
		return fmt.Errorf("%d int64 and %d string columns: want 1..1024 in all", a.Int64Cols, a.StringCols)
	case a.StringLen < 0 || a.StringLen > 1<<16:
		return fmt.Errorf("string_len %d outside 0..65536", a.StringLen)
	case a.DelayMS < 0 || a.DelayMS > 60000:
		return fmt.Errorf("delay_ms %d outside 0..60000", a.DelayMS)
	case int64(a.Rows)*int64(8*a.Int64Cols+(a.StringLen+4)*a.StringCols) > 512<<20:
		return fmt.Errorf("a batch of %d rows would exceed 512 MiB", a.Rows)
	}
	return nil
}

// SynthBatch builds the batch synth sends: column iK is int64 seed+row*(K+1), column sK
// holds strings of StringLen bytes cycling through 1024 distinct values.
func SynthBatch(mem memory.Allocator, a SynthArgs) arrow.RecordBatch {
	var fields []arrow.Field
	for k := range a.Int64Cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("i%d", k), Type: arrow.PrimitiveTypes.Int64})
	}
	strType := arrow.DataType(arrow.BinaryTypes.String)
	if a.Dict {
		strType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	}
	for k := range a.StringCols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("s%d", k), Type: strType})
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for k := range a.Int64Cols {
		ib := b.Field(k).(*array.Int64Builder)
		ib.Reserve(a.Rows)
		for r := range a.Rows {
			ib.UnsafeAppend(a.Seed + int64(r)*int64(k+1))
		}
	}
	vals := make([]string, 1024)
	for i := range vals {
		s := fmt.Sprintf("%08d-", i)
		for len(s) < a.StringLen {
			s += "colink-synthetic-"
		}
		vals[i] = s[:a.StringLen]
	}
	for k := range a.StringCols {
		switch sb := b.Field(a.Int64Cols + k).(type) {
		case *array.StringBuilder:
			sb.Reserve(a.Rows)
			sb.ReserveData(a.Rows * a.StringLen)
			for r := range a.Rows {
				sb.Append(vals[(r*7+k)%len(vals)])
			}
		case *array.BinaryDictionaryBuilder:
			for r := range a.Rows {
				_ = sb.AppendString(vals[(r*7+k)%len(vals)])
			}
		}
	}
	return b.NewRecordBatch()
}

// Synth streams Batches copies of one synthetic batch: the link's cost without the cost of
// making data.
func Synth(ctx context.Context, st *ipc.Stream) error {
	var a SynthArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	a.Defaults()
	if err := a.Validate(); err != nil {
		return ipc.Errorf(ipc.CodeInvalidArgument, "synth: %v", err)
	}
	rec := SynthBatch(memory.DefaultAllocator, a)
	defer rec.Release()
	if err := st.SendSchema(rec.Schema()); err != nil {
		return err
	}
	for i := 0; i < a.Batches; i++ {
		if a.DelayMS > 0 {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(time.Duration(a.DelayMS) * time.Millisecond):
			}
		}
		if err := st.Send(rec); err != nil {
			return err
		}
	}
	s := st.Stats()
	return st.CloseSendMap(map[string]any{
		"batches":         a.Batches,
		"rows":            int64(a.Batches) * int64(a.Rows),
		"bytes_out":       s.BytesOut,
		"credit_stall_ns": int64(s.CreditStall),
		"credit_waits":    s.CreditWaits,
	})
}
