package advise

import (
	"math/big"
	"testing"

	"spiral"
	"spiral/combin"
	"spiral/estimator"
)

// The uniform design's aggregation pair term: the closed form (every ordered
// pair of sets with probability K(K-1)/(T(T-1))) against the sum over the
// design's selections, at N1 = 8, n = 4, K = 3 (54,740 selections).
func BenchmarkAggregationPairs(b *testing.B) {
	f, _ := combin.Subsets(8, 4)
	c, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 4), big.NewRat(3, 4)})
	tab, _ := setObjective(4, RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)})
	d, err := estimator.UniformSets(f, 3)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("closed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t, _ := newAggregationTerms(4, c, tab)
			if err := t.pairsUniform(f, 3, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("selections", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t, _ := newAggregationTerms(4, c, tab)
			if err := t.pairsOf(d, c, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Evaluate at the paper's configuration and budget: the paper's row without
// the ranking.
func BenchmarkEvaluatePaper(b *testing.B) {
	req := paperRequest()
	for b.Loop() {
		if _, err := Evaluate(spiral.Paper(), req); err != nil {
			b.Fatal(err)
		}
	}
}
