package frontend

import (
	"strconv"
	"strings"
)

// The front end does not parse SQL; the engine does. It needs only to find statement
// boundaries in multi-statement text and to recognise the few statements it answers itself,
// and for both a lexer that knows MySQL's quoting and comments is enough.

type tokenKind uint8

const (
	tokWord        tokenKind = iota + 1 // keyword or unquoted identifier
	tokQuotedIdent                      // `identifier`
	tokString                           // 'string' or "string"
	tokNumber                           // 123, 1.5, 1e3
	tokSysVar                           // @@name, @@session.name
	tokUserVar                          // @name
	tokPunct                            // any other single character
)

// token is one lexeme. text is its source text; for strings and quoted identifiers value is
// the unquoted, unescaped content, otherwise value equals text.
type token struct {
	kind       tokenKind
	text       string
	value      string
	start, end int // byte offsets in the source
}

// is reports whether t is the keyword or punctuation kw (case-insensitive).
func (t token) is(kw string) bool {
	return (t.kind == tokWord || t.kind == tokPunct) && strings.EqualFold(t.text, kw)
}

// lexed is a text's tokens and what its comments say.
type lexed struct {
	toks []token
	// text is the source with the markers of the executable versioned comments ("/*!40101"
	// and its "*/") blanked out, the same length, so that the tokens' offsets hold in it and
	// a statement cut from it reads as the SQL the server runs.
	text string
	// comment is whether the text holds a comment (a versioned one not executed included):
	// a statement of comments only is MySQL's empty query, which is OK rather than 1065.
	comment bool
}

// lex splits src into tokens, skipping whitespace and comments (/* */, "-- " and "#" to end of
// line), as a server of version versionID (MySQL's number: 80011 for 8.0.11) does. A
// versioned comment, "/*!" and an optional five-digit version, is SQL to that server when its
// version is not above versionID: its content is lexed as tokens, up to the first "*/"
// outside a string; one above it is a comment. "/*+" hints and MariaDB's "/*M!" are comments
// (MySQL treats them so). An unterminated string, quoted identifier or comment extends to the
// end of src.
func lex(src string, versionID int) lexed {
	var (
		toks    []token
		comment bool
		inVer   bool   // inside an executable versioned comment
		blank   []byte // src with the markers blanked, once one is found
	)
	blankOut := func(from, to int) {
		if blank == nil {
			blank = []byte(src)
		}
		for k := from; k < to; k++ {
			blank[k] = ' '
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#':
			i, comment = lineEnd(src, i), true
		case c == '-' && i+1 < len(src) && src[i+1] == '-' && (i+2 == len(src) || src[i+2] <= ' '):
			i, comment = lineEnd(src, i), true
		case inVer && c == '*' && i+1 < len(src) && src[i+1] == '/':
			blankOut(i, i+2)
			inVer = false
			i += 2
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if j, run := versionedComment(src, i, versionID); run && !inVer {
				blankOut(i, j)
				inVer = true
				i = j
				continue
			} else if j > 0 {
				blankOut(i+2, i+3) // a plain comment to the engine's parser too
			}
			comment = true
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = len(src)
			}
		case c == '\'' || c == '"' || c == '`':
			end, value := quoted(src, i)
			kind := tokString
			if c == '`' {
				kind = tokQuotedIdent
			}
			toks = append(toks, token{kind: kind, text: src[i:end], value: value, start: i, end: end})
			i = end
		case c == '@':
			j := i + 1
			kind := tokUserVar
			if j < len(src) && src[j] == '@' {
				kind = tokSysVar
				j++
			}
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: kind, text: src[i:j], value: src[i:j], start: i, end: j})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, token{kind: tokNumber, text: src[i:j], value: src[i:j], start: i, end: j})
			i = j
		case isWordByte(c):
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tokWord, text: src[i:j], value: src[i:j], start: i, end: j})
			i = j
		default:
			toks = append(toks, token{kind: tokPunct, text: src[i : i+1], value: src[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	text := src
	if blank != nil {
		text = string(blank)
	}
	return lexed{toks: toks, text: text, comment: comment}
}

// versionedComment reports whether src[i:] opens a versioned comment (content > 0: where
// its content begins, after "/*!" and the version, five digits) and whether a server of
// versionID executes it (without a version every server does, as MySQL).
func versionedComment(src string, i, versionID int) (content int, run bool) {
	if !strings.HasPrefix(src[i:], "/*!") {
		return 0, false
	}
	j := i + 3
	if j+5 <= len(src) {
		v := 0
		for _, d := range []byte(src[j : j+5]) {
			if d < '0' || d > '9' {
				return j, true
			}
			v = v*10 + int(d-'0')
		}
		return j + 5, v <= versionID
	}
	return j, true
}

// VersionID is MySQL's number for a version string: 80011 for "8.0.11-colink" (what
// versioned comments are compared with); 0 if it does not start with major.minor.patch.
func VersionID(version string) int {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 3 {
		return 0
	}
	patch := parts[2]
	for k, ch := range patch {
		if ch < '0' || ch > '9' {
			patch = patch[:k]
			break
		}
	}
	n := [3]int{}
	for k, s := range []string{parts[0], parts[1], patch} {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 99 && k > 0 {
			return 0
		}
		n[k] = v
	}
	return n[0]*10000 + n[1]*100 + n[2]
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// quoted scans the quoted lexeme starting at src[i] and returns the offset after it and its
// content: a doubled quote stands for one; in strings a backslash escapes the next byte.
func quoted(src string, i int) (end int, value string) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == q && j+1 < len(src) && src[j+1] == q:
			b.WriteByte(q)
			j += 2
		case c == q:
			return j + 1, b.String()
		case c == '\\' && q != '`' && j+1 < len(src):
			b.WriteByte(Unescape(src[j+1]))
			j += 2
		default:
			b.WriteByte(c)
			j++
		}
	}
	return len(src), b.String()
}

// Unescape is MySQL's meaning of a backslash-escaped character: \0, \b, \n, \r, \t and
// \Z stand for NUL, backspace, newline, carriage return, tab and Ctrl-Z; any other
// character stands for itself.
func Unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'Z':
		return 26
	}
	return c
}

// statement is one statement of a query text: its source and its tokens.
type statement struct {
	text string
	toks []token
}

// splitStatements splits query text at top-level semicolons, lexed as a server of version
// versionID does (see lex). Statements with no tokens (empty, or only comments) are dropped;
// each statement's text runs from its first token to its last, so the separators and
// surrounding comments are not part of it. comment is whether the text holds a comment:
// text with no statement is MySQL's empty query then, answered with OK.
func splitStatements(src string, versionID int) (stmts []statement, comment bool) {
	lx := lex(src, versionID)
	toks := lx.toks
	first := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !(toks[i].kind == tokPunct && toks[i].text == ";") {
			continue
		}
		if i > first {
			part := toks[first:i]
			stmts = append(stmts, statement{text: lx.text[part[0].start:part[len(part)-1].end], toks: part})
		}
		first = i + 1
	}
	return stmts, lx.comment
}
