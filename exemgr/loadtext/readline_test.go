package loadtext

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/sql"
)

func newLineLoader(t testing.TB, spec sql.LoadSpec) *Loader {
	t.Helper()
	spec.Columns = []int{0, 1, 2, 3, 4, 5}
	if spec.FieldsTerminated == "" {
		spec.FieldsTerminated = "|"
	}
	l, err := New(&spec, loadTestSchema, 1, func(int, arrow.RecordBatch) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readLines reads text's lines through a reader of the smallest buffer (16 bytes), so that
// most lines span several of its reads.
func readLines(l *Loader, text string) ([]string, error) {
	br := bufio.NewReaderSize(strings.NewReader(text), 16)
	var out []string
	for {
		line, err := l.readLine(br)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
}

// TestReadLine: lines longer than the reader's buffer, terminators split across its reads
// or inside enclosed fields, and the bound on a line's length.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("a", 50)
	for _, tc := range []struct {
		name    string
		spec    sql.LoadSpec
		maxLine int
		text    string
		want    string // lines joined by " / ", or "error: …"
	}{
		{"short lines", sql.LoadSpec{LinesTerminated: "\n"}, 100, "a\nb\n\nc", "a / b /  / c"},
		{"longer than the buffer", sql.LoadSpec{LinesTerminated: "\n"}, 100, long + "\n" + long + "x\n", long + " / " + long + "x"},
		{"two-byte terminator across reads", sql.LoadSpec{LinesTerminated: "\r\n"}, 100, "0123456789abcde\r\nxy\rz\r\n", "0123456789abcde / xy\rz"},
		{"terminator inside an enclosed field", sql.LoadSpec{LinesTerminated: "\n", FieldsTerminated: "|", Enclosed: `"`}, 100,
			"1|\"two\nlines and more than sixteen bytes\"|3\n4\n", "1|\"two\nlines and more than sixteen bytes\"|3 / 4"},
		{"at the bound", sql.LoadSpec{LinesTerminated: "\n"}, 50, long + "\n" + long, long + " / " + long},
		{"over the bound", sql.LoadSpec{LinesTerminated: "\n"}, 50, "a\n" + long + "b\nc\n", "error: line 2 is longer than 50 bytes"},
		{"no terminator at all", sql.LoadSpec{LinesTerminated: "\n"}, 50, strings.Repeat(long, 100), "error: line 1 is longer than 50 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLineLoader(t, tc.spec)
			l.maxLine = tc.maxLine
			lines, err := readLines(l, tc.text)
			got := strings.Join(lines, " / ")
			if err != nil {
				got = "error: " + err.Error()
			}
			if strings.HasPrefix(tc.want, "error: ") {
				if !strings.Contains(got, strings.TrimPrefix(tc.want, "error: ")) {
					t.Errorf("got %q, want an error containing %q", got, tc.want)
				}
			} else if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReadLineAllocs: reading lines allocates nothing per line, whether they fit in the
// reader's buffer or are gathered across its reads.
func TestReadLineAllocs(t *testing.T) {
	l := newLineLoader(t, sql.LoadSpec{LinesTerminated: "\n", FieldsTerminated: "|"})
	var text bytes.Buffer
	for i := range 1000 {
		text.WriteString("1|2|3.50|1998-01-01|abc|")
		text.WriteString(strings.Repeat("9", i%100)) // up to 124 bytes: some span reads
		text.WriteString("\n")
	}
	data := text.Bytes()
	rd := bytes.NewReader(data)
	br := bufio.NewReaderSize(rd, 64)
	lines := 0
	readAll := func() {
		rd.Reset(data)
		br.Reset(rd)
		for {
			if _, err := l.readLine(br); err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				return
			}
			lines++
		}
	}
	readAll() // grows l.lineBuf once
	if lines != 1000 {
		t.Fatalf("%d lines, want 1000", lines)
	}
	if allocs := testing.AllocsPerRun(10, readAll); allocs != 0 {
		t.Errorf("%.1f allocations per 1000 lines, want 0", allocs)
	}
}

func BenchmarkReadLine(b *testing.B) {
	l := newLineLoader(b, sql.LoadSpec{LinesTerminated: "\n", FieldsTerminated: "|"})
	line := "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the|\n"
	data := []byte(strings.Repeat(line, 10000))
	rd := bytes.NewReader(data)
	br := bufio.NewReaderSize(rd, 1<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(data)
		br.Reset(rd)
		for {
			if _, err := l.readLine(br); err != nil {
				break
			}
		}
	}
}

// TestReadLineManyEnclosedTerminators: a field with 100k line terminators inside its
// enclosure is one line, read in time linear in its length (openEnclosure rescanning the
// line at each terminator made this quadratic: ~10^10 byte steps, minutes).
func TestReadLineManyEnclosedTerminators(t *testing.T) {
	const n = 100_000
	l := newLineLoader(t, sql.LoadSpec{LinesTerminated: "\n", FieldsTerminated: "|", Enclosed: `"`, Escaped: `\`})
	l.maxLine = 4 * n
	field := strings.Repeat("ab\n", n)
	text := "1|\"" + field + "\"|3\n4\n"
	start := time.Now()
	lines, err := readLines(l, text)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("reading a line with %d enclosed terminators took %v", n, elapsed)
	}
	if len(lines) != 2 || lines[0] != "1|\""+field+"\"|3" || lines[1] != "4" {
		t.Fatalf("got %d lines (first %d bytes), want 2", len(lines), len(lines[0]))
	}
	if err := l.split([]byte(lines[0])); err != nil {
		t.Fatal(err)
	}
	if len(l.field) != 3 || string(l.field[1]) != field {
		t.Errorf("split: %d fields, second %d bytes, want 3 and %d", len(l.field), len(l.field[1]), len(field))
	}
}

// openEnclosureWhole is the reference: the state of the whole line scanned from its start.
func openEnclosureWhole(line []byte, q, esc byte, fterm []byte) bool {
	in, atStart := false, true
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case esc != 0 && c == esc && in:
			i++
		case !in && atStart && c == q:
			in, atStart = true, false
		case in && c == q:
			if i+1 < len(line) && line[i+1] == q {
				i++
			} else {
				in = false
			}
		case !in && bytes.HasPrefix(line[i:], fterm):
			atStart = true
			i += len(fterm) - 1
		default:
			if !in {
				atStart = false
			}
		}
	}
	return in
}

// TestOpenEnclosureIncremental: openEnclosure called on ever longer prefixes of a line (as
// readLine does, one call per terminator met) answers as a scan of each whole prefix does,
// on random lines of quotes, escapes, multi-byte field terminators and line terminators.
func TestOpenEnclosureIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`"\,;x` + "\n")
	for _, fterm := range []string{",", ",;", ";,;"} {
		l := newLineLoader(t, sql.LoadSpec{LinesTerminated: "\n", FieldsTerminated: fterm, Enclosed: `"`, Escaped: `\`})
		for range 20000 {
			line := make([]byte, rng.IntN(24))
			for i := range line {
				line[i] = alphabet[rng.IntN(len(alphabet))]
			}
			l.encl = enclosureScan{atStart: true}
			for end := 0; end <= len(line); end++ {
				if end < len(line) && line[end] != '\n' {
					continue
				}
				want := openEnclosureWhole(line[:end], '"', '\\', []byte(fterm))
				if got := l.openEnclosure(line[:end]); got != want {
					t.Fatalf("fields by %q, line %q up to %d: openEnclosure %v, whole scan %v", fterm, line, end, got, want)
				}
			}
		}
	}
}
