package dbt3

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/tpch"
)

// DefaultDeleteKeys is how many order keys one RF2 DELETE statement names.
const DefaultDeleteKeys = 1000

// SQLRefresher runs the refresh functions through SQL on the refresh sets that `dbt3 gen
// --refresh N` (or dbgen -U N) wrote into Dir, as the DBT3 kit's scripts do:
//
//	RF1: LOAD DATA [LOCAL] INFILE 'Dir/orders.tbl.uK'   INTO TABLE orders   FIELDS TERMINATED BY '|'
//	     LOAD DATA [LOCAL] INFILE 'Dir/lineitem.tbl.uK' INTO TABLE lineitem FIELDS TERMINATED BY '|'
//	RF2: DELETE FROM lineitem WHERE l_orderkey IN (keys of delete.K)
//	     DELETE FROM orders   WHERE o_orderkey IN (keys of delete.K)
//
// Each statement is atomic; RF2 names at most DeleteKeys keys per statement pair (TPC-H lets
// a refresh function run as several transactions). Without Local, exemgr reads the files
// itself, so Dir must be a path on exemgr's host.
type SQLRefresher struct {
	Dir        string
	Local      bool
	DeleteKeys int // default DefaultDeleteKeys
	// OnStatement, if set, is called after each statement with the rows it affected.
	OnStatement func(stmt string, affected int64, elapsed time.Duration)
}

// RF1 implements Refresher.
func (r *SQLRefresher) RF1(ctx context.Context, c *Conn, set int) error {
	orders, lineitem, _ := tpch.RefreshFileNames(set)
	for _, f := range []struct{ file, table string }{{orders, "orders"}, {lineitem, "lineitem"}} {
		path, err := r.file(f.file)
		if err != nil {
			return err
		}
		local := ""
		if r.Local {
			local = "LOCAL "
		}
		stmt := fmt.Sprintf("LOAD DATA %sINFILE '%s' INTO TABLE %s FIELDS TERMINATED BY '|'", local, quoteString(path), f.table)
		if err := r.exec(ctx, c, stmt); err != nil {
			return fmt.Errorf("RF1 set %d: %w", set, err)
		}
	}
	return nil
}

// RF2 implements Refresher.
func (r *SQLRefresher) RF2(ctx context.Context, c *Conn, set int) error {
	_, _, del := tpch.RefreshFileNames(set)
	path, err := r.file(del)
	if err != nil {
		return err
	}
	keys, err := ReadDeleteKeys(path)
	if err != nil {
		return fmt.Errorf("RF2 set %d: %w", set, err)
	}
	per := r.DeleteKeys
	if per <= 0 {
		per = DefaultDeleteKeys
	}
	for off := 0; off < len(keys); off += per {
		list := keyList(keys[off:min(off+per, len(keys))])
		for _, stmt := range []string{
			"DELETE FROM lineitem WHERE l_orderkey IN (" + list + ")",
			"DELETE FROM orders WHERE o_orderkey IN (" + list + ")",
		} {
			if err := r.exec(ctx, c, stmt); err != nil {
				return fmt.Errorf("RF2 set %d: %w", set, err)
			}
		}
	}
	return nil
}

func (r *SQLRefresher) exec(ctx context.Context, c *Conn, stmt string) error {
	n, elapsed, err := c.ExecCount(ctx, stmt)
	if err != nil {
		short := stmt
		if len(short) > 120 {
			short = short[:120] + "…"
		}
		return fmt.Errorf("%s: %w", short, err)
	}
	if r.OnStatement != nil {
		r.OnStatement(stmt, n, elapsed)
	}
	return nil
}

// file returns the absolute path of a refresh file, checking that it exists.
func (r *SQLRefresher) file(name string) (string, error) {
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("refresh set file: %w (write the sets with dbt3 gen --refresh N)", err)
	}
	return p, nil
}

// ReadDeleteKeys reads an RF2 file (delete.K): one order key per line, "key|" as dbgen
// writes it.
func ReadDeleteKeys(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var keys []int64
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sc.Text()), "|"))
		if s == "" {
			continue
		}
		k, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %q is not an order key", path, line, sc.Text())
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

func keyList(keys []int64) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(k, 10))
	}
	return b.String()
}

// quoteString escapes s for a single-quoted SQL string.
func quoteString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}
