// Package gating is the loop of the length gate of Eq. 8 (package
// lengthgate's Gate), which checks nothing: lengthgate calls it after
// checking a caller's gate, advantages and lengths, and the root package
// spiral calls it on the credit it computed and the lengths it checked
// itself. Being internal, no caller outside the module can skip the checks.
package gating

import (
	"math"
	"math/bits"
)

// Tally is what one pass of the gate did: the counts of lengthgate.Report
// and the removed mass as the unevaluated sum Mass + Low, Mass the float64
// sum of the removed advantages and Low the sum of the exact errors of its
// additions.
type Tally struct {
	Positive, AtTarget, Gated int
	Mass, Low                 float64
}

// Apply writes adv to dst with Eq. 8 applied: a positive advantage of an
// output of length l >= first is written as 0 and its value added to the
// mass, and the positive advantages with l == at are counted. The lengths
// are read as unsigned, so first = math.MaxUint gates nothing (lengths are
// at most math.MaxInt) and at = math.MaxUint counts none. dst, adv and
// lengths must be equally long, lengths >= 0 and adv finite or the tally
// is meaningless; dst may be adv.
func Apply[F ~float32 | ~float64](first, at uint, dst, adv []F, lengths []int) Tally {
	var t Tally
	for len(adv) > 0 {
		n := min(len(adv), 64)
		positive, atTarget, gated := gate(first, at, dst[:n], adv[:n], lengths[:n])
		t.Positive += positive
		t.AtTarget += atTarget
		t.Gated += bits.OnesCount64(gated)
		for m := gated; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			a := float64(adv[i]) // before dst[i], which may be adv[i], is written
			// t.Mass + a = s + e exactly (Knuth's two-sum, numeric.TwoSum)
			s := t.Mass + a
			z := s - t.Mass
			t.Low += (t.Mass - (s - z)) + (a - z)
			t.Mass = s
			dst[i] = 0
		}
		dst, adv, lengths = dst[n:], adv[n:], lengths[n:]
	}
	return t
}

// gate is the first pass of Apply over at most 64 entries: it copies adv
// to dst and returns the counts and the gated entries as a bit set (bit i
// for entry i), which Apply then zeroes in dst and adds to the mass, in
// order.
//
// The loop has no branch on the data: whether an advantage is positive and
// how its length compares with the target are mispredicted about as often
// as not on real batches, so each entry's outcome is a 0/1 flag. Adding
// only the gated advantages to the mass gives the bits that adding +0 for
// every kept one would (which leaves the sum and its error term exactly as
// they were), with a two-sum for the gated entries (a tenth of them on the
// benchmark's batches) instead of all: about 20 instructions an entry
// fewer (BenchmarkStepParts/problems=256/credit, cachegrind).
func gate[F ~float32 | ~float64](first, at uint, dst, adv []F, lengths []int) (positive, atTarget int, gated uint64) {
	lengths = lengths[:len(adv)]
	dst = dst[:len(adv)]
	for i, a := range adv {
		l := uint(lengths[i])
		p := b2i(int64(math.Float64bits(float64(a))) > 0) // a > 0, for a finite a
		positive += p
		atTarget += p & b2i(l == at)
		gated |= uint64(p&b2i(l >= first)) << (i & 63)
		dst[i] = a
	}
	return positive, atTarget, gated
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// Bounds returns Apply's first and at for a gate of the given target (0
// disables it) that keeps a positive advantage at the target when keepAt:
// first is the target, or the target + 1 under keepAt, and at the target;
// both math.MaxUint for a disabled gate.
func Bounds(target int, keepAt bool) (first, at uint) {
	if target == 0 {
		return math.MaxUint, math.MaxUint
	}
	first, at = uint(target), uint(target)
	if keepAt {
		first++
	}
	return first, at
}

// report is package lengthgate's func(outputs int, t Tally) Report, which
// alone can fill a Report's error term (SetReport).
var report any

// SetReport registers the function that turns a tally of outputs entries
// into package lengthgate's Report R. Package lengthgate calls it once, at
// initialization.
func SetReport[R any](f func(outputs int, t Tally) R) { report = f }

// Report returns the Report R of a tally of outputs entries, as the function
// SetReport registered makes it.
func Report[R any](outputs int, t Tally) R { return report.(func(int, Tally) R)(outputs, t) }
