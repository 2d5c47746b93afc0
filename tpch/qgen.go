package tpch

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// This file is qgen: the 22 TPC-H queries with their substitution parameters (TPC-H clause
// 2.4), in colink's MySQL dialect, ordered by a stream's permutation (Appendix A).
//
// Parameters are drawn as TPC-H's qgen draws them: the seed S starts a Park–Miller chain
// whose first 22 successors seed queries 1…22, each query drawing all its parameters from
// its own seed. With QgenCompat214 the draws reproduce qgen 2.14 exactly; by default two of
// its slips are corrected as later TPC kits correct them, so that every parameter lies in
// the specification's domain:
//   - Q4's month is drawn from 1993-01 … 1997-10 (qgen 2.14: 1993-02 … 1997-11);
//   - Q22's country codes are drawn from 10 … 34 (qgen 2.14 adds 10 twice: 20 … 44).
// Both corrections keep the same random draw, so a stream's other parameters do not change.

//go:embed queries/*.sql
var queryTemplates embed.FS

// QueryCount is the number of TPC-H queries.
const QueryCount = 22

// QgenVariant selects how parameters are drawn.
type QgenVariant int

// The variants.
const (
	QgenSpec      QgenVariant = iota // TPC-H specification domains (as qgen 2.17 and later)
	QgenCompat214                    // exactly qgen 2.14, slips included
)

// Query is one query of a stream with its parameters substituted.
type Query struct {
	Number int      // 1…22
	Params []string // the values of :1, :2, … as substituted
	Text   string   // the SQL script (Q15 is create view; select; drop view)
}

// StreamOrder returns the order in which stream s runs the 22 queries: TPC-H Appendix A's
// permutation s mod 41 (stream 0 is the power test's).
func StreamOrder(stream int) ([]int, error) {
	if stream < 0 {
		return nil, fmt.Errorf("stream %d: streams are numbered from 0", stream)
	}
	row := queryPermutations()[stream%len(queryPermutations())]
	return append([]int(nil), row[:]...), nil
}

// StreamQueries returns stream s's 22 queries in the stream's order, with parameters drawn
// from seed as qgen -r seed -p stream does (or the validation parameters, qgen -d, if
// validation is set; the seed and variant are then unused). The scale factor only changes
// Q11's fraction, 0.0001/SF.
func StreamQueries(seed int64, stream int, sf float64, validation bool, v QgenVariant) ([]Query, error) {
	order, err := StreamOrder(stream)
	if err != nil {
		return nil, err
	}
	if !(sf > 0) {
		return nil, fmt.Errorf("scale factor %v must be positive", sf)
	}
	out := make([]Query, 0, QueryCount)
	for _, q := range order {
		var params []string
		if validation {
			params = ValidationParams(q, sf)
		} else {
			params = QueryParams(q, seed, sf, v)
		}
		text, err := RenderQuery(q, stream, params)
		if err != nil {
			return nil, err
		}
		out = append(out, Query{Number: q, Params: params, Text: text})
	}
	return out, nil
}

