package civil

// DATETIME values are microseconds since 1970-01-01 00:00:00 on the proleptic Gregorian
// calendar with no time zone: a day is always 86 400 s (no leap seconds), as in MySQL.

// Time constants of DATETIME arithmetic.
const (
	MicrosPerSecond int64 = 1_000_000
	MicrosPerDay    int64 = 86_400 * MicrosPerSecond
	// MaxFsp is the most fractional-second digits a DATETIME keeps (MySQL's 6).
	MaxFsp = 6
	// MinMicros and MaxMicros bound DATETIME: 0001-01-01 00:00:00 …
	// 9999-12-31 23:59:59.999999.
	MinMicros = MinDays * MicrosPerDay
	MaxMicros = (MaxDays+1)*MicrosPerDay - 1
)

// SplitMicros splits a DATETIME into its day (days since 1970-01-01) and the microseconds
// since that day's midnight (0 … MicrosPerDay-1).
func SplitMicros(us int64) (days, micros int64) {
	days = floorDiv(us, MicrosPerDay)
	return days, us - days*MicrosPerDay
}

// Clock returns the hour, minute, second and microsecond of microseconds since midnight.
func Clock(micros int64) (hour, minute, second, micro int) {
	s := micros / MicrosPerSecond
	return int(s / 3600), int(s / 60 % 60), int(s % 60), int(micros % MicrosPerSecond)
}

// MicrosInRange reports whether us falls in MinMicros … MaxMicros.
func MicrosInRange(us int64) bool { return us >= MinMicros && us <= MaxMicros }

// AppendDatetime appends us as YYYY-MM-DD HH:MM:SS with fsp (0 … 6) fraction digits, as
// MySQL spells a DATETIME(fsp). The fraction is truncated to fsp digits; values stored in
// a DATETIME(fsp) column have no more.
func AppendDatetime(dst []byte, us int64, fsp int) []byte {
	days, micros := SplitMicros(us)
	dst = AppendDate(dst, days)
	h, m, s, f := Clock(micros)
	dst = append(dst, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
	if fsp > 0 {
		fsp = min(fsp, MaxFsp)
		dst = append(dst, '.')
		div := 100_000
		for range fsp {
			dst = append(dst, byte('0'+f/div%10))
			div /= 10
		}
	}
	return dst
}

// FormatDatetime spells us as AppendDatetime does.
func FormatDatetime(us int64, fsp int) string {
	var buf [32]byte
	return string(AppendDatetime(buf[:0], us, fsp))
}

// TruncateMicros drops the fraction digits beyond fsp, towards the earlier instant, as a
// DATETIME(fsp) column stores a value given with more digits.
// (MySQL rounds unless TIME_TRUNCATE_FRACTIONAL is set; colink truncates, so that a value
// never moves to the next second, day or year.)
func TruncateMicros(us int64, fsp int) int64 {
	if fsp >= MaxFsp {
		return us
	}
	unit := int64(1)
	for range MaxFsp - fsp {
		unit *= 10
	}
	return floorDiv(us, unit) * unit
}
