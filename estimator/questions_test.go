package estimator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"spiral"
	"spiral/loss"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/advantage"
	"spiral/combin"
)

// drawRewards draws V reward probabilities k/denom.
func drawRewards(t *rapid.T, V int, label string) []*big.Rat {
	denom := rapid.IntRange(1, 6).Draw(t, label+"Denom")
	ks := rapid.SliceOfN(rapid.IntRange(0, denom), V, V).Draw(t, label)
	out := make([]*big.Rat, V)
	for z, k := range ks {
		out[z] = big.NewRat(int64(k), int64(denom))
	}
	return out
}

// TestAggregationCreditRapid: by exact enumeration of N2 outputs and their
// Bernoulli rewards, the expected sum-reduced aggregation credit of one set
// is (N2 - 1) grad E[r] with the within-set baseline and N2 grad E[r] leave
// one out; the naive factor N2 fails for the within-set baseline.
func TestAggregationCreditRapid(t *testing.T) {
	checkProperty(t, 30, func(t *rapid.T) {
		V2 := rapid.IntRange(2, 3).Draw(t, "V2")
		b := spiral.AggregationBaseline(rapid.IntRange(0, 1).Draw(t, "baseline"))
		minN2 := 1
		if b == spiral.LeaveOneOut {
			minN2 = 2
		}
		N2 := rapid.IntRange(minN2, 4).Draw(t, "N2")
		agg := drawCategorical(t, V2, "agg")
		reward := drawRewards(t, V2, "reward")
		got, err := AggregationCredit(agg, reward, N2, b)
		if err != nil {
			t.Fatal(err)
		}
		g, err := RewardGradient(agg, reward)
		if err != nil {
			t.Fatal(err)
		}
		a := aggregationFactor(t, N2, b)
		if want := scale(a, g); !ratsEqual(got, want) {
			t.Fatalf("%v N2=%d: credit %s, want %s * grad E[r] = %s", b, N2, ratString(got), a.RatString(), ratString(want))
		}
		if naive := scale(big.NewRat(int64(N2), 1), g); b == spiral.WithinSet && !isZero(g) && ratsEqual(got, naive) {
			t.Fatalf("within-set credit equals N2 * grad E[r] = %s", ratString(naive))
		}
	})
}

