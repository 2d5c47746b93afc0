package tpch

import (
	"fmt"
	"sync"
)

// distMember is one entry of a distribution as the kit lists it: text and own weight.
type distMember struct {
	text   string
	weight int64
}

// distSpec is a named distribution as the kit lists it.
type distSpec struct {
	name    string
	members []distMember
}

// dist is a distribution prepared for dbgen's pick_str: the weights are cumulative, as
// dbgen's reader makes them, and pick maps a uniform draw in [1, total] to a member.
type dist struct {
	name  string
	text  []string
	bytes [][]byte
	cum   []int64 // cum[i] = sum of the weights of members 0..i
	total int64   // cum[len-1], the upper bound of the draw
	// pick[j-1] is the first member whose cumulative weight is >= j (dbgen's linear search,
	// done once). Every TPC-H distribution has a total weight below 500.
	pick []int16
}

func newDist(s distSpec) *dist {
	d := &dist{name: s.name}
	var c int64
	for _, m := range s.members {
		c += m.weight
		d.text = append(d.text, m.text)
		d.bytes = append(d.bytes, []byte(m.text))
		d.cum = append(d.cum, c)
	}
	d.total = c
	if c > 0 {
		d.pick = make([]int16, c)
		i := 0
		for j := int64(1); j <= c; j++ {
			for d.cum[i] < j {
				i++
			}
			d.pick[j-1] = int16(i)
		}
	}
	return d
}

// distributions holds every distribution the generator and qgen use. It is built once and
// never changed afterwards, so it is shared freely between goroutines.
type distributions struct {
	pCntr, colors, pTypes, nations, nations2, regions, oPrio, instruct, smode,
	category, rflag, mseg, nouns, verbs, adjectives, adverbs, auxiliaries,
	terminators, articles, prepositions, grammar, np, vp, q13a, q13b *dist
}

// loadDists is the one way to get the distributions; the value is immutable.
var loadDists = sync.OnceValue(func() *distributions {
	byName := map[string]*dist{}
	for _, s := range distSpecs() {
		byName[s.name] = newDist(s)
	}
	get := func(name string) *dist {
		d, ok := byName[name]
		if !ok {
			panic(fmt.Sprintf("tpch: distribution %q missing from dists_data.go", name))
		}
		return d
	}
	return &distributions{
		pCntr: get("p_cntr"), colors: get("colors"), pTypes: get("p_types"),
		nations: get("nations"), nations2: get("nations2"), regions: get("regions"),
		oPrio: get("o_oprio"), instruct: get("instruct"), smode: get("smode"),
		category: get("category"), rflag: get("rflag"), mseg: get("msegmnt"),
		nouns: get("nouns"), verbs: get("verbs"), adjectives: get("adjectives"),
		adverbs: get("adverbs"), auxiliaries: get("auxillaries"), terminators: get("terminators"),
		articles: get("articles"), prepositions: get("prepositions"), grammar: get("grammar"),
		np: get("np"), vp: get("vp"), q13a: get("Q13a"), q13b: get("Q13b"),
	}
})
