package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Fault is one fault: what it does, what a try must show to pass, and how to try it. A
// fault's Try injects the fault once into the running daemons, watches what the statements
// it disturbs get, puts the daemons back (restarting or resuming what it killed or
// stopped) and checks what must hold afterwards, recording all of it in the Trial. Every
// wait inside a Try is bounded.
type Fault struct {
	Name      string
	Summary   string // what one try does
	Criterion string // what a try must show to pass
	// Setup, if set, runs before the first try on each transport.
	Setup func(ctx context.Context, e *Env) error
	Try   func(ctx context.Context, e *Env, t *Trial)
	// SettlesMemory says the fault's checks compare resident sizes after --pool-idle
	// intervals, so its "after" sizes are settled ones too.
	SettlesMemory bool
}

// Outcome is what a try came to, from best to worst. A try's outcome only ever gets worse
// as its checks run (Trial.set).
type Outcome int

const (
	// Right: the statement under the fault answered, correctly (the fault did not
	// disturb it, or landed after it was done).
	Right Outcome = iota
	// ClearError: the statement failed as the criterion asks: within its bound, with a
	// message that says what happened.
	ClearError
	// UnclearError: it failed, but late or without the message the criterion asks for.
	UnclearError
	// WrongAnswer: a statement answered wrongly, or a table shows a write half done, lost
	// though acknowledged, or applied though refused.
	WrongAnswer
	// Hang: a statement or a wait did not end within its hard timeout.
	Hang
	// Died: a daemon the fault did not kill exited.
	Died
)

var outcomeNames = [...]string{"right", "clear error", "unclear error", "wrong answer", "hang", "died"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// MarshalText writes the outcome's name (in the JSON report).
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	i := slices.Index(outcomeNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("unknown outcome %q", b)
	}
	*o = Outcome(i)
	return nil
}

// Trial is the record of one try.
type Trial struct {
	Try     int     `json:"try"` // from 1
	Outcome Outcome `json:"outcome"`
	// Seconds is how long after the injection the statement under the fault got its
	// answer or error (or the daemon refused the bad input); 0 when not measured.
	Seconds float64 `json:"seconds,omitempty"`
	Error   string  `json:"error,omitempty"` // the error the statement got
	// Failures lists every part of the criterion the try did not meet; empty when it
	// passed.
	Failures []string `json:"failures,omitempty"`
	Notes    []string `json:"notes,omitempty"` // what else was seen: which primproc, the write's kind, sizes
}

// Passed reports whether the try met its fault's criterion.
func (t *Trial) Passed() bool {
	return t.Outcome <= ClearError && len(t.Failures) == 0
}

// set makes the outcome o unless it is already worse.
func (t *Trial) set(o Outcome) {
	t.Outcome = max(t.Outcome, o)
}

// fail records a part of the criterion not met, with the outcome it makes (at least
// UnclearError: a check failed).
func (t *Trial) fail(o Outcome, format string, args ...any) {
	t.set(max(o, UnclearError))
	t.Failures = append(t.Failures, fmt.Sprintf(format, args...))
}

// note records an observation.
func (t *Trial) note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// errorAt records err as the statement's error, got after took; clear says whether it meets
// the criterion (else why not is in the failures the caller adds).
func (t *Trial) errorAt(err error, took time.Duration, clear bool) {
	t.Error = oneLine(err.Error())
	t.Seconds = took.Seconds()
	if clear {
		t.set(ClearError)
	} else {
		t.set(UnclearError)
	}
}

// oneLine keeps an error message to one line of bounded length for the report.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}
