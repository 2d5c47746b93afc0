package storage

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/tpch"
)

// The crash test re-executes the test binary as a child that loads a table; the parent kills
// it with SIGKILL at some point of the load and then checks that the store opens with either
// the previous contents or the complete new ones, and no stray files.
const crashChildEnv = "COLINK_STORAGE_CRASH_CHILD" // "dir seed rows pauseAt"

func crashOptions() Options {
	return Options{RowGroupRows: 1000, SegmentRows: 3000, CacheSize: 16 << 20}
}

func crashChild() {
	args := strings.Fields(os.Getenv(crashChildEnv))
	dir := args[0]
	seed, _ := strconv.ParseUint(args[1], 10, 64)
	rows, _ := strconv.ParseInt(args[2], 10, 64)
	pauseAt, _ := strconv.ParseInt(args[3], 10, 64) // stop (without committing) after this many rows; -1: never
	fail := func(err error) { fmt.Println("error:", err); os.Exit(2) }
	s, err := Open(dir, crashOptions())
	if err != nil {
		fail(err)
	}
	lineitem, _ := tpch.LookupTable("lineitem")
	sc := lineitem.ArrowSchema()
	ctx := context.Background()
	tx := s.Begin()
	w, err := tx.Replace("lineitem", sc)
	if err != nil {
		fail(err)
	}
	fmt.Println("loading")
	for off := int64(0); off < rows; off += 700 {
		if off >= pauseAt && pauseAt >= 0 {
			fmt.Println("paused")
			time.Sleep(time.Minute) // the parent kills us here
			os.Exit(3)
		}
		rec := genRecord(s.alloc, sc, seed, off, min(700, rows-off))
		if err := w.Write(ctx, rec); err != nil {
			fail(err)
		}
		rec.Release()
	}
	if err := tx.Commit(ctx); err != nil {
		fail(err)
	}
	fmt.Println("committed")
	os.Exit(0)
}

func TestCrashDuringLoad(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		return
	}
	dir := t.TempDir()
	s := openTest(t, dir, crashOptions())
	lineitem, _ := tpch.LookupTable("lineitem")
	loadTable(t, s, "lineitem", lineitem.ArrowSchema(), 1, 5000, 1000)
	s.Close()

	type state struct {
		seed uint64
		rows int64
	}
	cur := state{1, 5000}
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	// First a kill at a known point (mid-load, segments already written), then kills after
	// random delays that land anywhere from start-up to after the commit.
	for iter := 0; iter < 8; iter++ {
		next := state{uint64(iter + 2), int64(9000 + 1000*iter)}
		pauseAt := int64(-1)
		if iter == 0 {
			pauseAt = 7000
		}
		delay := time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
		cmd, out := startChild(t, "TestCrashDuringLoad", fmt.Sprintf("%s=%s %d %d %d", crashChildEnv, dir, next.seed, next.rows, pauseAt))
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		waitFor := func(want string) {
			for l := range lines {
				if strings.HasPrefix(l, "error") {
					t.Fatalf("child: %s", l)
				}
				if l == want {
					return
				}
			}
			t.Fatalf("child exited before %q", want)
		}
		waitFor("loading")
		if pauseAt >= 0 {
			waitFor("paused")
		} else {
			time.Sleep(delay)
		}
		cmd.Process.Kill() // SIGKILL
		committed := false
		for l := range lines { // to EOF before Wait, which closes the pipe and drops unread lines
			committed = committed || l == "committed"
		}
		cmd.Wait()

		s := openTest(t, dir, crashOptions())
		errPrev := verifyTable(s, "lineitem", cur.seed, cur.rows)
		errNext := verifyTable(s, "lineitem", next.seed, next.rows)
		switch {
		case errPrev == nil:
			if committed {
				t.Fatalf("iteration %d: child reported a commit but the store has the old contents", iter)
			}
		case errNext == nil:
			cur = next
		default:
			t.Fatalf("iteration %d (kill after %v): store holds neither the old nor the new table:\n old: %v\n new: %v", iter, delay, errPrev, errNext)
		}
		t.Logf("iteration %d: killed after %v, store has seed %d", iter, delay, cur.seed)
		checkOnlyCatalogFiles(t, s)
		s.Close()
	}
}

