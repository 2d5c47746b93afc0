package exec

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/internal/lineitem"
	"github.com/colinkdb/colink/exec/vec"
)

// FuzzFragment feeds arbitrary msgpack to fragment decoding, validation and execution
// over a small lineitem: errors are fine, panics (even recovered ones) are not.
func FuzzFragment(f *testing.F) {
	join := &Fragment{Scan: lineitemScan(), Builds: []BuildSide{{Types: []vec.Type{vec.Int64Type, vec.StringType}}},
		Steps: []Step{
			{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinMark, ProbeKeys: []int{0}, BuildKeys: []int{0},
				Residual: expr.Call(expr.OpLike, expr.ColRef(9), expr.Const(vec.StringDatum("P%")))}}},
			{TopN: &TopNStep{Keys: []SortKey{{Col: 8}, {Col: 2, Desc: true}}, Limit: 3}},
		}}
	for _, fr := range []*Fragment{q6Fragment(), q1Fragment(), join} {
		raw, err := msgpack.Marshal(fr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	recs := lineitem.Generate(500, 128, 9)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fr Fragment
		if err := msgpack.Unmarshal(raw, &fr); err != nil {
			return
		}
		builds := make([][]arrow.RecordBatch, len(fr.Builds))
		p, err := validateAndBuild(&fr, &sharedSource{recs: recs}, builds, Options{Threads: 2, Budget: NewBudget(64 << 20)})
		if err != nil {
			return
		}
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for {
			rec, err := p.Next(ctx)
			if err != nil {
				if strings.Contains(err.Error(), "internal error") {
					t.Fatalf("fragment %s: %v", fr.String(), err)
				}
				return
			}
			if rec == nil {
				return
			}
			rec.Release()
		}
	})
}
