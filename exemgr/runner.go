package exemgr

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql/physical"
)

// linkRunner runs a statement's fragments on every primproc over the link: it implements
// physical.Runner. Each fragment opens one stream per primproc; the build sides go up the
// stream under the link's flow control (a goroutine per primproc, so one slow primproc does
// not hold the others back), and the output comes down it. Cancelling the statement's
// context, or closing a stream early, cancels the primproc's work.
type linkRunner struct {
	cl     link.Cluster
	memory int64  // the query's memory bound, passed to every primproc (0: the primproc's own)
	query  string // names the statement in primproc's debug log
	// pins, if not nil, are the snapshots each primproc runs the statement's fragments on
	// (per primproc, in cluster order).
	pins []uint64
}

// Run implements physical.Runner.
func (r *linkRunner) Run(ctx context.Context, frag *exec.Fragment, builds [][]arrow.RecordBatch) ([]physical.Stream, error) {
	if len(builds) != len(frag.Builds) {
		return nil, fmt.Errorf("fragment has %d build sides, %d were given", len(frag.Builds), len(builds))
	}
	schemas := make([]*arrow.Schema, len(frag.Builds))
	for i, b := range frag.Builds {
		if len(builds[i]) > 0 {
			schemas[i] = builds[i][0].Schema()
		} else {
			schemas[i] = vec.SchemaOf(nil, b.Types)
		}
	}
	args := &link.FragmentArgs{Fragment: *frag, MemoryLimit: r.memory, Query: r.query}
	out := make([]physical.Stream, 0, len(r.cl))
	fail := func(err error) ([]physical.Stream, error) {
		for _, s := range out {
			s.Close()
		}
		return nil, err
	}
	for i, c := range r.cl {
		args := args
		if i > 0 || r.pins != nil {
			a := *args // per primproc: its pin, and the tag of its row IDs
			a.Member = i
			if r.pins != nil {
				a.Pin = r.pins[i]
			}
			args = &a
		}
		fs, err := c.Fragment(ctx, args, schemas)
		if err != nil {
			return fail(err)
		}
		if len(frag.Builds) > 0 {
			fs.Upload(builds)
		}
		out = append(out, fs)
	}
	return out, nil
}
