package physical_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/physical"
)

// panickingRunner panics when asked to run a fragment, as a bug in a runner or in an
// operator a build side runs would.
type panickingRunner struct{}

func (panickingRunner) Run(context.Context, *exec.Fragment, [][]arrow.RecordBatch) ([]physical.Stream, error) {
	panic("runner exploded")
}

// TestBroadcastPanic checks that a panic while computing build sides on goroutines of their
// own (Threads > 1) fails the query with error 1105 and logs the stack, instead of killing
// the process.
func TestBroadcastPanic(t *testing.T) {
	ctx := context.Background()
	cat := catalog.TPCH("tpch")
	planner := &sql.Planner{Catalog: cat, Stats: catalog.TPCHMeasuredSF1(), Options: opt.Options{Primprocs: 2}}
	text, err := queries.Get(9) // its lineitem fragment probes two broadcasts
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := sql.NewParser().Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q, err := planner.Plan(ctx, env{}, stmts[0].(*sql.Query))
	if err != nil {
		t.Fatal(err)
	}
	p, err := physical.Build(q, physical.Options{Catalog: cat, Primprocs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(p.Explain(), "probing broadcast") < 2 {
		t.Fatalf("the plan probes fewer than two broadcasts:\n%s", p.Explain())
	}
	var log bytes.Buffer
	ctx = exec.ContextWithLogger(ctx, slog.New(slog.NewTextHandler(&log, nil)))
	res, err := p.Execute(ctx, panickingRunner{}, physical.ExecOptions{Threads: 2})
	if err == nil {
		_, err = res.ReadAll(ctx)
		res.Close()
	}
	var ve *vec.Error
	if !errors.As(err, &ve) || ve.Code != vec.CodeUnknown || !strings.Contains(ve.Msg, "runner exploded") || !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("error %v, want error 1105 naming the panic", err)
	}
	if strings.Contains(err.Error(), "goroutine") {
		t.Errorf("the client's message carries a stack: %v", err)
	}
	if !strings.Contains(log.String(), "stack=") || !strings.Contains(log.String(), "runner exploded") {
		t.Errorf("the log has no stack: %q", log.String())
	}
}
