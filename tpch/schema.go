// Package tpch owns the TPC-H benchmark's data definition: the schema of its eight tables,
// the dbgen-identical data generator, the refresh sets and qgen's parameter substitution.
//
// The schema here is the one definition that the generator, the loader and the catalog share.
//
// The generator reproduces dbgen 2.14 byte for byte at any scale factor dbgen accepts
// (Scale). A Generator streams one table, or one dbgen -C/-S chunk of it, or one refresh set,
// as Arrow record batches of bounded size (Next) or as .tbl text (AppendTbl, WriteTbl);
// Generate writes whole tables and refresh sets to files on every core, as .tbl or Parquet.
// StreamQueries is qgen: the 22 queries of a stream with their substitution parameters.
// The distributions dbgen reads from dists.dss are compiled in (dists_data.go).
package tpch

import (
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the logical kind of a column's values.
type Kind uint8

// The kinds a TPC-H column can have.
const (
	KindInt32   Kind = iota + 1 // 32-bit integer (INT)
	KindInt64                   // 64-bit integer (BIGINT), used for every key that can grow with SF
	KindDecimal                 // exact decimal stored as a scaled 64-bit integer
	KindDate                    // calendar date, days since 1970-01-01
	KindChar                    // fixed-length string, CHAR(n)
	KindVarchar                 // variable-length string, VARCHAR(n)
)

// Type is a column's SQL type.
type Type struct {
	Kind      Kind
	Precision int // decimals: total digits
	Scale     int // decimals: digits after the point
	Length    int // CHAR and VARCHAR: maximum length in characters
}

// Char returns CHAR(n).
func Char(n int) Type { return Type{Kind: KindChar, Length: n} }

// Varchar returns VARCHAR(n).
func Varchar(n int) Type { return Type{Kind: KindVarchar, Length: n} }

// SQL returns the type as MySQL's DDL spells it, e.g. "decimal(15,2)".
func (t Type) SQL() string {
	switch t.Kind {
	case KindInt32:
		return "int"
	case KindInt64:
		return "bigint"
	case KindDecimal:
		return "decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
	case KindDate:
		return "date"
	case KindChar:
		return "char(" + strconv.Itoa(t.Length) + ")"
	case KindVarchar:
		return "varchar(" + strconv.Itoa(t.Length) + ")"
	}
	return "unknown"
}

// Column is one column of a table.
type Column struct {
	Name string
	Type Type
}

// Table is one of the eight TPC-H tables.
type Table struct {
	Name    string
	Columns []Column
}

// ArrowSchema returns the table's Arrow schema. Every field is non-nullable (TPC-H has no
// NULLs) and carries its SQL type under vec.SQLTypeKey.
func (t *Table) ArrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		f, err := vec.SQLField(c.Name, c.Type.SQL(), false)
		if err != nil {
			panic(fmt.Sprintf("tpch: column %s: %v", c.Name, err)) // the schema's own types are all storable
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil)
}

// ColumnIndex returns the position of the named column, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// TableNames lists the eight tables in dbgen's order.
func TableNames() []string {
	return []string{"part", "supplier", "partsupp", "customer", "orders", "lineitem", "nation", "region"}
}

// Tables returns the eight tables in dbgen's order. Each call builds fresh values, so callers
// may keep or change what they get.
func Tables() []*Table {
	names := TableNames()
	out := make([]*Table, len(names))
	for i, n := range names {
		out[i], _ = LookupTable(n)
	}
	return out
}

// LookupTable returns the named table (lower-case name) and whether it exists.
func LookupTable(name string) (*Table, bool) {
	c := func(name string, t Type) Column { return Column{Name: name, Type: t} }
	var (
		Int32 = Type{Kind: KindInt32}
		Int64 = Type{Kind: KindInt64}
		Money = Type{Kind: KindDecimal, Precision: 15, Scale: 2}
		Date  = Type{Kind: KindDate}
	)
	var cols []Column
	switch name {
	case "part":
		cols = []Column{c("p_partkey", Int64), c("p_name", Varchar(55)), c("p_mfgr", Char(25)),
			c("p_brand", Char(10)), c("p_type", Varchar(25)), c("p_size", Int32),
			c("p_container", Char(10)), c("p_retailprice", Money), c("p_comment", Varchar(23))}
	case "supplier":
		cols = []Column{c("s_suppkey", Int64), c("s_name", Char(25)), c("s_address", Varchar(40)),
			c("s_nationkey", Int32), c("s_phone", Char(15)), c("s_acctbal", Money),
			c("s_comment", Varchar(101))}
	case "partsupp":
		cols = []Column{c("ps_partkey", Int64), c("ps_suppkey", Int64), c("ps_availqty", Int32),
			c("ps_supplycost", Money), c("ps_comment", Varchar(199))}
	case "customer":
		cols = []Column{c("c_custkey", Int64), c("c_name", Varchar(25)), c("c_address", Varchar(40)),
			c("c_nationkey", Int32), c("c_phone", Char(15)), c("c_acctbal", Money),
			c("c_mktsegment", Char(10)), c("c_comment", Varchar(117))}
	case "orders":
		cols = []Column{c("o_orderkey", Int64), c("o_custkey", Int64), c("o_orderstatus", Char(1)),
			c("o_totalprice", Money), c("o_orderdate", Date), c("o_orderpriority", Char(15)),
			c("o_clerk", Char(15)), c("o_shippriority", Int32), c("o_comment", Varchar(79))}
	case "lineitem":
		cols = []Column{c("l_orderkey", Int64), c("l_partkey", Int64), c("l_suppkey", Int64),
			c("l_linenumber", Int32), c("l_quantity", Money), c("l_extendedprice", Money),
			c("l_discount", Money), c("l_tax", Money), c("l_returnflag", Char(1)),
			c("l_linestatus", Char(1)), c("l_shipdate", Date), c("l_commitdate", Date),
			c("l_receiptdate", Date), c("l_shipinstruct", Char(25)), c("l_shipmode", Char(10)),
			c("l_comment", Varchar(44))}
	case "nation":
		cols = []Column{c("n_nationkey", Int32), c("n_name", Char(25)), c("n_regionkey", Int32),
			c("n_comment", Varchar(152))}
	case "region":
		cols = []Column{c("r_regionkey", Int32), c("r_name", Char(25)), c("r_comment", Varchar(152))}
	default:
		return nil, false
	}
	return &Table{Name: name, Columns: cols}, true
}
