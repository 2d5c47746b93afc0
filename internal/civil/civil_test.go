package civil

import (
	"math"
	"testing"
	"time"
)

// TestEveryDay walks every day of the DATE range, checking Date and Days against each
// other and against the standard library's calendar, day after day.
func TestEveryDay(t *testing.T) {
	ref := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	for days := MinDays; days <= MaxDays; days++ {
		y, m, d := Date(days)
		ry, rm, rd := ref.Date()
		if y != ry || m != int(rm) || d != rd {
			t.Fatalf("Date(%d) = %04d-%02d-%02d, want %04d-%02d-%02d", days, y, m, d, ry, rm, rd)
		}
		if back := Days(y, m, d); back != days {
			t.Fatalf("Days(%04d-%02d-%02d) = %d, want %d", y, m, d, back, days)
		}
		if !Valid(y, m, d) || !InRange(days) {
			t.Fatalf("%04d-%02d-%02d (%d) not valid", y, m, d, days)
		}
		ref = ref.AddDate(0, 0, 1)
	}
}

func TestBoundaries(t *testing.T) {
	for _, c := range []struct {
		y, m, d int
		days    int64
		text    string
	}{
		{1, 1, 1, MinDays, "0001-01-01"},
		{9999, 12, 31, MaxDays, "9999-12-31"},
		{1970, 1, 1, 0, "1970-01-01"},
		{1969, 12, 31, -1, "1969-12-31"},
		{2000, 2, 29, 11016, "2000-02-29"},
		{1900, 3, 1, -25508, "1900-03-01"},
		{2262, 4, 12, 106752, "2262-04-12"}, // past time.Duration's range
		{1677, 9, 21, -106752, "1677-09-21"},
		{0, 1, 1, -719528, "0000-01-01"},
		{10000, 1, 1, MaxDays + 1, "10000-01-01"},
		{-1, 12, 31, -719529, "-1-12-31"},
	} {
		if got := Days(c.y, c.m, c.d); got != c.days {
			t.Errorf("Days(%d-%d-%d) = %d, want %d", c.y, c.m, c.d, got, c.days)
		}
		if y, m, d := Date(c.days); y != c.y || m != c.m || d != c.d {
			t.Errorf("Date(%d) = %d-%d-%d, want %d-%d-%d", c.days, y, m, d, c.y, c.m, c.d)
		}
		if got := Format(c.days); got != c.text {
			t.Errorf("Format(%d) = %q, want %q", c.days, got, c.text)
		}
	}
	if InRange(MinDays-1) || InRange(MaxDays+1) || Valid(0, 12, 31) || Valid(10000, 1, 1) ||
		Valid(2021, 2, 29) || Valid(2021, 13, 1) || Valid(2021, 4, 31) || !Valid(2024, 2, 29) {
		t.Error("range checks wrong")
	}
	// Far outside the DATE range the arithmetic stays exact.
	for _, days := range []int64{-1 << 40, 1 << 40, -719162 * 1000, math.MaxInt32, math.MinInt32} {
		y, m, d := Date(days)
		if Days(y, m, d) != days {
			t.Errorf("round trip of %d fails: %d-%d-%d", days, y, m, d)
		}
	}
}

func TestAdd(t *testing.T) {
	jan31 := Days(2020, 1, 31)
	for _, c := range []struct {
		days, n int64
		months  bool
		want    string // "" for out of range
	}{
		{jan31, 1, true, "2020-02-29"},
		{jan31, -13, true, "2018-12-31"},
		{jan31, 12 * 7979, true, "9999-01-31"},
		{jan31, 12 * 7980, true, ""},
		{jan31, -12 * 2019, true, "0001-01-31"},
		{jan31, -12*2019 - 1, true, ""},
		{MaxDays, 1, false, ""},
		{MaxDays, 0, false, "9999-12-31"},
		{MinDays, -1, false, ""},
		{MinDays, 1, false, "0001-01-02"},
		{0, math.MaxInt64, false, ""},
		{0, math.MinInt64, false, ""},
		{0, math.MaxInt64, true, ""},
		{0, math.MinInt64, true, ""},
		{MaxDays, math.MinInt64, false, ""},
		{MinDays, math.MaxInt64, false, ""},
		{MaxDays + 1, 0, false, ""},
		{MaxDays + 1, 0, true, ""},
		{Days(9999, 12, 1), 0, true, "9999-12-01"},
		{Days(9999, 11, 30), 1, true, "9999-12-30"},
		{Days(1, 2, 28), -1, true, "0001-01-28"},
	} {
		add := AddDays
		if c.months {
			add = AddMonths
		}
		got, ok := add(c.days, c.n)
		switch {
		case c.want == "" && ok:
			t.Errorf("add(%s, %d, months=%v) = %s, want out of range", Format(c.days), c.n, c.months, Format(got))
		case c.want != "" && (!ok || Format(got) != c.want):
			t.Errorf("add(%s, %d, months=%v) = %s %v, want %s", Format(c.days), c.n, c.months, Format(got), ok, c.want)
		}
	}
}

func TestAppendDateDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 32)
	if n := testing.AllocsPerRun(100, func() { _ = AppendDate(buf[:0], MaxDays) }); n != 0 {
		t.Errorf("AppendDate allocates %.0f times", n)
	}
}

func TestWeekParts(t *testing.T) {
	for _, c := range []struct {
		y, m, d                   int
		weekday, doy, weekSunday0 int
	}{
		{1970, 1, 1, 3, 1, 0},      // a Thursday
		{1996, 1, 7, 6, 7, 1},      // the year's first Sunday starts week 1
		{1996, 1, 6, 5, 6, 0},      // the Saturday before it is week 0
		{1996, 12, 31, 1, 366, 52}, // leap year
		{2017, 1, 1, 6, 1, 1},      // January 1st a Sunday
		{1, 1, 1, 0, 1, 0},         // 0001-01-01 was a Monday (proleptic Gregorian)
		{9999, 12, 31, 4, 365, 52},
		{1969, 12, 31, 2, 365, 52},
	} {
		days := Days(c.y, c.m, c.d)
		if got := Weekday(days); got != c.weekday {
			t.Errorf("Weekday(%d-%d-%d) = %d, want %d", c.y, c.m, c.d, got, c.weekday)
		}
		if got := DayOfYear(days); got != c.doy {
			t.Errorf("DayOfYear(%d-%d-%d) = %d, want %d", c.y, c.m, c.d, got, c.doy)
		}
		if got := WeekSundayFirst(days); got != c.weekSunday0 {
			t.Errorf("WeekSundayFirst(%d-%d-%d) = %d, want %d", c.y, c.m, c.d, got, c.weekSunday0)
		}
	}
}
