package advise

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/spiraltest"
)

type smallCase struct {
	N1, n, K int
	ordered  bool
}

var smallCases = []smallCase{{4, 2, 2, false}, {5, 2, 3, false}, {6, 3, 3, false}, {4, 2, 3, true}, {5, 3, 2, false}}

func family(t *testing.T, c smallCase) combin.Family {
	t.Helper()
	f, err := combin.NewFamily(c.N1, c.n, c.ordered)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func policy(t *testing.T, p ...*big.Rat) *estimator.Categorical {
	t.Helper()
	c, err := estimator.NewCategorical(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The closed form of the coverage law agrees with the law enumerated from
// the uniform design's selections.
func TestCoverMomentsClosedForm(t *testing.T) {
	for _, c := range smallCases {
		f := family(t, c)
		mean, variance, err := CoverMoments(f, c.K)
		if err != nil {
			t.Fatal(err)
		}
		d, err := estimator.UniformSets(f, c.K)
		if err != nil {
			t.Fatal(err)
		}
		wantMean, wantVar, err := coverLaw(d)
		if err != nil {
			t.Fatal(err)
		}
		if mean.Cmp(wantMean) != 0 || variance.Cmp(wantVar) != 0 {
			t.Errorf("%+v: closed form E[C] = %v, Var(C) = %v; enumerated %v, %v", c, mean, variance, wantMean, wantVar)
		}
		// E[C]/n - 1 is the design's M, which combin computes.
		k, err := f.Constants(combin.Uniform, c.K)
		if err != nil {
			t.Fatal(err)
		}
		m := new(big.Rat).Quo(mean, big.NewRat(int64(c.n), 1))
		if m.Sub(m, big.NewRat(1, 1)).Cmp(k.M) != 0 {
			t.Errorf("%+v: E[C]/n - 1 = %v, combin M = %v", c, m, k.M)
		}
	}
}

// The set-sampling term's closed form Var(C)/(n M)^2 ||grad J||^2 equals the
// exact average over selections of ||E[g|S] - E[g]||^2/M^2, for symmetric
// objectives under both designs and for an asymmetric objective presented
// in shuffled order. N1 = 6, n = 3, K = 3, the largest enumeration, runs under
// SPIRAL_LONG=1 only.
func TestSetsTermClosedForm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(spiraltest.Seed, 16))
	c := policy(t, big.NewRat(1, 3), big.NewRat(1, 2), big.NewRat(1, 6))
	checked := 0
	for _, sc := range smallCases {
		if sc.ordered {
			continue
		}
		f := family(t, sc)
		sym, err := estimator.SymmetricRandomTable(rnd, 3, sc.n, 7)
		if err != nil {
			t.Fatal(err)
		}
		asym, err := estimator.RandomTable(rnd, 3, sc.n, 5)
		if err != nil {
			t.Fatal(err)
		}
		if sc.N1 == 6 && !spiraltest.Long() {
			continue
		}
		uniform, err := estimator.UniformSets(f, sc.K)
		if err != nil {
			t.Fatal(err)
		}
		balanced, err := estimator.BalancedSets(f, sc.K)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			d *estimator.SetDistribution
			t *estimator.Table
			p combin.Order
		}{{uniform, sym, combin.IndexOrder}, {balanced, sym, combin.IndexOrder}, {uniform, asym, combin.Shuffled}} {
			v, err := DecomposeSearch(x.d, c, x.t, x.p)
			if err != nil {
				t.Fatal(err)
			}
			exact, err := SelectionTerm(x.d, c, x.t, x.p)
			if err != nil {
				t.Fatal(err)
			}
			exact.Quo(exact, new(big.Rat).Mul(v.M, v.M))
			if v.Sets.Cmp(exact) != 0 {
				t.Errorf("%+v %v: closed-form Sets = %v, enumerated %v", sc, x.p, v.Sets, exact)
			}
			if x.d == balanced && (v.Sets.Sign() != 0 || v.CoverVariance.Sign() != 0) {
				t.Errorf("%+v balanced: Sets = %v, Var(C) = %v; the coverage min(N1, K n) is fixed", sc, v.Sets, v.CoverVariance)
			}
			if v.Traces.Sign() < 0 || v.Noise1.Sign() < 0 {
				t.Errorf("%+v: negative term: Traces %v, Noise1 %v", sc, v.Traces, v.Noise1)
			}
			checked++
		}
	}
	if checked < 9 {
		t.Fatalf("checked %d configurations", checked)
	}
}

// An asymmetric objective in index order breaks the closed form: the exact
// per-selection term is used instead, and it differs from Var(C)/(n M)^2.
func TestSetsTermAsymmetric(t *testing.T) {
	f := family(t, smallCase{4, 2, 2, false})
	d, err := estimator.UniformSets(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	c := policy(t, big.NewRat(1, 2), big.NewRat(1, 2))
	tab, err := estimator.FirstTable(2, 2, []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecomposeSearch(d, c, tab, combin.IndexOrder)
	if err != nil {
		t.Fatal(err)
	}
	closed := new(big.Rat).Quo(v.CoverVariance, big.NewRat(4, 1))
	closed.Mul(closed, v.Signal)
	closed.Quo(closed, new(big.Rat).Mul(v.M, v.M))
	if v.Sets.Cmp(closed) == 0 {
		t.Errorf("Sets = %v equals the symmetric closed form for an asymmetric objective", v.Sets)
	}
}

// The reward-noise term is Noise1/N2: Sets + Traces + Noise1/N2, times M^2,
// is the exact variance of g with N2 rewards per set.
func TestNoiseTermClosedForm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(spiraltest.Seed, 17))
	c := policy(t, big.NewRat(1, 4), big.NewRat(3, 4))
	for _, sc := range smallCases {
		f := family(t, sc)
		tab, err := estimator.RandomTable(rnd, 2, sc.n, 6)
		if err != nil {
			t.Fatal(err)
		}
		d, err := estimator.UniformSets(f, sc.K)
		if err != nil {
			t.Fatal(err)
		}
		p := combin.IndexOrder
		v, err := DecomposeSearch(d, c, tab, p)
		if err != nil {
			t.Fatal(err)
		}
		m2 := new(big.Rat).Mul(v.M, v.M)
		for _, N2 := range []int{2, 3, 5} {
			m, err := d.Moments(c, tab, p, N2)
			if err != nil {
				t.Fatal(err)
			}
			got := new(big.Rat).Mul(v.Total(N2), m2)
			if got.Cmp(m.Variance) != 0 {
				t.Errorf("%+v N2 = %d: Sets + Traces + Noise1/N2 = %v (x M^2), exact %v", sc, N2, got, m.Variance)
			}
		}
	}
}

