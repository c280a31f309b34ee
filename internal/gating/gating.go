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
	if len(adv) > 0 && &dst[0] != &adv[0] {
		copy(dst, adv)
	}
	var t Tally
	for len(dst) > 0 {
		n := min(len(dst), 64)
		positive, atTarget, gated := gate(first, at, dst[:n], lengths[:n])
		t.Positive += bits.OnesCount64(positive)
		t.AtTarget += bits.OnesCount64(positive & atTarget)
		gated &= positive
		t.Gated += bits.OnesCount64(gated)
		// Entry i is bit n-1-i: the highest bit first is the entries in order.
		for m := gated; m != 0; {
			b := bits.Len64(m) - 1
			m &^= 1 << b
			i := n - 1 - b
			a := float64(dst[i])
			// t.Mass + a = s + e exactly (Knuth's two-sum, numeric.TwoSum)
			s := t.Mass + a
			z := s - t.Mass
			t.Low += (t.Mass - (s - z)) + (a - z)
			t.Mass = s
			dst[i] = 0
		}
		dst, lengths = dst[n:], lengths[n:]
	}
	return t
}

// gate is the first pass of Apply over at most 64 entries of adv: it
// returns the positive entries, those of length at and those of length >=
// first, each as a bit set (entry i is bit len(adv)-1-i), which Apply then
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
