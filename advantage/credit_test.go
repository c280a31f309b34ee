package advantage

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"spiral/internal/spiraltest"
)

// TestWorkedExample checks docs/method.md#worked-example value by
// value, exactly (every value is a dyadic rational).
func TestWorkedExample(t *testing.T) {
	sets := [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 5, 6}, {2, 3, 5, 6}}
	rewards := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}
	c, err := Compute(8, sets, rewards)
	if err != nil {
		t.Fatal(err)
	}
	want := Credit{
		SetScores:     []float64{0.75, 0.5, 0.25, 0.5},
		SetAdvantages: []float64{0.25, 0, -0.25, 0},
		Search:        []float64{0, 0.125, 0.25 / 3, 0.125, -0.125, -0.25 / 3, -0.125, 0},
		Appearances:   []int{2, 2, 3, 2, 2, 3, 2, 0},
		Aggregation: [][]float64{
			{0.25, 0.25, 0.25, -0.75},
			{0.5, -0.5, 0.5, -0.5},
			{-0.25, -0.25, 0.75, -0.25},
			{-0.5, 0.5, 0.5, -0.5},
		},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("worked example (-want +got):\n%s", diff)
	}
}

// TestMatchesReference compares Compute with the exact reference, to the
// documented accuracy.
func TestMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		checkAccuracy(t, s, mustCompute(t, s))
	})
}

// TestMixedMagnitudes: with rewards from subnormal to 1e30 in one problem,
// each set's score and aggregation advantages are accurate to its own
// values, and set and search advantages to the spread of the set scores.
func TestMixedMagnitudes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpecOf(t, rapid.Custom(func(t *rapid.T) float64 { return mixedReward(t, "r") }))
		checkAccuracy(t, s, mustCompute(t, s))
	})
}

// TestCrossSetPrecision: large rewards in other sets do not cost a set
// any precision. The last set's score is 0.15 and its aggregation
// advantages ±0.05 (of the float64 values 0.1 and 0.2), to within 2 ulps,
// and they sum to 0.
func TestCrossSetPrecision(t *testing.T) {
	for _, big := range []float64{1e12, 1e15, 1e20, 1e30, -1e30} {
		sets := [][]int{{0}, {1}, {2}, {3}}
		rewards := [][]float64{{big}, {big}, {big}, {0.1, 0.2}}
		c, err := Compute(4, sets, rewards)
		if err != nil {
			t.Fatal(err)
		}
		s := spec{Traces: 4, Sets: sets, Rewards: rewards}
		checkAccuracy(t, s, c)
		ulps := func(got, want float64) float64 {
			return math.Abs(got-want) / (math.Nextafter(math.Abs(want), math.Inf(1)) - math.Abs(want))
		}
		// The exact values for the float64 inputs 0.1 and 0.2.
		f := spiraltest.Float(ref(s).SetScores[3])
		d := spiraltest.Float(ref(s).Aggregation[3][1])
		if ulps(c.SetScores[3], f) > 2 || ulps(c.Aggregation[3][0], -d) > 2 || ulps(c.Aggregation[3][1], d) > 2 {
			t.Errorf("other sets %g: f = %v, A_agg = %v, want %v and ±%v", big, c.SetScores[3], c.Aggregation[3], f, d)
		}
		if math.Abs(f-0.15) > 1e-16 || math.Abs(d-0.05) > 1e-16 {
			t.Errorf("exact values %v, ±%v, want 0.15, ±0.05", f, d)
		}
		if sum := c.Aggregation[3][0] + c.Aggregation[3][1]; math.Abs(sum) > 2*u*0.1 {
			t.Errorf("other sets %g: A_agg %v sum to %g", big, c.Aggregation[3], sum)
		}
	}
}

// TestSumsToZero: the set advantages of a problem sum to 0, and so do the
// aggregation advantages of every set.
func TestSumsToZero(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		c := mustCompute(t, s)
		tol := 1e-12 * (1 + maxAbs(s.Rewards))
		var total float64
		for _, a := range c.SetAdvantages {
			total += a
		}
		if math.Abs(total) > tol*float64(len(c.SetAdvantages)) {
			t.Fatalf("sum A_set = %g, want 0 (A_set %v)", total, c.SetAdvantages)
		}
		for i, row := range c.Aggregation {
			total = 0
			for _, a := range row {
				total += a
			}
			if math.Abs(total) > tol*float64(len(row)) {
				t.Fatalf("set %d: sum A_agg = %g, want 0 (A_agg %v)", i, total, row)
			}
		}
	})
}

