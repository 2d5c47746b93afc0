package expr

import (
	"context"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
)

// funcNode computes a function of the registry (package fn), or DIV, with a kernel chosen
// once at compile time. A strict function's row is NULL where any argument is NULL and its
// kernel computes only the other rows; a NeverNull one's kernel sees every row.
type funcNode struct {
	t        vec.Type
	args     []node
	vals     []*vec.Vec
	kernel   fn.Kernel
	strict   bool
	volatile bool // never evaluated at compile time (fold)
	out      vec.Vec
	live     []int32
}

func (n *funcNode) typ() vec.Type { return n.t }

// children exposes the arguments to the compiler's fold, except a volatile function's: the
// fold must never run it at compile time, whatever its arguments.
func (n *funcNode) children() []node {
	if n.volatile {
		return nil
	}
	return n.args
}

func (n *funcNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	for k, a := range n.args {
		v, err := a.eval(b, rows)
		if err != nil {
			return nil, err
		}
		n.vals[k] = v
	}
	out := &n.out
	out.Prepare(n.t, b.N)
	live := rows
	if n.strict {
		live = nullRows(out, rows, b.N, &n.live, n.vals...)
	}
	if err := n.kernel(n.vals, out, live, b.N); err != nil {
		return nil, err
	}
	return out, nil
}

// funcArgs describes e's arguments, of types ts, to a typing rule.
func funcArgs(e *Expr, ts []vec.Type) []fn.Arg {
	args := make([]fn.Arg, len(e.Args))
	for i, a := range e.Args {
		args[i] = fn.Arg{Type: fn.Type{Type: ts[i]}}
		if a.IsConst() {
			args[i].Const = &a.Value
		}
	}
	return args
}

// funcOf returns the registry function that node e calls, with its signature over e's
// arguments (of types ts).
func funcOf(e *Expr, ts []vec.Type) (*fn.Func, fn.Sig, error) {
	op := string(e.Op)
	f, ok := fn.Member(op, e.Unit)
	args := funcArgs(e, ts)
	if !ok {
		// A family's arguments are checked before its unit.
		units := fn.Units(op)
		first, _ := fn.Member(op, units[0])
		if _, err := first.Sig(args); err != nil {
			return nil, fn.Sig{}, errorf(e, "%v", err)
		}
		return nil, fn.Sig{}, errorf(e, "%s unit %q is not %s", e.Op, e.Unit, orList(units))
	}
	if f == nil {
		return nil, fn.Sig{}, errorf(e, "unknown operation %q", e.Op)
	}
	sig, err := f.Sig(args)
	if err != nil {
		return nil, fn.Sig{}, errorf(e, "%v", err)
	}
	return f, sig, nil
}

// orList spells a list as "a, b or c".
func orList(s []string) string {
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}

// compileFunc compiles a call of a registry function: every argument is converted to the
// type its kernel reads (Sig.Args), a constant the kernel is built with is handed to it,
// and a strict function with a NULL constant argument is a NULL constant.
func (c *compiler) compileFunc(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	ts, err := argTypes(e, c.input)
	if err != nil {
		return nil, err
	}
	f, sig, err := funcOf(e, ts)
	if err != nil {
		return nil, err
	}
	if f.Strict() {
		for _, a := range e.Args {
			if a.IsNullConst() {
				return newConst(vec.NullDatum(t)), nil
			}
		}
	}
	site := &fn.Site{Sig: sig, Consts: make([]vec.Datum, len(e.Args)), Text: e.errorText}
	n := &funcNode{t: t, strict: f.Strict(), volatile: f.Volatile}
	for k, a := range e.Args {
		if sig.Args[k].ID == vec.Invalid {
			site.Consts[k] = a.Value // TypeOf checked that it is a constant
			continue
		}
		x, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, convert(x, sig.Args[k]))
	}
	if f.Volatile {
		if c.ec == nil {
			c.ec = &evalContext{}
		}
		site.Context = c.ec.context
	}
	n.vals = make([]*vec.Vec, len(n.args))
	n.kernel = f.Kernel(site)
	return n, nil
}

// evalContext carries the context of the evaluation in progress to the kernels of volatile
// functions (SLEEP waits). The Evaluator or Filter that owns them sets it for the length of
// each call; a compiled expression is used by one goroutine at a time, as its nodes'
// buffers are.
type evalContext struct {
	ctx context.Context
}

func (ec *evalContext) context() context.Context {
	if ec.ctx == nil {
		return context.Background()
	}
	return ec.ctx
}
