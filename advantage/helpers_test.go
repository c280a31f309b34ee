package advantage

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"spiral/internal/spiraltest"
)

func TestMain(m *testing.M) { spiraltest.Main(m) }

// spec is one problem in Compute's nested form, with optional unscorable
// marks in the shape of Rewards.
type spec struct {
	Traces     int
	Sets       [][]int
	Rewards    [][]float64
	Unscorable [][]bool
}

// sameSet reports whether a and b hold the same members in any order.
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// drawSpec draws a valid random problem: 1..10 traces, 1..8 distinct sets
// of distinct members, 1..5 rewards per set (ragged), rewards either 0/1 or
// real numbers of either sign, and sometimes a trace in every set.
func drawSpec(t *rapid.T) spec {
	binary := rapid.Bool().Draw(t, "binary")
	reward := rapid.Float64Range(-10, 10)
	if binary {
		reward = rapid.Map(rapid.IntRange(0, 1), func(i int) float64 { return float64(i) })
	}
	return drawSpecOf(t, reward)
}

// drawSpecOf is drawSpec with rewards drawn from reward.
func drawSpecOf(t *rapid.T, reward *rapid.Generator[float64]) spec {
	traces := rapid.IntRange(1, 10).Draw(t, "traces")
	k := rapid.IntRange(1, 8).Draw(t, "sets")
	everywhere := -1
	if rapid.Bool().Draw(t, "trace in every set") {
		everywhere = rapid.IntRange(0, traces-1).Draw(t, "everywhere")
	}
	var s spec
	s.Traces = traces
	for range k {
		perm := rapid.Permutation(seq(traces)).Draw(t, "perm")
		g := perm[:rapid.IntRange(1, traces).Draw(t, "size")]
		if everywhere >= 0 && !slices.Contains(g, everywhere) {
			g = append(g[:len(g):len(g)], everywhere)
		}
		if slices.ContainsFunc(s.Sets, func(h []int) bool { return sameSet(g, h) }) {
			continue // no two sets identical
		}
		s.Sets = append(s.Sets, g)
		s.Rewards = append(s.Rewards, rapid.SliceOfN(reward, 1, 5).Draw(t, "rewards"))
	}
	return s
}

// mixedReward draws rewards of mixed magnitudes: a value in [-1, 1] times
// a scale from subnormal to MaxAbsReward, so that sets of one problem can
// differ by 30 orders of magnitude.
func mixedReward(t *rapid.T, label string) float64 {
	scale := rapid.SampledFrom([]float64{0x1p-1070, 1e-300, 1e-8, 1, 1, 1e8, 1e15, 1e20, 1e30}).Draw(t, label+" scale")
	return rapid.Float64Range(-1, 1).Draw(t, label) * scale
}

