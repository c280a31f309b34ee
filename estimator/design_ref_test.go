package estimator

import (
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// coverageReference is Coverage written plainly: one rational product per
// selection.
func coverageReference(d *SetDistribution) *big.Rat {
	sum := new(big.Rat)
	in := make([]bool, d.n)
	for s, prob := range d.Selections() {
		clear(in)
		c := 0
		for _, h := range s {
			for _, i := range d.groups[h] {
				if !in[i] {
					in[i] = true
					c++
				}
			}
		}
		sum.Add(sum, new(big.Rat).Mul(prob, big.NewRat(int64(c), 1)))
	}
	return sum
}

// positionWeightsReference is PositionWeights written plainly from its
// definition, a_k = E_S[ sum_{H in S} (1/c_{H[k]} - 1/|S|) ], one rational
// per selected member.
func positionWeightsReference(d *SetDistribution) []*big.Rat {
	a := make([]*big.Rat, d.size)
	for k := range a {
		a[k] = new(big.Rat)
	}
	count := make([]int, d.n)
	term := new(big.Rat)
	for s, prob := range d.Selections() {
		clear(count)
		for _, h := range s {
			for _, i := range d.groups[h] {
				count[i]++
			}
		}
		K := int64(len(s))
		for _, h := range s {
			for k, i := range d.groups[h] {
				// prob * (1/c - 1/K) = prob * (K - c)/(c K)
				c := int64(count[i])
				term.SetFrac64(K-c, c*K)
				a[k].Add(a[k], term.Mul(term, prob))
			}
		}
	}
	return a
}

// TestDesignRunsMatchReference: Coverage (in closed form for the uniform
// design) and PositionWeights (summed over runs of equal-probability
// selections in integers) equal their plain rational sums on the uniform
// (up to 1,000 selections) and balanced designs of the small subset
// families (N <= 5; N <= 6 under SPIRAL_LONG=1), relabelled designs at
// N = 6, and random listed designs.
func TestDesignRunsMatchReference(t *testing.T) {
	check := func(t fataler, name string, d *SetDistribution) {
		t.Helper()
		if got, want := d.Coverage(), coverageReference(d); got.Cmp(want) != 0 {
			t.Fatalf("%s: Coverage %s, reference %s", name, got.RatString(), want.RatString())
		}
		if got, want := d.PositionWeights(), positionWeightsReference(d); !ratsEqual(got, want) {
			t.Fatalf("%s: PositionWeights %s, reference %s", name, ratString(got), ratString(want))
		}
	}
	maxN := 5
	if long() {
		maxN = 6
	}
	for N := 2; N <= maxN; N++ {
		for n := 1; n <= N; n++ {
			f := family(t, false, N, n)
			T, _ := f.Count64()
			for K := 1; K <= min(int(T), 4); K++ {
				if u, err := UniformSets(f, K); err == nil && binomial(int(T), K) <= 1000 {
					check(t, f.String()+" uniform", u)
				}
				if b, err := BalancedSets(f, K); err == nil {
					check(t, f.String()+" balanced", b)
				}
			}
		}
	}
	for _, sets := range [][][]int{{{0, 1, 2}, {3, 4, 5}, {0, 1, 3}}, {{0, 1}, {2, 3}, {0, 4}, {5, 1}}} {
		check(t, "relabelled", must(RelabelledSets(6, sets)))
	}
	rapid.Check(t, func(t *rapid.T) {
		N := rapid.IntRange(2, 6).Draw(t, "N")
		check(t, "listed", drawDesign(t, N, rapid.IntRange(1, N).Draw(t, "n"), 5))
	})
}

// binomial returns C(T, K) for small arguments.
func binomial(T, K int) int64 {
	return new(big.Int).Binomial(int64(T), int64(K)).Int64()
}

// BenchmarkCoverage: Coverage of the uniform design at the paper's
// configuration (916,895 selections) in closed form, against
// coverageReference.
func BenchmarkCoverage(b *testing.B) {
	d := must(UniformSets(family(b, false, 8, 4), 4))
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			d.Coverage()
		}
	})
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			coverageReference(d)
		}
	})
}
