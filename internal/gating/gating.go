// Package gating is the loop of the length gate of Eq. 8 (package
// lengthgate's Gate), which checks nothing: lengthgate calls it after
// checking a caller's gate, advantages and lengths, and the root package
// spiral calls it on the credit it computed and the lengths it checked
// itself. Being internal, no caller outside the module can skip the checks.
package gating

import (
	"math"
	"math/bits"

	"spiral/internal/numeric"
)

// Tally is what one pass of the gate did: the counts of lengthgate.Report
// and the removed mass as the unevaluated sum Mass + Low, Mass the float64
// sum of the removed advantages and Low the sum of the exact errors of its
// additions.
type Tally struct {
	Positive, AtTarget, Gated int
	Mass, Low                 float64
}

// Gate is a length gate in the form the loop reads: a positive advantage
// of an output of length l >= First is zeroed and its value added to the
// mass, and the positive advantages with l == At are counted. The lengths
// are read as unsigned, so First = math.MaxUint gates nothing (lengths are
// at most math.MaxInt) and At = math.MaxUint counts none.
type Gate struct{ First, At uint }

// Apply writes adv to dst with Eq. 8 applied by g, and returns its tally.
// dst, adv and lengths must be equally long, lengths >= 0 and adv finite
// or the tally is meaningless; dst may be adv.
func Apply[F ~float32 | ~float64](g Gate, dst, adv []F, lengths []int) Tally {
	if len(adv) > 0 && &dst[0] != &adv[0] {
		copy(dst, adv)
	}
	var t Tally
	apply(&t, g, dst, lengths)
	return t
}

// Pair gates two roles' advantages in place, search by gs and agg by ga,
// each with its lengths (as for Apply), and writes to dst the report R
// that the function SetReport registered makes of the two tallies: one
// call for the credit of a training step, whose two roles the root gates
// together. A disabled gate (Bounds of target 0) reads nothing and is
// reported as a gate of no entries.
func Pair[R any](dst *R, gs Gate, search []float64, searchLengths []int, ga Gate, agg []float64, aggLengths []int) {
	var s, a Tally
	if gs.enabled() {
		apply(&s, gs, search, searchLengths)
	} else {
		search = nil
	}
	if ga.enabled() {
		apply(&a, ga, agg, aggLengths)
	} else {
		agg = nil
	}
	report.(func(*R, int, Tally, int, Tally))(dst, len(search), s, len(agg), a) // by value: not to the heap
}

// enabled reports whether g is not the disabled gate, whose At is
// math.MaxUint (an enabled gate's target is at most math.MaxInt).
func (g Gate) enabled() bool { return g.At != math.MaxUint }

// apply gates adv in place by g, 64 entries at a time, adding to t. A
// slice of at most 64 entries, as one problem's roles are, takes one call
// of chunk and no slicing.
func apply[F ~float32 | ~float64](t *Tally, g Gate, adv []F, lengths []int) {
	lengths = lengths[:len(adv)]
	for len(adv) > 64 {
		chunk(t, g, adv[:64], lengths[:64])
		adv, lengths = adv[64:], lengths[64:]
	}
	chunk(t, g, adv, lengths)
}

// chunk gates at most 64 entries of adv in place by g, adding to t.
func chunk[F ~float32 | ~float64](t *Tally, g Gate, adv []F, lengths []int) {
	positive, atTarget, gated := gate(g.First, g.At, adv, lengths)
	t.Positive += bits.OnesCount64(positive)
	t.AtTarget += bits.OnesCount64(positive & atTarget)
	gated &= positive
	t.Gated += bits.OnesCount64(gated)
	// Entry i is bit n-1-i: the highest bit first is the entries in order.
	for m, n := gated, len(adv); m != 0; {
		b := bits.Len64(m) - 1
		m &^= 1 << b
		i := n - 1 - b
		var e float64
		t.Mass, e = numeric.TwoSum(t.Mass, float64(adv[i]))
		t.Low += e
		adv[i] = 0
	}
}

// gate is the first pass of chunk over at most 64 entries of adv: it
// returns the positive entries, those of length at and those of length >=
// first, each as a bit set (entry i is bit len(adv)-1-i), which chunk then
// counts, and whose gated entries it zeroes and adds to the mass, in order.
//
// The loop has no branch on the data: whether an advantage is positive and
// how its length compares with the target are mispredicted about as often
// as not on real batches, so each entry's outcome is a 0/1 flag shifted
// into its set, and the counts are the sets' population counts. Shifting
// each set by one (rather than each flag by its index, a shift by a
// variable) and counting once per chunk takes about 8 instructions an
// entry fewer; gating in place, after one copy when dst is not adv, about
// 2 fewer (BenchmarkStepParts/problems=256/credit, cachegrind). Adding only
// the gated advantages to the mass gives the bits that adding +0 for every
// kept one would (which leaves the sum and its error term exactly as they
// were), with a two-sum for the gated entries (a tenth of them on the
// benchmark's batches) instead of all: about 20 instructions an entry
// fewer.
func gate[F ~float32 | ~float64](first, at uint, adv []F, lengths []int) (positive, atTarget, atLeast uint64) {
	lengths = lengths[:len(adv)]
	for i, a := range adv {
		l := uint(lengths[i])
		positive = positive + positive + b2u(int64(math.Float64bits(float64(a))) > 0) // a > 0, for a finite a
		atTarget = atTarget + atTarget + b2u(l == at)
		atLeast = atLeast + atLeast + b2u(l >= first)
	}
	return positive, atTarget, atLeast
}

// b2u returns 1 for true and 0 for false, without a branch.
func b2u(b bool) uint64 {
	var i uint64
	if b {
		i = 1
	}
	return i
}

// Bounds returns the Gate of the given target (0 disables it) that keeps a
// positive advantage at the target when keepAt: First is the target, or
// the target + 1 under keepAt, and At the target; both math.MaxUint for a
// disabled gate.
func Bounds(target int, keepAt bool) Gate {
	if target == 0 {
		return Gate{math.MaxUint, math.MaxUint}
	}
	g := Gate{uint(target), uint(target)}
	if keepAt {
		g.First++
	}
	return g
}

// report is package lengthgate's func(dst *GatesReport, searchOutputs int,
// search Tally, aggOutputs int, agg Tally), which alone can fill a
// Report's error term (SetReport).
var report any

// SetReport registers the function that writes to dst the report R
// (package lengthgate's GatesReport) of the tallies of Pair's two roles,
// of searchOutputs and aggOutputs entries. Package lengthgate calls it
// once, at initialization.
func SetReport[R any](f func(dst *R, searchOutputs int, search Tally, aggOutputs int, agg Tally)) {
	report = f
}
