package primproc

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/daemon"
)

// TestPoolGivesIdleMemoryBack: buffers the fragments gave back stay in the daemon's pool
// until they have lain unused for a trim interval; then an idle daemon lets them go and
// returns the memory to the OS, so its resident size shrinks.
func TestPoolGivesIdleMemoryBack(t *testing.T) {
	d, err := New(Config{Listen: []string{"unix://" + filepath.Join(t.TempDir(), "pm.sock")},
		PoolSize: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.cfg.PoolIdle != DefaultPoolIdle {
		t.Errorf("pool idle time %s, want the default %s", d.cfg.PoolIdle, DefaultPoolIdle)
	}
	// What a query over a large GROUP BY leaves behind: 128 MiB of touched buffers.
	var bufs [][]byte
	for range 32 {
		b := d.pool.Allocate(4 << 20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		d.pool.Free(b)
	}
	bufs = nil
	held := daemon.ResidentBytes()
	r := d.reclaimer()
	r.Tick() // the buffers were in use since the last trim: kept
	if s := d.pool.Stats(); s.Idle != 128<<20 || s.Released != 0 {
		t.Fatalf("after the first trim: %+v, want 128 MiB kept", s)
	}
	start := time.Now()
	r.Tick() // unused for a whole interval: let go, and returned to the OS
	if s := d.pool.Stats(); s.Idle != 0 || s.Released != 128<<20 {
		t.Fatalf("after the second trim: %+v, want all 128 MiB let go", s)
	}
	if held > 0 {
		if now := daemon.ResidentBytes(); held-now < 64<<20 {
			t.Errorf("resident %d MiB before the trim, %d MiB after: want at least 64 MiB returned", held>>20, now>>20)
		}
	}
	t.Logf("trim and return to the OS: %s", time.Since(start))
}
