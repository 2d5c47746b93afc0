package enginetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/datadriven"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// TestExplore runs testdata/explore, a sqllogictest-style file of queries a person types
// while exploring TPC-H data at SF 0.01, with their expected results (checked by hand and
// against DuckDB on the same data), over one primproc and over two:
//
//	query [rowsort]    the result in psv form (NULL as NULL); rowsort sorts the rows first
//	error              the error the query fails with
func TestExplore(t *testing.T) {
	ts := stores(t, 0.01)
	for _, layout := range []struct {
		name string
		s    *Session
	}{{"one-primproc", newSession(t, 0.01, ts.one)}, {"two-primprocs", newSession(t, 0.01, ts.two)}} {
		t.Run(layout.name, func(t *testing.T) {
			datadriven.RunTest(t, "testdata/explore", func(t *testing.T, c *datadriven.TestData) string {
				out, err := layout.s.Run(context.Background(), c.Input)
				switch c.Cmd {
				case "query":
					if err != nil {
						return "error: " + errorText(err) + "\n"
					}
					tb := out.Display
					if _, ok := c.Arg("rowsort"); ok {
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
