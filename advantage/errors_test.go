package advantage

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"spiral/combin"
	"spiral/internal/spiraltest"
)

func TestComputeErrors(t *testing.T) {
	ok := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 2, 4, 6}}
	okR := [][]float64{{1, 0}, {1, 1}, {0, 0}}
	type where struct {
		field               string
		problem, set, point int
	}
	for _, tc := range []struct {
		name    string
		traces  int
		sets    [][]int
		rewards [][]float64
		want    string
		at      where
		reason  error
	}{
		{"no traces", 0, ok, okR, "advantage: traces: problem 0: 0, want >= 1", where{"traces", 0, -1, -1}, nil},
		{"negative traces", -3, ok, okR, "traces: problem 0: -3 < 0", where{"traces", 0, -1, -1}, nil},
		{"too many traces", combin.MaxSize + 1, ok, okR, "more than 16777216 traces, the most it holds", where{"traces", 0, -1, -1}, nil},
		{"no sets", 8, nil, nil, "problem 0: 0, want >= 1", where{"sets", 0, -1, -1}, nil},
		{"rewards for fewer sets", 8, ok, okR[:2], "len(rewards) = 2, want len(sets) = 3", where{"rewards", -1, -1, -1}, nil},
		{"empty set", 8, [][]int{{0}, {}}, [][]float64{{1}, {1}}, "sets: problem 0, set 1: empty set", where{"sets", 0, 1, -1}, nil},
		{"member too large", 8, [][]int{{0, 1}, {2, 3, 8}}, [][]float64{{1}, {1}}, "sets: problem 0, set 1, member 2 = 8: out of range [0, 8)", where{"sets", 0, 1, 2}, nil},
		{"negative member", 8, [][]int{{-1}}, [][]float64{{1}}, "sets: problem 0, set 0, member 0 = -1: out of range", where{"sets", 0, 0, 0}, nil},
		{"repeated member", 8, [][]int{{0, 3, 1, 3}}, [][]float64{{1}}, "sets: problem 0, set 0, member 3 = 3: repeats member 1 of the set", where{"sets", 0, 0, 3}, nil},
		{"identical sets", 8, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {3, 2, 1, 0}}, okR, "sets: problem 0, set 2: identical to set 0", where{"sets", 0, 2, -1}, nil},
		{"no rewards", 8, ok, [][]float64{{1}, {}, {0}}, "problem 0, set 1: no outputs", where{"rewards", 0, 1, -1}, nil},
		{"NaN", 8, ok, [][]float64{{1}, {1}, {0, math.NaN()}}, "advantage: rewards: problem 0, set 2, output 1 = NaN: reward is not finite", where{"rewards", 0, 2, 1}, ErrNotFinite},
		{"+Inf", 8, ok, [][]float64{{math.Inf(1)}, {1}, {0}}, "problem 0, set 0, output 0 = +Inf", where{"rewards", 0, 0, 0}, ErrNotFinite},
		{"-Inf", 8, ok, [][]float64{{0}, {1, 1, math.Inf(-1)}, {0}}, "problem 0, set 1, output 2 = -Inf", where{"rewards", 0, 1, 2}, ErrNotFinite},
		{"too large", 8, ok, [][]float64{{0}, {-1.5e30}, {0}}, "problem 0, set 1, output 0 = -1.5e+30: reward magnitude exceeds 1e+30, the largest accepted", where{"rewards", 0, 1, 0}, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.traces, tc.sets, tc.rewards)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "advantage: ") {
				t.Fatalf("Compute: error %v, want one containing %q", err, tc.want)
			}
			var e *InputError
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *InputError", err)
			}
			if got := (where{e.Field, e.Problem, e.Set, e.Output}); got != tc.at {
				t.Errorf("error at %+v, want %+v", got, tc.at)
			}
			if tc.reason != nil && !errors.Is(err, tc.reason) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.reason)
			}
			if tc.at.field == "sets" && tc.at.set >= 0 {
				var se *combin.SetError
				if !errors.As(err, &se) {
					t.Errorf("error %v does not wrap the *combin.SetError of set %d", err, tc.at.set)
				}
			}
		})
	}
}

