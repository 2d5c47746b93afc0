package frontend

import (
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestMain(m *testing.M) {
	// go-sql-driver logs connections the tests break on purpose.
	mysql.SetLogger(log.New(discard{}, "", 0))
	os.Exit(m.Run())
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
