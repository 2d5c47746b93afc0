package vec

import "fmt"

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian date.
// (Howard Hinnant's days-from-civil algorithm, inverted.)
func CivilFromDays(days int32) (year, month, day int32) {
	z := int64(days) + 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return int32(y), int32(m), int32(d)
}

// YearFromDays is CivilFromDays' year alone.
func YearFromDays(days int32) int32 {
	y, _, _ := CivilFromDays(days)
	return y
}

// DaysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func DaysFromCivil(year, month, day int32) int32 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	m := int64(month)
	if m > 2 {
		m -= 3
	} else {
		m += 9
	}
	doy := (153*m+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int32(era*146097 + doe - 719468)
}

// DaysInMonth returns the number of days of a month.
func DaysInMonth(year, month int32) int32 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// AddMonths adds n months to a date, clamping the day to the target month's length as
// MySQL's DATE_ADD(d, INTERVAL n MONTH) does (2000-01-31 + 1 month = 2000-02-29).
func AddMonths(days int32, n int64) (int32, bool) {
	if n > 120000 || n < -120000 {
		return 0, false
	}
	y, m, d := CivilFromDays(days)
	total := int64(y)*12 + int64(m-1) + n
	ny := total / 12
	nm := total % 12
	if nm < 0 {
		nm += 12
		ny--
	}
	if ny < 0 || ny > 9999 {
		return 0, false
	}
	year, month := int32(ny), int32(nm)+1
	return DaysFromCivil(year, month, min(d, DaysInMonth(year, month))), true
}

// MinDate and MaxDate bound the dates MySQL accepts (0001-01-01 .. 9999-12-31); arithmetic
// that leaves the range yields NULL, as MySQL's DATE_ADD does.
var (
	MinDate = DaysFromCivil(1, 1, 1)
	MaxDate = DaysFromCivil(9999, 12, 31)
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
	y, m, d := parts[0], parts[1], parts[2]
	if y < 1 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m) {
		return 0, fmt.Errorf("vec: date %q out of range", s)
	}
	return DaysFromCivil(y, m, d), nil
}

// AppendDate appends YYYY-MM-DD.
func AppendDate(dst []byte, days int32) []byte {
	y, m, d := CivilFromDays(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	dst = append(dst, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return dst
}
