package estimator

import (
	"math/big"
	"strings"
	"testing"

	"spiral/combin"
)

// TestUniformClosedFormsMatchEnumeration: the uniform design's Coverage and
// PositionWeights, summed in closed form, equal the same design's
// selections listed and summed one by one.
func TestUniformClosedFormsMatchEnumeration(t *testing.T) {
	for _, tc := range []struct {
		ordered bool
		N, n, K int
	}{
		{false, 5, 2, 1}, {false, 5, 2, 3}, {false, 5, 2, 10},
		{false, 6, 3, 2}, {false, 6, 3, 3}, {false, 7, 3, 2},
		{true, 4, 2, 2}, {true, 4, 2, 3}, {true, 5, 2, 2}, {true, 4, 3, 2},
	} {
		lazy := must(UniformSets(family(t, tc.ordered, tc.N, tc.n), tc.K))
		groups := make([][]int, lazy.NumSets())
		for h := range groups {
			groups[h] = lazy.Set(h)
		}
		listed := must(NewSetDistribution(tc.N, groups, UniformSelections(len(groups), tc.K)))
		if got, want := lazy.Coverage(), listed.Coverage(); got.Cmp(want) != 0 {
			t.Errorf("%+v: Coverage %v in closed form, %v enumerated", tc, got, want)
		}
		if got, want := lazy.PositionWeights(), listed.PositionWeights(); !ratsEqual(got, want) {
			t.Errorf("%+v: PositionWeights %s in closed form, %s enumerated", tc, ratString(got), ratString(want))
		}
	}
}

// TestUniformSetsAnySize: a uniform design of more selections than can be
// enumerated (8/3/7: C(56, 7) = 231,917,400) is constructible; its
// multiplier and position weights are Proposition 3.1's, computed here from
// the hypergeometric miss probability; its Moments come from the closed
// form; Weights, which would walk the selections, refuses.
func TestUniformSetsAnySize(t *testing.T) {
	d, err := UniformSets(family(t, false, 8, 3), 7)
	if err != nil {
		t.Fatalf("UniformSets(8/3, K = 7): %v", err)
	}
	// Every trace is in C(7, 2) = 21 of the 56 sets: q = C(35, 7)/C(56, 7)
	// and M = (N/n)(1 - q) - 1.
	q := new(big.Rat).SetFrac(new(big.Int).Binomial(35, 7), new(big.Int).Binomial(56, 7))
	M := new(big.Rat).Sub(big.NewRat(1, 1), q)
	M.Mul(M, big.NewRat(8, 3))
	M.Sub(M, big.NewRat(1, 1))
	if got := d.M(); got.Cmp(M) != 0 {
		t.Errorf("M = %v, want (8/3)(1 - q) - 1 = %v", got, M)
	}
	for k, a := range d.PositionWeights() {
		if a.Cmp(M) != 0 {
			t.Errorf("a_%d = %v, want M = %v (every trace is in as many sets)", k+1, a, M)
		}
	}
	c := must(NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}))
	m, err := d.Moments(c, must(CoverTable(2, 3, 1)), combin.IndexOrder, 0)
	if err != nil {
		t.Fatalf("Moments: %v", err)
	}
	if m.M.Cmp(M) != 0 {
		t.Errorf("Moments' M = %v, want %v", m.M, M)
	}
	if _, err := d.Weights(); err == nil || !strings.Contains(err.Error(), "231917400 selections exceed the limit 33554432") {
		t.Errorf("Weights: %v, want a refusal naming C(T, K)", err)
	}
	// The selections are all there, lazily: the first is {0, ..., 6}.
	for s, prob := range d.Selections() {
		if len(s) != 7 || s[0] != 0 || s[6] != 6 || prob.Cmp(new(big.Rat).SetFrac(big.NewInt(1), big.NewInt(231917400))) != 0 {
			t.Errorf("first selection %v with probability %v", s, prob)
		}
		break
	}
}

// TestUniformSetsHugeBinomial: C(T, K) is exact up to 2^17 bits and
// refused beyond, before any work: Subsets(181, 2) with K = T/2 (C(16290,
// 8145), about 16,000 bits) has M, PositionWeights summing to n M, and
// C(32640, 16320) is refused.
func TestUniformSetsHugeBinomial(t *testing.T) {
	d, err := UniformSets(family(t, false, 181, 2), 8145)
	if err != nil {
		t.Fatal(err)
	}
	M := d.M()
	sum := new(big.Rat)
	for _, a := range d.PositionWeights() {
		sum.Add(sum, a)
	}
	if want := new(big.Rat).Mul(M, big.NewRat(2, 1)); sum.Cmp(want) != 0 {
		t.Errorf("sum of position weights %v, want n M = %v", sum.FloatString(6), want.FloatString(6))
	}
	// Every trace is in 180 of the 16,290 pairs: M = (N/n)(1 - q) - 1 with
	// q = C(16110, 8145)/C(16290, 8145).
	q := new(big.Rat).SetFrac(new(big.Int).Binomial(16110, 8145), new(big.Int).Binomial(16290, 8145))
	want := new(big.Rat).Sub(big.NewRat(1, 1), q)
	want.Mul(want, big.NewRat(181, 2))
	if want.Sub(want, big.NewRat(1, 1)); M.Cmp(want) != 0 {
		t.Errorf("M = %v, want (181/2)(1 - q) - 1 = %v", M.FloatString(6), want.FloatString(6))
	}
	wantBoundedError(t, "UniformSets C(32640, 16320)", 1<<20, func() error {
		_, err := UniformSets(family(t, false, 256, 2), 16320)
		return err
	}, "C(T, K) = C(32640, 16320) has more than 131072 bits")
}
