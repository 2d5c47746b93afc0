package enginetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// TestExplore runs testdata/explore, a sqllogictest-style file of queries a person types
// while exploring TPC-H data at SF 0.01, with their expected results (checked by hand and
// against DuckDB on the same data), over one primproc and over two:
//
//	query [rowsort]    the result in psv form (NULL as NULL); rowsort sorts the rows first
//	error              the error the query fails with
func TestExplore(t *testing.T) { runQueryFile(t, "testdata/explore", 0.01) }

// TestRegressions runs testdata/regressions: every wrong answer found (by the differential
// fuzzer of bench/duckdb/sqlfuzz, or by hand), reduced to a query over SF 0.01 data, with
// the right answer (DuckDB's, which is also MySQL's) as its expected result.
func TestRegressions(t *testing.T) { runQueryFile(t, "testdata/regressions", 0.01) }

// TestRegressionsSF01 runs testdata/regressions-sf0.1, the findings that need SF 0.1 data
// to show (COLINK_SF01=1).
func TestRegressionsSF01(t *testing.T) {
	if os.Getenv("COLINK_SF01") == "" {
		t.Skip("set COLINK_SF01=1 to run the SF 0.1 regression queries")
	}
	runQueryFile(t, "testdata/regressions-sf0.1", 0.1)
}

// runQueryFile runs a file of query and error cases at sf, over one primproc and over two.
func runQueryFile(t *testing.T, file string, sf float64) {
	ts := stores(t, sf)
	for _, layout := range []struct {
		name string
		s    *Session
	}{{"one-primproc", newSession(t, sf, ts.one)}, {"two-primprocs", newSession(t, sf, ts.two)}} {
		t.Run(layout.name, func(t *testing.T) {
			datadriven.RunTest(t, file, func(t *testing.T, c *datadriven.TestData) string {
				out, err := layout.s.Run(context.Background(), c.Input)
				switch c.Cmd {
				case "query":
					if err != nil {
						return "error: " + errorText(err) + "\n"
					}
					tb := out.Display
					if c.HasArg("rowsort") {
						slices.SortFunc(tb.Rows, func(a, b []string) int {
							return strings.Compare(strings.Join(a, "|"), strings.Join(b, "|"))
						})
					}
					return tb.String()
				case "error":
					if err == nil {
						return "no error:\n" + out.Display.String()
					}
					return errorText(err) + "\n"
				}
				t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
				return ""
			})
		})
	}
}

func errorText(err error) string {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	var ve *vec.Error
	if errors.As(err, &ve) {
		return fmt.Sprintf("ERROR %d (%s): %s", ve.Code, ve.SQLState, ve.Msg)
	}
	return err.Error()
}
