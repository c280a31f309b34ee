package estimator

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"spiral/combin"
)

// weightsCache holds SelectionWeights per configuration for the whole test
// binary, so the 916,895-selection enumeration of the paper's configuration
// runs once.
var weightsCache sync.Map // key string -> *Weights

// fataler is what testing.TB and *rapid.T have in common here.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

func cachedWeights(t fataler, f combin.Family, K int) *Weights {
	t.Helper()
	key := fmt.Sprintf("%d/%d/%v/%d", f.Traces(), f.SetSize(), f.Ordered(), K)
	if w, ok := weightsCache.Load(key); ok {
		return w.(*Weights)
	}
	w, err := SelectionWeights(f, K)
	if err != nil {
		t.Fatalf("SelectionWeights(%v, K = %d): %v", f, K, err)
	}
	weightsCache.Store(key, w)
	return w
}

func family(t fataler, ordered bool, N, n int) combin.Family {
	t.Helper()
	var f combin.Family
	var err error
	if ordered {
		f, err = combin.Tuples(N, n)
	} else {
		f, err = combin.Subsets(N, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func scale(m *big.Rat, g []*big.Rat) []*big.Rat {
	out := make([]*big.Rat, len(g))
	for i, x := range g {
		out[i] = new(big.Rat).Mul(m, x)
	}
	return out
}

func ratsEqual(a, b []*big.Rat) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Cmp(b[i]) != 0 {
			return false
		}
	}
	return true
}

// uniformM returns M = (N1/n) q_K - 1 of K sets drawn uniformly from f, as
// combin.Family.Constants computes it: the constant the exact engine
// verifies.
func uniformM(f combin.Family, K int) (*big.Rat, error) {
	c, err := f.Constants(combin.Uniform, K)
	if err != nil {
		return nil, err
	}
	if c.M == nil {
		return nil, fmt.Errorf("%v, K = %d: no exact M", f, K)
	}
	return c.M, nil
}

func ratString(xs []*big.Rat) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.RatString()
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func isZero(g []*big.Rat) bool {
	for _, x := range g {
		if x.Sign() != 0 {
			return false
		}
	}
	return true
}

// drawCategorical draws a categorical with rational probabilities k_v/sum k
// with k_v in [1, 6].
func drawCategorical(t *rapid.T, V int, label string) *Categorical {
	ks := rapid.SliceOfN(rapid.IntRange(1, 6), V, V).Draw(t, label)
	sum := 0
	for _, k := range ks {
		sum += k
	}
	p := make([]*big.Rat, V)
	for v, k := range ks {
		p[v] = big.NewRat(int64(k), int64(sum))
	}
	c, err := NewCategorical(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rapidConfig draws a small configuration: V in {2, 3}, 2 <= N <= 6,
// subsets or tuples with 1 <= n <= N (n < N for subsets, whose only group
// would otherwise leave no K >= 2), and 2 <= K <= min(4, T) among the K with
// C(T, K) <= 300,000 (large tuple families at N = 6 get the smaller K only,
// to keep the enumeration fast), a random policy and a random table.
func rapidConfig(t *rapid.T) (f combin.Family, K int, c *Categorical, tab *Table) {
	V := rapid.IntRange(2, 3).Draw(t, "V")
	ordered := rapid.Bool().Draw(t, "ordered")
	N := rapid.IntRange(2, 6).Draw(t, "N")
	nmax := N
	if !ordered {
		nmax = N - 1
	}
	n := rapid.IntRange(1, nmax).Draw(t, "n")
	f = family(t, ordered, N, n)
	T64, _ := f.Count64()
	T := int64(T64)
	kmax := min(4, T)
	for new(big.Int).Binomial(T, kmax).Cmp(big.NewInt(300000)) > 0 {
		kmax--
	}
	K = rapid.IntRange(2, int(kmax)).Draw(t, "K")
	c = drawCategorical(t, V, "p")
	denom := rapid.IntRange(1, 9).Draw(t, "denom")
	vals := rapid.SliceOfN(rapid.IntRange(0, denom), pow(V, n), pow(V, n)).Draw(t, "table")
	r := make([]*big.Rat, len(vals))
	for i, k := range vals {
		r[i] = big.NewRat(int64(k), int64(denom))
	}
	tab, err := NewTable(V, n, r)
	if err != nil {
		t.Fatal(err)
	}
	return f, K, c, tab
}

func pow(a, b int) int {
	r := 1
	for range b {
		r *= a
	}
	return r
}

// TestPropositionRapid: for random small configurations, families, tables and
// policies, the exact expectation of the search estimator equals
// uniformM(f, K) * grad J exactly (tuples in their own order, subsets in index
// order; order-sensitive tables included).
func TestPropositionRapid(t *testing.T) {
	checkProperty(t, 30, func(t *rapid.T) {
		f, K, c, tab := rapidConfig(t)
		w := cachedWeights(t, f, K)
		got, err := w.Expectation(c, tab, combin.IndexOrder)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Gradient(c, tab, combin.IndexOrder)
		if err != nil {
			t.Fatal(err)
		}
		m, err := uniformM(f, K)
		if err != nil {
			t.Fatal(err)
		}
		if want := scale(m, g); !ratsEqual(got, want) {
			t.Fatalf("%v K=%d: E[g] = %s, want M*grad J = %s*%s = %s", f, K, ratString(got), m.RatString(), ratString(g), ratString(want))
		}
	})
}

// TestPresentationRapid: for every presentation rule the expectation equals
// uniformM(f, K) * grad J_p with J_p = E[f(present_p(y))]; for combin.Shuffled, J_p = J.
func TestPresentationRapid(t *testing.T) {
	checkProperty(t, 30, func(t *rapid.T) {
		f, K, c, tab := rapidConfig(t)
		p := rapid.SampledFrom([]combin.Order{combin.IndexOrder, combin.Shuffled, SortedBySymbol}).Draw(t, "order")
		w := cachedWeights(t, f, K)
		got, err := w.Expectation(c, tab, p)
		if err != nil {
			t.Fatal(err)
		}
		gp, err := Gradient(c, tab, p)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := uniformM(f, K)
		if want := scale(m, gp); !ratsEqual(got, want) {
			t.Fatalf("%v K=%d %v: E[g] = %s, want M*grad J_p = %s", f, K, p, ratString(got), ratString(want))
		}
		if p == combin.Shuffled {
			g, _ := Gradient(c, tab, combin.IndexOrder)
			if !ratsEqual(gp, g) {
				t.Fatalf("grad J_shuffled = %s != grad J = %s", ratString(gp), ratString(g))
			}
		}
	})
}

// TestDesignWeightsMatchesUniform: the general weighted-selection path, fed
// the uniform distribution listed explicitly, gives exactly the fast
// enumeration's W, entry by entry.
func TestDesignWeightsMatchesUniform(t *testing.T) {
	for _, tc := range []struct {
		ordered bool
		N, n, K int
	}{{false, 5, 2, 3}, {true, 4, 2, 2}, {false, 6, 3, 4}, {true, 3, 3, 3}, {false, 4, 1, 2}} {
		f := family(t, tc.ordered, tc.N, tc.n)
		fast := cachedWeights(t, f, tc.K)
		var groups [][]int
		for g := range f.All() {
			groups = append(groups, append([]int(nil), g...))
		}
		slow, err := DistributionWeights(tc.N, groups, UniformSelections(len(groups), tc.K))
		if err != nil {
			t.Fatal(err)
		}
		for h := range groups {
			for i := range tc.N {
				if fast.At(i, h).Cmp(slow.At(i, h)) != 0 {
					t.Fatalf("%v K=%d: W(%d, %v) fast %s, design %s", f, tc.K, i, groups[h], fast.At(i, h).RatString(), slow.At(i, h).RatString())
				}
			}
		}
	}
}

// TestWeightsStructure pins W at the paper's configuration against
// hand-derived values: T*W(i, H) = M = 1365/1541 for every i in H, and
// sum_H W(i, H) = 0 for every i (the K set advantages of a selection sum to
// zero, so sum_{H in S} w_S(i, H) = [c_i > 0](c_i/c_i - K/K) = 0).
func TestWeightsStructure(t *testing.T) {
	f := family(t, false, 8, 4)
	w := cachedWeights(t, f, 4)
	if w.Traces() != 8 || w.NumSets() != 70 {
		t.Fatalf("N, T = %d, %d", w.Traces(), w.NumSets())
	}
	m := big.NewRat(1365, 1541)
	win := new(big.Rat).Quo(m, big.NewRat(70, 1))
	for h := range 70 {
		in := make(map[int]bool)
		for _, i := range w.Set(h) {
			in[i] = true
		}
		for i := range 8 {
			if in[i] && w.At(i, h).Cmp(win) != 0 {
				t.Fatalf("W(%d, %v) = %s, want M/T = %s", i, w.Set(h), w.At(i, h).RatString(), win.RatString())
			}
		}
	}
	want := new(big.Rat)
	for i := range 8 {
		s := new(big.Rat)
		for h := range 70 {
			s.Add(s, w.At(i, h))
		}
		if s.Cmp(want) != 0 {
			t.Fatalf("sum_H W(%d, H) = %s, want 0", i, s.RatString())
		}
	}
}

// TestPaperConfiguration: at N = 8, n = 4, K = 4 (subsets, 916,895
// selections) the exact expectation equals (1365/1541) grad J for fixed
// tables, including the complementary-pieces objective and an
// order-sensitive one; and the tuple family's M (a deliberately wrong
// constant here) does not match.
func TestPaperConfiguration(t *testing.T) {
	f := family(t, false, 8, 4)
	w := cachedWeights(t, f, 4)
	m := big.NewRat(1365, 1541)
	if got, _ := uniformM(f, 4); got.Cmp(m) != 0 {
		t.Fatalf("M = %s, want 1365/1541", got.RatString())
	}
	wrong, _ := uniformM(family(t, true, 8, 4), 4)
	c := must(NewCategorical(rats("1/3", "2/3")))
	rnd := rand.New(rand.NewPCG(8, 4))
	tables := map[string]*Table{
		"cover2":    must(CoverTable(2, 4, 2)),
		"first":     must(FirstTable(2, 4, rats("1/4", "1"))),
		"random":    must(RandomTable(rnd, 2, 4, 12)),
		"symmetric": must(SymmetricRandomTable(rnd, 2, 4, 5)),
	}
	for name, tab := range tables {
		got, err := w.Expectation(c, tab, combin.IndexOrder)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := Gradient(c, tab, combin.IndexOrder)
		if isZero(g) {
			t.Fatalf("%s: grad J is zero, the check would be vacuous", name)
		}
		if want := scale(m, g); !ratsEqual(got, want) {
			t.Errorf("%s: E[g] = %s, want (1365/1541) grad J = %s", name, ratString(got), ratString(want))
		}
		if bad := scale(wrong, g); ratsEqual(got, bad) {
			t.Errorf("%s: E[g] also equals the tuple family's M = %s times grad J", name, wrong.RatString())
		}
	}
	// The complementary-pieces table's exact value: E[g] = (1365/1541)
	// (56/243, -56/243) at p = (1/3, 2/3): the rarer symbol 0, which a set
	// lacks more often, is pushed up.
	got, _ := w.Expectation(c, tables["cover2"], combin.IndexOrder)
	if s := ratString(got); s != "(25480/124821, -25480/124821)" {
		t.Errorf("cover2: E[g] = %s, want (25480/124821, -25480/124821) = (1365/1541)(56/243, -56/243)", s)
	}
}

// TestTupleFamilyWrongM: for tuples the subset family's M does not match, and
// the tuple family's does (a configuration small enough to enumerate).
func TestTupleFamilyWrongM(t *testing.T) {
	tuples := family(t, true, 5, 3)   // T = 60
	subsets := family(t, false, 5, 3) // T = 10
	c := must(NewCategorical(rats("1/4", "1/4", "1/2")))
	tab := must(RandomTable(rand.New(rand.NewPCG(5, 3)), 3, 3, 7))
	g, _ := Gradient(c, tab, combin.IndexOrder)
	for _, K := range []int{2, 3} {
		got, err := cachedWeights(t, tuples, K).Expectation(c, tab, combin.IndexOrder)
		if err != nil {
			t.Fatal(err)
		}
		right, _ := uniformM(tuples, K)
		wrong, _ := uniformM(subsets, K)
		if !ratsEqual(got, scale(right, g)) {
			t.Errorf("K=%d: tuples E[g] = %s, want M_tuples grad J = %s", K, ratString(got), ratString(scale(right, g)))
		}
		if ratsEqual(got, scale(wrong, g)) {
			t.Errorf("K=%d: tuples E[g] also matches M_subsets = %s", K, wrong.RatString())
		}
	}
}

// TestKOne: a single group has zero set advantage, so W = 0, M = 0 and the
// estimator's expectation is zero.
func TestKOne(t *testing.T) {
	for _, f := range []combin.Family{family(t, false, 6, 3), family(t, true, 4, 2)} {
		m, err := uniformM(f, 1)
		if err != nil || m.Sign() != 0 {
			t.Errorf("%v: uniformM(K=1) = %v, %v, want 0", f, m, err)
		}
		w := cachedWeights(t, f, 1)
		for h := range w.NumSets() {
			for i := range w.Traces() {
				if w.At(i, h).Sign() != 0 {
					t.Fatalf("%v: W(%d, %d) = %s, want 0", f, i, h, w.At(i, h).RatString())
				}
			}
		}
		c := must(UniformCategorical(2))
		got, err := w.Expectation(c, must(CoverTable(2, f.SetSize(), 2)), combin.IndexOrder)
		if err != nil || !isZero(got) {
			t.Errorf("%v: E[g] with K=1 = %v, %v, want 0", f, got, err)
		}
	}
}

func TestSelectionWeightsErrors(t *testing.T) {
	for _, tc := range []struct {
		f    combin.Family
		K    int
		want string
	}{
		{family(t, false, 5, 2), 0, "estimator: K: 0 outside [1, T = 10]"},
		{family(t, false, 5, 2), 11, "estimator: K: 11 outside [1, T = 10]"},
		{family(t, true, 8, 4), 4, "estimator: K: C(T, K) = C(1680, 4) = 330730125180 selections > 33554432, the most enumerated"},
	} {
		_, err := SelectionWeights(tc.f, tc.K)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SelectionWeights(%v, %d) error = %v, want containing %q", tc.f, tc.K, err, tc.want)
		}
	}
	w := cachedWeights(t, family(t, false, 4, 2), 2)
	c := must(UniformCategorical(2))
	if _, err := w.Expectation(c, must(CoverTable(2, 3, 2)), combin.IndexOrder); err == nil || !strings.Contains(err.Error(), "estimator: t: arity n = 3, set 0 has 2 members") {
		t.Errorf("arity mismatch error = %v", err)
	}
	if _, err := w.Expectation(must(UniformCategorical(3)), must(CoverTable(2, 2, 2)), combin.IndexOrder); err == nil || !strings.Contains(err.Error(), "V = 3") {
		t.Errorf("V mismatch error = %v", err)
	}
	if _, err := w.Expectation(c, must(CoverTable(2, 2, 2)), combin.Order(7)); err == nil || !strings.Contains(err.Error(), "estimator: p: 7 is not a defined presentation") {
		t.Errorf("unknown presentation error = %v", err)
	}
}

func TestDesignWeightsErrors(t *testing.T) {
	one := big.NewRat(1, 1)
	single := func(s []int, p *big.Rat) func(func([]int, *big.Rat) bool) {
		return func(yield func([]int, *big.Rat) bool) { yield(s, p) }
	}
	for _, tc := range []struct {
		N      int
		groups [][]int
		sel    func(func([]int, *big.Rat) bool)
		want   string
	}{
		{0, [][]int{{0}}, single([]int{0}, one), "estimator: N1: 0 outside [1, 16777216], the most traces a family holds"},
		{3, nil, single([]int{0}, one), "estimator: sets: len = 0, want at least one set"},
		{3, [][]int{{0, 3}}, single([]int{0}, one), "estimator: sets[0][1] = 3: out of range"},
		{3, [][]int{{1, 1}}, single([]int{0}, one), "estimator: sets[0][1] = 1: repeats member 0"},
		{3, [][]int{{}}, single([]int{0}, one), "estimator: sets[0]: empty set"},
		{3, [][]int{{0, 1}}, single([]int{1}, one), "estimator: selections[0][0] = 1: out of range [0, 1)"},
		{3, [][]int{{0, 1}, {1, 2}}, single([]int{1, 1}, one), "estimator: selections[0][1] = 1: repeats member 0"},
		{3, [][]int{{0, 1}}, single([]int{}, one), "estimator: selections[0]: empty set"},
		{3, [][]int{{0, 1}}, single([]int{0}, big.NewRat(-1, 2)), "probability -1/2"},
		{3, [][]int{{0, 1}}, single([]int{0}, big.NewRat(1, 2)), "sum to 1/2"},
	} {
		_, err := DistributionWeights(tc.N, tc.groups, tc.sel)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DistributionWeights(%d, %v) error = %v, want containing %q", tc.N, tc.groups, err, tc.want)
		}
	}
}

// TestFixedDesign shows the engine on a non-uniform design: one fixed
// selection of two disjoint pairs out of N = 4. Every trace is in exactly
// one group, so W(i, H) = [i in H] - 1/2 and E[g] = 2 * (1/2) grad J.
func TestFixedDesign(t *testing.T) {
	groups := [][]int{{0, 1}, {2, 3}}
	w, err := DistributionWeights(4, groups, func(yield func([]int, *big.Rat) bool) { yield([]int{0, 1}, big.NewRat(1, 1)) })
	if err != nil {
		t.Fatal(err)
	}
	c := must(NewCategorical(rats("1/5", "4/5")))
	tab := must(RandomTable(rand.New(rand.NewPCG(2, 2)), 2, 2, 6))
	got, err := w.Expectation(c, tab, combin.IndexOrder)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := Gradient(c, tab, combin.IndexOrder)
	if !ratsEqual(got, g) {
		t.Errorf("fixed disjoint design: E[g] = %s, want grad J = %s", ratString(got), ratString(g))
	}
}

// TestFiniteKConstants pins combin's constants at N1 = 8, n = 4 for
// K = 2..16, both families (the probability that a trace gets no credit,
// 1 - q_K, and M), and checks M against the exact engine where it can
// enumerate every selection (K <= 3): T W(i, H) = M for every i in H.
func TestFiniteKConstants(t *testing.T) {
	want := map[int][4]float64{ // no credit (subsets, tuples), M (subsets, tuples)
		2:  {0.246377, 0.249851, 0.507246, 0.500298},
		3:  {0.119565, 0.124777, 0.760870, 0.750447},
		4:  {0.057106, 0.062277, 0.885788, 0.875447},
		8:  {0.002493, 0.003841, 0.995014, 0.992317},
		12: {0.000078, 0.000235, 0.999843, 0.999531},
		16: {0.000002, 0.000014, 0.999997, 0.999972},
	}
	sub, tup := family(t, false, 8, 4), family(t, true, 8, 4)
	for K := 2; K <= 16; K++ {
		cs := must(sub.Constants(combin.Uniform, K))
		ct := must(tup.Constants(combin.Uniform, K))
		got := [4]float64{cs.MissProbFloat, ct.MissProbFloat, cs.MFloat, ct.MFloat}
		if w, ok := want[K]; ok {
			for j := range w {
				if math.Abs(got[j]-w[j]) > 5e-7 {
					t.Errorf("K = %d: constants %v, want %v", K, got, w)
					break
				}
			}
		}
		if cs.MissProbFloat >= ct.MissProbFloat {
			t.Errorf("K = %d: subsets miss %v >= tuples %v", K, cs.MissProbFloat, ct.MissProbFloat)
		}
		if K <= 3 {
			w := cachedWeights(t, sub, K)
			tw := new(big.Rat).Mul(w.At(0, 0), big.NewRat(int64(w.NumSets()), 1))
			if tw.Cmp(cs.M) != 0 {
				t.Errorf("K = %d: T W(0, 0) = %s, combin's M = %s", K, tw.RatString(), cs.M.RatString())
			}
		}
	}
}
