package dbt3test

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal"
)

func arrowDecimal64(n int64) decimal.Decimal64 { return decimal.Decimal64(n) }

// shortTempDir returns a temporary directory with a short path (unix socket paths are
// limited to 107 bytes), removed when the test ends.
func shortTempDir(t testing.TB) (string, error) {
	d, err := os.MkdirTemp("", "dbt3")
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d, nil
}

// Cols builds columns from "name type" specs, e.g. Cols("n int64", "price decimal(15,2)").
func Cols(specs ...string) []Column {
	out := make([]Column, len(specs))
	for i, s := range specs {
		name, typ, _ := strings.Cut(s, " ")
		out[i] = Column{Name: name, Type: typ}
	}
	return out
}