// TestOrdered: two sets holding the same members in another order are
// identical by default (subsets) and distinct with Ordered (tuples); the
// credit depends only on the members, so a tuple sampler passes its draws
// with Ordered.
func TestOrdered(t *testing.T) {
	s := spec{Traces: 3, Sets: [][]int{{0, 1}, {1, 0}}, Rewards: [][]float64{{1}, {0}}}
	if _, err := Compute(s.Traces, s.Sets, s.Rewards); err == nil {
		t.Error("subsets {0, 1} and {1, 0}: no error")
	}
	c := computeOne(t, s, true)
	if diff := cmp.Diff([]float64{0, 0, 0}, c.Search); diff != "" {
		t.Errorf("tuples (0, 1) and (1, 0) (-want +got):\n%s", diff)
	}
	in := toBatch[float64]([]spec{s})
	in.Check = Tuples
	in.Members[3] = 1 // (0, 1) and (1, 1)
	if err := ComputeBatch(new(BatchCredit[float64]), in); err == nil {
		t.Error("tuple (1, 1): no error")
	}
	in.Members[2] = 0 // (0, 1) twice
	if err := ComputeBatch(new(BatchCredit[float64]), in); err == nil {
		t.Error("tuple (0, 1) twice: no error")
	}
}

// clone returns a deep copy of b.
func clone(b Batch[float64]) Batch[float64] {
	c := b
	c.Traces, c.Sets, c.SetSizes = slices.Clone(b.Traces), slices.Clone(b.Sets), slices.Clone(b.SetSizes)
	c.Members, c.RewardCounts, c.Rewards = slices.Clone(b.Members), slices.Clone(b.RewardCounts), slices.Clone(b.Rewards)
	c.Unscorable = slices.Clone(b.Unscorable)
	return c
}

