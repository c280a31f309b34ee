package advantage

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// groupReference computes the GRPO family plainly, group by group, with the
// textbook formulas: mean, standard deviation sqrt(sum (r - mean)^2 / dof),
// RLOO as r_i minus the mean of the other rewards.
func groupReference(rewards []float64, ids []string, opt GroupOptions) ([]float64, GroupReport[string]) {
	rows := map[string][]int{}
	var rep GroupReport[string]
	var order []string
	for i, id := range ids {
		if _, ok := rows[id]; !ok {
			order = append(order, id)
		}
		rows[id] = append(rows[id], i)
	}
	rep.Groups = len(order)
	out := make([]float64, len(rewards))
	for _, id := range order {
		idx := rows[id]
		g := float64(len(idx))
		total := 0.0
		for _, i := range idx {
			total += rewards[i]
		}
		mean := total / g
		equal := true
		for _, i := range idx {
			equal = equal && rewards[i] == rewards[idx[0]]
		}
		switch {
		case len(idx) == 1:
			rep.Singletons = append(rep.Singletons, id)
			continue
		case equal:
			rep.ZeroVariance = append(rep.ZeroVariance, id)
			continue
		}
		ss := 0.0
		for _, i := range idx {
			ss += (rewards[i] - mean) * (rewards[i] - mean)
		}
		dof := g
		if opt.Bessel {
			dof--
		}
		std := math.Sqrt(ss / dof)
		for _, i := range idx {
			a := rewards[i] - mean
			if opt.LeaveOneOut {
				a = rewards[i] - (total-rewards[i])/(g-1)
			}
			if opt.ScaleByStd {
				a /= std + opt.Epsilon
			}
			out[i] = a
		}
	}
	return out, rep
}

// drawGroups draws rows with group ids in any order; some groups are
// singletons and some constant.
func drawGroups(t *rapid.T) ([]float64, []string) {
	n := rapid.IntRange(0, 40).Draw(t, "rows")
	ids := rapid.SliceOfN(rapid.SampledFrom(strings.Split("a b c d e f g", " ")), n, n).Draw(t, "ids")
	// Rewards on a grid of 1/1024 in [-5, 5], or 0/1: the reference squares
	// deviations naively, which would lose precision to underflow on tiny
	// values (TestGroupTiny covers those).
	reward := rapid.OneOf(
		rapid.Map(rapid.IntRange(-5*1024, 5*1024), func(i int) float64 { return float64(i) / 1024 }),
		rapid.Map(rapid.IntRange(0, 1), func(i int) float64 { return float64(i) }))
	rewards := rapid.SliceOfN(reward, n, n).Draw(t, "rewards")
	if n > 0 && rapid.Bool().Draw(t, "constant group") {
		for i := range rewards {
			if ids[i] == ids[0] {
				rewards[i] = 0.1
			}
		}
	}
	return rewards, ids
}

func drawOptions(t *rapid.T) GroupOptions {
	return GroupOptions{
		ScaleByStd:  rapid.Bool().Draw(t, "std"),
		Bessel:      rapid.Bool().Draw(t, "bessel"),
		LeaveOneOut: rapid.Bool().Draw(t, "rloo"),
		Epsilon:     rapid.SampledFrom([]float64{0, 1e-6, 0.5}).Draw(t, "epsilon"),
	}
}

// TestGroupMatchesReference compares every combination of options with the
// textbook formulas, including the report.
func TestGroupMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rewards, ids := drawGroups(t)
		opt := drawOptions(t)
		got := make([]float64, len(rewards))
		rep, err := GroupRelative(got, rewards, ids, opt)
		if err != nil {
			t.Fatal(err)
		}
		want, wantRep := groupReference(rewards, ids, opt)
		if diff := cmp.Diff(want, got, approx(1e-12)); diff != "" {
			t.Fatalf("%+v on %v %v (-reference +got):\n%s", opt, rewards, ids, diff)
		}
		if diff := cmp.Diff(wantRep, rep); diff != "" {
			t.Fatalf("report (-reference +got):\n%s", diff)
		}
	})
}

// TestGroupIsAggregationAdvantage: with std off, one group's advantages are
// SPIRAL's A_agg of a set holding those rewards, bitwise (one algorithm).
func TestGroupIsAggregationAdvantage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rewards := rapid.SliceOfN(rapid.Float64Range(-3, 3), 2, 12).Draw(t, "rewards")
		got := make([]float64, len(rewards))
		if _, err := GroupRelative(got, rewards, make([]int, len(rewards)), GroupOptions{}); err != nil {
			t.Fatal(err)
		}
		c, err := Compute(1, [][]int{{0}}, [][]float64{rewards})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.Aggregation[0], got); diff != "" {
			t.Fatalf("(-A_agg +GroupRelative):\n%s", diff)
		}
		for i, r := range rewards { // and A_agg's formula r - f
			if math.Abs(got[i]-(r-c.SetScores[0])) > 1e-14 {
				t.Fatalf("row %d: %g, want r - f = %g - %g", i, got[i], r, c.SetScores[0])
			}
		}
	})
}