// TestShiftInvariance: adding a constant to every reward changes no
// advantage and adds the constant to every set score.
func TestShiftInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		shift := rapid.Float64Range(-1e3, 1e3).Draw(t, "shift")
		c := mustCompute(t, s)
		moved := s
		moved.Rewards = mapRewards(s.Rewards, func(r float64) float64 { return r + shift })
		d := mustCompute(t, moved)
		tol := 1e-12 * (1 + math.Abs(shift) + maxAbs(s.Rewards))
		for i := range c.SetScores {
			c.SetScores[i] += shift
		}
		if diff := cmp.Diff(c, d, approx(tol)); diff != "" {
			t.Fatalf("shift %g (-unshifted +shifted):\n%s", shift, diff)
		}
	})
}

// TestScaleEquivariance: multiplying every reward by c multiplies every set
// score and advantage by c.
func TestScaleEquivariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		scale := rapid.Float64Range(-10, 10).Draw(t, "scale")
		c := mustCompute(t, s)
		scaled := s
		scaled.Rewards = mapRewards(s.Rewards, func(r float64) float64 { return scale * r })
		d := mustCompute(t, scaled)
		for _, xs := range append([][]float64{c.SetScores, c.SetAdvantages, c.Search}, c.Aggregation...) {
			for i := range xs {
				xs[i] *= scale
			}
		}
		tol := 1e-12 * (1 + math.Abs(scale)) * (1 + maxAbs(s.Rewards))
		if diff := cmp.Diff(c, d, approx(tol)); diff != "" {
			t.Fatalf("scale %g (-scaled after +scaled before):\n%s", scale, diff)
		}
	})
}

// TestRelabelling: renaming traces by a permutation pi moves each trace's
// search advantage and appearance count to its new name, bitwise, and
// changes nothing else.
func TestRelabelling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		all := make([]int, s.Traces)
		for i := range all {
			all[i] = i
		}
		pi := rapid.Permutation(all).Draw(t, "pi")
		c := mustCompute(t, s)
		renamed := s
		renamed.Sets = make([][]int, len(s.Sets))
		for i, g := range s.Sets {
			for _, y := range g {
				renamed.Sets[i] = append(renamed.Sets[i], pi[y])
			}
		}
		d := mustCompute(t, renamed)
		want := c
		want.Search = make([]float64, s.Traces)
		want.Appearances = make([]int, s.Traces)
		for y := range s.Traces {
			want.Search[pi[y]] = c.Search[y]
			want.Appearances[pi[y]] = c.Appearances[y]
		}
		if diff := cmp.Diff(want, d); diff != "" {
			t.Fatalf("relabelled by %v (-want +got):\n%s", pi, diff)
		}
	})
}

// TestExactZeros: a trace that is in every set gets exactly 0; sets that
// all have the same rewards get set and search advantages of exactly 0; a
// set whose rewards are all equal gets aggregation advantages of exactly 0;
// a problem
// whose rewards are all equal gets exactly 0 everywhere. The rewards are
// real numbers such as 0.1, whose naive means are not exact.
func TestExactZeros(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		// Make some sets constant.
		for i := range s.Rewards {
			if rapid.Bool().Draw(t, "constant") {
				for j := range s.Rewards[i] {
					s.Rewards[i][j] = s.Rewards[i][0]
				}
			}
		}
		// Sometimes give every set the same rewards, so that every set
		// score is the same and every set and search advantage must be
		// exactly 0.
		same := rapid.Bool().Draw(t, "same rewards in every set")
		if same {
			for i := range s.Rewards {
				s.Rewards[i] = slices.Clone(s.Rewards[0])
			}
		}
		c := mustCompute(t, s)
		if same {
			for _, xs := range [][]float64{c.SetAdvantages, c.Search} {
				if slices.ContainsFunc(xs, func(a float64) bool { return a != 0 }) {
					t.Fatalf("every set has rewards %v: A_set %v, A_search %v, want exactly 0", s.Rewards[0], c.SetAdvantages, c.Search)
				}
			}
		}
		for y := range s.Traces {
			if c.Appearances[y] == len(s.Sets) && c.Search[y] != 0 {
				t.Fatalf("trace %d is in all %d sets: A_search = %g, want exactly 0", y, len(s.Sets), c.Search[y])
			}
		}
		for i, rs := range s.Rewards {
			if slices.Min(rs) == slices.Max(rs) && slices.ContainsFunc(c.Aggregation[i], func(a float64) bool { return a != 0 }) {
				t.Fatalf("set %d has equal rewards %v: A_agg = %v, want exactly 0", i, rs, c.Aggregation[i])
			}
		}

		v := rapid.SampledFrom([]float64{0, 1, 0.1, 1.0 / 3, -7.3}).Draw(t, "v")
		flat := s
		flat.Rewards = mapRewards(s.Rewards, func(float64) float64 { return v })
		d := mustCompute(t, flat)
		for _, xs := range append([][]float64{d.SetAdvantages, d.Search}, d.Aggregation...) {
			if slices.ContainsFunc(xs, func(a float64) bool { return a != 0 }) {
				t.Fatalf("all rewards %g: advantages %+v, want exactly 0", v, d)
			}
		}
		for _, f := range d.SetScores {
			if f != v {
				t.Fatalf("all rewards %g: set scores %v", v, d.SetScores)
			}
		}
	})
}

