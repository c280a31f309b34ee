package estimator

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/combin"
)

// designBrute computes the moments of the search estimator under d straight
// from the definitions of docs/method.md#the-credit-signals, by enumerating every
// selection, every outcome of the traces, every presentation order of every
// selected group (n! each under combin.Shuffled) and every reward count of
// every selected group (Binomial(N2, f) each): set score f_k, baseline fbar,
// set advantages, and A_search(i) as the mean of the set advantages of the
// groups holding i. It shares nothing with SetDistribution.Moments but the SetDistribution's
// accessors, the Categorical and the Table.
func designBrute(d *SetDistribution, c *Categorical, t *Table, p combin.Order, N2 int) *Moments {
	V, N, n := c.Size(), d.Traces(), d.SetSize()
	mean := make([]*big.Rat, V)
	for v := range mean {
		mean[v] = new(big.Rat)
	}
	sq, a2, cover := new(big.Rat), new(big.Rat), new(big.Rat)
	perms := designPerms(n)
	y := make([]int, N)
	outcomes := pow(V, N)
	for s, ps := range d.Selections() {
		s := slices.Clone(s)
		K := len(s)
		holders := make([][]int, N) // positions in s of the groups holding i
		for k, h := range s {
			for _, i := range d.Set(h) {
				holders[i] = append(holders[i], k)
			}
		}
		covered := 0
		for _, hs := range holders {
			if len(hs) > 0 {
				covered++
			}
		}
		cover.Add(cover, new(big.Rat).Mul(ps, big.NewRat(int64(covered), 1)))
		for o := range outcomes {
			decode(y, o, V)
			py := new(big.Rat).Set(ps)
			for _, yi := range y {
				py.Mul(py, c.Prob(yi))
			}
			// Per group: the distribution of its score, as (value, prob) pairs.
			type atom struct{ val, prob *big.Rat }
			scores := make([][]atom, K)
			for k, h := range s {
				g := d.Set(h)
				var orders [][]int
				switch p {
				case combin.IndexOrder:
					orders = [][]int{g}
				case combin.Shuffled:
					for _, pi := range perms {
						o := make([]int, n)
						for j := range o {
							o[j] = g[pi[j]]
						}
						orders = append(orders, o)
					}
				case SortedBySymbol:
					o := slices.Clone(g)
					slices.SortStableFunc(o, func(a, b int) int { return y[a] - y[b] })
					orders = [][]int{o}
				}
				po := big.NewRat(1, int64(len(orders)))
				for _, o := range orders {
					sym := make([]int, n)
					for j, i := range o {
						sym[j] = y[i]
					}
					f := t.At(sym)
					if N2 == 0 {
						scores[k] = append(scores[k], atom{f, po})
						continue
					}
					one := new(big.Rat).Sub(big.NewRat(1, 1), f)
					for r := 0; r <= N2; r++ {
						pr := new(big.Rat).SetInt(new(big.Int).Binomial(int64(N2), int64(r)))
						for range r {
							pr.Mul(pr, f)
						}
						for range N2 - r {
							pr.Mul(pr, one)
						}
						scores[k] = append(scores[k], atom{big.NewRat(int64(r), int64(N2)), pr.Mul(pr, po)})
					}
				}
			}
			// Every combination of the groups' score atoms.
			idx := make([]int, K)
			for {
				pr := new(big.Rat).Set(py)
				f := make([]*big.Rat, K)
				fbar := new(big.Rat)
				for k, a := range idx {
					pr.Mul(pr, scores[k][a].prob)
					f[k] = scores[k][a].val
					fbar.Add(fbar, f[k])
				}
				fbar.Quo(fbar, big.NewRat(int64(K), 1))
				g := make([]*big.Rat, V)
				for v := range g {
					g[v] = new(big.Rat)
				}
				sumA2 := new(big.Rat)
				for i, hs := range holders {
					A := new(big.Rat)
					for _, k := range hs {
						A.Add(A, new(big.Rat).Sub(f[k], fbar))
					}
					if len(hs) > 0 {
						A.Quo(A, big.NewRat(int64(len(hs)), 1))
					}
					sumA2.Add(sumA2, new(big.Rat).Mul(A, A))
					for v, sv := range c.Score(y[i]) {
						g[v].Add(g[v], new(big.Rat).Mul(A, sv))
					}
				}
				norm := new(big.Rat)
				for v, gv := range g {
					mean[v].Add(mean[v], new(big.Rat).Mul(pr, gv))
					norm.Add(norm, new(big.Rat).Mul(gv, gv))
				}
				sq.Add(sq, norm.Mul(norm, pr))
				a2.Add(a2, sumA2.Mul(sumA2, pr))
				k := K - 1
				for k >= 0 {
					idx[k]++
					if idx[k] < len(scores[k]) {
						break
					}
					idx[k] = 0
					k--
				}
				if k < 0 {
					break
				}
			}
		}
	}
	dm := &Moments{Mean: mean, SquaredNorm: sq}
	dm.Variance = new(big.Rat).Set(sq)
	for _, m := range mean {
		dm.Variance.Sub(dm.Variance, new(big.Rat).Mul(m, m))
	}
	dm.SearchSquare = a2.Quo(a2, big.NewRat(int64(N), 1))
	dm.M = new(big.Rat).Quo(cover, big.NewRat(int64(n), 1))
	dm.M.Sub(dm.M, big.NewRat(1, 1))
	dm.NoCredit = new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(cover, big.NewRat(int64(N), 1)))
	return dm
}