// TestRLOOTextbook: A_i = r_i - (sum_{j != i} r_j)/(G-1), on hand values.
func TestRLOOTextbook(t *testing.T) {
	rewards := []float64{1, 0, 0, 1, 1, 0.5, 0.5, 0.25}
	ids := []int{3, 3, 3, 3, 9, 9, 9, 9}
	got := make([]float64, len(rewards))
	if _, err := GroupRelative(got, rewards, ids, GroupOptions{LeaveOneOut: true}); err != nil {
		t.Fatal(err)
	}
	// Group 3: 1 - 1/3, 0 - 2/3. Group 9: 1 - 1.25/3, 0.5 - 1.75/3, 0.25 - 2/3.
	want := []float64{2.0 / 3, -2.0 / 3, -2.0 / 3, 2.0 / 3, 1 - 1.25/3, 0.5 - 1.75/3, 0.5 - 1.75/3, 0.25 - 2.0/3}
	if diff := cmp.Diff(want, got, approx(1e-15)); diff != "" {
		t.Errorf("RLOO (-want +got):\n%s", diff)
	}
}

// TestVerlGRPO: verl's default on one group of 0/1 rewards, by hand: mean
// 1/2, torch.std sqrt(1/3), advantages ±(1/2)/(sqrt(1/3) + 1e-6).
func TestVerlGRPO(t *testing.T) {
	got := make([]float32, 4)
	rep, err := GroupRelative(got, []float32{1, 0, 1, 0}, []string{"u", "u", "u", "u"},
		GroupOptions{ScaleByStd: true, Bessel: true, Epsilon: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	a := float32(0.5 / (math.Sqrt(1.0/3) + 1e-6))
	if diff := cmp.Diff([]float32{a, -a, a, -a}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(GroupReport[string]{Groups: 1}, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

// TestGroupReport: singletons and zero-variance groups get 0 (never the raw
// reward), in every mode, and are listed in order of first appearance.
func TestGroupReport(t *testing.T) {
	rewards := []float64{0.7, 1, 1, 0.3, 0, 1, 0.1, 0.1, 0.1}
	ids := []int{5, 2, 2, 8, 4, 4, 6, 6, 6}
	for _, opt := range []GroupOptions{{}, {LeaveOneOut: true}, {ScaleByStd: true}, {ScaleByStd: true, Bessel: true, Epsilon: 1e-6}} {
		got := make([]float64, len(rewards))
		rep, err := GroupRelative(got, rewards, ids, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := GroupReport[int]{Groups: 5, Singletons: []int{5, 8}, ZeroVariance: []int{2, 6}}
		if diff := cmp.Diff(want, rep); diff != "" {
			t.Errorf("%+v: report (-want +got):\n%s", opt, diff)
		}
		for _, i := range []int{0, 1, 2, 3, 6, 7, 8} {
			if got[i] != 0 {
				t.Errorf("%+v: row %d (group %d) = %g, want exactly 0", opt, i, ids[i], got[i])
			}
		}
		if got[4] >= 0 || got[5] <= 0 {
			t.Errorf("%+v: group 4 got %g %g, want negative then positive", opt, got[4], got[5])
		}
	}
}

// TestGroupOrderAndScale: permuting rows permutes the advantages; with
// ScaleByStd and Epsilon 0, scaling rewards by c > 0 changes nothing.
func TestGroupOrderAndScale(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rewards, ids := drawGroups(t)
		opt := drawOptions(t)
		got := make([]float64, len(rewards))
		if _, err := GroupRelative(got, rewards, ids, opt); err != nil {
			t.Fatal(err)
		}
		rows := make([]int, len(rewards))
		for i := range rows {
			rows[i] = i
		}
		perm := rapid.Permutation(rows).Draw(t, "perm")
		pr, pid := make([]float64, len(perm)), make([]string, len(perm))
		for k, i := range perm {
			pr[k], pid[k] = rewards[i], ids[i]
		}
		pgot := make([]float64, len(perm))
		if _, err := GroupRelative(pgot, pr, pid, opt); err != nil {
			t.Fatal(err)
		}
		for k, i := range perm {
			if math.Abs(pgot[k]-got[i]) > 1e-12 {
				t.Fatalf("row %d moved to %d: %g, want %g", i, k, pgot[k], got[i])
			}
		}

		opt = GroupOptions{ScaleByStd: true, Bessel: opt.Bessel}
		c := rapid.Float64Range(1e-3, 1e3).Draw(t, "c")
		if _, err := GroupRelative(got, rewards, ids, opt); err != nil {
			t.Fatal(err)
		}
		scaled := slices.Clone(rewards)
		for i := range scaled {
			scaled[i] *= c
		}
		sgot := make([]float64, len(rewards))
		if _, err := GroupRelative(sgot, scaled, ids, opt); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, sgot, approx(1e-12)); diff != "" {
			t.Fatalf("scaled by %g (-before +after):\n%s", c, diff)
		}
	})
}

// TestGroupFloat32 : float32 rewards give the float64 results rounded.
func TestGroupFloat32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rewards, ids := drawGroups(t)
		opt := drawOptions(t)
		r32 := make([]float32, len(rewards))
		for i, r := range rewards {
			r32[i] = float32(r)
			rewards[i] = float64(r32[i])
		}
		d64, d32 := make([]float64, len(rewards)), make([]float32, len(rewards))
		if _, err := GroupRelative(d64, rewards, ids, opt); err != nil {
			t.Fatal(err)
		}
		if _, err := GroupRelative(d32, r32, ids, opt); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(round32(d64), d32); diff != "" {
			t.Fatalf("(-float64 rounded +float32):\n%s", diff)
		}
	})
}

