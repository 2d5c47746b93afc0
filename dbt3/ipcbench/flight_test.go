package ipcbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/colinkdb/colink/link"
)

// The Flight server, in this process, streams the synth batches a ticket asks for over tcp
// and unix, each whole (its rows) and none missing, batches larger than gRPC's default 4 MiB
// message limit included; a ticket that is not synth's arguments is refused.
func TestFlightStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan []string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- serveFlight(ctx, []string{"tcp://127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "f.sock")}, ready)
	}()
	var eps []string
	select {
	case eps = <-ready:
	case err := <-errc:
		t.Fatal(err)
	}
	if len(eps) != 2 || !strings.HasPrefix(eps[0], "tcp://") || !strings.HasPrefix(eps[1], "unix:///") {
		t.Fatalf("endpoints %v", eps)
	}
	a := link.SynthArgs{Rows: 70000} // about 5.3 MB a batch
	a.Defaults()
	for _, ep := range eps {
		cl, err := flight.NewClientWithMiddleware(flightTarget(ep), nil, nil,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(flightMaxMsg)))
		if err != nil {
			t.Fatal(err)
		}
		h := &hist{}
		n, err := flightStream(ctx, cl, a, 3, h)
		if err != nil || n != 3 || h.quantile(0.5) <= 0 {
			t.Errorf("%s: %d batches, p50 %v, %v", ep, n, h.quantile(0.5), err)
		}
		st, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte("not msgpack of synth's arguments")})
		if err == nil {
			_, err = st.Recv()
		}
		if err == nil || !strings.Contains(err.Error(), "InvalidArgument") {
			t.Errorf("%s: a bad ticket: %v", ep, err)
		}
		cl.Close()
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("server: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("server did not stop")
	}
}
