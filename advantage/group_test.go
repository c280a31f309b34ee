package advantage

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// groupReference computes the GRPO family plainly, group by group, with the
// textbook formulas: mean, standard deviation sqrt(sum (r - mean)^2 / dof),
// RLOO as r_i minus the mean of the other rewards; the batch's standard
// deviation over every scored reward about their mean; NaN rows left out
// under NaNUnscorable.
func groupReference(rewards []float64, ids []string, opt GroupOptions) ([]float64, GroupReport[string]) {
	rows := map[string][]int{}
	var rep GroupReport[string]
	var order []string
	var all []float64
	for i, id := range ids {
		if _, ok := rows[id]; !ok {
			order = append(order, id)
			rows[id] = nil
		}
		if math.IsNaN(rewards[i]) {
			rep.Unscorable++
			continue
		}
		rows[id] = append(rows[id], i)
		all = append(all, rewards[i])
	}
	rep.Groups = len(order)
	std := func(xs []float64) float64 {
		mean := 0.0
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		ss := 0.0
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		dof := float64(len(xs))
		if opt.Bessel {
			dof--
		}
		return math.Sqrt(ss / dof)
	}
	batchStd := 0.0
	if len(all) > 1 {
		batchStd = std(all)
	}
	out := make([]float64, len(rewards))
	for _, id := range order {
		idx := rows[id]
		g := float64(len(idx))
		var rs []float64
		total := 0.0
		for _, i := range idx {
			total += rewards[i]
			rs = append(rs, rewards[i])
		}
		mean := total / g
		switch {
		case len(idx) == 0:
			rep.Unscored = append(rep.Unscored, id)
			continue
		case len(idx) == 1:
			rep.Singletons = append(rep.Singletons, id)
			continue
		case slices.Min(rs) == slices.Max(rs):
			rep.ZeroVariance = append(rep.ZeroVariance, id)
			continue
		}
		for _, i := range idx {
			a := rewards[i] - mean
			if opt.LeaveOneOut {
				a = rewards[i] - (total-rewards[i])/(g-1)
			}
			switch opt.Scale {
			case ScaleGroup:
				a /= std(rs) + opt.Epsilon
			case ScaleBatch:
				a /= batchStd + opt.Epsilon
			}
			out[i] = a
		}
	}
	return out, rep
}

// drawGroups draws rows with group ids in any order; some groups are
// singletons and some constant, and with nan some rewards are NaN.
func drawGroups(t *rapid.T, nan bool) ([]float64, []string) {
	n := rapid.IntRange(0, 40).Draw(t, "rows")
	ids := rapid.SliceOfN(rapid.SampledFrom(strings.Split("a b c d e f g", " ")), n, n).Draw(t, "ids")
	// Rewards on a grid of 1/1024 in [-5, 5], or 0/1: the reference squares
	// deviations naively, which would lose precision to underflow on tiny
	// values (TestGroupTiny covers those).
	reward := rapid.OneOf(
		rapid.Map(rapid.IntRange(-5*1024, 5*1024), func(i int) float64 { return float64(i) / 1024 }),
		rapid.Map(rapid.IntRange(0, 1), func(i int) float64 { return float64(i) }))
	if nan {
		reward = rapid.OneOf(reward, rapid.Just(math.NaN()))
	}
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
		Scale:         Scale(rapid.IntRange(0, 2).Draw(t, "scale")),
		Bessel:        rapid.Bool().Draw(t, "bessel"),
		LeaveOneOut:   rapid.Bool().Draw(t, "rloo"),
		Epsilon:       rapid.SampledFrom([]float64{0, 1e-6, 0.5}).Draw(t, "epsilon"),
		NaNUnscorable: rapid.Bool().Draw(t, "nan unscorable"),
	}
}

// TestGroupMatchesReference compares every combination of options with the
// textbook formulas, including the report.
func TestGroupMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opt := drawOptions(t)
		rewards, ids := drawGroups(t, opt.NaNUnscorable)
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

// TestGroupIsAggregationAdvantage: with ScaleNone, one group's advantages
// are SPIRAL's A_agg of a set holding those rewards, bitwise (one
// algorithm).
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

