package fn

import (
	"math"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/libm"
)

// table is the registry: every SQL function, each declared once. The order is the IR's
// (a family's members are listed, in errors, in this order) and gives each its ID.
func table() []Func {
	return []Func{
		// Strings. Lengths count characters; comparisons are of bytes.
		{Name: "upper", SQL: []string{"upper", "ucase"}, MinArgs: 1, MaxArgs: 1, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: mapKernel(appendUpper)},
		{Name: "lower", SQL: []string{"lower", "lcase"}, MinArgs: 1, MaxArgs: 1, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: mapKernel(appendLower)},
		{Name: "length", SQL: []string{"length", "octet_length"}, MinArgs: 1, MaxArgs: 1, Args: []Class{String},
			Typing: stringSig(fixed(vec.Int64Type)), Kernel: lengthKernel}, // bytes
		{Name: "char_length", SQL: []string{"char_length", "character_length"}, MinArgs: 1, MaxArgs: 1, Args: []Class{String},
			Typing: stringSig(fixed(vec.Int64Type)), Kernel: charLengthKernel},
		{Name: "concat", SQL: []string{"concat"}, MinArgs: 1, MaxArgs: -1, Args: []Class{String},
			Typing: stringSig(concatLength), Kernel: concatKernel},
		// TRIM(s[, remstr]) strips spaces, or repeated remstr, from both ends, LTRIM from the
		// start, RTRIM from the end. SQL reaches them through the binder's TRIM syntax
		// (TRIM([BOTH | LEADING | TRAILING] [remstr] FROM s), LTRIM(s), RTRIM(s)).
		{Name: "trim", MinArgs: 1, MaxArgs: 2, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: trimKernel(true, true), PlanFold: anyNull},
		{Name: "ltrim", MinArgs: 1, MaxArgs: 2, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: trimKernel(true, false), PlanFold: anyNull},
		{Name: "rtrim", MinArgs: 1, MaxArgs: 2, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: trimKernel(false, true), PlanFold: anyNull},
		// SUBSTRING(s, pos[, len]): 1-based character positions, a negative pos counting
		// from the end.
		{Name: "substring", SQL: []string{"substring", "substr", "mid"}, MinArgs: 2, MaxArgs: 3, Args: []Class{String, Count},
			Typing: substringSig, Kernel: substringKernel},
		// LEFT(s, n), RIGHT(s, n): the first / last n characters.
		{Name: "left", SQL: []string{"left"}, MinArgs: 2, MaxArgs: 2, Args: []Class{String, Count},
			Typing: charsSig, Kernel: charsKernel(leftChars)},
		{Name: "right", SQL: []string{"right"}, MinArgs: 2, MaxArgs: 2, Args: []Class{String, Count},
			Typing: charsSig, Kernel: charsKernel(rightChars)},
		{Name: "replace", SQL: []string{"replace"}, MinArgs: 3, MaxArgs: 3, Args: []Class{String},
			Typing: stringSig(replaceLength), Kernel: replaceKernel},
		{Name: "reverse", SQL: []string{"reverse"}, MinArgs: 1, MaxArgs: 1, Args: []Class{String},
			Typing: stringSig(sameLength), Kernel: mapKernel(appendReversed)},
		// LOCATE(sub, s[, pos]) (and POSITION(sub IN s)), INSTR(s, sub): the 1-based
		// character position, an INT, of sub's first occurrence in s (from pos on), 0 if none;
		// bytes compare as the collation does.
		{Name: "locate", SQL: []string{"locate", "position"}, MinArgs: 2, MaxArgs: 3, Args: []Class{String, String, Count},
			Typing: locateSig, Kernel: locateKernel(false)},
		{Name: "instr", SQL: []string{"instr"}, MinArgs: 2, MaxArgs: 2, Args: []Class{String},
			Typing: stringSig(fixed(vec.Int32Type)), Kernel: locateKernel(true)},
		// STRCMP(a, b): -1, 0 or 1, an INT.
		{Name: "strcmp", SQL: []string{"strcmp"}, MinArgs: 2, MaxArgs: 2, Args: []Class{String},
			Typing: stringSig(fixed(vec.Int32Type)), Kernel: strcmpKernel},

		// Exact and approximate numbers.
		// unsigned is CAST(x AS UNSIGNED) after x is cast to BIGINT: colink has no BIGINT
		// UNSIGNED, so a value that holds (0 to 2^63-1) passes and a negative one, which
		// MySQL wraps to 2^64 + x, is error 1690 rather than a wrong number. SQL reaches it
		// through the binder's CAST and CONVERT.
		{Name: "unsigned", MinArgs: 1, MaxArgs: 1, Args: []Class{Number},
			Typing: unsignedSig, Kernel: unsignedKernel},
		{Name: "abs", SQL: []string{"abs"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Number},
			Typing: absSig, Kernel: absKernel, MayOverflow: true},
		// ROUND(x[, d]) and TRUNCATE(x, d) to d places (negative: left of the point).
		{Name: "round", SQL: []string{"round"}, MinArgs: 1, MaxArgs: 2, Args: []Class{Number, Places},
			Typing: roundSig(true), Kernel: roundKernel(false), MayOverflow: true, PlanFold: roundFolds},
		{Name: "truncate", SQL: []string{"truncate"}, MinArgs: 2, MaxArgs: 2, Args: []Class{Number, Places},
			Typing: roundSig(false), Kernel: roundKernel(true), MayOverflow: true, PlanFold: anyNull},
		{Name: "floor", SQL: []string{"floor"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Number},
			Typing: floorSig, Kernel: floorKernel(false), MayOverflow: true, PlanFold: anyNull},
		{Name: "ceil", SQL: []string{"ceil", "ceiling"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Number},
			Typing: floorSig, Kernel: floorKernel(true), MayOverflow: true, PlanFold: anyNull},
		{Name: "sign", SQL: []string{"sign"}, MinArgs: 1, MaxArgs: 1, Args: []Class{IntOrDouble},
			Typing: signSig, Kernel: signKernel},
		// The functions of doubles, rounded as MySQL's C library rounds them
		// (internal/libm); a result beyond the finite doubles is error 1690.
		{Name: "sqrt", SQL: []string{"sqrt"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Double}, Nulls: Partial,
			Typing: doubleSig, Kernel: floatKernel(math.Sqrt, func(x float64) bool { return x < 0 }), MayOverflow: true},
		{Name: "pow", SQL: []string{"pow", "power"}, MinArgs: 2, MaxArgs: 2, Args: []Class{Double},
			Typing: doubleSig, Kernel: powKernel, MayOverflow: true},
		{Name: "exp", SQL: []string{"exp"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Double},
			Typing: doubleSig, Kernel: floatKernel(libm.Exp, nil), MayOverflow: true},
		// LN; LOG(x) is LN(x), LOG(b, x) the binder's LN(x)/LN(b).
		{Name: "ln", SQL: []string{"ln"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Double}, Nulls: Partial,
			Typing: doubleSig, Kernel: floatKernel(libm.Log, notPositive), MayOverflow: true},
		{Name: "log10", SQL: []string{"log10"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Double}, Nulls: Partial,
			Typing: doubleSig, Kernel: floatKernel(libm.Log10, notPositive), MayOverflow: true},
		{Name: "log2", SQL: []string{"log2"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Double}, Nulls: Partial,
			Typing: doubleSig, Kernel: floatKernel(libm.Log2, notPositive), MayOverflow: true},

		// GREATEST and LEAST compare their arguments (a number and a string as doubles) and
		// return the largest / smallest in their common type; NULL if any is NULL.
		{Name: "greatest", SQL: []string{"greatest"}, MinArgs: 2, MaxArgs: -1, Args: []Class{Compared},
			Typing: commonSig, Kernel: extremeKernel(true), PlanFold: anyNull},
		{Name: "least", SQL: []string{"least"}, MinArgs: 2, MaxArgs: -1, Args: []Class{Compared},
			Typing: commonSig, Kernel: extremeKernel(false), PlanFold: anyNull},

		// Dates. The date parts are a family: the IR spells (extract part d), as SQL's
		// EXTRACT(part FROM d) does; each is an INT.
		{Name: "year", Family: "extract", SQL: []string{"year"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(years)},
		{Name: "month", Family: "extract", SQL: []string{"month"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(months)},
		{Name: "day", Family: "extract", SQL: []string{"day", "dayofmonth"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(days)},
		{Name: "quarter", Family: "extract", SQL: []string{"quarter"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(quarters)},
		{Name: "year_month", Family: "extract", MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(yearMonths), Print: "extract(year_month from %s)"},
		// WEEK(d[, mode]): mode 0 only, the default of default_week_format.
		{Name: "week", Family: "extract", SQL: []string{"week"}, MinArgs: 1, MaxArgs: 2, Args: []Class{Date, Mode},
			Typing: datePartSig, Kernel: datePart(weeks)},
		{Name: "dayofweek", Family: "extract", SQL: []string{"dayofweek"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(daysOfWeek)},
		{Name: "weekday", Family: "extract", SQL: []string{"weekday"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(weekdays)},
		{Name: "dayofyear", Family: "extract", SQL: []string{"dayofyear"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Date},
			Typing: datePartSig, Kernel: datePart(daysOfYear)},
		// DATEDIFF(a, b): days from b to a, a BIGINT.
		{Name: "datediff", SQL: []string{"datediff"}, MinArgs: 2, MaxArgs: 2, Args: []Class{Date},
			Typing: dateDiffSig, Kernel: dateDiffKernel, PlanFold: anyNull},
		// datetime_fsp(t, fsp) drops t's fraction digits beyond fsp (0 … 6), towards the
		// earlier instant, as a DATETIME(fsp) holds it. The lowerer inserts it where a
		// value becomes a DATETIME of fewer digits: exec's datetimes carry no fsp.
		{Name: "datetime_fsp", MinArgs: 2, MaxArgs: 2, Args: []Class{Datetime, Count},
			Typing: datetimeFspSig, Kernel: datetimeFspKernel},
		// The parts of a time of day, of a DATETIME (a DATE's are 0).
		{Name: "hour", Family: "extract", SQL: []string{"hour"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Datetime},
			Typing: timePartSig, Kernel: timePart(hours)},
		{Name: "minute", Family: "extract", SQL: []string{"minute"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Datetime},
			Typing: timePartSig, Kernel: timePart(minutes)},
		{Name: "second", Family: "extract", SQL: []string{"second"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Datetime},
			Typing: timePartSig, Kernel: timePart(seconds)},
		{Name: "microsecond", Family: "extract", SQL: []string{"microsecond"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Datetime},
			Typing: timePartSig, Kernel: timePart(microseconds)},
		// UNIX_TIMESTAMP(t): the seconds from the epoch to t (a DATE's midnight) in the
		// process's time zone (MySQL's time_zone SYSTEM), a BIGINT, the fraction dropped; 0
		// outside TIMESTAMP's range. The form without an argument, the statement's time, is
		// the binder's.
		{Name: "unix_timestamp", SQL: []string{"unix_timestamp"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Datetime},
			Typing: unixTimestampSig, Kernel: unixTimestampKernel},

		// SLEEP(seconds) waits, once for every row it is evaluated on, and returns 0. It is
		// wanted for its wait, so it is never folded, not even over constants.
		{Name: "sleep", SQL: []string{"sleep"}, MinArgs: 1, MaxArgs: 1, Args: []Class{Seconds}, Nulls: NeverNull,
			Typing: sleepSig, Kernel: sleepKernel, Volatile: true},
	}
}