// The closed noise term through the design's counts, which DecomposeSearch
// uses for a symmetric objective, equals the engine's Noise1 under both
// designs, and its integer path equals its rational one.
func TestNoiseClosedFormCounts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(spiraltest.Seed, 18))
	c := policy(t, big.NewRat(1, 3), big.NewRat(1, 2), big.NewRat(1, 6))
	checked := 0
	for _, sc := range smallCases {
		if sc.ordered {
			continue
		}
		f := family(t, sc)
		tab, err := estimator.SymmetricRandomTable(rnd, 3, sc.n, 7)
		if err != nil {
			t.Fatal(err)
		}
		uniform, err := estimator.UniformSets(f, sc.K)
		if err != nil {
			t.Fatal(err)
		}
		balanced, err := estimator.BalancedSets(f, sc.K)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []*estimator.SetDistribution{uniform, balanced} {
			v, err := DecomposeSearch(d, c, tab, combin.IndexOrder)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NoiseClosedForm(d, c, tab)
			if err != nil {
				t.Fatal(err)
			}
			// The engine's: Var(g) with one reward per set less Var(g)
			// with exact scores, over M^2.
			m0, err := d.Moments(c, tab, combin.IndexOrder, 0)
			if err != nil {
				t.Fatal(err)
			}
			m1, err := d.Moments(c, tab, combin.IndexOrder, 1)
			if err != nil {
				t.Fatal(err)
			}
			engine := new(big.Rat).Sub(m1.Variance, m0.Variance)
			engine.Quo(engine, new(big.Rat).Mul(m0.M, m0.M))
			if got.Cmp(engine) != 0 || v.Noise1.Cmp(engine) != 0 {
				t.Errorf("%+v: closed Noise1 = %v, DecomposeSearch's %v, engine %v", sc, got, v.Noise1, engine)
			}
			// The integer path of the counts against rational arithmetic.
			exact, err := countsTermExact(d, big.NewRat(2, 7), big.NewRat(-1, 5), big.NewRat(3, 11))
			if err != nil {
				t.Fatal(err)
			}
			fast, err := countsTerm(d, big.NewRat(2, 7), big.NewRat(-1, 5), big.NewRat(3, 11))
			if err != nil || fast.Cmp(exact) != 0 {
				t.Errorf("%+v: counts term %v (%v), rational %v", sc, fast, err, exact)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Fatalf("checked %d configurations", checked)
	}
	asym, _ := estimator.RandomTable(rnd, 3, 2, 5)
	d, _ := estimator.UniformSets(family(t, smallCases[0]), 2)
	if _, err := NoiseClosedForm(d, c, asym); err == nil {
		t.Error("no error for an asymmetric objective")
	}
}

// The uniform design's closed forms (CoverMoments and noiseUniform, which
// Advise uses so that no selection is enumerated) give the same
// decomposition, to the last rational, as the enumerating path, on random
// symmetric objectives and sizes with K from 1 to T.
func TestDecomposeUniformClosedForm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(spiraltest.Seed, 30))
	c := policy(t, big.NewRat(1, 3), big.NewRat(1, 2), big.NewRat(1, 6))
	checked := 0
	for _, sz := range [][2]int{{3, 2}, {4, 2}, {5, 2}, {5, 3}, {6, 2}, {6, 4}} {
		N1, n := sz[0], sz[1]
		f, err := combin.Subsets(N1, n)
		if err != nil {
			t.Fatal(err)
		}
		T, _ := f.Count64()
		tab, err := estimator.SymmetricRandomTable(rnd, 3, n, 7)
		if err != nil {
			t.Fatal(err)
		}
		for K := 1; uint64(K) <= T && K <= 6; K++ {
			d, err := estimator.UniformSets(f, K)
			if err != nil {
				t.Fatal(err)
			}
			if d.M().Sign() == 0 {
				continue // K = 1: g/M is undefined
			}
			want, err := DecomposeSearch(d, c, tab, combin.IndexOrder)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decomposeSearch(d, c, tab, combin.IndexOrder, &uniformDesign{f: f, K: K})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range [][2]*big.Rat{{got.Noise1, want.Noise1}, {got.Sets, want.Sets}, {got.Traces, want.Traces},
				{got.CoverMean, want.CoverMean}, {got.CoverVariance, want.CoverVariance}, {got.M, want.M}} {
				if x[0].Cmp(x[1]) != 0 {
					t.Errorf("N1 = %d, n = %d, K = %d: closed form %v, enumerated %v", N1, n, K, x[0], x[1])
				}
			}
			checked++
		}
	}
	if checked < 25 {
		t.Fatalf("checked %d configurations", checked)
	}
}
