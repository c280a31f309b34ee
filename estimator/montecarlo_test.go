package estimator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"spiral/combin"
	"spiral/lengthgate"
)

// longMonteCarlo reports whether the long Monte Carlo campaigns are on
// (SPIRAL_LONG=1).
func longMonteCarlo() bool { return os.Getenv("SPIRAL_LONG") == "1" }

// mcRats parses rationals such as "1/3".
func mcRats(xs ...string) []*big.Rat {
	out := make([]*big.Rat, len(xs))
	for i, x := range xs {
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			panic("bad rational " + x)
		}
		out[i] = r
	}
	return out
}

// naiveReplicate is one replicate of mc written plainly: the allocating
// combin.Family.Sample, the definitions of SPIRAL.md section 2 and of Eq. 8,
// and the score e_v - p from the float64 probabilities. It draws from rnd in
// the same order as mcWorker.replicate, so with the same stream it must give
// the same g. It returns g and the search advantages (after the gate).
func naiveReplicate(tb testing.TB, mc *MonteCarlo, rnd *rand.Rand) (g, search []float64) {
	N, n, V := mc.Family.N(), mc.Family.GroupSize(), mc.Policy.Size()
	y := make([]int, N)
	for i := range y {
		y[i] = mc.Policy.Sample(rnd)
	}
	groups, err := mc.Family.Sample(rnd, mc.K)
	if err != nil {
		tb.Fatal(err)
	}
	scores := make([]float64, mc.K)
	for k, grp := range groups {
		switch mc.Presentation {
		case PresentShuffled:
			for j := n - 1; j > 0; j-- {
				t := rnd.IntN(j + 1)
				grp[j], grp[t] = grp[t], grp[j]
			}
		case PresentBySymbol:
			slices.SortStableFunc(grp, func(a, b int) int { return y[a] - y[b] })
		}
		tuple := make([]int, n)
		for j, i := range grp {
			tuple[j] = y[i]
		}
		f := mc.Objective.Float(tuple)
		if mc.N2 == 0 {
			scores[k] = f
			continue
		}
		hits := 0
		for range mc.N2 {
			if rnd.Float64() < f {
				hits++
			}
		}
		scores[k] = float64(hits) / float64(mc.N2)
	}
	fbar := 0.0
	for _, s := range scores {
		fbar += s
	}
	fbar /= float64(mc.K)
	search = make([]float64, N)
	for i := range N {
		sum, count := 0.0, 0
		for k, grp := range groups {
			if slices.Contains(grp, i) {
				sum += scores[k] - fbar
				count++
			}
		}
		if count > 0 {
			search[i] = sum / float64(count)
		}
		if gate := mc.Gate; gate.Enabled() && search[i] > 0 {
			L := mc.Lengths[y[i]]
			if L > gate.Target || (L == gate.Target && gate.Boundary != lengthgate.KeepAtTarget) {
				search[i] = 0
			}
		}
	}
	p := mc.Policy.Float64s()
	g = make([]float64, V)
	for i := range N {
		for v := range V {
			s := -p[v]
			if v == y[i] {
				s++
			}
			g[v] += search[i] * s
		}
	}
	return g, search
}

// mcTable returns the table with values f(y) for every y in [V]^n.
func mcTable(tb testing.TB, V, n int, f func(y []int) *big.Rat) *Table {
	tb.Helper()
	size := 1
	for range n {
		size *= V
	}
	vals := make([]*big.Rat, size)
	y := make([]int, n)
	for i := range vals {
		decode(y, i, V)
		vals[i] = f(y)
	}
	tab, err := NewTable(V, n, vals)
	if err != nil {
		tb.Fatal(err)
	}
	return tab
}

// findTable is the noisy "find a correct candidate" aggregator: symbol 0 is
// a wrong trace, every other symbol a correct one, and the aggregator
// answers correctly with probability 3/4 when at least one candidate is
// correct, else never.
func findTable(tb testing.TB, V, n int) *Table {
	return mcTable(tb, V, n, func(y []int) *big.Rat {
		for _, s := range y {
			if s != 0 {
				return big.NewRat(3, 4)
			}
		}
		return new(big.Rat)
	})
}

