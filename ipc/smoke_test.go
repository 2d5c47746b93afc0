package ipc

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func TestSmokeEchoAndGen(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "test"})
	for _, url := range []string{env.tcp, env.unix} {
		t.Run(url[:4], func(t *testing.T) {
			cl := newTestClient(t, url, ClientConfig{Transport: TransportAuto})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			args := mpAppendBin(nil, []byte("hello"))
			end, err := cl.Call(ctx, "echo", args)
			if err != nil {
				t.Fatal(err)
			}
			want := append(mpAppendStr(mpAppendMapHeader(nil, 1), "echo"), args...)
			if !bytes.Equal(end, want) {
				t.Fatalf("echo end %x, want %x", end, want)
			}
			st, err := cl.Open(ctx, "gen", mpMap("n", 5, "rows", 1000), true)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if rows := recvAll(t, st, nil); rows != 5000 {
				t.Fatalf("rows %d", rows)
			}
			t.Logf("end %x stats %+v", st.End(), cl.Stats())
		})
	}
}
