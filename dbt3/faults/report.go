package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/atomicfile"
)

// Report is a run of the suite: one row per fault and transport.
type Report struct {
	Command    string       `json:"command"`
	Started    time.Time    `json:"started"`
	Seconds    float64      `json:"seconds"`
	SF         string       `json:"sf"`
	Tries      int          `json:"tries"`
	Primprocs  int          `json:"primprocs"`
	Transports []string     `json:"transports"`
	Settings   Settings     `json:"settings"`
	Host       measure.Host `json:"host"`
	Rows       []Row        `json:"rows"`
	Notes      []string     `json:"notes,omitempty"`
}

// Settings are the run's timing settings, as the daemons were given them.
type Settings struct {
	HeartbeatInterval string `json:"heartbeat_interval"`
	HeartbeatTimeout  string `json:"heartbeat_timeout"`
	NetWriteTimeout   string `json:"net_write_timeout"`
	PoolIdle          string `json:"pool_idle"`
	Slack             string `json:"slack"`
	HangTimeout       string `json:"hang_timeout"`
	IdleConnections   int    `json:"idle_connections"`
	Seed              uint64 `json:"seed"`
}

// Row is one fault's tries over one transport.
type Row struct {
	Fault     string  `json:"fault"`
	Transport string  `json:"transport"`
	Summary   string  `json:"summary"`
	Criterion string  `json:"criterion"`
	Trials    []Trial `json:"trials"`
	// RSSBefore and RSSAfter are each daemon's resident bytes before the first try and
	// after the last (after two --pool-idle intervals more when Settled).
	RSSBefore map[string]int64 `json:"rss_before,omitempty"`
	RSSAfter  map[string]int64 `json:"rss_after,omitempty"`
	Settled   bool             `json:"settled,omitempty"`
	Seconds   float64          `json:"seconds"` // the tries' wall time, settling included
	// Skipped says why the fault did not run (no tries then).
	Skipped string `json:"skipped,omitempty"`
}

// Failed counts the tries that did not pass and the faults whose setup failed.
func (r *Report) Failed() int {
	n := 0
	for _, row := range r.Rows {
		if strings.HasPrefix(row.Skipped, "setup failed") {
			n++
		}
		for _, t := range row.Trials {
			if !t.Passed() {
				n++
			}
		}
	}
	return n
}

// WriteJSON writes the report as indented JSON, atomically.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// WriteMarkdownFile writes the Markdown report, atomically.
func (r *Report) WriteMarkdownFile(path string) error {
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(b.String()), 0o644)
}

// counts tallies a row's tries.
type counts struct {
	passed   int
	outcomes [Died + 1]int
	errTimes []float64 // the clear errors' times
}

func (row *Row) count() counts {
	var c counts
	for _, t := range row.Trials {
		if t.Passed() {
			c.passed++
		}
		c.outcomes[t.Outcome]++
		if t.Outcome == ClearError && t.Seconds > 0 {
			c.errTimes = append(c.errTimes, t.Seconds)
		}
	}
	sort.Float64s(c.errTimes)
	return c
}

