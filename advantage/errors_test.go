package advantage

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestComputeErrors(t *testing.T) {
	ok := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 2, 4, 6}}
	okR := [][]float64{{1, 0}, {1, 1}, {0, 0}}
	for _, tc := range []struct {
		name    string
		traces  int
		groups  [][]int
		rewards [][]float64
		want    string
	}{
		{"no traces", 0, ok, okR, "problem 0: traces = 0, want 1 <= traces <= 1048576"},
		{"negative traces", -3, ok, okR, "traces = -3"},
		{"too many traces", MaxTraces + 1, ok, okR, "traces = 1048577"},
		{"no sets", 8, nil, nil, "problem 0: sets = 0, want >= 1"},
		{"rewards for fewer sets", 8, ok, okR[:2], "len(rewards) = 2, want len(groups) = 3"},
		{"empty set", 8, [][]int{{0}, {}}, [][]float64{{1}, {1}}, "problem 0, set 1: empty"},
		{"member too large", 8, [][]int{{0, 1}, {2, 3, 8}}, [][]float64{{1}, {1}}, "problem 0, set 1, member 2 = 8 out of range [0, 8)"},
		{"negative member", 8, [][]int{{-1}}, [][]float64{{1}}, "problem 0, set 0, member 0 = -1 out of range [0, 8)"},
		{"repeated member", 8, [][]int{{0, 3, 1, 3}}, [][]float64{{1}}, "problem 0, set 0: trace 3 repeated (members 1 and 3)"},
		{"repeated member above 64", 100, [][]int{{70, 3, 99, 70}}, [][]float64{{1}}, "problem 0, set 0: trace 70 repeated (members 0 and 3)"},
		{"identical sets", 8, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}}, okR, "problem 0: sets 0 and 2 are identical [0 1 2 3]"},
		{"no rewards", 8, ok, [][]float64{{1}, {}, {0}}, "problem 0, set 1: no rewards"},
		{"NaN", 8, ok, [][]float64{{1}, {1}, {0, math.NaN()}}, "problem 0, set 2, reward 1 = NaN: reward is not finite"},
		{"+Inf", 8, ok, [][]float64{{math.Inf(1)}, {1}, {0}}, "problem 0, set 0, reward 0 = +Inf"},
		{"-Inf", 8, ok, [][]float64{{0}, {1, 1, math.Inf(-1)}, {0}}, "problem 0, set 1, reward 2 = -Inf"},
		{"too large", 8, ok, [][]float64{{0}, {-1.5e30}, {0}}, "problem 0, set 1, reward 0 = -1.5e+30: reward magnitude exceeds MaxAbsReward = 1e+30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.traces, tc.groups, tc.rewards)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "advantage: ") {
				t.Errorf("Compute: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestPermutedSetsAreDistinct: sets are compared as presented, so two
// orderings of the same members are two different sets (ordered tuples).
func TestPermutedSetsAreDistinct(t *testing.T) {
	c, err := Compute(3, [][]int{{0, 1}, {1, 0}}, [][]float64{{1}, {0}})
	if err != nil {
		t.Fatalf("permuted sets: %v", err)
	}
	if diff := cmp.Diff([]float64{0, 0, 0}, c.Search); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBatchErrors checks the errors for inconsistent layouts, and that a
// bad value in a later problem names that problem and leaves dst untouched.
func TestBatchErrors(t *testing.T) {
	good := toBatch[float64](paperSpecs(3, 7))
	for _, tc := range []struct {
		name  string
		spoil func(b *Batch[float64])
		want  string
	}{
		{"Sets short", func(b *Batch[float64]) { b.Sets = b.Sets[:2] }, "len(Sets) = 2, want len(Traces) = 3"},
		{"RewardCounts short", func(b *Batch[float64]) { b.RewardCounts = b.RewardCounts[:11] }, "len(RewardCounts) = 11, want len(SetSizes) = 12"},
		{"Sets too many", func(b *Batch[float64]) { b.Sets[1] = 9 }, "problem 1: sets = 9, but len(SetSizes) = 12 leaves 8"},
		{"Sets too few", func(b *Batch[float64]) { b.Sets[2] = 3 }, "Sets sum to 11, want len(SetSizes) = 12"},
		{"SetSizes too large", func(b *Batch[float64]) { b.SetSizes[11] = 5 }, "problem 2, set 3: size 5, but len(Members) = 48 leaves 4"},
		{"SetSizes too small", func(b *Batch[float64]) { b.Members = append(b.Members, 0) }, "SetSizes sum to 48, want len(Members) = 49"},
		{"negative size", func(b *Batch[float64]) { b.SetSizes[5] = -1 }, "problem 1, set 1: empty (size -1)"},
		{"RewardCounts too large", func(b *Batch[float64]) { b.RewardCounts[11] = 5 }, "problem 2, set 3: 5 rewards, but len(Rewards) = 48 leaves 4"},
		{"RewardCounts too small", func(b *Batch[float64]) { b.Rewards = append(b.Rewards, 0) }, "RewardCounts sum to 48, want len(Rewards) = 49"},
		{"negative count", func(b *Batch[float64]) { b.RewardCounts[9] = -2 }, "problem 2, set 1: no rewards (count -2)"},
		{"traces", func(b *Batch[float64]) { b.Traces[2] = 0 }, "problem 2: traces = 0"},
		{"member", func(b *Batch[float64]) { b.Traces[2] = 1 }, "problem 2, set 0, member"},
		{"NaN late", func(b *Batch[float64]) { b.Rewards[47] = math.NaN() }, "problem 2, set 3, reward 3 = NaN"},
		{"identical", func(b *Batch[float64]) { copy(b.Members[44:48], b.Members[32:36]) }, "problem 2: sets 0 and 3 are identical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := Batch[float64]{
				Traces:       slices.Clone(good.Traces),
				Sets:         slices.Clone(good.Sets),
				SetSizes:     slices.Clone(good.SetSizes),
				Members:      slices.Clone(good.Members),
				RewardCounts: slices.Clone(good.RewardCounts),
				Rewards:      slices.Clone(good.Rewards),
			}
			tc.spoil(&bad)
			dst, err := NewBatchCredit(good)
			if err != nil {
				t.Fatal(err)
			}
			fill(dst, 7)
			err = ComputeBatch(&dst, bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ComputeBatch: error %v, want one containing %q", err, tc.want)
			}
			want, _ := NewBatchCredit(good)
			fill(want, 7)
			if diff := cmp.Diff(want, dst); diff != "" {
				t.Errorf("dst written on error (-want +got):\n%s", diff)
			}
			if _, err := NewBatchCredit(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewBatchCredit: error %v, want one containing %q", err, tc.want)
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
	for i := range c.Appearances {
		c.Appearances[i] = int(v)
	}
}

// TestBatchPanics: a dst slice of the wrong length is a programmer's error.
func TestBatchPanics(t *testing.T) {
	in := toBatch[float32](paperSpecs(2, 1))
	for _, tc := range []struct {
		field string
		cut   func(c *BatchCredit[float32])
	}{
		{"SetScores", func(c *BatchCredit[float32]) { c.SetScores = c.SetScores[1:] }},
		{"SetAdvantages", func(c *BatchCredit[float32]) { c.SetAdvantages = nil }},
		{"Search", func(c *BatchCredit[float32]) { c.Search = append(c.Search, 0) }},
		{"Appearances", func(c *BatchCredit[float32]) { c.Appearances = c.Appearances[:3] }},
		{"Aggregation", func(c *BatchCredit[float32]) { c.Aggregation = c.Aggregation[:0] }},
	} {
		dst, err := NewBatchCredit(in)
		if err != nil {
			t.Fatal(err)
		}
		tc.cut(&dst)
		msg := panicMessage(func() { _ = ComputeBatch(&dst, in) })
		if want := fmt.Sprintf("advantage: len(dst.%s) = ", tc.field); !strings.HasPrefix(msg, want) {
			t.Errorf("%s: panic %q, want one starting %q", tc.field, msg, want)
		}
	}
	if msg := panicMessage(func() { _ = ComputeBatch(nil, in) }); msg == "" {
		t.Error("nil dst: no panic")
	}
	// A bad batch is an error, not a panic, even with a dst of the wrong size.
	in.Rewards[0] = float32(math.Inf(1))
	if msg := panicMessage(func() {
		if err := ComputeBatch(&BatchCredit[float32]{}, in); err == nil {
			t.Error("bad batch, empty dst: no error")
		}
	}); msg != "" {
		t.Errorf("bad batch, empty dst: panic %q, want an error", msg)
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
// here for float64 and float32.
func TestRewardBound(t *testing.T) {
	over := math.Nextafter(MaxAbsReward, math.Inf(1))
	for _, tc := range []struct {
		r  float64
		ok bool
	}{
		{0, true}, {math.Copysign(0, -1), true}, {5e-324, true}, {-5e-324, true}, {1, true},
		{MaxAbsReward, true}, {-MaxAbsReward, true}, {over, false}, {-over, false},
		{math.MaxFloat64, false}, {math.Inf(1), false}, {math.Inf(-1), false}, {math.NaN(), false},
		{math.Float64frombits(0xfff8000000000001), false}, // a NaN with the sign bit set
	} {
		_, err := Compute(1, [][]int{{0}}, [][]float64{{0.5, tc.r}})
		if (err == nil) != tc.ok {
			t.Errorf("reward %v (bits %#x): error %v, want ok = %v", tc.r, math.Float64bits(tc.r), err, tc.ok)
		}
	}
	// float32(1e30) is 1.0000000150474662e30, just above the bound; the
	// float32 below it is the largest accepted.
	below := math.Nextafter32(1e30, 0)
	for _, tc := range []struct {
		r  float32
		ok bool
	}{
		{below, true}, {-below, true}, {1e30, false}, {math.MaxFloat32, false}, {float32(math.Inf(1)), false}, {float32(math.NaN()), false},
	} {
		dst := make([]float32, 2)
		_, err := GroupRelative(dst, []float32{0.5, tc.r}, []int{0, 0}, GroupOptions{})
		in := Batch[float32]{Traces: []int{1}, Sets: []int{1}, SetSizes: []int{1}, Members: []int{0}, RewardCounts: []int{2}, Rewards: []float32{0.5, tc.r}}
		_, errBatch := NewBatchCredit(in)
		if (err == nil) != tc.ok || (errBatch == nil) != tc.ok {
			t.Errorf("float32 reward %v: errors %v and %v, want ok = %v", tc.r, err, errBatch, tc.ok)
		}
	}
}

// TestQuickValid: the fast validator accepts exactly the batches of small
// problems that the full, error-reporting one accepts, and never accepts a
// batch that the full one rejects. Each check draws a valid batch and tries
// it with no defect and with 20 random defects, one at a time: an int of
// the layout changed (by a small step, to an edge value, to another entry's
// value, or moved to another entry so that the sums still agree), a slice
// cut short, a trailing empty set, a bad reward, or one set made a copy of
// another.
func TestQuickValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 0, 4).Draw(t, "problems")
		for try := range 21 {
			in := toBatch[float64](specs)
			if try > 0 {
				spoil(t, &in, specs)
			}
			wantTraces, err := in.checkAll()
			traces, ok := in.quickValid()
			if ok && (err != nil || traces != wantTraces) {
				t.Fatalf("quickValid accepts (%d traces), checkAll: %d traces, %v", traces, wantTraces, err)
			}
			small := slices.Max(append([]int{1}, in.Traces...)) <= quickTraces && slices.Max(append([]int{1}, in.Sets...)) <= quickSets
			if !ok && err == nil && small {
				t.Fatalf("quickValid rejects a valid batch of small problems")
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
			(*xs)[i] = rapid.SampledFrom([]int{-1, 0, 63, 64, 65, MaxTraces, MaxTraces + 1, math.MaxInt, math.MinInt}).Draw(t, "value")
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
			gs := specs[0].Groups
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

// TestSetsAsDrawn is the case of a trainer that draws ordered tuples and
// then orders each one's candidates by content (here, by trace length) for
// the aggregation prompt: the distinct tuples (0, 1, 2, 3) and
// (1, 0, 2, 3) are both read as (0, 1, 2, 3). Passed as presented they are
// two identical sets, an error that says nothing about the draw; passed as
// drawn, as the documentation asks, they give the credit of the formulas,
// which depend only on each set's members.
func TestSetsAsDrawn(t *testing.T) {
	drawn := [][]int{{0, 1, 2, 3}, {1, 0, 2, 3}, {4, 5, 6, 7}}
	rewards := [][]float64{{1, 1, 0, 1}, {0, 0, 1, 0}, {1, 0, 0, 0}}
	length := []int{100, 300, 200, 400, 50, 60, 70, 80} // trace 0 is the shortest
	presented := make([][]int, len(drawn))
	for i, g := range drawn {
		presented[i] = slices.Clone(g)
		slices.SortFunc(presented[i], func(a, b int) int { return length[a] - length[b] })
	}
	if !slices.Equal(presented[0], presented[1]) {
		t.Fatalf("presented %v: the first two tuples should read alike", presented)
	}
	if _, err := Compute(8, presented, rewards); err == nil || !strings.Contains(err.Error(), "sets 0 and 1 are identical") {
		t.Errorf("presented: error %v, want the identical-sets error", err)
	}
	got, err := Compute(8, drawn, rewards)
	if err != nil {
		t.Fatalf("drawn: %v", err)
	}
	if diff := cmp.Diff(reference(spec{Traces: 8, Groups: presented, Rewards: rewards}), got, approx(1e-15)); diff != "" {
		t.Errorf("drawn vs the formulas on the presented sets (-want +got):\n%s", diff)
	}
}

// TestOrderInsideSets: reordering the members inside each set, as long as
// no two sets become identical, changes no output, bit for bit, so passing
// sets as drawn rather than as presented loses nothing.
func TestOrderInsideSets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSpec(t)
		want := mustCompute(t, s)
		var r spec
		r.Traces, r.Rewards = s.Traces, s.Rewards
		for _, g := range s.Groups {
			r.Groups = append(r.Groups, rapid.Permutation(g).Draw(t, "reordered"))
		}
		got, err := Compute(r.Traces, r.Groups, r.Rewards)
		if err != nil {
			if strings.Contains(err.Error(), "identical") {
				t.Skip("reordering made two sets identical")
			}
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("reordered %v -> %v (-want +got):\n%s", s.Groups, r.Groups, diff)
		}
	})
}
