// Package civil owns colink's one conversion between DATE values — days since 1970-01-01 —
// and proleptic Gregorian calendar dates (year, month, day), with MySQL's DATE range
// 0001-01-01 … 9999-12-31, month arithmetic and the YYYY-MM-DD spelling. The SQL planner,
// the execution kernels and the MySQL front end all convert through it, so a date means the
// same day everywhere. It is pure integer arithmetic: exact for every int64 day count whose
// year fits in an int, with no time.Duration (which overflows after 2262).
package civil

// The DATE range MySQL accepts, as days since 1970-01-01.
const (
	MinDays int64 = -719162 // 0001-01-01
	MaxDays int64 = 2932896 // 9999-12-31
	MinYear       = 1
	MaxYear       = 9999
)

// The calendar repeats every 400 years (146097 days). Counting years from March 1st puts
// the leap day at the end of a year, so the length of every month but the last is fixed.
const (
	daysPerEra  = 146097
	epochOffset = 719468 // days from 0000-03-01 to 1970-01-01
)

// floorDiv is a/b rounded towards minus infinity, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// Days returns the days since 1970-01-01 of year-month-day. month must be 1…12; day is
// not checked, so day 0 is the last day of the previous month.
func Days(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y-- // January and February belong to the previous March-based year
	}
	era := floorDiv(y, 400)
	yoe := y - era*400 // year of era, 0…399
	mp := int64(month+9) % 12
	doy := (153*mp+2)/5 + int64(day) - 1 // day of the March-based year, 0…365
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*daysPerEra + doe - epochOffset
}

// Date returns the calendar date of days since 1970-01-01.
func Date(days int64) (year, month, day int) {
	z := days + epochOffset
	era := floorDiv(z, daysPerEra)
	doe := z - era*daysPerEra                              // day of era, 0…146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of era, 0…399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the March-based year
	mp := (5*doy + 2) / 153                                // month from March, 0…11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int((mp+2)%12 + 1)
	y := yoe + era*400
	if month <= 2 {
		y++
	}
	return int(y), month, day
}

// IsLeap reports a leap year of the Gregorian calendar.
func IsLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

// DaysInMonth returns the length of a month (1…12).
func DaysInMonth(year, month int) int {
	switch month {
	case 2:
		if IsLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Valid reports whether year-month-day is a day of MySQL's DATE range.
func Valid(year, month, day int) bool {
	return year >= MinYear && year <= MaxYear && month >= 1 && month <= 12 &&
		day >= 1 && day <= DaysInMonth(year, month)
}

// InRange reports whether days falls in 0001-01-01 … 9999-12-31.
func InRange(days int64) bool { return days >= MinDays && days <= MaxDays }

// AddDays adds n days as DATE_ADD(d, INTERVAL n DAY) does: false when the result leaves
// the DATE range (MySQL's NULL), whatever n is.
func AddDays(days, n int64) (int64, bool) {
	// Both bounds are checked before adding, so no n can overflow.
	if !InRange(days) || n > MaxDays-days || n < MinDays-days {
		return 0, false
	}
	return days + n, true
}

// AddMonths adds n months as DATE_ADD(d, INTERVAL n MONTH) does: the day is clamped to the
// end of the resulting month (2020-01-31 + 1 month = 2020-02-29); false when the result
// leaves the DATE range, whatever n is.
func AddMonths(days, n int64) (int64, bool) {
	if !InRange(days) {
		return 0, false
	}
	const maxSpan = (MaxYear - MinYear + 1) * 12 // any larger |n| leaves the range
	if n > maxSpan || n < -maxSpan {
		return 0, false
	}
	y, m, d := Date(days)
	total := int64(y)*12 + int64(m-1) + n // months since year 0; > 0 here
	ny, nm := int(floorDiv(total, 12)), int(total-floorDiv(total, 12)*12)+1
	if ny < MinYear || ny > MaxYear {
		return 0, false
	}
	return Days(ny, nm, min(d, DaysInMonth(ny, nm))), true
}

// AppendDate appends days since 1970-01-01 as YYYY-MM-DD. Years outside 0…9999, which no
// DATE holds, are spelled with as many digits as they need (and a sign) rather than wrongly.
func AppendDate(dst []byte, days int64) []byte {
	y, m, d := Date(days)
	if y >= 0 && y <= 9999 {
		dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
	} else {
		dst = appendInt(dst, y)
	}
	return append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// appendInt is strconv.AppendInt for base 10, kept here so the package has no imports.
func appendInt(dst []byte, v int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		u := uint64(-int64(v))
		return appendUint(dst, u)
	}
	return appendUint(dst, uint64(v))
}

func appendUint(dst []byte, u uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

// Format spells days since 1970-01-01 as YYYY-MM-DD (see AppendDate).
func Format(days int64) string {
	var buf [16]byte
	return string(AppendDate(buf[:0], days))
}

// Weekday is the day of the week of days since 1970-01-01 (a Thursday), 0 = Monday …
// 6 = Sunday, as MySQL's WEEKDAY; DAYOFWEEK is (Weekday+1)%7 + 1 (1 = Sunday).
func Weekday(days int64) int { return int(floorMod(days+3, 7)) }

// DayOfYear is the day of the year of days since 1970-01-01, 1 … 366.
func DayOfYear(days int64) int {
	y, _, _ := Date(days)
	return int(days-Days(y, 1, 1)) + 1
}

// WeekSundayFirst is MySQL's WEEK(d) in its default mode 0: weeks start on Sunday and week
// 1 is the one holding the year's first Sunday, so the days before it are week 0 (0 … 53).
func WeekSundayFirst(days int64) int {
	doy := DayOfYear(days) - 1                 // 0-based
	jan1 := (Weekday(days-int64(doy)) + 1) % 7 // 0 = Sunday
	firstSunday := (7 - jan1) % 7              // 0-based day of the first Sunday
	if doy < firstSunday {
		return 0
	}
	return (doy-firstSunday)/7 + 1
}

// floorMod is a mod b in 0 … b-1, for b > 0.
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
