package tpch

import (
	"strconv"
	"sync"
	"time"
)

// This file formats generated rows as dbgen's .tbl text: fields separated by '|', a '|'
// after the last field too, one row per line.

// dateText returns "yyyy-mm-dd" for each day index from 1992-01-01 over dbgen's date range.
var dateText = sync.OnceValue(func() *[totalDates][10]byte {
	var t [totalDates][10]byte
	start := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range t {
		copy(t[i][:], start.AddDate(0, 0, i).Format("2006-01-02"))
	}
	return &t
})

// digitPairs holds "00" … "99", for formatting two digits at a time.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendInt appends v in decimal. It is strconv.AppendInt without the intermediate buffer
// copy, which showed in profiles: the generator formats some 60 million numbers at SF 1.
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		if v == -1<<63 {
			return strconv.AppendInt(dst, v, 10)
		}
		dst = append(dst, '-')
		v = -v
	}
	u := uint64(v)
	n := 1
	for t := u; t >= 10; t /= 10 {
		n++
	}
	start := len(dst)
	dst = append(dst, "00000000000000000000"[:n]...)
	i := start + n
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		dst[i], dst[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		r := u * 2
		dst[i-2], dst[i-1] = digitPairs[r], digitPairs[r+1]
	} else {
		dst[i-1] = byte('0' + u)
	}
	return dst
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	digits := appendInt(buf[:0], v)
	for i := len(digits); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// appendMoney appends a cents amount as dbgen prints it: [-]dollars.cc.
func appendMoney(dst []byte, cents int64) []byte {
	if cents < 0 {
		dst = append(dst, '-')
		cents = -cents
	}
	dst = appendInt(dst, cents/100)
	c := cents % 100
	return append(dst, '.', byte('0'+c/10), byte('0'+c%10))
}

// tblFormatter appends rows as .tbl lines.
type tblFormatter struct {
	d     *distributions
	dates *[totalDates][10]byte
}

func newTblFormatter() tblFormatter {
	return tblFormatter{d: loadDists(), dates: dateText()}
}

func (f *tblFormatter) part(dst []byte, p *partRow) []byte {
	dst = appendInt(dst, p.key)
	dst = append(dst, '|')
	for i, c := range p.name {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, f.d.colors.bytes[c]...)
	}
	dst = append(dst, "|Manufacturer#"...)
	dst = appendInt(dst, p.mfgr)
	dst = append(dst, "|Brand#"...)
	dst = appendInt(dst, p.brand)
	dst = append(dst, '|')
	dst = append(dst, f.d.pTypes.bytes[p.typ]...)
	dst = append(dst, '|')
	dst = appendInt(dst, p.size)
	dst = append(dst, '|')
	dst = append(dst, f.d.pCntr.bytes[p.container]...)
	dst = append(dst, '|')
	dst = appendMoney(dst, p.retail)
	dst = append(dst, '|')
	dst = append(dst, p.comment...)
	return append(dst, '|', '\n')
}

func (f *tblFormatter) partsupp(dst []byte, p *partRow) []byte {
	for i := range p.ps {
		ps := &p.ps[i]
		dst = appendInt(dst, ps.partKey)
		dst = append(dst, '|')
		dst = appendInt(dst, ps.suppKey)
		dst = append(dst, '|')
		dst = appendInt(dst, ps.qty)
		dst = append(dst, '|')
		dst = appendMoney(dst, ps.cost)
		dst = append(dst, '|')
		dst = append(dst, ps.comment...)
		dst = append(dst, '|', '\n')
	}
	return dst
}

func (f *tblFormatter) supplier(dst []byte, s *suppRow) []byte {
	dst = appendParty(dst, s.key, "|Supplier#", s.address, s.nation, &s.phone, s.acctbal)
	dst = append(dst, s.comment...)
	return append(dst, '|', '\n')
}

