// Package lineitem generates synthetic TPC-H-lineitem-like record batches for exec's tests
// and benchmarks: the columns Q1 and Q6 read, with dbgen-like value ranges (not dbgen's
// exact rows: the tpch package owns that).
package lineitem

import (
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
)

// Column indexes of the generated records.
const (
	OrderKey = iota
	Quantity
	ExtendedPrice
	Discount
	Tax
	ReturnFlag
	LineStatus
	ShipDate
)

// Names are the generated columns' names.
var Names = []string{"l_orderkey", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
	"l_returnflag", "l_linestatus", "l_shipdate"}

// Types are the generated columns' types.
func Types() []vec.Type {
	money := vec.Decimal(15, 2)
	return []vec.Type{vec.Int64Type, money, money, money, money, vec.StringType, vec.StringType, vec.DateType}
}

// Generate returns rows lineitem rows in records of at most perRecord rows, seeded.
func Generate(rows, perRecord int, seed uint64) []arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	types := Types()
	schema := vec.SchemaOf(Names, types)
	mem := memory.DefaultAllocator
	start := vec.DaysFromCivil(1992, 1, 2)
	cutoff := vec.DaysFromCivil(1995, 6, 17) // dbgen's CURRENTDATE: shipped before it are F
	var out []arrow.RecordBatch
	order := int64(1)
	line := 0
	for done := 0; done < rows; done += perRecord {
		n := min(perRecord, rows-done)
		b := array.NewRecordBuilder(mem, schema)
		ok := b.Field(OrderKey).(*array.Int64Builder)
		qty := b.Field(Quantity).(*array.Decimal64Builder)
		price := b.Field(ExtendedPrice).(*array.Decimal64Builder)
		disc := b.Field(Discount).(*array.Decimal64Builder)
		tax := b.Field(Tax).(*array.Decimal64Builder)
		rf := b.Field(ReturnFlag).(*array.StringBuilder)
		ls := b.Field(LineStatus).(*array.StringBuilder)
		sd := b.Field(ShipDate).(*array.Date32Builder)
		for i := 0; i < n; i++ {
			if line == 0 || r.IntN(4) == 0 {
				order += 1 + int64(r.IntN(3))
				line = 0
			}
			line++
			q := int64(1 + r.IntN(50))
			p := 90000 + r.Int64N(110000) // part price in cents, 900.00 .. 2000.00
			ok.Append(order)
			qty.Append(vecDec(q * 100))
			price.Append(vecDec(q * p))
			disc.Append(vecDec(int64(r.IntN(11))))
			tax.Append(vecDec(int64(r.IntN(9))))
			ship := start + int32(r.IntN(2526))
			sd.Append(arrow.Date32(ship))
			if ship <= cutoff {
				if r.IntN(2) == 0 {
					rf.Append("R")
				} else {
					rf.Append("A")
				}
				ls.Append("F")
			} else {
				rf.Append("N")
				if ship < cutoff+30 && r.IntN(8) == 0 {
					ls.Append("F")
				} else {
					ls.Append("O")
				}
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

func vecDec(v int64) decimal.Decimal64 { return decimal.Decimal64(v) }
