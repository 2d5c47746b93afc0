package datadriven

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, d *TestData) string {
	switch d.Cmd {
	case "echo":
		return d.Input
	case "args":
		var parts []string
		for _, a := range d.CmdArgs {
			parts = append(parts, a.Key+"="+a.Val)
		}
		return strings.Join(parts, " ") + "\n"
	case "upper":
		return strings.ToUpper(d.Input)
	case "para":
		return "one\n\ntwo\n"
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

func TestRunTest(t *testing.T) {
	Walk(t, "testdata", func(t *testing.T, path string) { RunTest(t, path, run) })
}

func TestArgs(t *testing.T) {
	p, err := parse("f", "cmd a=1 b c=\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	d := p.cases[0].data
	if v, ok := d.Arg("a"); !ok || v != "1" {
		t.Errorf("Arg(a) = %q, %v", v, ok)
	}
	if !d.HasArg("b") || !d.HasArg("c") || d.HasArg("d") {
		t.Errorf("HasArg wrong for %+v", d.CmdArgs)
	}
	if d.ArgOr("d", "def") != "def" || d.ArgOr("a", "def") != "1" {
		t.Errorf("ArgOr wrong for %+v", d.CmdArgs)
	}
	if d.Pos != "f:1" {
		t.Errorf("Pos = %q", d.Pos)
	}
}

// TestFormatRoundTrip: writing a file back with its own expected outputs gives the same
// bytes, and with other outputs changes only those.
func TestFormatRoundTrip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "echo"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse("echo", string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, c := range p.cases {
		outs = append(outs, c.data.Expected)
	}
	if got := p.format(outs); got != string(raw) {
		t.Errorf("round trip changed the file:\n%s", got)
	}
	outs[0] = "a\n\nb"
	outs[len(outs)-1] = "now something"
	q, err := parse("echo", p.format(outs))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.cases) != len(p.cases) {
		t.Fatalf("%d cases after rewrite, want %d", len(q.cases), len(p.cases))
	}
	for i, c := range q.cases {
		if c.data.Expected != outs[i] || c.data.Input != p.cases[i].data.Input || c.cmdLine != p.cases[i].cmdLine {
			t.Errorf("case %d after rewrite: %+v", i, c.data)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"cmd\ninput\n", "f:1: cmd has no ---- after its input"},
		{"# c\n\ncmd\n----\n----\nout\n", "f:3: output opened with -------- is not closed by another pair"},
	} {
		if _, err := parse("f", tc.text); err == nil || err.Error() != tc.want {
			t.Errorf("parse(%q) = %v, want %s", tc.text, err, tc.want)
		}
	}
}

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cases")
	in := "# head\necho\nnew\n----\nold\n\nupper\nx\n----\nX\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	*rewrite = true
	defer func() { *rewrite = false }()
	RunTest(t, path, run)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# head\necho\nnew\n----\nnew\n\nupper\nx\n----\nX\n"; string(got) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite: %v %v", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("rewrite left %d files in the directory", len(ents))
	}
}
