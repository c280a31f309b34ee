package lengthgate

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"spiral/internal/gating"
)

// plainApply is gating.Apply, the kernel of Gate.Apply and of the root's
// gates, as Eq. 8 reads it, one entry at a time: every entry adds its
// removed value, +0 when it is kept, to the two-sum of the mass.
func plainApply(g gating.Gate, dst, adv []float64, lengths []int) gating.Tally {
	first, at := g.First, g.At
	var t gating.Tally
	for i, a := range adv {
		l := uint(lengths[i])
		removed := 0.0
		dst[i] = a
		if a > 0 {
			t.Positive++
			if l == at {
				t.AtTarget++
			}
			if l >= first {
				t.Gated++
				removed, dst[i] = a, 0
			}
		}
		s := t.Mass + removed
		z := s - t.Mass
		t.Low += (t.Mass - (s - z)) + (removed - z)
		t.Mass = s
	}
	return t
}

// TestGatingApplyAsPlain: gating.Apply, which adds only the gated advantages to the
// mass, chunk by chunk, gives the bits of the plain loop, for lengths
// around the target and advantages of every sign and size (the mass
// reaching +Inf included), across several chunks, in place or not.
func TestGatingApplyAsPlain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		target := rapid.SampledFrom([]int{0, 1, 5, math.MaxInt}).Draw(t, "target")
		gate := gating.Bounds(target, rapid.Bool().Draw(t, "keepAt"))
		adv, lengths := make([]float64, n), make([]int, n)
		for i := range adv {
			adv[i] = rapid.OneOf(rapid.Float64Range(-1, 1), rapid.Float64Range(-1e10, 1e10),
				rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 0.1, 1e308, math.MaxFloat64, 5e-324})).Draw(t, "adv")
			lengths[i] = rapid.SampledFrom([]int{0, 1, 4, 5, 6, math.MaxInt}).Draw(t, "length")
		}
		got, want := make([]float64, n), make([]float64, n)
		w := plainApply(gate, want, adv, lengths)
		src := adv
		if rapid.Bool().Draw(t, "inPlace") { // dst is adv
			copy(got, adv)
			src = got
		}
		g := gating.Apply(gate, got, src, lengths)
		// Mass and Low compared by their bits: Low is NaN once the mass overflowed.
		if g.Positive != w.Positive || g.AtTarget != w.AtTarget || g.Gated != w.Gated ||
			math.Float64bits(g.Mass) != math.Float64bits(w.Mass) || math.Float64bits(g.Low) != math.Float64bits(w.Low) {
			t.Fatalf("Apply tallies %+v, the plain loop %+v", g, w)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("entry %d: Apply writes %v, the plain loop %v", i, got[i], want[i])
			}
		}
	})
}

// TestGatingBounds: gating.Bounds: a disabled gate gates and counts nothing; GateAtTarget gates
// from the target, KeepAtTarget from one past it.
func TestGatingBounds(t *testing.T) {
	for _, c := range []struct {
		target    int
		keepAt    bool
		first, at uint
	}{
		{0, false, math.MaxUint, math.MaxUint},
		{0, true, math.MaxUint, math.MaxUint},
		{7, false, 7, 7},
		{7, true, 8, 7},
		{math.MaxInt, true, math.MaxInt + 1, math.MaxInt},
	} {
		if g := gating.Bounds(c.target, c.keepAt); g.First != c.first || g.At != c.at {
			t.Errorf("gating.Bounds(%d, %v) = %d, %d; want %d, %d", c.target, c.keepAt, g.First, g.At, c.first, c.at)
		}
	}
}

// TestGatingPairAsApply: gating.Pair gates each role in place as
// gating.Apply does, and reports both through the registered function as
// Report does each tally; a disabled gate reads nothing and reports zero.
func TestGatingPairAsApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(role string) (Gate, []float64, []int) {
			n := rapid.IntRange(0, 150).Draw(t, role+"n")
			g := Gate{Target: rapid.SampledFrom([]int{0, 1, 5}).Draw(t, role+"target"), Boundary: rapid.SampledFrom([]Boundary{GateAtTarget, KeepAtTarget}).Draw(t, role+"boundary")}
			adv, lengths := make([]float64, n), make([]int, n)
			for i := range adv {
				adv[i] = rapid.Float64Range(-1, 1).Draw(t, role+"adv")
				lengths[i] = rapid.IntRange(0, 7).Draw(t, role+"length")
			}
			return g, adv, lengths
		}
		gs, search, sl := draw("search")
		ga, agg, al := draw("agg")
		wantSearch, wantAgg := make([]float64, len(search)), make([]float64, len(agg))
		want := GatesReport{gate(gs, wantSearch, search, sl), gate(ga, wantAgg, agg, al)}
		if !gs.Enabled() {
			want.Search = Report{}
			copy(wantSearch, search)
		}
		if !ga.Enabled() {
			want.Aggregation = Report{}
			copy(wantAgg, agg)
		}
		var got GatesReport
		gating.Pair(&got, gs.bounds(), search, sl, ga.bounds(), agg, al)
		if got != want {
			t.Fatalf("Pair reports %+v, Apply %+v", got, want)
		}
		for _, r := range []struct{ got, want []float64 }{{search, wantSearch}, {agg, wantAgg}} {
			for i := range r.got {
				if math.Float64bits(r.got[i]) != math.Float64bits(r.want[i]) {
					t.Fatalf("entry %d: Pair writes %v, Apply %v", i, r.got[i], r.want[i])
				}
			}
		}
	})
}