// TestBatchStdByHand: two groups (1, 0) and (1, 1, 1, 0); batch mean 2/3,
// batch sum of squares 2(1/3)^2*... computed by hand: rewards 1,0,1,1,1,0
// have mean 2/3 and sum of squared deviations 4(1/9) + 2(4/9) = 4/3, so the
// population std is sqrt(2/9) and the Bessel one sqrt(4/15). Each row is
// centred on its own group's mean (1/2 and 3/4).
func TestBatchStdByHand(t *testing.T) {
	rewards := []float64{1, 0, 1, 1, 1, 0}
	ids := []string{"p", "p", "q", "q", "q", "q"}
	for _, tc := range []struct {
		bessel bool
		std    float64
	}{{false, math.Sqrt(2.0 / 9)}, {true, math.Sqrt(4.0 / 15)}} {
		got := make([]float64, len(rewards))
		if _, err := GroupRelative(got, rewards, ids, GroupOptions{Scale: ScaleBatch, Bessel: tc.bessel}); err != nil {
			t.Fatal(err)
		}
		s := tc.std
		want := []float64{0.5 / s, -0.5 / s, 0.25 / s, 0.25 / s, 0.25 / s, -0.75 / s}
		if diff := cmp.Diff(want, got, approx(1e-14)); diff != "" {
			t.Errorf("Bessel %v (-want +got):\n%s", tc.bessel, diff)
		}
	}
}

// TestGroupReport: singletons and zero-variance groups get 0 (never the raw
// reward), in every mode, and are listed in order of first appearance.
func TestGroupReport(t *testing.T) {
	rewards := []float64{0.7, 1, 1, 0.3, 0, 1, 0.1, 0.1, 0.1}
	ids := []int{5, 2, 2, 8, 4, 4, 6, 6, 6}
	for _, opt := range []GroupOptions{{}, {LeaveOneOut: true}, {Scale: ScaleGroup}, {Scale: ScaleBatch},
		{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}} {
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

// TestGroupUnscorable: under NaNUnscorable a NaN row gets 0 and leaves its
// group's baseline; a group left with one scored row is a singleton, one
// left with none is unscored; without the option a NaN is an error.
func TestGroupUnscorable(t *testing.T) {
	nan := math.NaN()
	rewards := []float64{1, nan, 0, 1, nan, nan, 0.5, nan, nan}
	ids := []string{"a", "a", "a", "a", "b", "b", "c", "c", "d"}
	got := make([]float64, len(rewards))
	rep, err := GroupRelative(got, rewards, ids, GroupOptions{NaNUnscorable: true})
	if err != nil {
		t.Fatal(err)
	}
	// a: scored (1, 0, 1), mean 2/3.
	want := []float64{1.0 / 3, 0, -2.0 / 3, 1.0 / 3, 0, 0, 0, 0, 0}
	if diff := cmp.Diff(want, got, approx(1e-15)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	wantRep := GroupReport[string]{Groups: 4, Singletons: []string{"c"}, Unscored: []string{"b", "d"}, Unscorable: 5}
	if diff := cmp.Diff(wantRep, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if _, err := GroupRelative(got, rewards, ids, GroupOptions{}); err == nil || !strings.Contains(err.Error(), "rewards[1] = NaN: group a") {
		t.Errorf("NaN without NaNUnscorable: error %v", err)
	}
	inf := []float64{1, math.Inf(1)}
	if _, err := GroupRelative(got[:2], inf, []int{1, 1}, GroupOptions{NaNUnscorable: true}); err == nil || !strings.Contains(err.Error(), "[1] = +Inf") {
		t.Errorf("+Inf under NaNUnscorable: error %v", err)
	}
}

// TestGroupOrderAndScale: permuting rows permutes the advantages; with a
// Scale and Epsilon 0, scaling rewards by c > 0 changes nothing.
func TestGroupOrderAndScale(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opt := drawOptions(t)
		rewards, ids := drawGroups(t, opt.NaNUnscorable)
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

		opt.Epsilon = 0
		if opt.Scale == ScaleNone {
			opt.Scale = ScaleGroup
		}
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
		opt := drawOptions(t)
		rewards, ids := drawGroups(t, opt.NaNUnscorable)
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
		for i := range d64 {
			if float32(d64[i]) != d32[i] {
				t.Fatalf("row %d: float32 %v, want float64 %v rounded", i, d32[i], d64[i])
			}
		}
	})
}

// TestGroupTiny: rewards whose squares underflow still get finite
// advantages bounded by sqrt(G) when divided by std with Epsilon 0.
func TestGroupTiny(t *testing.T) {
	// Centred: -4/3, -1/3, 5/3 (times 1e-300); population variance
	// (16 + 1 + 25)/9/3 = 14/9, std sqrt(14)/3; one group, so the batch
	// std is the same.
	s := math.Sqrt(14) / 3
	want := []float64{-4 / 3.0 / s, -1 / 3.0 / s, 5 / 3.0 / s}
	for _, scale := range []Scale{ScaleGroup, ScaleBatch} {
		got := make([]float64, 3)
		if _, err := GroupRelative(got, []float64{0, 1e-300, 3e-300}, []int{1, 1, 1}, GroupOptions{Scale: scale}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, approx(1e-12)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", scale, diff)
		}
	}
}

// TestGroupSubnormal: a group whose deviations are subnormal (one reward
// of 5e-324 among zeros, where std = scale*sqrt(ss/G) underflows to 0) gets
// finite advantages, bounded by 2 sqrt(G) in magnitude, the largest reward
// the largest advantage, positive unless its true value underflows
// (Epsilon = MaxFloat64), in every mode: with Epsilon 1e-6 it is about
// 5e-318, not 0.
func TestGroupSubnormal(t *testing.T) {
	for _, rewards := range [][]float64{
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 5e-324},
		{5e-324, -5e-324, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1e-320, 0, 3e-323, 0, 0, 0, 0, 0},
	} {
		for _, opt := range []GroupOptions{{Scale: ScaleGroup}, {Scale: ScaleGroup, Bessel: true}, {Scale: ScaleBatch, Bessel: true},
			{Scale: ScaleGroup, Epsilon: 1e-6}, {Scale: ScaleBatch, Epsilon: math.MaxFloat64},
			{Scale: ScaleGroup, Epsilon: math.MaxFloat64}, {Scale: ScaleGroup, LeaveOneOut: true}} {
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
			if got[top] != slices.Max(got) || (opt.Epsilon < 1 && got[top] <= 0) {
				t.Errorf("%v %+v: %v, want the largest positive at row %d", rewards, opt, got, top)
			}
		}
	}
	got := make([]float64, 10)
	rewards := []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 5e-324}
	if _, err := GroupRelative(got, rewards, make([]int, 10), GroupOptions{Scale: ScaleGroup, Epsilon: 1e-6}); err != nil {
		t.Fatal(err)
	}
	// The exact mean 5e-325 is below half the least subnormal; computed
	// on the rewards times 2^1000 it is kept, so the deviations are
	// -5e-325 and 4.5e-324, and std (about 1.5e-324) vanishes beside
	// Epsilon: -4.94e-319 and 4.45e-318, each the nearest subnormal.
	tiny, eps := new(big.Rat).SetFloat64(5e-324), new(big.Rat).SetFloat64(1e-6)
	lo, _ := new(big.Rat).Quo(new(big.Rat).Mul(tiny, big.NewRat(-1, 10)), eps).Float64()
	hi, _ := new(big.Rat).Quo(new(big.Rat).Mul(tiny, big.NewRat(9, 10)), eps).Float64()
	if got[9] != hi || got[0] != lo || slices.Max(got[:9]) != lo {
		t.Errorf("Epsilon 1e-6: %v, want %g ... %g, %g", got, lo, lo, hi)
	}
}

