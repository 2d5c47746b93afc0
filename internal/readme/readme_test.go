package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/colinkdb/colink/internal/testbin"
)

// The generated part of docs/flags.md lies between these lines.
const (
	genBegin = "<!-- generated from each command's --help by TestFlagsDoc: edit the flags' help text, then run COLINK_UPDATE_FLAGS=1 go test ./internal/readme -run TestFlagsDoc -->"
	genEnd   = "<!-- end of the generated reference -->"
)

// commands lists what the reference covers: each command, and dbt3's subcommands.
var commands = []struct{ cmd, sub string }{
	{"primproc", ""}, {"exemgr", ""}, {"ipcbench", ""},
	{"dbt3", "gen"}, {"dbt3", "qgen"}, {"dbt3", "load"}, {"dbt3", "import"}, {"dbt3", "query"}, {"dbt3", "power"}, {"dbt3", "throughput"},
	{"dbt3", "compare"}, {"dbt3", "bench"}, {"dbt3", "report"}, {"dbt3", "faults"},
}

// machineDefault matches pflag's "(default …)" at the end of a flag's line: a default that
// follows the machine (cores, the user's temporary directory) differs from one machine to
// the next, so the comparison ignores what it says.
var machineDefault = regexp.MustCompile(`(?m) \(default [^\n]*\)$`)

// TestFlagsDoc checks that docs/flags.md's reference is every command's --help, and
// rewrites it with COLINK_UPDATE_FLAGS=1.
func TestFlagsDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "docs", "flags.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok1 := strings.Cut(string(doc), genBegin+"\n")
	old, tail, ok2 := strings.Cut(rest, genEnd+"\n")
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the generated part's marker lines", path)
	}
	dir := t.TempDir()
	bins := map[string]string{}
	var b strings.Builder
	for _, c := range commands {
		if bins[c.cmd] == "" {
			bins[c.cmd] = testbin.Build(t, dir, "./cmd/"+c.cmd)
		}
		args, name := []string{"--help"}, c.cmd
		if c.sub != "" {
			args, name = []string{c.sub, "--help"}, c.cmd+" "+c.sub
		}
		out, err := exec.Command(bins[c.cmd], args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s --help: %v\n%s", name, err, out)
		}
		b.WriteString("## " + name + "\n\n```\n" + strings.TrimRight(string(out), "\n") + "\n```\n\n")
	}
	gen := b.String()
	if os.Getenv("COLINK_UPDATE_FLAGS") != "" {
		if err := os.WriteFile(path, []byte(head+genBegin+"\n"+gen+genEnd+"\n"+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if machineDefault.ReplaceAllString(old, " (default …)") != machineDefault.ReplaceAllString(gen, " (default …)") {
		t.Errorf("%s is not the commands' --help (a flag was added, removed or reworded): run COLINK_UPDATE_FLAGS=1 go test ./internal/readme -run TestFlagsDoc, and review the diff", path)
	}
}

// TestReadmeLinks checks that every relative link of the README resolves to a file.
func TestReadmeLinks(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(string(readme), -1)
	if len(links) == 0 {
		t.Fatal("the README links to nothing: the pattern is wrong")
	}
	for _, m := range links {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
		}
	}
}