// RenderQuery substitutes params (the values of :1, :2, …) and the stream number (:s, which
// names Q15's view so that concurrent streams do not collide) into query q's template.
func RenderQuery(q, stream int, params []string) (string, error) {
	tmpl, err := queryTemplate(q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c == ':' && i+1 < len(tmpl) && tmpl[i+1] == 's' {
			b.WriteString(strconv.Itoa(stream))
			i++
			continue
		}
		if c != ':' || i+1 >= len(tmpl) || tmpl[i+1] < '1' || tmpl[i+1] > '9' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(tmpl) && tmpl[j] >= '0' && tmpl[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(tmpl[i+1 : j])
		if n > len(params) {
			return "", fmt.Errorf("query %d uses parameter :%d, only %d given", q, n, len(params))
		}
		b.WriteString(params[n-1])
		i = j - 1
	}
	return b.String(), nil
}

func queryTemplate(q int) (string, error) {
	if q < 1 || q > QueryCount {
		return "", fmt.Errorf("query %d: TPC-H has queries 1 to %d", q, QueryCount)
	}
	b, err := queryTemplates.ReadFile("queries/" + strconv.Itoa(q) + ".sql")
	if err != nil {
		return "", fmt.Errorf("query %d template: %w", q, err)
	}
	return string(b), nil
}

// q11Fraction formats Q11's FRACTION, 0.0001/SF, as qgen does ("%11.10f").
func q11Fraction(sf float64) string {
	return fmt.Sprintf("%11.10f", 0.0001/sf)
}

// ValidationParams returns query q's validation parameters (TPC-H clause 2.4, qgen -d).
func ValidationParams(q int, sf float64) []string {
	switch q {
	case 1:
		return []string{"90"}
	case 2:
		return []string{"15", "BRASS", "EUROPE"}
	case 3:
		return []string{"BUILDING", "1995-03-15"}
	case 4:
		return []string{"1993-07-01"}
	case 5:
		return []string{"ASIA", "1994-01-01"}
	case 6:
		return []string{"1994-01-01", ".06", "24"}
	case 7:
		return []string{"FRANCE", "GERMANY"}
	case 8:
		return []string{"BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"}
	case 9:
		return []string{"green"}
	case 10:
		return []string{"1993-10-01"}
	case 11:
		return []string{"GERMANY", q11Fraction(sf)}
	case 12:
		return []string{"MAIL", "SHIP", "1994-01-01"}
	case 13:
		return []string{"special", "requests"}
	case 14:
		return []string{"1995-09-01"}
	case 15:
		return []string{"1996-01-01"}
	case 16:
		return []string{"Brand#45", "MEDIUM POLISHED", "49", "14", "23", "45", "19", "3", "36", "9"}
	case 17:
		return []string{"Brand#23", "MED BOX"}
	case 18:
		return []string{"300"}
	case 19:
		return []string{"Brand#12", "Brand#23", "Brand#34", "1", "10", "20"}
	case 20:
		return []string{"forest", "1994-01-01", "CANADA"}
	case 21:
		return []string{"SAUDI ARABIA"}
	case 22:
		return []string{"13", "31", "23", "29", "30", "18", "17"}
	}
	return nil
}

// querySeeds returns the seeds of queries 1…22 for qgen's -r seed.
func querySeeds(seed int64) [QueryCount + 1]int64 {
	if seed < 0 {
		seed += pmModulus
	}
	var s [QueryCount + 1]int64
	s[0] = seed
	for q := 1; q <= QueryCount; q++ {
		s[0] = nextRand(s[0])
		s[q] = s[0]
	}
	return s
}

// QueryParams returns query q's parameters (the values of :1, :2, …) for qgen's seed.
func QueryParams(q int, seed int64, sf float64, v QgenVariant) []string {
	if q < 1 || q > QueryCount {
		return nil
	}
	d := loadDists()
	var r rng
	r.seed[q] = querySeeds(seed)[q]
	unif := func(lo, hi int64) int64 { return r.unif(lo, hi, q) }
	pick := func(dd *dist) int { return r.pick(dd, q) }
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	month := func(m int64) string { // months from 1993-01: "19yy-mm-01"
		return fmt.Sprintf("19%02d-%02d-01", 93+m/12, m%12+1)
	}
	year := func() string { return fmt.Sprintf("19%02d-01-01", unif(93, 97)) }
	brand := func() string { return "Brand#" + itoa(unif(1, 5)) + itoa(unif(1, 5)) }
	switch q {
	case 1:
		return []string{itoa(unif(60, 120))}
	case 2:
		size := itoa(unif(1, 50))
		typ := d.pTypes.text[pick(d.pTypes)]
		region := d.regions.text[pick(d.regions)]
		return []string{size, typ[strings.LastIndexByte(typ, ' ')+1:], region}
	case 3:
		seg := d.mseg.text[pick(d.mseg)]
		day := unif(0, 30) // in March 1995
		return []string{seg, fmt.Sprintf("1995-03-%02d", day+1)}
	case 4:
		m := unif(1, 58)
		if v == QgenSpec {
			m-- // the same draw, over 1993-01 … 1997-10
		}
		return []string{month(m)}
	case 5:
		region := d.regions.text[pick(d.regions)]
		return []string{region, year()}
	case 6:
		date := year()
		disc := fmt.Sprintf("0.%02d", unif(2, 9))
		return []string{date, disc, itoa(unif(24, 25))}
	case 7:
		n1 := pick(d.nations2)
		n2 := pick(d.nations2)
		for n2 == n1 {
			n2 = pick(d.nations2)
		}
		return []string{d.nations2.text[n1], d.nations2.text[n2]}
	case 8:
		n := pick(d.nations2)
		region := d.regions.text[d.nations.cum[n]]
		return []string{d.nations2.text[n], region, d.pTypes.text[pick(d.pTypes)]}
	case 9:
		return []string{d.colors.text[pick(d.colors)]}
	case 10:
		return []string{month(unif(1, 24))}
	case 11:
		return []string{d.nations2.text[pick(d.nations2)], q11Fraction(sf)}
	case 12:
		m1 := pick(d.smode)
		m2 := pick(d.smode)
		for m2 == m1 {
			m2 = pick(d.smode)
		}
		return []string{d.smode.text[m1], d.smode.text[m2], year()}
	case 13:
		return []string{d.q13a.text[pick(d.q13a)], d.q13b.text[pick(d.q13b)]}
	case 14:
		return []string{month(unif(0, 59))}
	case 15:
		return []string{month(unif(0, 57))}
	case 16:
		b := brand()
		typ := d.pTypes.text[pick(d.pTypes)]
		out := []string{b, typ[:strings.LastIndexByte(typ, ' ')]}
		for _, s := range permuteDraws(&r, q, 50)[:8] {
			out = append(out, itoa(s+1))
		}
		return out
	case 17:
		b := brand()
		return []string{b, d.pCntr.text[pick(d.pCntr)]}
	case 18:
		return []string{itoa(unif(312, 315))}
	case 19:
		b1, b2, b3 := brand(), brand(), brand()
		q1 := itoa(unif(1, 10))
		q2 := itoa(unif(10, 20))
		q3 := itoa(unif(20, 30))
		return []string{b1, b2, b3, q1, q2, q3}
	case 20:
		color := d.colors.text[pick(d.colors)]
		date := year()
		return []string{color, date, d.nations2.text[pick(d.nations2)]}
	case 21:
		return []string{d.nations2.text[pick(d.nations2)]}
	case 22:
		base := int64(10)
		if v == QgenCompat214 {
			base = 20 // qgen 2.14 adds 10 to codes that already start at 10
		}
		var out []string
		for _, c := range permuteDraws(&r, q, 25)[:7] {
			out = append(out, itoa(base+c))
		}
		return out
	}
	return nil
}

// permuteDraws is qgen's permute of 0…n-1 on stream s: position i swaps with a random
// position in [i, n-1].
func permuteDraws(r *rng, s, n int) []int64 {
	p := make([]int64, n)
	for i := range p {
		p[i] = int64(i)
	}
	for i := range p {
		j := r.unif(int64(i), int64(n-1), s)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// queryPermutations is TPC-H Appendix A's table: the query order of each of 41 streams.
var queryPermutations = sync.OnceValue(func() [][QueryCount]int {
	return [][QueryCount]int{
		{14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12},
		{21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4},
		{6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21},
		{8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3},
		{5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20},
		{21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9},
		{10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21},
		{18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12},
		{19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11},
		{8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16},
		{6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5},
		{15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7},
		{1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15},
		{21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19},
		{2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6},
		{16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18},
		{1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21},
		{3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12},
		{14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16},
		{4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1},
		{16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8},
		{20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2},
		{16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17},
		{18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7},
		{7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16},
		{18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9},
		{13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16},
		{14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19},
		{10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11},
		{10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4},
		{7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2},
		{2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22},
		{15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2},
		{15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1},
		{1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2},
		{14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11},
		{9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19},
		{13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20},
		{20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9},
		{3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2},
		{13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19},
	}
})
