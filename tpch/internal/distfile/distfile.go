// Package distfile reads the distributions file format of the TPC-H dbgen kit (dists.dss):
// named, weighted lists of strings. The generator never reads such a file at run time; this
// package exists so that the tables compiled into package tpch can be generated from, and
// checked against, the kit's file.
package distfile

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Member is one entry of a distribution with its own (not cumulative) weight.
type Member struct {
	Text   string
	Weight int64
}

// Dist is one named distribution, its members in file order.
type Dist struct {
	Name    string
	Members []Member
}

// Parse reads every distribution in r. It follows dbgen's reader: '#' starts a comment,
// "BEGIN name" opens a distribution, "END" closes it, "count|N" declares the member count
// and every other "text|weight" line is a member. A count that disagrees with the members
// is an error, as it is for dbgen.
func Parse(r io.Reader) ([]Dist, error) {
	var (
		out      []Dist
		cur      *Dist
		declared int64 = -1
		lineNo   int
	)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if cur == nil {
			f := strings.Fields(line)
			if len(f) >= 2 && strings.EqualFold(f[0], "begin") {
				out = append(out, Dist{Name: f[1]})
				cur = &out[len(out)-1]
				declared = -1
			}
			continue
		}
		if len(line) >= 3 && strings.EqualFold(line[:3], "end") {
			if declared != int64(len(cur.Members)) {
				return nil, fmt.Errorf("distfile: line %d: distribution %q declares %d members, has %d",
					lineNo, cur.Name, declared, len(cur.Members))
			}
			cur = nil
			continue
		}
		bar := strings.IndexByte(line, '|')
		if bar <= 0 {
			continue // dbgen's sscanf("%[^|]|%ld") skips such lines too
		}
		text := line[:bar]
		wtext := strings.TrimSpace(line[bar+1:])
		if j := strings.IndexFunc(wtext, func(r rune) bool { return !(r == '-' || (r >= '0' && r <= '9')) }); j >= 0 {
			wtext = wtext[:j]
		}
		w, err := strconv.ParseInt(wtext, 10, 64)
		if err != nil {
			continue
		}
		if strings.EqualFold(text, "count") {
			declared = w
			continue
		}
		cur.Members = append(cur.Members, Member{Text: text, Weight: w})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("distfile: %w", err)
	}
	if cur != nil {
		return nil, fmt.Errorf("distfile: distribution %q has no END", cur.Name)
	}
	return out, nil
}
