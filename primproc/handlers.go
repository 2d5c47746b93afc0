package primproc

import (
	"context"
	"time"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

func (d *Daemon) register() {
	d.handle(link.MethodEcho, link.Echo)
	d.srv.HandleUnary(link.MethodEcho, link.EchoUnary)
	d.handle(link.MethodSynth, link.Synth)
	d.handle(link.MethodStats, d.stats)
	d.srv.HandleUnary(link.MethodUsage, d.usage)
	d.handle(link.MethodLoad, d.needStore(d.load))
	d.handle(link.MethodCatalog, d.needStore(d.catalog))
	d.handle(link.MethodFragment, d.needStore(d.fragment))
	d.handle(link.MethodDropCache, d.needStore(d.dropCache))
	d.handle(link.MethodWrite, d.needStore(d.write))
	d.handle(link.MethodResolve, d.needStore(d.resolve))
	d.handle(link.MethodPin, d.needStore(d.pinSnapshot))
	d.handle(link.MethodUnpin, d.needStore(d.unpinSnapshots))
}

// handle registers h for method, counting its requests for stats.
func (d *Daemon) handle(method string, h ipc.Handler) {
	c := &methodCounter{}
	d.methods[method] = c
	d.srv.Handle(method, func(ctx context.Context, st *ipc.Stream) (err error) {
		c.calls.Add(1)
		c.active.Add(1)
		start := time.Now()
		returned := false
		defer func() {
			c.active.Add(-1)
			c.wallNs.Add(int64(time.Since(start)))
			if err != nil || !returned { // !returned: a panic, which the link turns into ERROR
				c.errors.Add(1)
			}
		}()
		err = h(ctx, st)
		returned = true
		return err
	})
}

// needStore wraps a data method: without a data directory it fails with "unavailable".
func (d *Daemon) needStore(h ipc.Handler) ipc.Handler {
	return func(ctx context.Context, st *ipc.Stream) error {
		if d.store == nil {
			return ipc.Errorf(ipc.CodeUnavailable, "%s: this primproc serves no data (started without a data directory)", st.Method())
		}
		return h(ctx, st)
	}
}