func (f *tblFormatter) customer(dst []byte, c *custRow) []byte {
	dst = appendParty(dst, c.key, "|Customer#", c.address, c.nation, &c.phone, c.acctbal)
	dst = append(dst, f.d.mseg.bytes[c.segment]...)
	dst = append(dst, '|')
	dst = append(dst, c.comment...)
	return append(dst, '|', '\n')
}

// appendParty appends the fields a supplier's and a customer's line begin with:
// key|Supplier#000000001|address|nation|phone|acctbal| (name is "|Supplier#" or "|Customer#").
func appendParty(dst []byte, key int64, name string, address []byte, nation int64, phone *[15]byte, acctbal int64) []byte {
	dst = appendInt(dst, key)
	dst = append(dst, name...)
	dst = appendPadded(dst, key, 9)
	dst = append(dst, '|')
	dst = append(dst, address...)
	dst = append(dst, '|')
	dst = appendInt(dst, nation)
	dst = append(dst, '|')
	dst = append(dst, phone[:]...)
	dst = append(dst, '|')
	dst = appendMoney(dst, acctbal)
	return append(dst, '|')
}

func (f *tblFormatter) order(dst []byte, o *orderRow) []byte {
	dst = appendInt(dst, o.key)
	dst = append(dst, '|')
	dst = appendInt(dst, o.custKey)
	dst = append(dst, '|', o.status, '|')
	dst = appendMoney(dst, o.total)
	dst = append(dst, '|')
	dst = append(dst, f.dates[o.date][:]...)
	dst = append(dst, '|')
	dst = append(dst, f.d.oPrio.bytes[o.priority]...)
	dst = append(dst, "|Clerk#"...)
	dst = appendPadded(dst, o.clerk, 9)
	dst = append(dst, "|0|"...)
	dst = append(dst, o.comment...)
	return append(dst, '|', '\n')
}

func (f *tblFormatter) lineitem(dst []byte, o *orderRow) []byte {
	for i := 0; i < o.lines; i++ {
		l := &o.line[i]
		dst = appendInt(dst, l.orderKey)
		dst = append(dst, '|')
		dst = appendInt(dst, l.partKey)
		dst = append(dst, '|')
		dst = appendInt(dst, l.suppKey)
		dst = append(dst, '|')
		dst = appendInt(dst, l.number)
		dst = append(dst, '|')
		dst = appendInt(dst, l.qty)
		dst = append(dst, '|')
		dst = appendMoney(dst, l.price)
		dst = append(dst, '|')
		dst = appendMoney(dst, l.discount)
		dst = append(dst, '|')
		dst = appendMoney(dst, l.tax)
		dst = append(dst, '|', l.returnFlag, '|', l.status, '|')
		dst = append(dst, f.dates[l.shipDate][:]...)
		dst = append(dst, '|')
		dst = append(dst, f.dates[l.commitDate][:]...)
		dst = append(dst, '|')
		dst = append(dst, f.dates[l.receiptDate][:]...)
		dst = append(dst, '|')
		dst = append(dst, f.d.instruct.bytes[l.instruct]...)
		dst = append(dst, '|')
		dst = append(dst, f.d.smode.bytes[l.mode]...)
		dst = append(dst, '|')
		dst = append(dst, l.comment...)
		dst = append(dst, '|', '\n')
	}
	return dst
}

func (f *tblFormatter) nation(dst []byte, n *nationRow) []byte {
	dst = appendInt(dst, n.key)
	dst = append(dst, '|')
	dst = append(dst, f.d.nations.bytes[n.key]...)
	dst = append(dst, '|')
	dst = appendInt(dst, n.region)
	dst = append(dst, '|')
	dst = append(dst, n.comment...)
	return append(dst, '|', '\n')
}

func (f *tblFormatter) region(dst []byte, r *regionRow) []byte {
	dst = appendInt(dst, r.key)
	dst = append(dst, '|')
	dst = append(dst, f.d.regions.bytes[r.key]...)
	dst = append(dst, '|')
	dst = append(dst, r.comment...)
	return append(dst, '|', '\n')
}
