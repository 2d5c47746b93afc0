package frontend_test

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exemgr/frontend"
)

// helloEngine answers every statement with one row, and knows one database.
type helloEngine struct{}

func (helloEngine) Query(ctx context.Context, s *frontend.Session, query string) (*frontend.Result, error) {
	if query != "select 'hello'" {
		return nil, frontend.Errorf(frontend.ErrParse, "You have an error in your SQL syntax near '%s'", query)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "hello", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("hello")
	return &frontend.Result{Rows: frontend.RecordRows(b.NewRecordBatch())}, nil
}

func (helloEngine) CheckDatabase(ctx context.Context, name string) error {
	if name != "tpch" {
		return frontend.Errorf(frontend.ErrBadDB, "Unknown database '%s'", name)
	}
	return nil
}

// A daemon serves MySQL clients until it is told to stop.
func ExampleServe() {
	cfg := frontend.DefaultConfig() // 127.0.0.1:4306, root without password from this machine
	cfg.Socket = "/tmp/colink-example.sock"
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := frontend.Serve(ctx, cfg, helloEngine{}); err != nil {
		panic(err)
	}
}
