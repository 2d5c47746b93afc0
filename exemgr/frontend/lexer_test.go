package frontend

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

func TestSplitStatements(t *testing.T) {
	datadriven.RunTest(t, "testdata/split.txt", func(t *testing.T, d *datadriven.TestData) string {
		// The runner trims the input's surrounding whitespace: indent=N puts N spaces back
		// in front of it.
		indent := 0
		d.MaybeScanArgs(t, "indent", &indent)
		input := strings.Repeat(" ", indent) + d.Input
		// version=N lexes as a server of that version (MySQL's number); 80011 by default.
		version := VersionID(DefaultServerVersion)
		d.MaybeScanArgs(t, "version", &version)
		switch d.Cmd {
		case "split":
			var out []string
			stmts, comment := splitStatements(input, version)
			for _, st := range stmts {
				out = append(out, fmt.Sprintf("%q", st.text))
			}
			if len(out) == 0 {
				if comment {
					return "(none: comments only)"
				}
				return "(none)"
			}
			return strings.Join(out, "\n")
		case "lex":
			var out []string
			kinds := map[tokenKind]string{tokWord: "word", tokQuotedIdent: "ident", tokString: "string",
				tokNumber: "number", tokSysVar: "sysvar", tokUserVar: "uservar", tokPunct: "punct"}
			for _, tok := range lex(input, version).toks {
				out = append(out, fmt.Sprintf("%s %q", kinds[tok.kind], tok.value))
			}
			return strings.Join(out, "\n")
		}
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		return ""
	})
}

func TestLikeMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"%", "anything", true},
		{"version%", "version_comment", true},
		{"VERSION", "version", true},
		{"%comment", "version_comment", true},
		{"v_rsion", "version", true},
		{"v_rsion", "vrsion", false},
		{"version\\_comment", "version_comment", true},
		{"version\\_comment", "versionXcomment", false},
		{"%a%b%", "xxaxxbxx", true},
		{"%a%b", "xxaxxbxxc", false},
		{"", "", true},
		{"", "x", false},
	} {
		if got := likeMatch(c.pattern, c.s); got != c.want {
			t.Errorf("likeMatch(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
}
