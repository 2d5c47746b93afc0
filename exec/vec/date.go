package vec

import (
	"fmt"

	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
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

// ParseDate parses YYYY-MM-DD (also YYYY-M-D, and years of fewer digits) with spaces
// around it into days since 1970-01-01.
func ParseDate(s []byte) (int32, error) {
	d, err := textparse.Date(s, textparse.DateForm{Space: textparse.Blanks})
	switch err {
	case nil:
		return int32(d), nil
	case textparse.ErrRange:
		return 0, fmt.Errorf("vec: date %q out of range", textparse.Trim(s, textparse.Blanks))
	}
	return 0, fmt.Errorf("vec: bad date %q", textparse.Trim(s, textparse.Blanks))
}

// AppendDate appends YYYY-MM-DD.
func AppendDate(dst []byte, days int32) []byte { return civil.AppendDate(dst, int64(days)) }

// AppendDatetime appends microseconds since 1970-01-01 00:00:00 as YYYY-MM-DD HH:MM:SS
// with fsp fraction digits; fsp < 0 spells six digits when the fraction is not zero and
// none when it is (a value whose SQL type is not known).
func AppendDatetime(dst []byte, us int64, fsp int) []byte {
	if fsp < 0 {
		fsp = 0
		if us%civil.MicrosPerSecond != 0 {
			fsp = civil.MaxFsp
		}
	}
	return civil.AppendDatetime(dst, us, fsp)
}

// ParseDatetime parses YYYY-MM-DD[ HH:MM[:SS[.ffffff]]] with spaces around it into
// microseconds since 1970-01-01 00:00:00.
func ParseDatetime(s []byte) (int64, error) {
	us, err := textparse.Datetime(s, textparse.DateForm{Space: textparse.Blanks})
	switch err {
	case nil:
		return us, nil
	case textparse.ErrRange:
		return 0, fmt.Errorf("vec: datetime %q out of range", textparse.Trim(s, textparse.Blanks))
	}
	return 0, fmt.Errorf("vec: bad datetime %q", textparse.Trim(s, textparse.Blanks))
}
