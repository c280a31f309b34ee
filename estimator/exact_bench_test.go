package estimator

import (
	"math/big"
	"spiral/combin"
	"testing"
)

// The exact engine at the paper's configuration: subsets, N = 8, n = 4,
// K = 4 (C(70, 4) = 916,895 selections), V = 2.

// BenchmarkSelectionWeights is the fast enumeration: integer accumulation
// with the common denominator L*C(T, K), L = lcm(1..K).
func BenchmarkSelectionWeights(b *testing.B) {
	f := family(b, false, 8, 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SelectionWeights(f, 4); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectionWeightsNaive is the baseline: the same W from
// DistributionWeights over the explicitly listed uniform selections, accumulating
// big.Rat values selection by selection.
func BenchmarkSelectionWeightsNaive(b *testing.B) {
	f := family(b, false, 8, 4)
	var groups [][]int
	for g := range f.All() {
		groups = append(groups, append([]int(nil), g...))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DistributionWeights(8, groups, UniformSelections(len(groups), 4)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpectation is the V^N = 256-outcome enumeration given W.
func BenchmarkExpectation(b *testing.B) {
	f := family(b, false, 8, 4)
	w := cachedWeights(b, f, 4)
	c := must(NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}))
	tab := must(CoverTable(2, 4, 2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Expectation(c, tab, combin.IndexOrder); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExactExpectation is the whole exact computation from scratch:
// SelectionWeights plus Expectation.
func BenchmarkExactExpectation(b *testing.B) {
	f := family(b, false, 8, 4)
	c := must(NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}))
	tab := must(CoverTable(2, 4, 2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExactExpectation(c, tab, f, 4, combin.IndexOrder); err != nil {
			b.Fatal(err)
		}
	}
}