// WriteMarkdown writes the report for people: the table of fault → tries → outcomes, the
// failures, then each fault's criterion and the errors it drew.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault suite\n\n")
	if r.Command != "" {
		fmt.Fprintf(&b, "Made by `%s`", r.Command)
	} else {
		b.WriteString("A run")
	}
	fmt.Fprintf(&b, " on %s, in %.0f s: TPC-H SF %s over %d primprocs and one exemgr, started from this tree's binaries; "+
		"each fault %d times over each of %s (every local connection of the try — the link, the MySQL client, the bad input — of that kind%s).\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Seconds, r.SF, r.Primprocs, r.Tries, joinAnd(r.Transports), shmAside(r.Transports))
	fmt.Fprintf(&b, "Host: %d CPUs, %d MiB, %s, %s. Daemons: heartbeat every %s, timeout %s; exemgr --net-write-timeout %s; --pool-idle %s. "+
		"Every bound below includes a slack of %s for a loaded machine; a statement or wait not done in %s is a hang.\n\n",
		r.Host.CPUs, r.Host.MemoryMiB, r.Host.Kernel, r.Host.GoVersion, r.Settings.HeartbeatInterval, r.Settings.HeartbeatTimeout,
		r.Settings.NetWriteTimeout, r.Settings.PoolIdle, r.Settings.Slack, r.Settings.HangTimeout)
	failed := r.Failed()
	if failed == 0 {
		b.WriteString("**Every try passed.**\n\n")
	} else {
		fmt.Fprintf(&b, "**%d tries failed** (see Failures).\n\n", failed)
	}
	b.WriteString("Outcomes: *right* — the disturbed statement still answered correctly; *clear error* — it failed as the criterion asks, " +
		"in time and saying what happened (times from the injection, in seconds: min / median / max); *unclear* — it failed late or " +
		"without saying so, or a later check of the criterion failed; *wrong* — a wrong answer or a table half written, lost or applied " +
		"against its error; *hang* — nothing within the hard timeout; *died* — a daemon the fault did not kill exited. " +
		"A try passes if it is right or a clear error and every check of its criterion held. " +
		"Resident sizes in MiB before the first try → after the last (\\* after two more --pool-idle intervals).\n\n")
	b.WriteString("| fault | transport | tries | passed | right | clear errors (s) | unclear | wrong | hang | died | RSS before → after (MiB) | took (s) |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |\n")
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | — | — | | skipped: %s | | | | | | |\n", row.Fault, row.Transport, row.Skipped)
			continue
		}
		c := row.count()
		errs := fmt.Sprint(c.outcomes[ClearError])
		if n := len(c.errTimes); n > 0 {
			errs += fmt.Sprintf(" (%.2f / %.2f / %.2f)", c.errTimes[0], c.errTimes[n/2], c.errTimes[n-1])
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %d | %d | %d | %d | %s | %.0f |\n", row.Fault, row.Transport, len(row.Trials), c.passed,
			c.outcomes[Right], errs, c.outcomes[UnclearError], c.outcomes[WrongAnswer], c.outcomes[Hang], c.outcomes[Died], rssCell(row), row.Seconds)
	}
	if failed > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, row := range r.Rows {
			if strings.HasPrefix(row.Skipped, "setup failed") {
				fmt.Fprintf(&b, "- %s over %s: %s\n", row.Fault, row.Transport, row.Skipped)
			}
			for _, t := range row.Trials {
				if t.Passed() {
					continue
				}
				fmt.Fprintf(&b, "- %s over %s, try %d (%s", row.Fault, row.Transport, t.Try, t.Outcome)
				if len(t.Notes) > 0 {
					fmt.Fprintf(&b, "; %s", strings.Join(t.Notes, "; "))
				}
				fmt.Fprintf(&b, "): %s", strings.Join(t.Failures, "; "))
				if t.Error != "" {
					fmt.Fprintf(&b, ". Error: `%s`", t.Error)
				}
				b.WriteString("\n")
			}
		}
	}
	b.WriteString("\n## The faults\n")
	seen := map[string]bool{}
	for _, row := range r.Rows {
		if seen[row.Fault] {
			continue
		}
		seen[row.Fault] = true
		fmt.Fprintf(&b, "\n### %s\n\n%s.\n\n**Passes if** %s.\n", row.Fault, row.Summary, row.Criterion)
		for _, other := range r.Rows {
			if other.Fault != row.Fault || len(other.Trials) == 0 {
				continue
			}
			texts := errorTexts(other.Trials)
			if len(texts) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\nErrors over %s:\n\n", other.Transport)
			for _, t := range texts {
				fmt.Fprintf(&b, "- ×%d `%s`\n", t.n, t.text)
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// joinAnd joins words as a list: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// shmAside says, for a run over shm, what its MySQL clients and bad input use: shm has no
// port of its own.
func shmAside(transports []string) string {
	if !slices.Contains(transports, "shm") {
		return ""
	}
	return "; shm has no port of its own: over it, the MySQL clients use exemgr's unix socket and the bad input primproc's, " +
		"where the link's shared memory is set up"
}

// rssCell formats a row's resident sizes: "exemgr 45 → 46, primproc0 80 → 60".
func rssCell(row *Row) string {
	var names []string
	for n := range row.RSSBefore {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		after, ok := row.RSSAfter[n]
		a := "—"
		if ok {
			a = fmt.Sprint(after >> 20)
			if row.Settled {
				a += "\\*"
			}
		}
		parts = append(parts, fmt.Sprintf("%s %d → %s", n, row.RSSBefore[n]>>20, a))
	}
	return strings.Join(parts, ", ")
}

// digits finds the numbers in an error message, which differ between tries (ports, ids,
// times) without making it another error.
var digits = regexp.MustCompile(`[0-9]+`)

type errorText struct {
	text string
	n    int
}

// errorTexts groups the tries' errors by their text with numbers masked, most frequent
// first, each shown as its first occurrence; at most five.
func errorTexts(trials []Trial) []errorText {
	var out []errorText
	index := map[string]int{}
	for _, t := range trials {
		if t.Error == "" {
			continue
		}
		key := digits.ReplaceAllString(t.Error, "#")
		if i, ok := index[key]; ok {
			out[i].n++
			continue
		}
		index[key] = len(out)
		out = append(out, errorText{t.Error, 1})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].n > out[j].n })
	return out[:min(len(out), 5)]
}