// TestLoneSet: with K = 1 every set and search advantage is 0 (M = 0 in
// Proposition 3.1), and the aggregation advantages are still centred.
func TestLoneSet(t *testing.T) {
	c, err := Compute(5, [][]int{{4, 0, 2}}, [][]float64{{1, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := Credit{
		SetScores:     []float64{1.0 / 3},
		SetAdvantages: []float64{0},
		Search:        []float64{0, 0, 0, 0, 0},
		Appearances:   []int{1, 0, 1, 0, 1},
		Aggregation:   [][]float64{{2.0 / 3, -1.0 / 3, -1.0 / 3}},
	}
	if diff := cmp.Diff(want, c, approx(1e-15)); diff != "" {
		t.Errorf("K = 1 (-want +got):\n%s", diff)
	}
}

// TestRaggedRewards: each set's score uses its own count, and fbar is the
// mean of set scores (each set weighs the same), not of all rewards.
func TestRaggedRewards(t *testing.T) {
	c, err := Compute(3, [][]int{{0, 1}, {1, 2}}, [][]float64{{1}, {1, 0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	// f = (1, 1/4), fbar = 5/8 (the mean of all five rewards would be 2/5).
	want := Credit{
		SetScores:     []float64{1, 0.25},
		SetAdvantages: []float64{0.375, -0.375},
		Search:        []float64{0.375, 0, -0.375},
		Appearances:   []int{1, 2, 1},
		Aggregation:   [][]float64{{0}, {0.75, -0.25, -0.25, -0.25}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("ragged N2 (-want +got):\n%s", diff)
	}
}

// TestLargeOffset: rewards 1e8 + {0, 1e-4} are centred to full precision.
// With x0 = 1e8 and x1 the float64 nearest 1e8 + 1e-4, d = x1 - x0 is
// exact (Sterbenz), and the advantages must be ±d/2 to a relative 1e-12.
// A naive mean (x0 + x1)/2 rounds to a multiple of ulp(1e8) ~ 1.5e-8 and
// would be off by a relative 1.5e-4.
func TestLargeOffset(t *testing.T) {
	x0, x1 := 1e8, 1e8+1e-4
	d := x1 - x0
	tol := 1e-12 * d

	// Aggregation: one set holding both rewards.
	c, err := Compute(1, [][]int{{0}}, [][]float64{{x0, x1}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float64{{-d / 2, d / 2}}, c.Aggregation, approx(tol)); diff != "" {
		t.Errorf("A_agg of 1e8 + {0, 1e-4} (-want +got):\n%s", diff)
	}

	// Sets and search: two sets with scores x0 and x1.
	c, err = Compute(3, [][]int{{0, 1}, {1, 2}}, [][]float64{{x0, x0}, {x1, x1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-d / 2, d / 2}
	if diff := cmp.Diff(want, c.SetAdvantages, approx(tol)); diff != "" {
		t.Errorf("A_set (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{-d / 2, 0, d / 2}, c.Search, approx(tol)); diff != "" {
		t.Errorf("A_search (-want +got):\n%s", diff)
	}

	// GRPO on the same pair: centred ±d/2; divided by the population std
	// d/2 gives ±1, by the Bessel std d/sqrt(2) gives ±1/sqrt(2).
	for _, tc := range []struct {
		opt  GroupOptions
		want float64
	}{
		{GroupOptions{}, d / 2},
		{GroupOptions{Scale: ScaleGroup}, 1},
		{GroupOptions{Scale: ScaleGroup, Bessel: true}, 1 / math.Sqrt2},
		{GroupOptions{LeaveOneOut: true}, d},
	} {
		dst := make([]float64, 2)
		if _, err := GroupRelative(dst, []float64{x0, x1}, []int{7, 7}, tc.opt); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]float64{-tc.want, tc.want}, dst, approx(1e-12*tc.want)); diff != "" {
			t.Errorf("GroupRelative(%+v) on 1e8 + {0, 1e-4} (-want +got):\n%s", tc.opt, diff)
		}
	}
}
