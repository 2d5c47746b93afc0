package exec

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// Filter passes the rows of its input for which a predicate is TRUE, by narrowing the
// batch's selection vector (no rows are copied).
type Filter struct {
	input Operator
	f     *expr.Filter
	out   vec.Batch
}

// NewFilter compiles pred over the input's columns.
func NewFilter(input Operator, pred *expr.Expr) (*Filter, error) {
	f, err := expr.CompileFilter(pred, input.Types())
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return &Filter{input: input, f: f}, nil
}

// Types implements Operator.
func (f *Filter) Types() []vec.Type { return f.input.Types() }

// Init implements Operator.
func (f *Filter) Init(ctx context.Context) error { return f.input.Init(ctx) }

// Next implements Operator.
func (f *Filter) Next(ctx context.Context) (*vec.Batch, error) {
	for {
		b, err := f.input.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		sel, err := f.f.Select(ctx, b)
		if err != nil {
			return nil, err
		}
		if sel == nil || len(sel) == b.Len() {
			return b, nil // every row passes: keep the batch (and its density) as it is
		}
		if len(sel) == 0 {
			continue
		}
		f.out = vec.Batch{Cols: b.Cols, N: b.N, Sel: sel}
		return &f.out, nil
	}
}

// Close implements Operator.
func (f *Filter) Close() error { return f.input.Close() }

// Project computes expressions over its input; column references pass through without
// copying, and the input's selection vector is kept.
type Project struct {
	input Operator
	evs   []*expr.Evaluator
	types []vec.Type
	out   vec.Batch
}

// NewProject compiles exprs over the input's columns.
func NewProject(input Operator, exprs []*expr.Expr) (*Project, error) {
	p := &Project{input: input, out: vec.Batch{Cols: make([]*vec.Vec, len(exprs))}}
	for i, e := range exprs {
		ev, err := expr.Compile(e, input.Types())
		if err != nil {
			return nil, fmt.Errorf("project column %d: %w", i, err)
		}
		p.evs = append(p.evs, ev)
		p.types = append(p.types, ev.Type())
	}
	return p, nil
}

// Types implements Operator.
func (p *Project) Types() []vec.Type { return p.types }

// Init implements Operator.
func (p *Project) Init(ctx context.Context) error { return p.input.Init(ctx) }

// Next implements Operator.
func (p *Project) Next(ctx context.Context) (*vec.Batch, error) {
	b, err := p.input.Next(ctx)
	if err != nil || b == nil {
		return nil, err
	}
	for i, ev := range p.evs {
		v, err := ev.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		p.out.Cols[i] = v
	}
	p.out.N, p.out.Sel = b.N, b.Sel
	return &p.out, nil
}

// Close implements Operator.
func (p *Project) Close() error { return p.input.Close() }
