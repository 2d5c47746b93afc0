package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// scrape fetches a metrics endpoint and returns each sample's value by its name and labels
// as the text format prints them ("colink_statements_total{status=\"ok\"}").
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("%s: unparsable sample %q", url, line)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the samples whose key starts with prefix and contains every one of labels.
func sum(m map[string]float64, prefix string, labels ...string) (float64, bool) {
	var total float64
	found := false
next:
	for k, v := range m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(k, l) {
				continue next
			}
		}
		total, found = total+v, true
	}
	return total, found
}

// TestMetricsEndpoints scrapes both daemons' --metrics-listen endpoints around a few
// statements over each transport and checks that the counters move with them: statements
// and errors by code in exemgr, the link's bytes and batches on both sides per transport,
// primproc's fragment requests and cache reads, and the memory against its bounds.
func TestMetricsEndpoints(t *testing.T) {
	needDaemons(t)
	dir := shared.tempDir(t)
	tcp := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
	unix := "unix://" + filepath.Join(dir, "metrics-pm.sock")
	pmMetrics := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	pm := testbin.Start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, "metrics"),
		"--listen", tcp, "--listen", unix, "--threads", "1", "--cache-size", "64MiB", "--metrics-listen", pmMetrics)
	pm.WaitLog(t, `primproc: serving`, 30*time.Second)
	if err := loadTPCH(context.Background(), []string{tcp}, "0.01", 1024, "nation", "region"); err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{"tcp", "unix", "shm"} {
		t.Run(transport, func(t *testing.T) {
			emMetrics := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
			peer := tcp
			if transport != "tcp" {
				peer = unix
			}
			em := shared.startExemgr(t, []string{peer}, transport, "--metrics-listen", emMetrics)
			defer em.Kill()
			emURL, pmURL := "http://"+emMetrics+"/metrics", "http://"+pmMetrics+"/metrics"
			em0, pm0 := scrape(t, emURL), scrape(t, pmURL)
			conn := em.conn(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for range 3 {
				var n int
				if err := conn.QueryRowContext(ctx, "select count(*) from nation join region on n_regionkey = r_regionkey where r_name <> 'x'").Scan(&n); err != nil || n != 25 {
					t.Fatalf("count: %d, %v", n, err)
				}
			}
			if _, err := conn.ExecContext(ctx, "selec 1"); err == nil {
				t.Fatal("a syntax error succeeded")
			}
			var name, value string
			if err := conn.QueryRowContext(ctx, "show global status like 'Colink_link_bytes_received'").Scan(&name, &value); err != nil {
				t.Fatalf("SHOW STATUS: %s", errorText(err))
			}
			if n, err := strconv.ParseInt(value, 10, 64); err != nil || n <= 0 {
				t.Errorf("SHOW STATUS: %s = %q, want the bytes received", name, value)
			}
			em1, pm1 := scrape(t, emURL), scrape(t, pmURL)
			moved := func(name string, before, after map[string]float64, min float64, prefix string, labels ...string) {
				t.Helper()
				b, _ := sum(before, prefix, labels...)
				a, ok := sum(after, prefix, labels...)
				if !ok || a-b < min {
					t.Errorf("%s: %s%v moved %v (from %v to %v, present %v), want at least %v", name, prefix, labels, a-b, b, a, ok, min)
				}
			}
			moved("exemgr", em0, em1, 3, "colink_statements_total", `status="ok"`)
			moved("exemgr", em0, em1, 1, "colink_statement_errors_total", `code="1064"`)
			moved("exemgr", em0, em1, 4, "colink_statement_duration_seconds_count")
			tr := `transport="` + transport + `"`
			moved("exemgr", em0, em1, 1, "colink_link_bytes_total", `side="client"`, tr, `direction="in"`)
			moved("exemgr", em0, em1, 1, "colink_link_batches_total", `side="client"`, tr, `direction="in"`)
			moved("exemgr", em0, em1, 1, "colink_link_syscalls_total", `side="client"`, tr)
			moved("primproc", pm0, pm1, 1, "colink_link_bytes_total", `side="server"`, tr, `direction="out"`)
			moved("primproc", pm0, pm1, 3, "colink_requests_total", `method="fragment"`)
			moved("primproc", pm0, pm1, 1, "colink_cache_read_bytes_total")
			if transport == "shm" {
				moved("primproc", pm0, pm1, 1, "colink_link_ring_bytes_total", `side="server"`, tr, `direction="out"`)
			}
			for name, m := range map[string]map[string]float64{"exemgr": em1, "primproc": pm1} {
				if v, ok := sum(m, "colink_memory_bound_bytes", `bound="go_soft_limit"`); !ok || v <= 0 {
					t.Errorf("%s: no go_soft_limit bound (%v)", name, v)
				}
				if v, ok := sum(m, "colink_build_info"); !ok || v != 1 {
					t.Errorf("%s: colink_build_info %v", name, v)
				}
				if _, ok := sum(m, "go_goroutines"); !ok {
					t.Errorf("%s: no Go runtime metrics", name)
				}
			}
			if v, ok := sum(em1, "colink_link_peer_up", `peer="`+peer+`"`); !ok || v != 1 {
				t.Errorf("exemgr: colink_link_peer_up for %s = %v", peer, v)
			}
		})
	}
}
