// Package gating is the loop of the length gate of Eq. 8 (package
// lengthgate's Gate), which checks nothing: lengthgate calls it after
// checking a caller's gate, advantages and lengths, and the root package
// spiral calls it on the credit it computed and the lengths it checked
// itself. Being internal, no caller outside the module can skip the checks.
package gating

import "math"

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
	var removed [64]float64
	for len(adv) > 0 {
		n := min(len(adv), len(removed))
		positive, atTarget, k := gate(first, at, &removed, dst[:n], adv[:n], lengths[:n])
		t.Positive += positive
		t.AtTarget += atTarget
		t.Gated += k
		for _, m := range removed[:k] {
			// t.Mass + m = s + e exactly (Knuth's two-sum, numeric.TwoSum)
			s := t.Mass + m
			z := s - t.Mass
			t.Low += (t.Mass - (s - z)) + (m - z)
			t.Mass = s
		}
		dst, adv, lengths = dst[n:], adv[n:], lengths[n:]
	}
	return t
}

// gate is Apply on at most len(removed) entries: it returns the counts
// and writes the gated advantages, in order, to removed[:gated], which
// Apply adds to the mass.
//
// The loop has no branch on the data: whether an advantage is positive and
// how its length compares with the target are mispredicted about as often
// as not on real batches, so each entry's outcome is a 0/1 flag, the
// written advantage is selected by masking its bits, and every advantage
// is stored at removed[k], k advancing only past a gated one. Adding only
// the gated ones gives the bits that adding +0 for every kept one would
// (which leaves the sum and its error term exactly as they were), with a
// two-sum for a tenth of the entries instead of all (about 15 instructions
// an entry fewer, BenchmarkStepParts/credit under cachegrind).
func gate[F ~float32 | ~float64](first, at uint, removed *[64]float64, dst, adv []F, lengths []int) (positive, atTarget, gated int) {
	lengths = lengths[:len(adv)]
	dst = dst[:len(adv)]
	k := 0
	for i, a := range adv {
		l := uint(lengths[i])
		bits := math.Float64bits(float64(a))
		p := b2i(int64(bits) > 0) // a > 0, for a finite a
		positive += p
		atTarget += p & b2i(l == at)
		gd := p & b2i(l >= first)
		removed[k&63] = float64(a) // k <= i < 64
		k += gd
		dst[i] = F(math.Float64frombits(bits &^ -uint64(gd))) // 0 when gated
	}
	return positive, atTarget, k
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
