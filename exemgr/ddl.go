package exemgr

import (
	"context"
	"fmt"
	"strings"

	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// Users' own tables: CREATE TABLE, DROP TABLE and TRUNCATE. Each is a load on every
// primproc (link's ModeCreate, ModeDrop, or ModeReplace with no rows), which commits there
// atomically, as `dbt3 load` replaces a table: a table is one on every primproc, each
// holding its share, and the TPC-H tables are such tables. A DDL statement that fails on a
// primproc midway leaves the others changed; the catalog then reports the table as missing
// on some primprocs (a warning in exemgr's log), and repeating the statement, or dropping
// the table, mends it.

// createTable creates a table on every primproc, empty, with the declared columns.
func (e *Engine) createTable(ctx context.Context, ev env, view *catView, x *sql.CreateTable) (*frontend.Result, error) {
	p := &sql.Planner{Catalog: view, Stats: view}
	def, err := p.CreateTable(ev, x)
	if err != nil {
		return nil, err
	}
	if _, exists := view.Table(def.DB, def.Name); exists {
		if def.IfNotExists {
			return &frontend.Result{Warnings: []frontend.Warning{{Level: "Note", Code: uint16(sqlerr.ErTableExists),
				Message: fmt.Sprintf("Table '%s' already exists", def.Name)}}}, nil
		}
		return nil, sqlerr.New(sqlerr.ErTableExists, "Table '%s' already exists", def.Name)
	}
	args := link.LoadArgs{Table: def.Name, Mode: link.ModeCreate}
	for _, c := range def.Columns {
		args.Columns = append(args.Columns, link.ColumnDef{Name: c.Name, SQLType: c.SQLType, Nullable: c.Nullable, Default: c.Default})
	}
	if _, err := link.SchemaFromColumns(args.Columns); err != nil {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "CREATE TABLE %s: %v", def.Name, err)
	}
	if err := e.loadEverywhere(ctx, args, "CREATE TABLE "+def.Name); err != nil {
		return nil, err
	}
	e.log.Info("exemgr: table created", "table", def.Name, "columns", len(def.Columns))
	return nil, nil
}

// dropTables drops tables from every primproc. As MySQL does, it drops those that exist
// and then reports the ones that do not (1051), unless IF EXISTS makes that a note.
func (e *Engine) dropTables(ctx context.Context, ev env, view *catView, x *sql.DropTable) (*frontend.Result, error) {
	var missing []string
	for _, t := range x.Tables {
		db := t.DB
		if db == "" {
			if db = ev.Database(); db == "" {
				return nil, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
			}
		}
		tab, ok := view.Table(db, t.Name)
		if !ok {
			missing = append(missing, db+"."+t.Name)
			continue
		}
		if err := e.loadEverywhere(ctx, link.LoadArgs{Table: tab.Name, Mode: link.ModeDrop}, "DROP TABLE "+tab.Name); err != nil {
			return nil, err
		}
		e.log.Info("exemgr: table dropped", "table", tab.Name)
	}
	return unknownTables(missing, x.IfExists)
}

// truncateTable empties a table on every primproc, keeping its columns.
func (e *Engine) truncateTable(ctx context.Context, ev env, view *catView, x *sql.TruncateTable) (*frontend.Result, error) {
	db := x.Table.DB
	if db == "" {
		if db = ev.Database(); db == "" {
			return nil, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
		}
	}
	if _, ok := view.Table(db, x.Table.Name); !ok {
		return nil, sqlerr.New(sqlerr.ErNoSuchTable, "Table '%s.%s' doesn't exist", db, x.Table.Name)
	}
	info := view.snap.tables[strings.ToLower(x.Table.Name)]
	args := link.LoadArgs{Table: info.table.Name, Mode: link.ModeReplace}
	for _, f := range info.schema.Fields() {
		args.Columns = append(args.Columns, link.ColumnDefOf(f))
	}
	if err := e.loadEverywhere(ctx, args, "TRUNCATE "+info.table.Name); err != nil {
		return nil, err
	}
	e.log.Info("exemgr: table truncated", "table", info.table.Name)
	return nil, nil
}

// loadEverywhere runs a load without rows on every primproc in turn, each committing on its
// own; what names the statement in errors.
func (e *Engine) loadEverywhere(ctx context.Context, args link.LoadArgs, what string) error {
	for i, pc := range e.cl {
		lctx, cancel := context.WithTimeout(ctx, e.cfg.PrimProcTimeout)
		err := func() error {
			ls, err := pc.Load(lctx, args)
			if err != nil {
				return err
			}
			_, err = ls.Commit()
			return err
		}()
		cancel()
		if err != nil {
			if i > 0 {
				return fmt.Errorf("%s: done on %d of %d primprocs, then: %w (repeat the statement, or drop the table, to make them agree)", what, i, len(e.cl), err)
			}
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
