package vec

import (
	"fmt"

	"github.com/colinkdb/colink/internal/civil"
)

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian date.
func CivilFromDays(days int32) (year, month, day int32) {
	y, m, d := civil.Date(int64(days))
	return int32(y), int32(m), int32(d)
}

// YearFromDays is CivilFromDays' year alone.
func YearFromDays(days int32) int32 {
	y, _, _ := CivilFromDays(days)
	return y
}

// DaysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func DaysFromCivil(year, month, day int32) int32 {
	return int32(civil.Days(int(year), int(month), int(day)))
}

// DaysInMonth returns the number of days of a month.
func DaysInMonth(year, month int32) int32 { return int32(civil.DaysInMonth(int(year), int(month))) }

// AddMonths adds n months to a date, clamping the day to the target month's length as
// MySQL's DATE_ADD(d, INTERVAL n MONTH) does (2000-01-31 + 1 month = 2000-02-29); false
// when the result leaves MinDate … MaxDate.
func AddMonths(days int32, n int64) (int32, bool) {
	r, ok := civil.AddMonths(int64(days), n)
	return int32(r), ok
}

// MinDate and MaxDate bound the dates MySQL accepts (0001-01-01 .. 9999-12-31); arithmetic
// that leaves the range yields NULL, as MySQL's DATE_ADD does.
const (
	MinDate = int32(civil.MinDays)
	MaxDate = int32(civil.MaxDays)
)

// ParseDate parses YYYY-MM-DD (also YYYY-M-D) into days since 1970-01-01.
func ParseDate(s []byte) (int32, error) {
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	s = s[i:j]
	var parts [3]int32
	p, nd := 0, 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= '9':
			if nd >= 4 || (p > 0 && nd >= 2) {
				return 0, fmt.Errorf("vec: bad date %q", s)
			}
			parts[p] = parts[p]*10 + int32(c-'0')
			nd++
		case c == '-' && nd > 0 && p < 2:
			p++
			nd = 0
		default:
			return 0, fmt.Errorf("vec: bad date %q", s)
		}
	}
	if p != 2 || nd == 0 {
		return 0, fmt.Errorf("vec: bad date %q", s)
	}
	y, m, d := int(parts[0]), int(parts[1]), int(parts[2])
	if !civil.Valid(y, m, d) {
		return 0, fmt.Errorf("vec: date %q out of range", s)
	}
	return int32(civil.Days(y, m, d)), nil
}

// AppendDate appends YYYY-MM-DD.
func AppendDate(dst []byte, days int32) []byte { return civil.AppendDate(dst, int64(days)) }