// TestBatchErrors: a layout that does not hold together gives one
// *InputError, and leaves dst untouched; bad problems give a *BatchError
// listing each of them.
func TestBatchErrors(t *testing.T) {
	good := toBatch[float64](paperSpecs(3, 7))
	for _, tc := range []struct {
		name     string
		spoil    func(b *Batch[float64])
		want     string
		problems []int // nil: a layout error
	}{
		{"Sets short", func(b *Batch[float64]) { b.Sets = b.Sets[:2] }, "Sets: len = 2, want len(Traces) = 3", nil},
		{"RewardCounts short", func(b *Batch[float64]) { b.RewardCounts = b.RewardCounts[:11] }, "RewardCounts: len = 11, want len(SetSizes) = 12", nil},
		{"Unscorable short", func(b *Batch[float64]) { b.Unscorable = make([]bool, 47) }, "Unscorable: len = 47, want len(Rewards) = 48", nil},
		{"Sets too many", func(b *Batch[float64]) { b.Sets[1] = 9 }, "Sets: problem 1: 9, but len(SetSizes) = 12 leaves 8", nil},
		{"Sets too few", func(b *Batch[float64]) { b.Sets[2] = 3 }, "Sets: sum to 11, want len(SetSizes) = 12", nil},
		{"SetSizes too large", func(b *Batch[float64]) { b.SetSizes[11] = 5 }, "SetSizes: problem 2, set 3: 5 runs past len(Members) = 48 (the set starts at 44)", nil},
		{"SetSizes too small", func(b *Batch[float64]) { b.Members = append(b.Members, 0) }, "SetSizes: sum to 48, want len(Members) = 49", nil},
		{"negative size", func(b *Batch[float64]) { b.SetSizes[5] = -1 }, "SetSizes: problem 1, set 1: -1 < 0", nil},
		{"sizes {4, 4, -4, 12}", func(b *Batch[float64]) { b.SetSizes[4], b.SetSizes[5], b.SetSizes[6], b.SetSizes[7] = 4, 4, -4, 12 }, "SetSizes: problem 1, set 2: -4 < 0", nil},
		{"RewardCounts too large", func(b *Batch[float64]) { b.RewardCounts[11] = 5 }, "RewardCounts: problem 2, set 3: 5 runs past len(Rewards) = 48", nil},
		{"RewardCounts too small", func(b *Batch[float64]) { b.Rewards = append(b.Rewards, 0) }, "RewardCounts: sum to 48, want len(Rewards) = 49", nil},
		{"negative traces", func(b *Batch[float64]) { b.Traces[1] = -1 }, "Traces: problem 1: -1 < 0", nil},
		{"too many traces", func(b *Batch[float64]) { b.Traces[1] = combin.MaxSize - 8 }, "Traces: problem 2: 8: the batch would hold more than", nil},
		{"no traces", func(b *Batch[float64]) { b.Traces[2] = 0 }, "Traces: problem 2: 0", []int{2}},
		{"member", func(b *Batch[float64]) { b.Traces[2] = 1 }, "Members: problem 2, set 0, member 0 = 4: out of range [0, 1)", []int{2}},
		{"NaN late", func(b *Batch[float64]) { b.Rewards[47] = math.NaN() }, "Rewards: problem 2, set 3, output 3 = NaN", []int{2}},
		{"identical", func(b *Batch[float64]) { copy(b.Members[44:48], b.Members[32:36]) }, "Members: problem 2, set 3: identical to set 0", []int{2}},
		{"empty set", func(b *Batch[float64]) { b.SetSizes[0], b.SetSizes[1] = 0, 8 }, "SetSizes: problem 0, set 0: empty set", []int{0}},
		{"no outputs", func(b *Batch[float64]) { b.RewardCounts[4], b.RewardCounts[5] = 0, 8 }, "RewardCounts: problem 1, set 0: no outputs", []int{1}},
		{"three problems", func(b *Batch[float64]) {
			b.Rewards[0] = math.Inf(1)
			b.Rewards[17] = 2e30
			b.Members[35] = b.Members[34]
		}, "advantage: 3 bad problems: Rewards: problem 0, set 0, output 0 = +Inf: reward is not finite; Rewards: problem 1, set 0, output 1 = 2e+30", []int{0, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := clone(good)
			tc.spoil(&bad)
			var dst BatchCredit[float64]
			if err := ComputeBatch(&dst, good); err != nil {
				t.Fatal(err)
			}
			fill(dst, 7)
			want := BatchCredit[float64]{}
			_ = ComputeBatch(&want, good)
			fill(want, 7)

			err := ComputeBatch(&dst, bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ComputeBatch: error %v, want one containing %q", err, tc.want)
			}
			if diff := cmp.Diff(want, dst, cmpopts.IgnoreUnexported(BatchCredit[float64]{})); tc.problems == nil && diff != "" {
				t.Errorf("dst written on a layout error (-want +got):\n%s", diff)
			}
			var be *BatchError
			var ie *InputError
			switch {
			case tc.problems == nil:
				if errors.As(err, &be) || !errors.As(err, &ie) {
					t.Errorf("layout error %T, want an *InputError alone", err)
				}
			case !errors.As(err, &be):
				t.Errorf("error %T, want a *BatchError", err)
			default:
				var got []int
				for _, e := range be.Problems {
					got = append(got, e.Problem)
				}
				if !slices.Equal(got, tc.problems) {
					t.Errorf("bad problems %v, want %v", got, tc.problems)
				}
				if !errors.As(err, &ie) || ie != be.Problems[0] {
					t.Errorf("errors.As finds %v, want the first problem's error", ie)
				}
			}
		})
	}
}

func fill(c BatchCredit[float64], v float64) {
	for _, xs := range [][]float64{c.SetScores, c.SetAdvantages, c.Search, c.Aggregation} {
		for i := range xs {
			xs[i] = v
		}
	}
	for _, xs := range [][]int{c.Appearances, c.ScoredOutputs, c.ScoredSets} {
		for i := range xs {
			xs[i] = int(v)
		}
	}
	for i := range c.Rejected {
		c.Rejected[i] = true
	}
}