// TestGroupTiny: rewards whose squares underflow still get finite
// advantages bounded by sqrt(G) when divided by std with Epsilon 0.
func TestGroupTiny(t *testing.T) {
	got := make([]float64, 3)
	if _, err := GroupRelative(got, []float64{0, 1e-300, 3e-300}, []int{1, 1, 1}, GroupOptions{ScaleByStd: true}); err != nil {
		t.Fatal(err)
	}
	// Centred: -4/3, -1/3, 5/3 (times 1e-300); population variance
	// (16 + 1 + 25)/9/3 = 14/9, std sqrt(14)/3.
	s := math.Sqrt(14) / 3
	want := []float64{-4 / 3.0 / s, -1 / 3.0 / s, 5 / 3.0 / s}
	if diff := cmp.Diff(want, got, approx(1e-12)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGroupSubnormal: a group whose deviations are subnormal (one reward
// of 5e-324 among zeros, where std = scale*sqrt(ss/G) underflows to 0) gets
// finite advantages, bounded by sqrt(G-1) in magnitude, the largest reward
// the largest advantage (and positive when Epsilon is 0; with Epsilon
// 1e-6 the true values, about 5e-318, may round to 0), in every mode. The
// division by std + Epsilon used to give 0/0 = NaN and +Inf there.
func TestGroupSubnormal(t *testing.T) {
	for _, rewards := range [][]float64{
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 5e-324},
		{5e-324, -5e-324, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1e-320, 0, 3e-323, 0, 0, 0, 0, 0},
	} {
		for _, opt := range []GroupOptions{{ScaleByStd: true}, {ScaleByStd: true, Bessel: true},
			{ScaleByStd: true, Epsilon: 1e-6}, {ScaleByStd: true, Epsilon: math.MaxFloat64}, {ScaleByStd: true, LeaveOneOut: true}} {
			got := make([]float64, len(rewards))
			if _, err := GroupRelative(got, rewards, make([]int, len(rewards)), opt); err != nil {
				t.Fatal(err)
			}
			top := 0
			for i, a := range got {
				if math.IsNaN(a) || math.Abs(a) > 2*math.Sqrt(float64(len(got))) {
					t.Fatalf("%v %+v: row %d = %g, want finite and bounded: %v", rewards, opt, i, a, got)
				}
				if rewards[i] > rewards[top] {
					top = i
				}
			}
			if got[top] != slices.Max(got) || (opt.Epsilon == 0 && got[top] <= 0) {
				t.Errorf("%v %+v: %v, want the largest positive at row %d", rewards, opt, got, top)
			}
		}
	}
}

func TestGroupErrors(t *testing.T) {
	dst := []float64{7, 7, 7}
	for _, tc := range []struct {
		name    string
		rewards []float64
		ids     []string
		opt     GroupOptions
		want    string
	}{
		{"ids short", []float64{1, 0, 1}, []string{"a", "a"}, GroupOptions{}, "advantage: len(ids) = 2, want len(rewards) = 3"},
		{"negative epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: -1e-6}, "advantage: Epsilon = -1e-06, want finite and >= 0"},
		{"NaN epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: math.NaN()}, "Epsilon = NaN"},
		{"Inf epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: math.Inf(1)}, "Epsilon = +Inf"},
		{"NaN reward", []float64{1, 0, math.NaN()}, []string{"a", "a", "b"}, GroupOptions{}, "advantage: rewards[2] = NaN (group b): reward is not finite"},
		{"Inf reward", []float64{math.Inf(-1), 0, 1}, []string{"a", "a", "b"}, GroupOptions{}, "rewards[0] = -Inf (group a)"},
		{"large reward", []float64{1, 2e30, 1}, []string{"a", "a", "b"}, GroupOptions{}, "rewards[1] = 2e+30 (group a): reward magnitude exceeds MaxAbsReward"},
	} {
		_, err := GroupRelative(dst, tc.rewards, tc.ids, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if !slices.Equal(dst, []float64{7, 7, 7}) {
			t.Errorf("%s: dst written on error: %v", tc.name, dst)
		}
	}
	msg := panicMessage(func() { _, _ = GroupRelative(make([]float64, 2), []float64{1, 0, 1}, []int{1, 1, 1}, GroupOptions{}) })
	if want := "advantage: len(dst) = 2, want len(rewards) = 3"; msg != want {
		t.Errorf("short dst: panic %q, want %q", msg, want)
	}
}