// TestAggregationCreditPaper pins the paper's N2 = 4 with a three-output
// toy: the within-set credit is exactly 3 grad E[r], i.e. 3/4 of the
// unbiased sum-reduced 4 grad E[r].
func TestAggregationCreditPaper(t *testing.T) {
	agg := must(NewCategorical(rats("1/2", "1/3", "1/6")))
	reward := rats("1", "1/4", "0")
	g, err := RewardGradient(agg, reward)
	if err != nil {
		t.Fatal(err)
	}
	// grad E[r] = pi * (rho - E r): E r = 1/2 + 1/12 = 7/12.
	if want := rats("5/24", "-1/9", "-7/72"); !ratsEqual(g, want) {
		t.Fatalf("grad E[r] = %s, want %s", ratString(g), ratString(want))
	}
	for _, tc := range []struct {
		b    spiral.AggregationBaseline
		want []*big.Rat
	}{
		{spiral.WithinSet, rats("5/8", "-1/3", "-7/24")},
		{spiral.LeaveOneOut, rats("5/6", "-4/9", "-7/18")},
	} {
		got, err := AggregationCredit(agg, reward, 4, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if !ratsEqual(got, tc.want) {
			t.Errorf("%v: credit = %s, want %s", tc.b, ratString(got), ratString(tc.want))
		}
	}
}

func TestAggregationErrors(t *testing.T) {
	agg := must(UniformCategorical(2))
	for _, tc := range []struct {
		N2     int
		b      spiral.AggregationBaseline
		reward []*big.Rat
		want   string
	}{
		{0, spiral.WithinSet, rats("0", "1"), "estimator: N2: 0 < 1"},
		{1, spiral.LeaveOneOut, rats("0", "1"), "estimator: N2: 1 < 2, which the leave-one-out baseline needs"},
		{2, spiral.AggregationBaseline(5), rats("0", "1"), "estimator: b: 5 is not a defined AggregationBaseline"},
		{2, spiral.WithinSet, rats("0"), "estimator: reward: len = 1, want V = 2, one per output"},
		{2, spiral.WithinSet, rats("0", "2"), "estimator: reward[1]: 2 outside [0, 1]"},
		{2, spiral.WithinSet, []*big.Rat{nil, big.NewRat(0, 1)}, "estimator: reward[0]: nil"},
		{20, spiral.WithinSet, rats("0", "1"), "N2 = 20 outputs over agg's V = 2 outputs"},
	} {
		_, err := AggregationCredit(agg, tc.reward, tc.N2, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AggregationCredit(N2=%d, %v) error = %v, want containing %q", tc.N2, tc.b, err, tc.want)
		}
	}
}

// aggregationFactor returns a, the aggregation weight of one set (K = 1)
// under baseline b with sum-reduced losses, as spiral.Config.RoleWeights
// computes it.
func aggregationFactor(t fataler, N2 int, b spiral.AggregationBaseline) *big.Rat {
	t.Helper()
	cfg := spiral.Config{SearchTraces: 2, SetSize: 1, Sets: 1, AggregationsPerSet: N2, AggregationBaseline: b}
	w, err := cfg.RoleWeights(spiral.LossOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w.Aggregation
}

// TestRoleWeightsPaper pins spiral.Config.RoleWeights at the paper's
// configuration (N1 = 8, n = 4, K = 4, N2 = 4) for each baseline and
// reduction, both families and both designs; TestJointExpectation checks
// the weights against the brute-forced update on small configurations.
func TestRoleWeightsPaper(t *testing.T) {
	paper := spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4}
	tuples, balanced := paper, paper
	tuples.Ordered = true
	balanced.Design = combin.Balanced
	perRole := spiral.LossOptions{Reduction: loss.SeqMeanTokenSum, SplitRoles: true}
	pooled := spiral.LossOptions{Reduction: loss.SeqMeanTokenSum}
	for _, tc := range []struct {
		cfg               spiral.Config
		b                 spiral.AggregationBaseline
		r                 spiral.LossOptions
		search, aggregate string
	}{
		{paper, spiral.WithinSet, spiral.LossOptions{}, "1365/1541", "12"},
		{paper, spiral.LeaveOneOut, spiral.LossOptions{}, "1365/1541", "16"},
		{paper, spiral.WithinSet, perRole, "1365/12328", "3/4"},
		{paper, spiral.LeaveOneOut, perRole, "1365/12328", "1"},
		{paper, spiral.WithinSet, pooled, "455/12328", "1/2"},
		{tuples, spiral.WithinSet, spiral.LossOptions{}, "821660/938561", "12"},
		{balanced, spiral.WithinSet, spiral.LossOptions{}, "1", "12"},
	} {
		cfg := tc.cfg
		cfg.AggregationBaseline = tc.b
		w, err := cfg.RoleWeights(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if w.Search.RatString() != tc.search || w.Aggregation.RatString() != tc.aggregate {
			t.Errorf("%+v %v %v: weights (%s, %s), want (%s, %s)", tc.cfg, tc.b, tc.r, w.Search.RatString(), w.Aggregation.RatString(), tc.search, tc.aggregate)
		}
	}
	w, _ := paper.RoleWeights(spiral.LossOptions{})
	if ratio := new(big.Rat).Quo(w.Aggregation, w.Search); ratio.RatString() != "6164/455" {
		t.Errorf("aggregation/search = %s, want 6164/455 ~ 13.55", ratio.RatString())
	}
	if math.Abs(w.SearchMultiplier-1541.0/1365) > 1e-15 || w.AggregationMultiplier != 1.0/12 {
		t.Errorf("multipliers %v, %v, want 1541/1365, 1/12", w.SearchMultiplier, w.AggregationMultiplier)
	}
}

// randomAggregator returns a tabular aggregator over V2 outputs with random
// rational policies and reward probabilities.
func randomAggregator(t *testing.T, rnd *rand.Rand, V, n, V2 int) *Aggregator {
	t.Helper()
	size := pow(V, n)
	pol := make([]*Categorical, size)
	rew := make([][]*big.Rat, size)
	for ctx := range size {
		ks := make([]int, V2)
		sum := 0
		for z := range ks {
			ks[z] = 1 + rnd.IntN(4)
			sum += ks[z]
		}
		p := make([]*big.Rat, V2)
		rew[ctx] = make([]*big.Rat, V2)
		for z, k := range ks {
			p[z] = big.NewRat(int64(k), int64(sum))
			rew[ctx][z] = big.NewRat(int64(rnd.IntN(5)), 4)
		}
		pol[ctx] = must(NewCategorical(p))
	}
	a, err := NewAggregator(V, n, pol, rew)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestJointExpectation brute-forces the whole SPIRAL update (traces,
// selection, presentation, aggregation outputs and Bernoulli rewards) on tiny
// configurations and checks, exactly, against the role weights of
// spiral.Config.RoleWeights (sum-reduced):
//   - search part = M * grad_theta J_p, and equals the noiseless engine's
//     expectation (noisy set scores do not change the expectation);
//   - aggregation part = K * a * grad_phi J_p with a = N2 - 1 (within the
//     set) or N2 (leave one out).
func TestJointExpectation(t *testing.T) {
	type config struct {
		ordered  bool
		N, n, K  int
		N2       int
		p        combin.Order
		b        spiral.AggregationBaseline
		longOnly bool
	}
	configs := []config{
		{false, 3, 2, 2, 2, combin.IndexOrder, spiral.WithinSet, false},
		{false, 3, 2, 2, 2, SortedBySymbol, spiral.WithinSet, false},
		{false, 3, 2, 2, 2, combin.Shuffled, spiral.LeaveOneOut, false},
		{true, 3, 2, 2, 2, combin.IndexOrder, spiral.LeaveOneOut, false},
		{false, 3, 2, 3, 1, combin.IndexOrder, spiral.WithinSet, false},
		{false, 4, 2, 2, 2, SortedBySymbol, spiral.LeaveOneOut, true},
		{false, 3, 2, 2, 3, combin.IndexOrder, spiral.WithinSet, true},
		{true, 3, 2, 2, 2, combin.Shuffled, spiral.WithinSet, true},
	}
	rnd := rand.New(rand.NewPCG(11, 13))
	c := must(NewCategorical(rats("2/5", "3/5")))
	for _, tc := range configs {
		if tc.longOnly && !long() {
			continue
		}
		f := family(t, tc.ordered, tc.N, tc.n)
		a := randomAggregator(t, rnd, 2, tc.n, 2)
		got, err := JointExpectation(c, a, f, tc.K, tc.N2, tc.b, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		cfg := spiral.Config{SearchTraces: tc.N, SetSize: tc.n, Sets: tc.K, AggregationsPerSet: tc.N2, Ordered: tc.ordered, AggregationBaseline: tc.b}
		w, err := cfg.RoleWeights(spiral.LossOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := w.Search
		gs, _ := Gradient(c, a.Table(), tc.p)
		if isZero(gs) {
			t.Fatalf("%+v: grad_theta J is zero, the check would be vacuous", tc)
		}
		if want := scale(m, gs); !ratsEqual(got.Search, want) {
			t.Errorf("%+v: search part %s, want M grad_theta J_p = %s", tc, ratString(got.Search), ratString(want))
		}
		noiseless, err := cachedWeights(t, f, tc.K).Expectation(c, a.Table(), tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if !ratsEqual(got.Search, noiseless) {
			t.Errorf("%+v: noisy-score search part %s != exact-score %s", tc, ratString(got.Search), ratString(noiseless))
		}
		ga, _ := a.Gradient(c, tc.p)
		if isZero(ga) && w.Aggregation.Sign() != 0 {
			t.Fatalf("%+v: grad_phi J is zero, the check would be vacuous", tc)
		}
		want := scale(w.Aggregation, ga)
		if !ratsEqual(got.Aggregation, want) {
			t.Errorf("%+v: aggregation part %s, want K*a*grad_phi J_p = %s", tc, ratString(got.Aggregation), ratString(want))
		}
	}
}

// TestJointSortedIsNotJ: under content-sorted presentation with an
// order-sensitive aggregator, the whole update (both parts) follows J_sort,
// not J: the search part differs from M grad_theta J.
func TestJointSortedIsNotJ(t *testing.T) {
	f := family(t, false, 3, 2)
	c := must(NewCategorical(rats("2/5", "3/5")))
	// The aggregator copies the first candidate (output z = symbol shown
	// first) and is rewarded only for z = 1: f(y) = [y_1 = 1].
	pol := make([]*Categorical, 4)
	rew := make([][]*big.Rat, 4)
	for ctx := range 4 {
		first := ctx / 2
		p := rats("1/10", "9/10")
		if first == 0 {
			p = rats("9/10", "1/10")
		}
		pol[ctx] = must(NewCategorical(p))
		rew[ctx] = rats("0", "1")
	}
	a := must(NewAggregator(2, 2, pol, rew))
	got, err := JointExpectation(c, a, f, 2, 2, spiral.WithinSet, SortedBySymbol)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := uniformM(f, 2)
	g, _ := Gradient(c, a.Table(), combin.IndexOrder)
	gs, _ := Gradient(c, a.Table(), SortedBySymbol)
	if !ratsEqual(got.Search, scale(m, gs)) || ratsEqual(got.Search, scale(m, g)) {
		t.Errorf("sorted search part %s; M grad J_sort = %s, M grad J = %s", ratString(got.Search), ratString(scale(m, gs)), ratString(scale(m, g)))
	}
}

func TestJointExpectationErrors(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	a := randomAggregator(t, rnd, 2, 2, 2)
	c := must(UniformCategorical(2))
	for _, tc := range []struct {
		c    *Categorical
		f    combin.Family
		K    int
		N2   int
		b    spiral.AggregationBaseline
		p    combin.Order
		want string
	}{
		{must(UniformCategorical(3)), family(t, false, 3, 2), 2, 2, spiral.WithinSet, combin.IndexOrder, "V = 3"},
		{c, family(t, false, 3, 1), 2, 2, spiral.WithinSet, combin.IndexOrder, "n = 1"},
		{c, family(t, false, 3, 2), 4, 2, spiral.WithinSet, combin.IndexOrder, "estimator: K: 4 outside [1, T = 3]"},
		{c, family(t, false, 3, 2), 2, 0, spiral.WithinSet, combin.IndexOrder, "estimator: N2: 0 < 1"},
		{c, family(t, false, 3, 2), 2, 2, spiral.WithinSet, combin.Order(4), "estimator: p: 4 is not a defined presentation"},
		{c, family(t, false, 8, 2), 4, 4, spiral.WithinSet, combin.IndexOrder, "leaves exceed"},
	} {
		_, err := JointExpectation(tc.c, a, tc.f, tc.K, tc.N2, tc.b, tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("JointExpectation error = %v, want containing %q", err, tc.want)
		}
	}
	if _, err := NewAggregator(2, 2, make([]*Categorical, 3), make([][]*big.Rat, 4)); err == nil || !strings.Contains(err.Error(), "len(policy) = 3") {
		t.Errorf("NewAggregator length error = %v", err)
	}
	pol := []*Categorical{c, c, must(UniformCategorical(3)), c}
	rew := [][]*big.Rat{rats("0", "1"), rats("0", "1"), rats("0", "1", "0"), rats("0", "1")}
	if _, err := NewAggregator(2, 2, pol, rew); err == nil || !strings.Contains(err.Error(), "estimator: policy[2]: 3 outputs, policy[0] has 2") {
		t.Errorf("NewAggregator size error = %v", err)
	}
	pol[2] = c
	rew[2] = rats("0", "3")
	if _, err := NewAggregator(2, 2, pol, rew); err == nil || !strings.Contains(err.Error(), "estimator: reward[2][1]: 3 outside [0, 1]") {
		t.Errorf("NewAggregator reward error = %v", err)
	}
}

// TestAdvantageCrossCheck: the engine's linear form of the search advantage,
// A(i) = sum_H w_S(i, H) f_H (DistributionWeights of a single selection gives
// W = w_S), and its aggregation advantages agree with the library's
// advantage.ComputeBatch on random selections and 0/1 rewards.
func TestAdvantageCrossCheck(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, f := range []combin.Family{family(t, false, 8, 4), family(t, true, 6, 3)} {
		var groups [][]int
		for g := range f.All() {
			groups = append(groups, append([]int(nil), g...))
		}
		for trial := range 50 {
			K := 2 + trial%4
			sel := rnd.Perm(len(groups))[:K]
			w, err := DistributionWeights(f.Traces(), groups, func(yield func([]int, *big.Rat) bool) { yield(sel, big.NewRat(1, 1)) })
			if err != nil {
				t.Fatal(err)
			}
			const N2 = 4
			chosen := make([][]int, K)
			rewards := make([][]float64, K)
			ints := make([][]int, K)
			fhat := make([]*big.Rat, K)
			for k, h := range sel {
				chosen[k] = groups[h]
				ints[k] = make([]int, N2)
				rewards[k] = make([]float64, N2)
				sum := 0
				for j := range N2 {
					ints[k][j] = rnd.IntN(2)
					rewards[k][j] = float64(ints[k][j])
					sum += ints[k][j]
				}
				fhat[k] = big.NewRat(int64(sum), N2)
			}
			in := advantage.Batch[float64]{Traces: []int{f.Traces()}, Sets: []int{K}}
			if f.Ordered() {
				in.Check = advantage.Tuples
			}
			for k, g := range chosen {
				in.SetSizes = append(in.SetSizes, len(g))
				in.Members = append(in.Members, g...)
				in.RewardCounts = append(in.RewardCounts, N2)
				in.Rewards = append(in.Rewards, rewards[k]...)
			}
			var cr advantage.BatchCredit[float64]
			if err := advantage.ComputeBatch(&cr, in); err != nil {
				t.Fatal(err)
			}
			for i := range f.Traces() {
				a := new(big.Rat)
				for k, h := range sel {
					a.Add(a, new(big.Rat).Mul(w.At(i, h), fhat[k]))
				}
				af, _ := a.Float64()
				if math.Abs(af-cr.Search[i]) > 1e-12 {
					t.Fatalf("%v selection %v: A_search(%d) engine %s, advantage.ComputeBatch %v", f, sel, i, a.RatString(), cr.Search[i])
				}
			}
			adv := zeros(N2)
			for k := range K {
				aggAdvantages(adv, ints[k], spiral.WithinSet)
				for j := range N2 {
					af, _ := adv[j].Float64()
					if math.Abs(af-cr.Aggregation[k*N2+j]) > 1e-12 {
						t.Fatalf("A_agg(%d, %d) engine %s, advantage.ComputeBatch %v", k, j, adv[j].RatString(), cr.Aggregation[k*N2+j])
					}
				}
			}
		}
	}
}
