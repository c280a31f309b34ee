package advise

import (
	"math/big"
	"testing"

	"spiral/budget"
	"spiral/combin"
	"spiral/internal/spiraltest"
)

// The ranked space is the whole stated one, 3 <= N1 <= MaxTraces, 2 <= n <
// N1, 2 <= K <= min(C(N1, n), MaxSets), 2 <= N2 <= MaxAggregations, both
// designs: nothing is refused, and Evaluate evaluates each (N1, n, K,
// design). The default run checks N1 <= 6 and N2 <= 3 (with 5/3/7-8,
// 6/3/7-8, 6/4/5-8 and 6/5/4-6 b, beyond 2^22 round sequences), the long
// run the whole space with every N2; TestAdviseBeyondRoundSequences
// evaluates two N1 = 8 ones.
func TestAdviseWholeSpace(t *testing.T) {
	req := Request{Budget: 1 << 40, Lengths: budget.Limits{Search: 1, Aggregation: 1},
		Reward: RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)}}
	maxN1, maxN2 := MaxTraces, MaxAggregations
	long := spiraltest.Long()
	if !long {
		maxN1, maxN2 = 6, 3
		req.MaxTraces, req.MaxAggregations = maxN1, maxN2
	}
	res, err := Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Refused {
		t.Errorf("%d/%d/%d %v refused: %s", r.SearchTraces, r.SetSize, r.Sets, r.Design, r.Reason)
	}
	ranked := map[[5]int]bool{}
	for _, c := range res.Candidates {
		g := c.Config
		ranked[[5]int{g.SearchTraces, g.SetSize, g.Sets, g.AggregationsPerSet, int(g.Design)}] = true
	}
	stated := 0
	for N1 := 3; N1 <= MaxTraces; N1++ {
		for n := 2; n < N1; n++ {
			f, _ := combin.Subsets(N1, n)
			T, _ := f.Count64()
			for K := 2; K <= MaxSets && uint64(K) <= T; K++ {
				for _, design := range []combin.Design{combin.Uniform, combin.Balanced} {
					if long || N1 <= maxN1 {
						if _, err := Evaluate(req.config(N1, n, K, 2, design), req); err != nil {
							t.Errorf("%d/%d/%d %v: %v", N1, n, K, design, err)
						}
					}
					if N1 > maxN1 {
						continue
					}
					for N2 := 2; N2 <= maxN2; N2++ {
						stated++
						if !ranked[[5]int{N1, n, K, N2, int(design)}] {
							t.Errorf("%d/%d/%d/%d %v not ranked", N1, n, K, N2, design)
						}
					}
				}
			}
		}
	}
	if len(res.Candidates) != stated {
		t.Errorf("%d candidates, want the stated %d", len(res.Candidates), stated)
	}
	t.Logf("%d configurations stated and ranked", stated)
}
