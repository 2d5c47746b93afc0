package exec

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
)

// keyRecord is a record of (BIGINT, VARCHAR, DOUBLE) rows; a nil entry of ints or strs is
// NULL.
func keyRecord(ints []*int64, strs []*string, floats []float64) arrow.RecordBatch {
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	defer ib.Release()
	defer sb.Release()
	defer fb.Release()
	for i := range ints {
		if ints[i] == nil {
			ib.AppendNull()
		} else {
			ib.Append(*ints[i])
		}
		if strs[i] == nil {
			sb.AppendNull()
		} else {
			sb.Append(*strs[i])
		}
		fb.Append(floats[i])
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64}}, nil)
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), fb.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(schema, cols, int64(len(ints)))
}

var keyTypes = []vec.Type{vec.Int64Type, vec.StringType, vec.Float64Type}

func ip(i int64) *int64   { return &i }
func sp(s string) *string { return &s }

func TestCheckUnique(t *testing.T) {
	for _, c := range []struct {
		name   string
		recs   [][]any // rows of (int, string, float), split into records
		keys   []int
		unique bool
	}{
		{"distinct", [][]any{{ip(1), sp("a"), 0.0}, {ip(2), sp("a"), 1.0}}, []int{0}, true},
		{"duplicate", [][]any{{ip(1), sp("a"), 0.0}, {ip(1), sp("b"), 1.0}}, []int{0}, false},
		{"duplicate across records", [][]any{{ip(1), sp("a"), 0.0}, nil, {ip(1), sp("a"), 1.0}}, []int{0, 1}, false},
		{"two keys distinct", [][]any{{ip(1), sp("a"), 0.0}, {ip(1), sp("b"), 1.0}}, []int{0, 1}, true},
		{"NULL keys match nothing", [][]any{{nil, sp("a"), 0.0}, {nil, sp("a"), 1.0}}, []int{0, 1}, true},
		// A separator-based text key would read both rows as "a\0" "\0b" and "a" "\0\0b".
		{"strings with NUL bytes", [][]any{{ip(1), sp("a\x00"), 0.0}, {ip(1), sp("a"), 0.0}}, []int{1, 2}, true},
		{"empty strings", [][]any{{ip(1), sp(""), 0.0}, {ip(2), sp(""), 0.0}}, []int{1, 2}, false},
		{"-0 equals 0", [][]any{{ip(1), sp("a"), 0.0}, {ip(2), sp("b"), negZero()}}, []int{2}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recs []arrow.RecordBatch
			var ints []*int64
			var strs []*string
			var floats []float64
			flush := func() {
				recs = append(recs, keyRecord(ints, strs, floats))
				ints, strs, floats = nil, nil, nil
			}
			for _, r := range c.recs {
				if r == nil {
					flush()
					continue
				}
				i, _ := r[0].(*int64)
				s, _ := r[1].(*string)
				ints, strs, floats = append(ints, i), append(strs, s), append(floats, r[2].(float64))
			}
			flush()
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			err := CheckUnique(recs, keyTypes, c.keys)
			var ve *vec.Error
			switch {
			case c.unique && err != nil:
				t.Fatalf("error %v, want none", err)
			case !c.unique && (!errors.As(err, &ve) || ve.Code != vec.CodeSubqueryRows):
				t.Fatalf("error %v, want error 1242", err)
			}
		})
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

// TestCheckUniqueAllocs checks that CheckUnique allocates per call, not per row: 100 times
// the rows cost no more allocations.
func TestCheckUniqueAllocs(t *testing.T) {
	allocs := func(n int) float64 {
		ints := make([]*int64, n)
		strs := make([]*string, n)
		floats := make([]float64, n)
		for i := range n {
			ints[i], strs[i], floats[i] = ip(int64(i)), sp(fmt.Sprintf("customer %d", i)), float64(i)/3
		}
		rec := keyRecord(ints, strs, floats)
		defer rec.Release()
		recs := []arrow.RecordBatch{rec}
		return testing.AllocsPerRun(5, func() {
			if err := CheckUnique(recs, keyTypes, []int{0, 1, 2}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(10000)
	if large > small+2 {
		t.Errorf("%v allocations for 100 rows, %v for 10000: allocations per row", small, large)
	}
}

func BenchmarkCheckUnique(b *testing.B) {
	const n = 100000
	ints := make([]*int64, n)
	strs := make([]*string, n)
	floats := make([]float64, n)
	for i := range n {
		ints[i], strs[i], floats[i] = ip(int64(i)), sp(fmt.Sprintf("customer %d", i)), float64(i)
	}
	rec := keyRecord(ints, strs, floats)
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckUnique([]arrow.RecordBatch{rec}, keyTypes, []int{0, 1}); err != nil {
			b.Fatal(err)
		}
	}
}