// drawUnscorable marks some outputs of s unscorable, at random, and writes
// NaN or an infinity in place of some of their rewards.
func drawUnscorable(t *rapid.T, s *spec) {
	s.Unscorable = make([][]bool, len(s.Rewards))
	for i, rs := range s.Rewards {
		s.Unscorable[i] = make([]bool, len(rs))
		for j := range rs {
			if rapid.IntRange(0, 3).Draw(t, "unscorable") == 0 {
				s.Unscorable[i][j] = true
				rs[j] = rapid.SampledFrom([]float64{rs[j], math.NaN(), math.Inf(1), -2e30}).Draw(t, "unscored reward")
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// scoredRats returns the rewards of s as rationals, 0 for an unscorable
// output (whose reward may not be finite).
func scoredRats(s spec) [][]*big.Rat {
	out := make([][]*big.Rat, len(s.Rewards))
	for i, rs := range s.Rewards {
		for j, r := range rs {
			x := new(big.Rat)
			if s.Unscorable == nil || !s.Unscorable[i][j] {
				x.SetFloat64(r)
			}
			out[i] = append(out[i], x)
		}
	}
	return out
}

// ref is the exact credit of s.
func ref(s spec) spiraltest.RefResult {
	return spiraltest.RefCredit(s.Traces, s.Sets, scoredRats(s), s.Unscorable)
}

const (
	u   = 0x1p-53
	eta = 0x1p-1074
)

// checkAccuracy checks c, the computed credit of s, against the exact one
// to the accuracy the package documents: set scores and aggregation
// advantages to a few units in the last place of their set's own values;
// set and search advantages to a few units of the largest |f_i - fbar|;
// a search advantage whose exact value is 0 exactly 0.
func checkAccuracy(t rapid.TB, s spec, c Credit) {
	t.Helper()
	want := ref(s)
	n2 := 0
	rmax := 0.0
	for i, rs := range s.Rewards {
		n2 = max(n2, len(rs))
		for j, r := range rs {
			if s.Unscorable == nil || !s.Unscorable[i][j] {
				rmax = max(rmax, math.Abs(r))
			}
		}
	}
	near := func(what string, got float64, exact *big.Rat, tol float64) {
		t.Helper()
		e := spiraltest.Float(exact)
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Fatalf("%s = %v, want %v\nproblem %+v", what, got, e, s)
		}
		// |got - exact| computed exactly: e is within half an ulp of exact.
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(got), exact)
		if math.Abs(spiraltest.Float(d)) > tol {
			t.Fatalf("%s = %v, want %v (exact %s) within %g\nproblem %+v", what, got, e, exact.RatString(), tol, s)
		}
	}
	fbar := new(big.Rat)
	if want.ScoredSets > 0 {
		for i, f := range want.SetScores {
			if want.ScoredOutputs[i] > 0 {
				fbar.Add(fbar, f)
			}
		}
		fbar.Quo(fbar, big.NewRat(int64(want.ScoredSets), 1))
	}
	dmax := 0.0
	for i, a := range want.SetAdvantages {
		dmax = max(dmax, math.Abs(spiraltest.Float(a)))
		setMax := 0.0
		for j, r := range s.Rewards[i] {
			if s.Unscorable == nil || !s.Unscorable[i][j] {
				setMax = max(setMax, math.Abs(r))
			}
		}
		own := 4*float64(len(s.Rewards[i])*len(s.Rewards[i]))*u*u*setMax + 2*eta
		near("SetScores["+itoa(i)+"]", c.SetScores[i], want.SetScores[i], 4*u*math.Abs(spiraltest.Float(want.SetScores[i]))+own)
		for j, a := range want.Aggregation[i] {
			near("Aggregation["+itoa(i)+"]["+itoa(j)+"]", c.Aggregation[i][j], a, 4*u*math.Abs(spiraltest.Float(a))+own)
		}
	}
	k := float64(len(s.Sets))
	cross := 8 * (k + 2) * (u*dmax + float64(n2*n2)*u*u*rmax + eta)
	for i, a := range want.SetAdvantages {
		near("SetAdvantages["+itoa(i)+"]", c.SetAdvantages[i], a, cross)
	}
	for y, a := range want.Search {
		if a.Sign() == 0 && c.Search[y] != 0 {
			t.Fatalf("Search[%d] = %v, want exactly 0\nproblem %+v", y, c.Search[y], s)
		}
		near("Search["+itoa(y)+"]", c.Search[y], a, cross)
	}
	if !slices.Equal(c.Appearances, want.Appearances) {
		t.Fatalf("Appearances = %v, want %v", c.Appearances, want.Appearances)
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// approx compares floats to an absolute tolerance.
func approx(tol float64) cmp.Option { return cmpopts.EquateApprox(0, tol) }

func mustCompute(t rapid.TB, s spec) Credit {
	t.Helper()
	if s.Unscorable != nil {
		return computeOne(t, s, false)
	}
	c, err := Compute(s.Traces, s.Sets, s.Rewards)
	if err != nil {
		t.Fatalf("Compute(%+v): %v", s, err)
	}
	return c
}

// computeOne computes the credit of s through ComputeBatch, with its
// unscorable outputs and sets compared as sequences if ordered, in
// Compute's form.
func computeOne(t rapid.TB, s spec, ordered bool) Credit {
	t.Helper()
	in := toBatch[float64]([]spec{s})
	if ordered {
		in.Check = Tuples
	}
	var dst BatchCredit[float64]
	if err := ComputeBatch(&dst, in); err != nil {
		t.Fatalf("ComputeBatch(%+v): %v", s, err)
	}
	c := Credit{SetScores: dst.SetScores, SetAdvantages: dst.SetAdvantages, Search: dst.Search, Appearances: dst.Appearances}
	o := 0
	for _, rs := range s.Rewards {
		c.Aggregation = append(c.Aggregation, dst.Aggregation[o:o+len(rs)])
		o += len(rs)
	}
	return c
}

// toBatch lays problems out flat, converting rewards to F.
func toBatch[F float32 | float64](specs []spec) Batch[F] {
	var b Batch[F]
	if slices.ContainsFunc(specs, func(s spec) bool { return s.Unscorable != nil }) {
		b.Unscorable = []bool{}
	}
	for _, s := range specs {
		b.Traces = append(b.Traces, s.Traces)
		b.Sets = append(b.Sets, len(s.Sets))
		for i, g := range s.Sets {
			b.SetSizes = append(b.SetSizes, len(g))
			b.Members = append(b.Members, g...)
			b.RewardCounts = append(b.RewardCounts, len(s.Rewards[i]))
			for j, r := range s.Rewards[i] {
				b.Rewards = append(b.Rewards, F(r))
				if b.Unscorable != nil {
					b.Unscorable = append(b.Unscorable, s.Unscorable != nil && s.Unscorable[i][j])
				}
			}
		}
	}
	return b
}

// mapRewards returns a copy of rewards with fn applied to each.
func mapRewards(rewards [][]float64, fn func(float64) float64) [][]float64 {
	out := make([][]float64, len(rewards))
	for i, rs := range rewards {
		for _, r := range rs {
			out[i] = append(out[i], fn(r))
		}
	}
	return out
}

func maxAbs(rewards [][]float64) float64 {
	m := 0.0
	for _, rs := range rewards {
		for _, r := range rs {
			m = max(m, math.Abs(r))
		}
	}
	return m
}

// paperSpecs returns problems of the paper's configuration, drawn with a
// fixed seed: N1 = 8 traces, K = 4 distinct sorted sets of n = 4, N2 = 4
// rewards in {0, 1} per set.
func paperSpecs(problems int, seed uint64) []spec {
	rng := rand.New(rand.NewPCG(seed, 0))
	specs := make([]spec, problems)
	for p := range specs {
		s := spec{Traces: 8}
		for len(s.Sets) < 4 {
			g := rng.Perm(8)[:4]
			slices.Sort(g)
			if slices.ContainsFunc(s.Sets, func(h []int) bool { return slices.Equal(g, h) }) {
				continue
			}
			rs := make([]float64, 4)
			for j := range rs {
				rs[j] = float64(rng.IntN(2))
			}
			s.Sets = append(s.Sets, g)
			s.Rewards = append(s.Rewards, rs)
		}
		specs[p] = s
	}
	return specs
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
