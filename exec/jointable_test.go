package exec

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
)

// TestJoinTableBulkBuild: a build side large enough for AddRecords' bulk path (rows stored
// and hashed first, inserted partition by partition) gives the same key groups, in the
// same build-row order, the same NULL-key rows and the same uniqueness as adding the
// records one at a time. Dense single keys take the direct path (no hashing; the hashed
// index built on the first hashed lookup), sparse ones the hashed path, and a direct
// lookup finds the same chains as a hashed one.
func TestJoinTableBulkBuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dup    int   // rows per key
		spread int64 // distance between keys
	}{{"unique", 1, 3}, {"duplicates", 3, 3}, {"sparse", 1, 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			const rows = 3 * bulkBuildRows
			types := []vec.Type{vec.Int64Type, vec.StringType, vec.Int32Type}
			schema := vec.SchemaOf([]string{"k", "s", "v"}, types)
			var recs []arrow.RecordBatch
			for start := 0; start < rows; start += 50_000 {
				n := min(50_000, rows-start)
				k, s, v := vec.NewVec(types[0]), vec.NewVec(types[1]), vec.NewVec(types[2])
				for i := range n {
					r := start + i
					key := int64((r*7919)%(rows/tc.dup)) * tc.spread
					if r%1000 == 999 {
						k.AppendNull()
					} else {
						k.AppendDatum(vec.Int64Datum(key))
					}
					s.AppendDatum(vec.StringDatum(string(rune('a' + key%26))))
					v.AppendDatum(vec.Int32Datum(int32(r)))
				}
				rb := vec.NewRecordBuilder(schema, types, nil)
				rb.Append(&vec.Batch{Cols: []*vec.Vec{k, s, v}, N: n})
				recs = append(recs, rb.Finish())
			}
			for _, keyCols := range [][]int{{0}, {0, 1}} {
				bulk, err := NewJoinTable(types, keyCols, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := bulk.AddRecords(recs); err != nil {
					t.Fatal(err)
				}
				inc, err := NewJoinTable(types, keyCols, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range recs {
					if err := inc.AddRecord(rec); err != nil {
						t.Fatal(err)
					}
				}
				if bulk.Rows() != rows || inc.Rows() != rows {
					t.Fatalf("rows: bulk %d, incremental %d, want %d", bulk.Rows(), inc.Rows(), rows)
				}
				if bulk.ht.len() != inc.ht.len() || bulk.unique != inc.unique || !slices.Equal(bulk.nullRows, inc.nullRows) {
					t.Fatalf("keys %d/%d, unique %v/%v, NULL-key rows %d/%d", bulk.ht.len(), inc.ht.len(),
						bulk.unique, inc.unique, len(bulk.nullRows), len(inc.nullRows))
				}
				if want := tc.dup == 1; bulk.unique != want {
					t.Errorf("unique = %v, want %v", bulk.unique, want)
				}
				if direct := bulk.ht.stale.Load(); direct != (len(keyCols) == 1 && tc.spread == 3) {
					t.Errorf("keys %v: built through the direct index alone = %v", keyCols, direct)
				}
				// Every key's chain of build rows is the same.
				for _, tab := range []*JoinTable{bulk, inc} {
					for k, c := range keyCols {
						tab.keyVecs[k] = tab.store.cols[c]
					}
				}
				probe := make([]int32, 0, rows)
				for r := range int32(rows) {
					if !rowHasNull(bulk.keyVecs, r) {
						probe = append(probe, r)
					}
				}
				chains := func(tab *JoinTable, direct bool) [][]int32 {
					ids := make([]int32, rows)
					if !direct || !tab.ht.findDirect(tab.keyVecs, probe, ids) {
						var s probeScratch
						s.prepare(rows)
						hashRows(tab.keyVecs, probe, s.h, tab.ht.seed)
						tab.ht.find(tab.keyVecs, probe, ids, &s)
					}
					out := make([][]int32, 0, len(probe))
					for _, r := range probe {
						var chain []int32
						for x := tab.firstRow(ids[r]); x >= 0; x = tab.nextRow[x] {
							chain = append(chain, x)
						}
						out = append(out, chain)
					}
					return out
				}
				ci := chains(inc, false)
				for _, direct := range []bool{true, false} {
					cb := chains(bulk, direct)
					for n := range cb {
						if !slices.Equal(cb[n], ci[n]) {
							t.Fatalf("keys %v, direct %v, row %d: bulk chain %v, incremental %v", keyCols, direct, probe[n], cb[n], ci[n])
						}
					}
				}
			}
		})
	}
}