// mcPolicy returns the categorical policy with probabilities ps.
func mcPolicy(tb testing.TB, ps ...string) *Categorical {
	tb.Helper()
	c, err := NewCategorical(mcRats(ps...))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// mcFamily returns Subsets(N, n), or Tuples(N, n) when ordered.
func mcFamily(tb testing.TB, N, n int, ordered bool) combin.Family {
	tb.Helper()
	mk := combin.Subsets
	if ordered {
		mk = combin.Tuples
	}
	f, err := mk(N, n)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// mcM returns M(f, K) as a float64.
func mcM(tb testing.TB, f combin.Family, K int) float64 {
	tb.Helper()
	m, err := MFloat(f, K)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// mcGradient returns the exact gradient of J_p (Gradient) as float64s.
func mcGradient(tb testing.TB, c *Categorical, t *Table, p Presentation) []float64 {
	tb.Helper()
	g, err := Gradient(c, t, p)
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]float64, len(g))
	for v, x := range g {
		out[v], _ = x.Float64()
	}
	return out
}

// scaled returns m*x.
func scaled(m float64, x []float64) []float64 {
	out := make([]float64, len(x))
	for i, xi := range x {
		out[i] = m * xi
	}
	return out
}

// zScore returns max_v |Mean[v] - want[v]| / StdErr[v], the worst deviation
// in standard errors (+Inf if a component with StdErr 0 differs at all).
func zScore(res MonteCarloResult, want []float64) float64 {
	worst := 0.0
	for v, m := range res.Mean {
		d := math.Abs(m - want[v])
		switch {
		case res.StdErr[v] > 0:
			worst = max(worst, d/res.StdErr[v])
		case d > 0:
			worst = math.Inf(1)
		}
	}
	return worst
}

// separation returns max_v |a[v] - b[v]| / StdErr[v]: how many standard
// errors apart two candidate expectations are, on their most distinct
// component.
func separation(res MonteCarloResult, a, b []float64) float64 {
	worst := 0.0
	for v, se := range res.StdErr {
		worst = max(worst, math.Abs(a[v]-b[v])/se)
	}
	return worst
}

// mcReplicates returns short under -short, long under SPIRAL_LONG=1 and def
// otherwise.
func mcReplicates(short, def, long int) int {
	switch {
	case longMonteCarlo():
		return long
	case testing.Short():
		return short
	}
	return def
}

func mcRun(tb testing.TB, mc MonteCarlo, R int, seed uint64) MonteCarloResult {
	tb.Helper()
	res, err := mc.Run(R, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// TestMonteCarloPaperNoisy is Proposition 3.1 by simulation at the paper's
// configuration (Subsets(8, 4), K = 4) with noisy set scores (N2 = 4
// Bernoulli rewards per set): every component of the mean is within 5
// standard errors of M * grad J. With the same replicates, a deliberately
// wrong M' (the tuple family's, (N/n) q_K - 1 with q_K of Tuples(8, 4)) must
// fail the check; the test first shows that M grad J and M' grad J are at
// least 10 standard errors apart, so the failure is not luck.
func TestMonteCarloPaperNoisy(t *testing.T) {
	sub := mcFamily(t, 8, 4, false)
	mSub, mTup := mcM(t, sub, 4), mcM(t, mcFamily(t, 8, 4, true), 4)
	symmetric, err := SymmetricRandomTable(rand.New(rand.NewPCG(5, 5)), 2, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	random, err := RandomTable(rand.New(rand.NewPCG(5, 5)), 2, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		name      string
		policy    *Categorical
		table     *Table
		R         int
		wrongMToo bool
	}
	configs := []config{{
		name:   "symmetric random table, p = (1/2, 1/2)",
		policy: mcPolicy(t, "1/2", "1/2"), table: symmetric,
		// sd(g_0) ~ 0.213 and |grad J_0| = 0.1875, so 1.5e6 replicates put
		// the two candidates ~11 standard errors apart.
		R:         mcReplicates(1_500_000, 3_000_000, 100_000_000),
		wrongMToo: true,
	}}
	if !testing.Short() {
		configs = append(configs,
			config{name: "random (order-sensitive) table, p = (1/3, 2/3)", policy: mcPolicy(t, "1/3", "2/3"), table: random,
				R: mcReplicates(0, 500_000, 20_000_000)},
			config{name: "find table, p = (3/4, 1/4)", policy: mcPolicy(t, "3/4", "1/4"), table: findTable(t, 2, 4),
				R: mcReplicates(0, 500_000, 20_000_000)},
		)
	}
	for i, c := range configs {
		mc := MonteCarlo{Family: sub, K: 4, N2: 4, Policy: c.policy, Objective: c.table}
		res := mcRun(t, mc, c.R, uint64(100+i))
		grad := mcGradient(t, c.policy, c.table, PresentIndexOrder)
		want := scaled(mSub, grad)
		z := zScore(res, want)
		t.Logf("%s: R = %d, mean %.6f ± %.6f, M grad J = %.6f (M = %.6f): %.2f SE",
			c.name, c.R, res.Mean, res.StdErr, want, mSub, z)
		if z > 5 {
			t.Errorf("%s: mean %v is %.2f standard errors from M grad J = %v, want <= 5", c.name, res.Mean, z, want)
		}
		if !c.wrongMToo {
			continue
		}
		wrong := scaled(mTup, grad)
		sep := separation(res, want, wrong)
		if sep < 10 {
			t.Fatalf("%s: M grad J and the wrong M' grad J are only %.2f standard errors apart with R = %d, want >= 10",
				c.name, sep, c.R)
		}
		zw := zScore(res, wrong)
		t.Logf("wrong M' = %.6f (tuples' q_K): candidates %.1f SE apart; mean is %.2f SE from M' grad J", mTup, sep, zw)
		if zw <= 5 {
			t.Errorf("%s: mean %v is within %.2f standard errors of the WRONG M' grad J = %v", c.name, res.Mean, zw, wrong)
		}
	}
}

// TestMonteCarloTuples is Proposition 3.1 by simulation for the tuple family
// (the family the paper proves it for) with an order-sensitive table and
// noisy scores: the mean is within 5 standard errors of M * grad J with the
// tuple family's M.
func TestMonteCarloTuples(t *testing.T) {
	tup := mcFamily(t, 8, 4, true)
	tab, err := RandomTable(rand.New(rand.NewPCG(6, 6)), 2, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	pol := mcPolicy(t, "1/3", "2/3")
	R := mcReplicates(100_000, 500_000, 20_000_000)
	res := mcRun(t, MonteCarlo{Family: tup, K: 4, N2: 4, Policy: pol, Objective: tab}, R, 7)
	want := scaled(mcM(t, tup, 4), mcGradient(t, pol, tab, PresentIndexOrder))
	if z := zScore(res, want); z > 5 {
		t.Errorf("mean %v is %.2f standard errors from M grad J = %v, want <= 5", res.Mean, z, want)
	}
}

// TestMonteCarloPresentation answers the presentation question by
// simulation, on an order-sensitive aggregator that trusts its first
// candidate (FirstTable) and sets drawn as unordered subsets: index order
// and a random shuffle per set keep E[g] = M grad J; sorting the candidates
// by content does not (the two candidates are at least 10 standard errors
// apart and the mean is more than 5 from M grad J) and follows
// M grad J_sort, J_sort = E[f(sort(y))], instead.
func TestMonteCarloPresentation(t *testing.T) {
	sub := mcFamily(t, 8, 4, false)
	pol := mcPolicy(t, "1/3", "2/3")
	tab, err := FirstTable(2, 4, mcRats("1/4", "3/4"))
	if err != nil {
		t.Fatal(err)
	}
	m := mcM(t, sub, 4)
	want := scaled(m, mcGradient(t, pol, tab, PresentIndexOrder))
	wantSort := scaled(m, mcGradient(t, pol, tab, PresentBySymbol))
	R := mcReplicates(100_000, 400_000, 20_000_000)
	for i, p := range []Presentation{PresentIndexOrder, PresentShuffled, PresentBySymbol} {
		res := mcRun(t, MonteCarlo{Family: sub, K: 4, N2: 4, Policy: pol, Objective: tab, Presentation: p}, R, uint64(20+i))
		z, zSort := zScore(res, want), zScore(res, wantSort)
		t.Logf("%v: mean %.5f ± %.5f; %.2f SE from M grad J = %.5f, %.2f SE from M grad J_sort = %.5f",
			p, res.Mean, res.StdErr, z, want, zSort, wantSort)
		if p != PresentBySymbol {
			if z > 5 {
				t.Errorf("%v: mean is %.2f standard errors from M grad J, want <= 5", p, z)
			}
			continue
		}
		if sep := separation(res, want, wantSort); sep < 10 {
			t.Fatalf("%v: M grad J and M grad J_sort only %.2f standard errors apart, want >= 10", p, sep)
		}
		if zSort > 5 {
			t.Errorf("%v: mean is %.2f standard errors from M grad J_sort, want <= 5", p, zSort)
		}
		if z <= 5 {
			t.Errorf("%v: mean is within %.2f standard errors of M grad J, want the sorted objective to differ", p, z)
		}
	}
}