// designPerms lists the n! permutations of [0, n).
func designPerms(n int) [][]int {
	var out [][]int
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			out = append(out, slices.Clone(p))
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
	return out
}

func designMomentsEqual(a, b *Moments) bool {
	return ratsEqual(a.Mean, b.Mean) && a.SquaredNorm.Cmp(b.SquaredNorm) == 0 &&
		a.Variance.Cmp(b.Variance) == 0 && a.SearchSquare.Cmp(b.SearchSquare) == 0 &&
		a.M.Cmp(b.M) == 0 && a.NoCredit.Cmp(b.NoCredit) == 0
}

func (m *Moments) String() string {
	return fmt.Sprintf("M %s, E[g] %s, E||g||^2 %s, Var %s, E[A^2] %s, no credit %s",
		m.M.RatString(), ratString(m.Mean), m.SquaredNorm.RatString(), m.Variance.RatString(),
		m.SearchSquare.RatString(), m.NoCredit.RatString())
}

// drawDesign draws a small random design: N traces, groups of size n (a
// random subset of the n-subsets, each in a random presentation order),
// and 1 to 3 selections of up to maxK groups with random probabilities.
func drawDesign(t *rapid.T, N, n, maxK int) *SetDistribution {
	f, err := combin.Subsets(N, n)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]int
	for g := range f.All() {
		all = append(all, slices.Clone(g))
	}
	T := rapid.IntRange(1, min(len(all), 5)).Draw(t, "T")
	pick := rapid.Permutation(all).Draw(t, "groups")[:T]
	groups := make([][]int, T)
	for h, g := range pick {
		groups[h] = rapid.Permutation(g).Draw(t, fmt.Sprintf("order%d", h))
	}
	nsel := rapid.IntRange(1, 3).Draw(t, "selections")
	idx := make([]int, T)
	for h := range idx {
		idx[h] = h
	}
	var sels [][]int
	var weights []int64
	var total int64
	for i := range nsel {
		K := rapid.IntRange(1, min(T, maxK)).Draw(t, fmt.Sprintf("K%d", i))
		sels = append(sels, rapid.Permutation(idx).Draw(t, fmt.Sprintf("sel%d", i))[:K])
		w := int64(rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("w%d", i)))
		weights = append(weights, w)
		total += w
	}
	d, err := NewSetDistribution(N, groups, func(yield func([]int, *big.Rat) bool) {
		for i, s := range sels {
			if !yield(s, big.NewRat(weights[i], total)) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// drawTable draws a random table of arity n over V symbols, with values
// k/denom.
func drawTable(t *rapid.T, V, n int) *Table {
	denom := rapid.IntRange(1, 6).Draw(t, "denom")
	vals := rapid.SliceOfN(rapid.IntRange(0, denom), pow(V, n), pow(V, n)).Draw(t, "table")
	r := make([]*big.Rat, len(vals))
	for i, k := range vals {
		r[i] = big.NewRat(int64(k), int64(denom))
	}
	tab, err := NewTable(V, n, r)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestDesignMomentsBruteForce: SetDistribution.Moments equals the brute-force
// enumeration from the definitions, exactly, for random small designs,
// policies, tables, presentation rules and N2 in {0, 1, 2}.
func TestDesignMomentsBruteForce(t *testing.T) {
	checkProperty(t, 25, func(t *rapid.T) {
		N := rapid.IntRange(2, 4).Draw(t, "N")
		n := rapid.IntRange(1, min(N, 3)).Draw(t, "n")
		p := rapid.SampledFrom([]combin.Order{combin.IndexOrder, combin.Shuffled, SortedBySymbol}).Draw(t, "presentation")
		maxK := 3
		if p == combin.Shuffled && n == 3 {
			maxK = 2
		}
		d := drawDesign(t, N, n, maxK)
		V := rapid.IntRange(2, 3).Draw(t, "V")
		if V == 3 && N == 4 {
			V = 2
		}
		c := drawCategorical(t, V, "p")
		tab := drawTable(t, V, n)
		N2 := rapid.IntRange(0, 2).Draw(t, "N2")
		got, err := d.Moments(c, tab, p, N2)
		if err != nil {
			t.Fatal(err)
		}
		if want := designBrute(d, c, tab, p, N2); !designMomentsEqual(got, want) {
			t.Fatalf("Moments:\n%v\nbrute force:\n%v", got, want)
		}
	})
}

// TestDesignMeanMatchesWeights: the mean of SetDistribution.Moments equals
// Weights.Expectation of the design's DistributionWeights, a separate engine.
func TestDesignMeanMatchesWeights(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		N := rapid.IntRange(2, 5).Draw(t, "N")
		n := rapid.IntRange(1, N).Draw(t, "n")
		d := drawDesign(t, N, n, 4)
		V := rapid.IntRange(2, 3).Draw(t, "V")
		c := drawCategorical(t, V, "p")
		tab := drawTable(t, V, n)
		p := rapid.SampledFrom([]combin.Order{combin.IndexOrder, combin.Shuffled, SortedBySymbol}).Draw(t, "presentation")
		m, err := d.Moments(c, tab, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := d.Weights()
		if err != nil {
			t.Fatal(err)
		}
		want, err := w.Expectation(c, tab, p)
		if err != nil {
			t.Fatal(err)
		}
		if !ratsEqual(m.Mean, want) {
			t.Fatalf("Moments mean %s, Weights.Expectation %s", ratString(m.Mean), ratString(want))
		}
	})
}

func TestDesignErrors(t *testing.T) {
	one := func(s []int) func(func([]int, *big.Rat) bool) {
		return func(yield func([]int, *big.Rat) bool) { yield(s, big.NewRat(1, 1)) }
	}
	cases := []struct {
		N      int
		groups [][]int
		sel    func(func([]int, *big.Rat) bool)
		want   string
	}{
		{0, [][]int{{0}}, one([]int{0}), "estimator: N1: 0 outside [1, 16777216], the most traces a family holds"},
		{3, nil, one([]int{0}), "estimator: sets: len = 0, want at least one set"},
		{3, [][]int{{0, 1}, {2}}, one([]int{0}), "estimator: sets[1]: len = 1, want 2, the size of set 0"},
		{3, [][]int{{0, 3}}, one([]int{0}), "estimator: sets[0][1] = 3: out of range"},
		{3, [][]int{{1, 1}}, one([]int{0}), "estimator: sets[0][1] = 1: repeats member 0"},
		{3, [][]int{{0, 1}, {0, 1}}, one([]int{0}), "estimator: sets[1]: identical to set 0"},
		{3, [][]int{{0, 1}}, one([]int{1}), "estimator: selections[0][0] = 1: out of range [0, 1)"},
		{3, [][]int{{0, 1}, {1, 2}}, one([]int{1, 1}), "estimator: selections[0][1] = 1: repeats member 0"},
		{3, [][]int{{0, 1}}, one(nil), "estimator: selections[0]: empty set"},
		{3, [][]int{{0, 1}}, func(yield func([]int, *big.Rat) bool) { yield([]int{0}, big.NewRat(1, 2)) }, "sum to 1/2"},
		{3, [][]int{{0, 1}}, func(yield func([]int, *big.Rat) bool) { yield([]int{0}, big.NewRat(-1, 2)) }, "probability -1/2"},
	}
	for _, c := range cases {
		if _, err := NewSetDistribution(c.N, c.groups, c.sel); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSetDistribution(%d, %v): error %v, want %q", c.N, c.groups, err, c.want)
		}
	}
	sub := family(t, false, 4, 2)
	tup := family(t, true, 4, 2)
	if _, err := BalancedSets(tup, 2); err == nil || !strings.Contains(err.Error(), "estimator: f: Tuples(4, 2): balanced designs are drawn from subsets") {
		t.Errorf("BalancedSets(tuples): %v", err)
	}
	if _, err := BalancedSets(sub, 7); err == nil || !strings.Contains(err.Error(), "estimator: K: 7 outside [1, T = 6]") {
		t.Errorf("BalancedSets(K = 7): %v", err)
	}
	if _, err := BalancedSets(family(t, false, 10, 2), 2); err == nil || !strings.Contains(err.Error(), "estimator: f: N1 = 10 > 9: too many relabellings") {
		t.Errorf("BalancedSets(N = 10): %v", err)
	}
	// The step bound, reached after 2^22 steps (a quarter second) under
	// SPIRAL_LONG=1, after 2^12 by default.
	bound := maxRoundSteps
	if !long() {
		maxRoundSteps = 1 << 12
	}
	if _, err := BalancedClasses(family(t, false, 12, 3), 20); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d steps to enumerate", maxRoundSteps)) {
		t.Errorf("BalancedClasses(12, 3, 20): %v", err)
	}
	maxRoundSteps = bound
	if _, err := BalancedClasses(family(t, false, 17, 2), 2); err == nil || !strings.Contains(err.Error(), "estimator: f: N1 = 17 > 16") {
		t.Errorf("BalancedClasses(N = 17): %v", err)
	}
	if _, err := UniformSets(sub, 0); err == nil || !strings.Contains(err.Error(), "estimator: K: 0 outside [1, T = 6]") {
		t.Errorf("UniformSets(K = 0): %v", err)
	}
	if _, err := RelabelledSets(10, [][]int{{0, 1}}); err == nil || !strings.Contains(err.Error(), "estimator: N: 10 > 9: too many relabellings") {
		t.Errorf("RelabelledSets(N = 10): %v", err)
	}
	if _, err := RelabelledSets(4, [][]int{{0, 1}, {1, 0}}); err == nil || !strings.Contains(err.Error(), "identical to set 0") {
		t.Errorf("RelabelledSets(two orders of one set): %v", err)
	}
	d, _ := FixedSets(4, [][]int{{0, 1}, {2, 3}})
	c := must(NewCategorical(rats("1/2", "1/2")))
	if _, err := d.Moments(c, must(CoverTable(2, 3, 2)), combin.IndexOrder, 0); err == nil || !strings.Contains(err.Error(), "estimator: t: arity n = 3, the sets have 2 members") {
		t.Errorf("Moments(arity 3): %v", err)
	}
	if _, err := d.Moments(c, must(CoverTable(2, 2, 2)), combin.IndexOrder, -1); err == nil || !strings.Contains(err.Error(), "estimator: N2: -1 < 0") {
		t.Errorf("Moments(N2 = -1): %v", err)
	}
	if _, err := d.Moments(must(UniformCategorical(3)), must(CoverTable(2, 2, 2)), combin.IndexOrder, 0); err == nil || !strings.Contains(err.Error(), "V = 3") {
		t.Errorf("Moments(V mismatch): %v", err)
	}
	if _, err := d.Moments(c, must(CoverTable(2, 2, 2)), combin.Order(9), 0); err == nil || !strings.Contains(err.Error(), "estimator: p: 9 is not a defined presentation") {
		t.Errorf("Moments(bad presentation): %v", err)
	}
	_ = rand.New
}