// TestSkipBad: the good problems of a batch get the credit
// they get alone, bit for bit, and the bad ones zero credit, marked in
// Rejected and listed in the *BatchError.
func TestSkipBad(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 1, 6).Draw(t, "problems")
		in := toBatch[float64](specs)
		badSet := map[int]bool{}
		for p, sp := range in.Spans() {
			if !rapid.Bool().Draw(t, "spoil") {
				continue
			}
			badSet[p] = true
			switch rapid.IntRange(0, 2).Draw(t, "defect") {
			case 0:
				in.Rewards[sp.Reward] = math.NaN()
			case 1:
				in.Members[sp.Member] = sp.Traces
			case 2:
				in.Traces[p] = 0
			}
		}
		var dst BatchCredit[float64]
		err := ComputeBatch(&dst, in)
		if len(badSet) == 0 {
			if err != nil {
				t.Fatal(err)
			}
		} else {
			var be *BatchError
			if !errors.As(err, &be) || len(be.Problems) != len(badSet) {
				t.Fatalf("error %v, want a *BatchError of %d problems", err, len(badSet))
			}
		}
		for p, sp := range in.Spans() {
			if dst.Rejected[p] != badSet[p] {
				t.Fatalf("problem %d: Rejected = %v, want %v", p, dst.Rejected[p], badSet[p])
			}
			search := dst.Search[sp.Trace : sp.Trace+sp.Traces]
			agg := dst.Aggregation[sp.Reward : sp.Reward+sp.Rewards]
			if badSet[p] {
				if slices.ContainsFunc(search, func(a float64) bool { return a != 0 }) || slices.ContainsFunc(agg, func(a float64) bool { return a != 0 }) || dst.ScoredSets[p] != 0 {
					t.Fatalf("rejected problem %d has credit", p)
				}
				continue
			}
			c := mustCompute(t, specs[p])
			if !slices.Equal(search, c.Search) || !slices.Equal(agg, slices.Concat(c.Aggregation...)) ||
				!slices.Equal(dst.SetScores[sp.Set:sp.Set+sp.Sets], c.SetScores) {
				t.Fatalf("problem %d: credit differs from the problem alone", p)
			}
		}
	})
}

// TestUnscorable: unscorable outputs (whose rewards may be NaN or
// infinite) are left out exactly as the reference leaves them out; a set
// that keeps some outputs gets, bit for bit, the credit of the problem with
// the unscorable outputs dropped; a problem whose every output is
// unscorable gets zero credit.
func TestUnscorable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		drawUnscorable(t, &s)
		got := mustCompute(t, s)
		checkAccuracy(t, s, got)

		in := toBatch[float64]([]spec{s})
		var dst BatchCredit[float64]
		if err := ComputeBatch(&dst, in); err != nil {
			t.Fatal(err)
		}
		want := ref(s)
		if !slices.Equal(dst.ScoredOutputs, want.ScoredOutputs) || dst.ScoredSets[0] != want.ScoredSets {
			t.Fatalf("scored %v, %d, want %v, %d", dst.ScoredOutputs, dst.ScoredSets[0], want.ScoredOutputs, want.ScoredSets)
		}

		// Drop the unscorable outputs, and the sets left with none.
		var kept spec
		kept.Traces = s.Traces
		var keptSets []int
		for i, rs := range s.Rewards {
			var k []float64
			for j, r := range rs {
				if !s.Unscorable[i][j] {
					k = append(k, r)
				}
			}
			if len(k) > 0 {
				kept.Sets = append(kept.Sets, s.Sets[i])
				kept.Rewards = append(kept.Rewards, k)
				keptSets = append(keptSets, i)
			}
		}
		if len(kept.Sets) == 0 {
			for _, xs := range append([][]float64{got.SetScores, got.SetAdvantages, got.Search}, got.Aggregation...) {
				if slices.ContainsFunc(xs, func(a float64) bool { return a != 0 }) {
					t.Fatalf("every output unscorable: credit %+v", got)
				}
			}
			return
		}
		c := mustCompute(t, kept)
		if !slices.Equal(got.Search, c.Search) || !slices.Equal(got.Appearances, c.Appearances) {
			t.Fatalf("search %v, want %v (the problem with the unscorable outputs dropped)", got.Search, c.Search)
		}
		for n, i := range keptSets {
			if got.SetScores[i] != c.SetScores[n] || got.SetAdvantages[i] != c.SetAdvantages[n] {
				t.Fatalf("set %d: f %v, A_set %v, want %v, %v", i, got.SetScores[i], got.SetAdvantages[i], c.SetScores[n], c.SetAdvantages[n])
			}
			var scored []float64
			for j, a := range got.Aggregation[i] {
				if !s.Unscorable[i][j] {
					scored = append(scored, a)
				} else if a != 0 {
					t.Fatalf("unscorable output %d of set %d: A_agg = %v, want 0", j, i, a)
				}
			}
			if !slices.Equal(scored, c.Aggregation[n]) {
				t.Fatalf("set %d: A_agg %v, want %v", i, scored, c.Aggregation[n])
			}
		}
	})
}

