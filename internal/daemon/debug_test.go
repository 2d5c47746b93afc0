package daemon

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestLoopbackAddr(t *testing.T) {
	for in, want := range map[string]string{
		":6060":          "127.0.0.1:6060",
		"6060":           "127.0.0.1:6060",
		"0.0.0.0:6060":   "0.0.0.0:6060",
		"[::1]:7":        "[::1]:7",
		"localhost:6061": "localhost:6061",
	} {
		got, err := LoopbackAddr("--debug-listen", in)
		if err != nil || got != want {
			t.Errorf("LoopbackAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := LoopbackAddr("--debug-listen", "no port"); err == nil {
		t.Error("DebugAddr accepted an address without a port")
	}
}

func TestServeDebug(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := ServeDebug(ctx, "127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "goroutine") {
		t.Errorf("GET /debug/pprof/: %d %q", resp.StatusCode, body)
	}
	if _, err := ServeDebug(ctx, addr.String(), slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a second listener on the same address did not fail")
	}
}

// TestBracketedCPUProfile: start and stop bracket one CPU profile; a second start while one
// runs, and a stop with none running, are refused.
func TestBracketedCPUProfile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := ServeDebug(ctx, "127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	post := func(what string) (int, []byte) {
		t.Helper()
		resp, err := http.Post("http://"+addr.String()+"/debug/colink/cpuprofile/"+what, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, _ := post("stop"); code != http.StatusConflict {
		t.Errorf("stop with no profile running: %d, want 409", code)
	}
	if code, b := post("start"); code != http.StatusNoContent {
		t.Fatalf("start: %d %s", code, b)
	}
	if code, _ := post("start"); code != http.StatusConflict {
		t.Errorf("a second start: %d, want 409", code)
	}
	for i := 0; i < 2e7; i++ { // a little CPU to profile
		_ = strings.Repeat("x", i%3)
	}
	code, prof := post("stop")
	if code != http.StatusOK || len(prof) < 2 || prof[0] != 0x1f || prof[1] != 0x8b {
		t.Fatalf("stop: %d, %d bytes; want a gzipped profile", code, len(prof))
	}
}