// TestGroupBounded: extreme rewards (±MaxAbsReward beside tiny ones, in
// groups of up to 2000 rows, float32 and float64) give finite advantages
// within the documented bounds: 2 sqrt(n) with a Scale, 2 MaxAbsReward
// without.
func TestGroupBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opt := drawOptions(t)
		n := rapid.IntRange(1, 2000).Draw(t, "rows")
		// top is the largest reward that is a float32 too.
		top := float64(math.Nextafter32(float32(MaxAbsReward), 0))
		pick := rapid.SampledFrom([]float64{top, -top, 0, 5e-324, -1e-300, 1, math.NaN()})
		rewards, ids := make([]float64, n), make([]int, n)
		groups := rapid.IntRange(1, n).Draw(t, "groups")
		for i := range rewards {
			rewards[i] = pick.Draw(t, "reward")
			if !opt.NaNUnscorable && math.IsNaN(rewards[i]) {
				rewards[i] = 0
			}
			ids[i] = i % groups
		}
		bound := 2 * MaxAbsReward
		if opt.Scale != ScaleNone {
			bound = 2 * math.Sqrt(float64(n))
		}
		d64 := make([]float64, n)
		if _, err := GroupRelative(d64, rewards, ids, opt); err != nil {
			t.Fatal(err)
		}
		r32 := make([]float32, n)
		for i, r := range rewards {
			r32[i] = float32(r)
		}
		d32 := make([]float32, n)
		if _, err := GroupRelative(d32, r32, ids, opt); err != nil {
			t.Fatal(err)
		}
		for i := range d64 {
			if !(math.Abs(d64[i]) <= bound) || !(math.Abs(float64(d32[i])) <= bound) {
				t.Fatalf("%+v: row %d = %g (float32 %g), want |A| <= %g", opt, i, d64[i], d32[i], bound)
			}
		}
	})
}