// TestNoVouching: no value of Batch.Check turns the checks off: identical
// sets and a reward beyond MaxAbsReward are rejected whatever it holds
// (Check = 2 once vouched for both).
func TestNoVouching(t *testing.T) {
	for _, check := range []SetCheck{Subsets, Tuples, 2, -1} {
		in := toBatch[float64]([]spec{{Traces: 3, Sets: [][]int{{0, 1}, {0, 1}}, Rewards: [][]float64{{1}, {0}}}})
		in.Check = check
		var dst BatchCredit[float64]
		var be *BatchError
		if err := ComputeBatch(&dst, in); !errors.As(err, &be) || be.Problems[0].Field != "Members" {
			t.Errorf("Check = %d, identical sets: error %v, want a Members error", check, err)
		}
		in.Members = []int{0, 1, 1, 2}
		in.Rewards[0] = -2 * MaxAbsReward
		if err := ComputeBatch(&dst, in); !errors.As(err, &be) || be.Problems[0].Field != "Rewards" {
			t.Errorf("Check = %d, reward -2 MaxAbsReward: error %v, want a Rewards error", check, err)
		}
	}
}

// TestBatchPanics: a nil dst is a programmer's error; a bad batch is an
// error, not a panic.
func TestBatchPanics(t *testing.T) {
	in := toBatch[float32](paperSpecs(2, 1))
	if msg := panicMessage(func() { _ = ComputeBatch(nil, in) }); msg != "advantage: ComputeBatch: dst is nil" {
		t.Errorf("nil dst: panic %q", msg)
	}
	in.Rewards[0] = float32(math.Inf(1))
	if msg := panicMessage(func() {
		if err := ComputeBatch(&BatchCredit[float32]{}, in); err == nil {
			t.Error("bad batch: no error")
		}
	}); msg != "" {
		t.Errorf("bad batch: panic %q, want an error", msg)
	}
}

// panicMessage runs f and returns the value it panicked with, formatted, or
// "" if it did not panic.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestRewardBound: rewards up to MaxAbsReward in magnitude are accepted,
// including -0 and subnormals; the next float64 beyond, infinities and NaN
// are not. The bound check compares bit patterns, so its edges are tested
// at every position of slices of 1 to 9 rewards (each lane of the four-way
// loop and its tail), for float64 and float32, with and without
// unscorable marks.
func TestRewardBound(t *testing.T) {
	over := math.Nextafter(MaxAbsReward, math.Inf(1))
	below := float64(math.Nextafter32(1e30, 0))
	for _, tc := range []struct {
		r  float64
		ok bool
	}{
		{0, true}, {math.Copysign(0, -1), true}, {5e-324, true}, {-5e-324, true}, {1, true},
		{MaxAbsReward, true}, {-MaxAbsReward, true}, {over, false}, {-over, false},
		{math.MaxFloat64, false}, {math.Inf(1), false}, {math.Inf(-1), false}, {math.NaN(), false},
		{math.Float64frombits(0xfff8000000000001), false}, // a NaN with the sign bit set
	} {
		for n := 1; n < 10; n++ {
			for p := range n {
				in := Batch[float64]{Traces: []int{1}, Sets: []int{1}, SetSizes: []int{1}, Members: []int{0}, RewardCounts: []int{n}, Rewards: make([]float64, n)}
				in.Rewards[p] = tc.r
				if err := ComputeBatch(new(BatchCredit[float64]), in); (err == nil) != tc.ok {
					t.Errorf("reward %v (bits %#x) at %d of %d: error %v, want ok = %v", tc.r, math.Float64bits(tc.r), p, n, err, tc.ok)
				}
				in.Unscorable = make([]bool, n)
				in.Unscorable[p] = true
				if err := ComputeBatch(new(BatchCredit[float64]), in); err != nil {
					t.Errorf("unscorable reward %v at %d of %d: error %v", tc.r, p, n, err)
				}
			}
		}
	}
	// float32(1e30) is 1.0000000150474662e30, just above the bound; the
	// float32 below it is the largest accepted.
	for _, tc := range []struct {
		r  float32
		ok bool
	}{
		{float32(below), true}, {-float32(below), true}, {1e30, false}, {math.MaxFloat32, false}, {float32(math.Inf(1)), false}, {float32(math.NaN()), false},
	} {
		dst := make([]float32, 2)
		_, err := GroupRelative(dst, []float32{0.5, tc.r}, []int{0, 0}, GroupOptions{})
		in := Batch[float32]{Traces: []int{1}, Sets: []int{1}, SetSizes: []int{1}, Members: []int{0}, RewardCounts: []int{2}, Rewards: []float32{0.5, tc.r}}
		errBatch := ComputeBatch(new(BatchCredit[float32]), in)
		if (err == nil) != tc.ok || (errBatch == nil) != tc.ok {
			t.Errorf("float32 reward %v: errors %v and %v, want ok = %v", tc.r, err, errBatch, tc.ok)
		}
	}
}