// startChild starts this test binary running only the test named, with env added, and
// returns it and its stdout; it is killed at cleanup.
func startChild(t *testing.T, test, env string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// checkOnlyCatalogFiles fails if the store directory holds a file its catalog does not name
// (other than CATALOG and LOCK).
func checkOnlyCatalogFiles(t *testing.T, s *Store) {
	t.Helper()
	snap := s.Snapshot()
	defer snap.Release()
	named := map[string]bool{catalogFile: true, "LOCK": true}
	snap.cat.files(func(f string) { named[f] = true })
	filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.dir, path)
		if !named[filepath.ToSlash(rel)] {
			t.Errorf("stray file %s", rel)
		}
		return nil
	})
}

// The refresh crash test: a child commits transactions that each append 500 rows and delete
// the rows r%11 == k%11 present before it (k = 1, 2, …), printing "committed k" after each.
// The parent SIGKILLs it at a random moment; the store must then hold exactly the state after
// the last printed commit or after the one following it (committed but not yet printed).
const refreshChildEnv = "COLINK_STORAGE_REFRESH_CHILD" // "dir"

const refreshBase = 5000

func refreshLive(j int) (rows int64, live func(int64) bool) {
	rows = refreshBase + 500*int64(j)
	return rows, func(r int64) bool {
		for k := 1; k <= j; k++ {
			if r < refreshBase+500*int64(k-1) && r%11 == int64(k%11) {
				return false
			}
		}
		return true
	}
}

func refreshChild() {
	dir := os.Getenv(refreshChildEnv)
	fail := func(err error) { fmt.Println("error:", err); os.Exit(2) }
	s, err := Open(dir, crashOptions())
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	sc := allKindsSchema()
	fmt.Println("loading")
	for k := 1; k <= 200; k++ {
		snap := s.Snapshot()
		ti, err := snap.Table("t")
		snap.Release()
		if err != nil {
			fail(err)
		}
		tx := s.Begin()
		var start int64
		for _, sg := range ti.Segments {
			var rows []int64
			for o := int64(0); o < sg.Rows; o++ {
				if (start+o)%11 == int64(k%11) {
					rows = append(rows, o)
				}
			}
			if err := tx.Delete("t", sg.ID, rows); err != nil {
				fail(err)
			}
			start += sg.Rows
		}
		w, err := tx.Append("t")
		if err != nil {
			fail(err)
		}
		rec := genRecord(s.alloc, sc, 1, start, 500)
		if err := w.Write(ctx, rec); err != nil {
			fail(err)
		}
		rec.Release()
		if err := tx.Commit(ctx); err != nil {
			fail(err)
		}
		fmt.Println("committed", k)
	}
	os.Exit(0)
}

func TestCrashDuringRefresh(t *testing.T) {
	if os.Getenv(refreshChildEnv) != "" {
		refreshChild()
		return
	}
	dir := t.TempDir()
	s := openTest(t, dir, crashOptions())
	loadTable(t, s, "t", allKindsSchema(), 1, refreshBase, 1000)
	s.Close()

	cmd, out := startChild(t, "TestCrashDuringRefresh", refreshChildEnv+"="+dir)
	rng := rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano())))
	killAt := 3 + rng.IntN(20) // after this many printed commits, plus a random delay
	last := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "error") {
			t.Fatalf("child: %s", l)
		}
		if n, ok := strings.CutPrefix(l, "committed "); ok {
			last, _ = strconv.Atoi(n)
			if last == killAt {
				time.Sleep(time.Duration(rng.Int64N(int64(30 * time.Millisecond))))
				cmd.Process.Kill()
				break
			}
		}
	}
	// Read what the child printed before the kill landed, up to EOF, before Wait: Wait closes
	// the pipe, and lines left in it would be lost, making the check expect an older state.
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			last, _ = strconv.Atoi(n)
		}
	}
	cmd.Wait()

	s = openTest(t, dir, crashOptions())
	snap := s.Snapshot()
	ti, _ := snap.Table("t")
	snap.Release()
	j := -1
	for _, cand := range []int{last, last + 1} {
		rows, _ := refreshLive(cand)
		var stored int64
		for _, sg := range ti.Segments {
			stored += sg.Rows
		}
		if stored == rows {
			j = cand
		}
	}
	if j < 0 {
		t.Fatalf("after %d printed commits the table has %d rows: not a committed state", last, ti.Rows)
	}
	rows, live := refreshLive(j)
	checkLive(t, s, "t", 1, rows, live)
	checkOnlyCatalogFiles(t, s)
	t.Logf("killed after %d printed commits; store holds the state after %d", last, j)
}
