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

// flagPattern matches a long flag at the start of a pflag usage line: "  -e, --execute" or
// "      --listen".
var flagPattern = regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)`)

// TestEveryFlagIsInTheREADME runs each command's --help and checks that the README names
// every flag it lists.
func TestEveryFlagIsInTheREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	helps := map[string][]string{
		"primproc": {""}, "exemgr": {""}, "ipcbench": {""},
		"dbt3": {"gen", "qgen", "load", "query", "power", "throughput", "compare", "bench", "report", "faults"},
	}
	for cmdName, subs := range helps {
		bin := testbin.Build(t, dir, "./cmd/"+cmdName)
		for _, sub := range subs {
			args := []string{"--help"}
			if sub != "" {
				args = []string{sub, "--help"}
			}
			out, _ := exec.Command(bin, args...).CombinedOutput() // --help may exit non-zero
			flags := flagPattern.FindAllStringSubmatch(string(out), -1)
			if len(flags) == 0 {
				t.Errorf("%s %s --help lists no flags:\n%s", cmdName, sub, out)
			}
			for _, m := range flags {
				if m[1] == "--help" {
					continue
				}
				if !containsFlag(section(string(readme), cmdName), m[1]) {
					t.Errorf("README.md's section on %s does not mention %s of %s %s", cmdName, m[1], cmdName, sub)
				}
			}
		}
	}
}

// section returns the part of the README about a command: from its heading ("## name" or
// a "**`name`**" flag table) to the next heading of either kind, so that a flag two
// commands share (--data-dir) must be documented for each. Without a heading, the whole
// text.
func section(text, name string) string {
	for _, head := range []string{"\n## " + name + "\n", "\n**`" + name + "`**"} {
		i := strings.Index(text, head)
		if i < 0 {
			continue
		}
		rest := text[i+len(head):]
		end := len(rest)
		for _, next := range []string{"\n## ", "\n**`"} {
			if j := strings.Index(rest, next); j >= 0 && j < end {
				end = j
			}
		}
		return rest[:end]
	}
	return text
}

// containsFlag reports whether text names flag as a whole word ("--sf" is not found in
// "--sfx").
func containsFlag(text, flag string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], flag)
		if j < 0 {
			return false
		}
		end := i + j + len(flag)
		if end == len(text) || !isFlagChar(text[end]) {
			return true
		}
		i = end
	}
}

func isFlagChar(c byte) bool {
	return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