// TestSpoiledBatches: any change to a valid batch gives a result or an
// error, never a panic, and on a layout error dst is untouched. Each check draws a
// valid batch and tries it with 20 random defects, one at a time: an int
// of the layout changed (by a small step, to an edge value, to another
// entry's value, or moved to another entry so that the sums still agree),
// a slice cut short, a trailing empty set, a bad reward, or one set made a
// copy of another.
func TestSpoiledBatches(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 0, 4).Draw(t, "problems")
		for range 20 {
			in := toBatch[float64](specs)
			spoil(t, &in, specs)
			var dst BatchCredit[float64]
			fill(dst, 7)
			err := ComputeBatch(&dst, in)
			if _, ok := err.(*BatchError); err != nil && !ok && dst.Search != nil {
				t.Fatalf("dst written on a layout error %v", err)
			}
		}
	})
}

// spoil makes one random change to in, the layout of specs, which may or
// may not make it invalid.
func spoil(t *rapid.T, in *Batch[float64], specs []spec) {
	fields := map[string]*[]int{"Traces": &in.Traces, "Sets": &in.Sets, "SetSizes": &in.SetSizes, "Members": &in.Members, "RewardCounts": &in.RewardCounts}
	switch what := rapid.SampledFrom([]string{"int", "trailing set", "reward", "copy"}).Draw(t, "defect"); what {
	case "int":
		xs := fields[rapid.SampledFrom([]string{"Traces", "Sets", "SetSizes", "Members", "RewardCounts"}).Draw(t, "field")]
		if len(*xs) == 0 {
			return
		}
		i := rapid.IntRange(0, len(*xs)-1).Draw(t, "i")
		j := rapid.IntRange(0, len(*xs)-1).Draw(t, "j")
		switch rapid.IntRange(0, 4).Draw(t, "change") {
		case 0:
			(*xs)[i] += rapid.IntRange(-2, 2).Draw(t, "delta")
		case 1:
			edges := []int{-1, 0, 63, 64, 65, combin.MaxSize + 1, math.MaxInt, math.MinInt}
			if spiraltest.Long() {
				// Accepted as traces, it sizes dst for 2^24 of them (a
				// fraction of a second each time).
				edges = append(edges, combin.MaxSize)
			}
			(*xs)[i] = rapid.SampledFrom(edges).Draw(t, "value")
		case 2:
			(*xs)[i] = (*xs)[j]
		case 3:
			*xs = (*xs)[:i]
		case 4: // the sum is unchanged, so only the entries are wrong
			(*xs)[i]--
			(*xs)[j]++
		}
	case "trailing set": // Sets no longer cover every set
		in.SetSizes = append(in.SetSizes, 0)
		in.RewardCounts = append(in.RewardCounts, 0)
	case "reward":
		if len(in.Rewards) > 0 {
			i := rapid.IntRange(0, len(in.Rewards)-1).Draw(t, "reward")
			in.Rewards[i] = rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), -2e30, MaxAbsReward, 0}).Draw(t, "bad")
		}
	case "copy": // a set of the first problem becomes a copy of its first set
		if len(specs) > 0 {
			gs := specs[0].Sets
			for i := 1; i < len(gs); i++ {
				if len(gs[i]) == len(gs[0]) {
					o := sum(in.SetSizes[:i])
					copy(in.Members[o:o+len(gs[0])], gs[0])
					break
				}
			}
		}
	}
}

// TestOrderInsideSets: reordering the members inside each set changes no
// output, bit for bit.
func TestOrderInsideSets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		want := mustCompute(t, s)
		var r spec
		r.Traces, r.Rewards = s.Traces, s.Rewards
		for _, g := range s.Sets {
			r.Sets = append(r.Sets, rapid.Permutation(g).Draw(t, "reordered"))
		}
		got := mustCompute(t, r)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("reordered %v -> %v (-want +got):\n%s", s.Sets, r.Sets, diff)
		}
	})
}
