package fn

import (
	"time"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/civil"
)

// The date functions' kernels. A DATE is days since 1970-01-01.

// datePart is the kernel of a date part: rows writes the part of every live date of d
// into o (a loop per part, so that the part's arithmetic is inlined).
func datePart(rows func(o, d, live []int32)) func(*Site) Kernel {
	return func(*Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
			rows(out.I32, args[0].I32, live)
			return nil
		}
	}
}

// The date parts, as MySQL computes them.

func years(o, d, live []int32) {
	for _, i := range live {
		o[i] = vec.YearFromDays(d[i])
	}
}

func months(o, d, live []int32) {
	for _, i := range live {
		_, m, _ := vec.CivilFromDays(d[i])
		o[i] = m
	}
}

func days(o, d, live []int32) {
	for _, i := range live {
		_, _, dd := vec.CivilFromDays(d[i])
		o[i] = dd
	}
}

func quarters(o, d, live []int32) {
	for _, i := range live {
		_, m, _ := vec.CivilFromDays(d[i])
		o[i] = (m + 2) / 3
	}
}

// yearMonths is EXTRACT(YEAR_MONTH): year*100 + month.
func yearMonths(o, d, live []int32) {
	for _, i := range live {
		y, m, _ := vec.CivilFromDays(d[i])
		o[i] = y*100 + m
	}
}

// weeks is WEEK(d) in mode 0: Sunday-first weeks, the days before the year's first Sunday
// in week 0.
func weeks(o, d, live []int32) {
	for _, i := range live {
		o[i] = int32(civil.WeekSundayFirst(int64(d[i])))
	}
}

// daysOfWeek is 1 for Sunday … 7 for Saturday.
func daysOfWeek(o, d, live []int32) {
	for _, i := range live {
		o[i] = int32((civil.Weekday(int64(d[i]))+1)%7 + 1)
	}
}

// weekdays is 0 for Monday … 6 for Sunday.
func weekdays(o, d, live []int32) {
	for _, i := range live {
		o[i] = int32(civil.Weekday(int64(d[i])))
	}
}

func daysOfYear(o, d, live []int32) {
	for _, i := range live {
		o[i] = int32(civil.DayOfYear(int64(d[i])))
	}
}

// dateDiffKernel is DATEDIFF(a, b): the days from b to a.
func dateDiffKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a, b := args[0].I32, args[1].I32
		for _, i := range live {
			out.I64[i] = int64(a[i]) - int64(b[i])
		}
		return nil
	}
}

// maxTimestamp is the last second of TIMESTAMP's range in MySQL 8.0.11, the version colink
// reports: 2038-01-19 03:14:07 UTC.
const maxTimestamp = 1<<31 - 1

// datetimeFspKernel truncates datetimes to the constant number of fraction digits.
func datetimeFspKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		t, n := args[0].I64, args[1].I64
		for _, i := range live {
			out.I64[i] = civil.TruncateMicros(t[i], int(n[i]))
		}
		return nil
	}
}

// timePart is the kernel of a part of the time of day: part reads it from a datetime's
// microseconds since its midnight.
func timePart(part func(micros int64) int32) func(*Site) Kernel {
	return func(*Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
			t := args[0].I64
			for _, i := range live {
				_, us := civil.SplitMicros(t[i])
				out.I32[i] = part(us)
			}
			return nil
		}
	}
}

func hours(us int64) int32        { return int32(us / (3600 * civil.MicrosPerSecond)) }
func minutes(us int64) int32      { return int32(us / (60 * civil.MicrosPerSecond) % 60) }
func seconds(us int64) int32      { return int32(us / civil.MicrosPerSecond % 60) }
func microseconds(us int64) int32 { return int32(us % civil.MicrosPerSecond) }

// unixTimestampKernel is UNIX_TIMESTAMP(t): t read in the local time zone, in seconds
// since the epoch (the fraction dropped); 0 outside TIMESTAMP's range, as in MySQL.
func unixTimestampKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		t := args[0].I64
		for _, i := range live {
			out.I64[i] = unixSeconds(t[i], time.Local)
		}
		return nil
	}
}

// unixSeconds is the epoch second of the wall-clock datetime us in loc, 0 out of range.
func unixSeconds(us int64, loc *time.Location) int64 {
	days, tod := civil.SplitMicros(us)
	y, m, dd := civil.Date(days)
	h, mi, sec, _ := civil.Clock(tod)
	s := time.Date(y, time.Month(m), dd, h, mi, sec, 0, loc).Unix()
	if s < 0 || s > maxTimestamp {
		return 0
	}
	return s
}