// TestGroupManyGroups: every row its own group, and ids that collide in
// any simple hash (multiples of a large power of two), are numbered in
// linear time: 262,144 rows in one call.
func TestGroupManyGroups(t *testing.T) {
	const n = 1 << 18
	rewards, ids := make([]float32, n), make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i/2) << 40
		rewards[i] = float32(i % 2)
	}
	dst := make([]float32, n)
	rep, err := GroupRelative(dst, rewards, ids, GroupOptions{Scale: ScaleGroup})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Groups != n/2 || dst[0] != -1 || dst[1] != 1 || dst[n-1] != 1 {
		t.Errorf("groups %d (want %d), dst %v ... %v", rep.Groups, n/2, dst[:2], dst[n-1])
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
		{"ids short", []float64{1, 0, 1}, []string{"a", "a"}, GroupOptions{}, "advantage: ids: len(ids) = 2, want len(rewards) = 3"},
		{"negative epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: -1e-6}, "advantage: Epsilon: -1e-06, want finite and >= 0"},
		{"NaN epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: math.NaN()}, "Epsilon: NaN"},
		{"Inf epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: math.Inf(1)}, "Epsilon: +Inf"},
		{"bad scale", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Scale: 4}, "Scale: 4 is not"},
		{"others without leave-one-out", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Scale: ScaleOthers, Epsilon: 1e-6}, "Scale: others needs LeaveOneOut"},
		{"others without epsilon", []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Scale: ScaleOthers, LeaveOneOut: true}, "Epsilon: 0 with Scale others, want > 0"},
		{"NaN reward", []float64{1, 0, math.NaN()}, []string{"a", "a", "b"}, GroupOptions{}, "advantage: rewards[2] = NaN: group b: reward is not finite"},
		{"Inf reward", []float64{math.Inf(-1), 0, 1}, []string{"a", "a", "b"}, GroupOptions{}, "[0] = -Inf: group a"},
		{"large reward", []float64{1, 2e30, 1}, []string{"a", "a", "b"}, GroupOptions{}, "[1] = 2e+30: group a: reward magnitude exceeds 1e+30"},
	} {
		_, err := GroupRelative(dst, tc.rewards, tc.ids, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if !slices.Equal(dst, []float64{7, 7, 7}) {
			t.Errorf("%s: dst written on error: %v", tc.name, dst)
		}
	}
	// A bad reward is an *InputError naming the row, wrapping the reason.
	_, err := GroupRelative(dst, []float64{1, 2e30, 1}, []string{"a", "a", "b"}, GroupOptions{})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "rewards" || ie.Output != 1 || ie.Value != 2e30 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("large reward: %#v, want an *InputError for row 1 wrapping ErrTooLarge", err)
	}
	// A bad option is an *InputError naming the option and its value.
	_, err = GroupRelative(dst, []float64{1, 0, 1}, []string{"a", "a", "b"}, GroupOptions{Epsilon: -2})
	if !errors.As(err, &ie) || ie.Field != "Epsilon" || ie.Value != -2 {
		t.Errorf("negative epsilon: %#v, want an *InputError for Epsilon = -2", err)
	}
	// More rows than the cap: refused before any work (the ids cost no
	// memory, the rewards are never read).
	big := make([]float32, maxGroupRows+1)
	if _, err := GroupRelative(big, big, make([]struct{}, len(big)), GroupOptions{}); err == nil || !strings.Contains(err.Error(), "rewards: len = 16777217 > 16777216, the most rows a call credits") {
		t.Errorf("too many rows: error %v", err)
	}
	msg := func() (msg any) {
		defer func() { msg = recover() }()
		_, _ = GroupRelative(make([]float64, 2), []float64{1, 0, 1}, []int{1, 1, 1}, GroupOptions{})
		return nil
	}()
	if want := "advantage: len(dst) = 2, want len(rewards) = 3"; msg != want {
		t.Errorf("short dst: panic %v, want %q", msg, want)
	}
}

// TestGroupAllocs: a fixed number of allocations whatever the batch size
// (the table, the statistics, the report's lists), none per row or group.
func TestGroupAllocs(t *testing.T) {
	for _, n := range []int{12, 3072, 1 << 15} {
		rewards, ids := make([]float64, n), make([]string, n)
		for i := range rewards {
			rewards[i] = float64(i % 3 % 2)
			ids[i] = string(rune('a' + i%20))
		}
		ids[0] = "lone" // a singleton
		dst := make([]float64, n)
		opt := GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := GroupRelative(dst, rewards, ids, opt); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 4 {
			t.Errorf("%d rows: %v allocations, want at most 4", n, allocs)
		}
	}
}
