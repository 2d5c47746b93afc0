package testref

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnnounceOnce: the first skip of a run writes the message, naming the test and the
// cause; every later one, from any package of the same run, writes nothing.
func TestAnnounceOnce(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "colink-testref-run")
	var first, second bytes.Buffer
	if !announceOnce(&first, marker, "TestAnswers", errors.New("../shared not found")) {
		t.Fatal("the first skip of a run wrote nothing")
	}
	for _, want := range []string{"TestAnswers", "../shared not found", "go test -v"} {
		if !strings.Contains(first.String(), want) {
			t.Errorf("message %q lacks %q", first.String(), want)
		}
	}
	if announceOnce(&second, marker, "TestOther", errors.New("x")) || second.Len() != 0 {
		t.Errorf("a second skip of the same run wrote %q", second.String())
	}
}

// TestGoTestRun: the run's name is the go command's pid and start time, the same for
// every call in one process.
func TestGoTestRun(t *testing.T) {
	a, b := goTestRun(), goTestRun()
	if a == "" {
		t.Skip("no /proc here")
	}
	if a != b || !strings.Contains(a, "-") {
		t.Errorf("goTestRun gave %q then %q", a, b)
	}
}
