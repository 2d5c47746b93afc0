package dbt3

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/colinkdb/colink/dbt3/answers"
)

// Verifier checks query results. A query with a reference answer is compared with it by
// answers.Compare; any other query is compared with the first result the Verifier saw for
// it, value for value, so that every transport and round of a run must agree.
type Verifier struct {
	// Reference holds the expected answers by query name ("Q1" …).
	Reference map[string]*answers.Table

	mu    sync.Mutex
	first map[string]*answers.Table
}

// Verified values of measure.Sample.
const (
	VerifiedReference  = "reference"
	VerifiedConsistent = "consistent"
)

// Check returns how res was verified, or an error saying how it differs.
func (v *Verifier) Check(name string, res *Result) (string, error) {
	got := res.Answers()
	if want, ok := v.Reference[name]; ok {
		if err := answers.Compare(got, want); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return VerifiedReference, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	first, ok := v.first[name]
	if !ok {
		if v.first == nil {
			v.first = map[string]*answers.Table{}
		}
		v.first[name] = got
		return VerifiedConsistent, nil
	}
	if !slices.Equal(first.Columns, got.Columns) || !slices.EqualFunc(first.Rows, got.Rows, slices.Equal) {
		return "", fmt.Errorf("%s: the result differs from the query's first result in this run (%d rows, first had %d)", name, len(got.Rows), len(first.Rows))
	}
	return VerifiedConsistent, nil
}

// Verify checks an execution's result, if it has one, and records in its sample how it was
// verified, or the difference as its error. A nil Verifier checks nothing.
func (v *Verifier) Verify(ex *Execution) {
	if v == nil || ex.Result == nil || ex.Sample.Error != "" {
		return
	}
	verified, err := v.Check(ex.Sample.Query, ex.Result)
	ex.Sample.Verified = verified
	if err != nil {
		ex.Sample.Error = err.Error()
	}
}

// LoadReference reads the expected answers of the TPC-H queries among qs from dir, as
// qNN.csv files in the answers' psv form. Q11's answer depends on its FRACTION: for a
// script that keeps the SF 1 fraction 0.0001 (dbt3/queries' validation scripts) at another
// scale, dir's q11-fraction-0.0001.csv is used when it exists. A query without a file gets
// no reference; a dir without any answer file is an error.
func LoadReference(dir string, qs []Query) (map[string]*answers.Table, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("answers directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("answers directory %s is not a directory", dir)
	}
	out := map[string]*answers.Table{}
	for _, q := range qs {
		if q.Number == 0 {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("q%02d.csv", q.Number))
		if q.Number == 11 && strings.Contains(q.Script, "0.0001000000") {
			if alt := filepath.Join(dir, "q11-fraction-0.0001.csv"); FileExists(alt) {
				path = alt
			}
		}
		t, err := answers.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[q.Name] = t
	}
	if len(out) == 0 && slices.ContainsFunc(qs, func(q Query) bool { return q.Number > 0 }) {
		return nil, fmt.Errorf("answers directory %s holds no qNN.csv answer files", dir)
	}
	return out, nil
}

// FileExists reports whether path names a regular file.
func FileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
