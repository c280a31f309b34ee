package advantage

import (
	"math"

	"golang.org/x/exp/constraints"
)

// This file is the one implementation of SPIRAL's credit (the formula block
// of the package documentation). It trusts its input: ComputeBatch checks
// it first, or the caller vouches for the sets with Batch.Check = Unchecked.
//
// Numerics. Every reward is converted to float64 and results are rounded
// to F only when stored, so float32 rewards give the float64 results
// rounded. Per problem:
//
//   - Each set is reduced on its own, by setMean: its scored rewards are
//     summed with the exact error of every addition (twoSum), and the mean
//     kept as a pair h + l (meanPair). So f = h + l and A_agg = (r - h) - l
//     are accurate to a few units in the last place of the set's own
//     values, whatever other sets hold, and exactly 0 for a set whose
//     rewards are equal. When the batch's rewards are multiples of 2^-16
//     small enough that every plain sum is exact (scanRewards, as with
//     0/1 rewards), every twoSum error is 0 and setMean adds plainly: the
//     same bits for less work.
//   - Across sets the kernel works on e_i = (h_i - P) + l_i, the deviation
//     of f_i from a pivot P near fbar (the plain mean of the h_i): ebar =
//     fbar - P is the mean of the e_i in set order, A_set = e_i - ebar and
//     A_search(y) = (sum of e_i over the sets holding y)/|G(y)| - ebar.
//     When every e_i is equal, ebar is that value and every set and search
//     advantage is exactly 0. A trace in every scored set gets exactly 0:
//     its sum is accumulated in the same order as ebar's.
//   - A search advantage within tol of 0 is written as exactly 0 (see
//     searchTol).
//
// The only products that feed a sum are meanPair's math.FMA (exactly
// rounded on every architecture) and those of searchTol and meanBound,
// which are rounded explicitly, so the compiler has no multiply-add to
// fuse and the results are the same on every architecture.

// scratch is the memory the kernel reuses from problem to problem, kept in
// a BatchCredit: the search sums and set counts of one problem's traces,
// and the h_i, then e_i, and l_i of its sets.
type scratch struct {
	sums    []float64
	count   []int
	dev, lo []float64
}

// creditProblem computes the credit of problem q of in, checked, whose
// first trace, set, member and reward are at offsets t, s, m and r and
// which has nm members and nr rewards, into dst, already resized.
func creditProblem[F constraints.Float](dst *BatchCredit[F], in *Batch[F], exact bool, q, t, s, m, r, nm, nr int) {
	nt, k := in.Traces[q], in.Sets[q]
	counts, sizes := in.RewardCounts[s:s+k], in.SetSizes[s:s+k]
	// The problem's rewards, advantages and marks have one capacity, so
	// that one check of a set's range covers all three.
	rewards, aggAll := in.Rewards[r:r+nr:r+nr], dst.Aggregation[r:r+nr:r+nr]
	var unscorable []bool
	if in.Unscorable != nil {
		unscorable = in.Unscorable[r : r+nr : r+nr]
	}
	sc := &dst.sc
	hi, lo := sc.dev[:k], sc.lo[:k]
	scoredOutputs, setScores := dst.ScoredOutputs[s:s+k], dst.SetScores[s:s+k]
	var hsum, errMax, devMax float64 // sum of the h_i, max setMean bound, max |e_i|
	scoredSets := 0
	o := 0 // offset of set i's first reward
	for i, c := range counts {
		rs, agg := rewards[o:o+c], aggAll[o:o+c]
		var un []bool
		if unscorable != nil {
			un = unscorable[o : o+c]
		}
		o += c
		h, l, n, bound := setMean(rs, un, exact)
		scoredOutputs[i] = n
		if n == 0 {
			setScores[i] = 0
			clear(agg)
			continue
		}
		setScores[i] = F(h + l)
		for j, x := range rs {
			agg[j] = F((float64(x) - h) - l)
		}
		for j, u := range un {
			if u {
				agg[j] = 0
			}
		}
		hi[i], lo[i] = h, l
		hsum += h
		scoredSets++
		if bound > errMax { // bound >= +0 is never NaN: this is max(errMax, bound)
			errMax = bound
		}
	}
	dst.ScoredSets[q] = scoredSets
	P := 0.0 // the pivot: near fbar, where e_i = f_i - P are small
	if scoredSets > 0 {
		P = hsum / float64(scoredSets)
	}

	dev := hi // e_i overwrites h_i
	var (
		esum, e0 float64
		mixed    bool
		seen     bool
	)
	for i, n := range scoredOutputs {
		if n == 0 {
			continue
		}
		e := (hi[i] - P) + lo[i]
		dev[i] = e
		if !seen {
			e0, seen = e, true
		} else if e != e0 {
			mixed = true
		}
		esum += e
		if a := math.Abs(e); a > devMax { // as errMax: max(devMax, |e|)
			devMax = a
		}
	}

	ebar := e0
	if mixed {
		ebar = esum / float64(scoredSets)
	}
	setAdv := dst.SetAdvantages[s : s+k]
	for i, n := range scoredOutputs {
		a := 0.0
		if n != 0 && mixed {
			a = dev[i] - ebar
		}
		setAdv[i] = F(a)
	}

	// The sums and counts of the sets holding each trace, in scratch that
	// is all zero between problems (resize clears it, and the last loop
	// clears what this one used).
	search, members, app := dst.Search[t:t+nt], in.Members[m:m+nm:m+nm], dst.Appearances[t:t+nt]
	sums, cnt := sc.sums[:nt], sc.count[:nt]
	o = 0 // offset of set i's first member
	for i, size := range sizes {
		g := members[o : o+size]
		o += size
		if scoredOutputs[i] == 0 {
			continue
		}
		e := dev[i]
		for _, y := range g {
			sums[y] += e
			cnt[y]++
		}
	}
	if !mixed {
		for y, n := range cnt {
			app[y], search[y] = n, 0
			cnt[y], sums[y] = 0, 0
		}
		return
	}
	tol := searchTol(scoredSets, devMax, errMax)
	for y, n := range cnt {
		app[y] = n
		a := 0.0
		if n != 0 {
			a = sums[y]/float64(n) - ebar
		}
		cnt[y], sums[y] = 0, 0
		// a, or 0 if |a| <= tol, without a branch on the data: in a
		// problem with 0/1 rewards many search advantages are exactly 0.
		keep := uint64(0)
		if math.Abs(a) > tol {
			keep = 1<<64 - 1
		}
		search[y] = F(math.Float64frombits(math.Float64bits(a) & keep))
	}
}

// setMean returns the mean of the scored rewards of rs (those not marked
// in unscorable, which is nil or as long as rs) as the pair h + l of
// meanPair, or their first value and 0 if they are all equal; their
// number n; and a bound on the error of h + l: u sum_k |e_k| + 4 u^2 |h|,
// e_k the errors of the additions, whose float64 sum c misses by at most
// (n-2) u sum_k |e_k|, and 4 u^2 |h| covering the rounding of l. All are 0
// when n = 0. exact vouches that every addition is exact (scanRewards), so
// that the e_k need not be computed; it is used only when unscorable is
// nil.
func setMean[F constraints.Float](rs []F, unscorable []bool, exact bool) (h, l float64, n int, bound float64) {
	var s, c, ea, x0 float64 // the sum s + c, sum |e_k|, the first value
	var diff uint64          // the bits of every x - x0, ORed
	if unscorable == nil {
		if len(rs) == 0 {
			return 0, 0, 0, 0
		}
		x0 = float64(rs[0])
		if exact {
			// Every addition is exact: each e_k would be +0, so c and
			// ea stay +0.
			for _, x := range rs {
				x := float64(x)
				s += x
				diff |= math.Float64bits(x - x0)
			}
		} else {
			for _, x := range rs {
				x := float64(x)
				var e float64
				s, e = twoSum(s, x)
				c += e
				ea += math.Abs(e)
				diff |= math.Float64bits(x - x0)
			}
		}
		n = len(rs)
	} else {
		unscorable = unscorable[:len(rs)]
		first := true
		for j, x := range rs {
			if unscorable[j] {
				continue
			}
			x := float64(x)
			if first {
				x0, first = x, false
			}
			var e float64
			s, e = twoSum(s, x)
			c += e
			ea += math.Abs(e)
			diff |= math.Float64bits(x - x0)
			n++
		}
		if n == 0 {
			return 0, 0, 0, 0
		}
	}
	// For finite values, x - x0 is ±0 exactly when x == x0 (gradual
	// underflow makes the difference of two distinct floats nonzero).
	if diff&^(1<<63) == 0 {
		return x0, 0, n, 0
	}
	h, l = meanPair(s, c, n)
	return h, l, n, meanBound(ea, h)
}

// meanBound returns setMean's bound on the error of a mean h + l whose
// additions erred by ea = sum_k |e_k| in all.
func meanBound(ea, h float64) float64 {
	const u = 0x1p-53
	return float64(u*ea) + float64(4*u*u*math.Abs(h))
}

// searchTol returns the magnitude at or below which a computed search
// advantage is rounding error, for a problem of K scored sets whose e_i
// have magnitude at most F and set means err by at most E (setMean's
// bound):
//
//	tol = 4 (K + 2) (u F + eta) + 4 E,  u = 2^-53, eta = 2^-1074.
//
// Each computed e_i is within 2 u F + E of exact (plus a few eta when the
// values are subnormal, where every operation may err by eta/2
// absolutely); a trace's mean of at most K of them, ebar (a mean of K) and
// the final subtraction add at most (2K + 3) u F and a few eta more. So a
// computed value within tol of 0 has no significant bit and is written as
// exactly 0: otherwise a problem whose exact search advantages are all 0
// (set scores (2/3, 1/3, 7/12, 1/4) with a trace in the first and the last
// set only) gets advantages like 7e-18, which a dynamic-sampling trainer
// would take for a signal. E is 0 when every addition of every set mean
// was exact, as with 0/1 rewards. Each product is rounded explicitly, so
// no multiply-add is fused.
func searchTol(K int, F, E float64) float64 {
	const u, eta = 0x1p-53, 0x1p-1074
	return float64(float64(4*float64(K+2))*(float64(u*F)+eta)) + float64(4*E)
}

// rewardsValid reports whether every x is finite with |x| <= MaxAbsReward,
// skipping the entries marked in unscorable (nil: none); see scanRewards.
func rewardsValid[F constraints.Float](xs []F, unscorable []bool) bool {
	valid, _ := scanRewards(xs, unscorable)
	return valid
}

// scanRewards reports whether every x is finite with |x| <= MaxAbsReward,
// skipping the entries marked in unscorable (nil: none), and, if so,
// whether every plain float64 sum of at most len(xs) of them is exact:
// when each is an integer multiple i 2^-16 with |i| <= 2^53/len(xs), every
// partial sum is such a multiple with |i| <= 2^53, a float64, and setMean
// needs no error terms (twoSum's would all be 0). It compares bit patterns
// without the sign, which order non-negative floats as their values and
// put infinities and NaNs above every finite value, four at a time and
// with no branch on the data; frac collects the bits of each x less x
// rounded to a multiple of 2^-16 (see offGrid).
func scanRewards[F constraints.Float](xs []F, unscorable []bool) (valid, exactSums bool) {
	const abs = 1<<63 - 1
	n := len(xs)
	var m0, m1, m2, m3, frac uint64
	if unscorable == nil {
		for ; len(xs) >= 4; xs = xs[4:] {
			x0, x1, x2, x3 := float64(xs[0]), float64(xs[1]), float64(xs[2]), float64(xs[3])
			m0 = max(m0, math.Float64bits(x0)&abs)
			m1 = max(m1, math.Float64bits(x1)&abs)
			m2 = max(m2, math.Float64bits(x2)&abs)
			m3 = max(m3, math.Float64bits(x3)&abs)
			frac |= offGrid(x0) | offGrid(x1) | offGrid(x2) | offGrid(x3)
		}
		for _, x := range xs {
			m0 = max(m0, math.Float64bits(float64(x))&abs)
			frac |= offGrid(float64(x))
		}
	} else {
		unscorable = unscorable[:len(xs)]
		for j, x := range xs {
			keep := uint64(abs)
			if unscorable[j] {
				keep = 0
			}
			x := math.Float64frombits(math.Float64bits(float64(x)) & keep)
			m0 = max(m0, math.Float64bits(x))
			frac |= offGrid(x)
		}
	}
	most := max(m0, m1, m2, m3)
	if most > math.Float64bits(MaxAbsReward) {
		return false, false
	}
	maxAbs := math.Float64frombits(most)
	exactSums = frac&abs == 0 && maxAbs <= 0x1p34 && maxAbs*0x1p16 <= float64(int64(1<<53)/int64(max(n, 1)))
	return true, exactSums
}

// offGrid returns the bits of x less x rounded to a multiple of 2^-16,
// which are ±0 exactly when x is such a multiple, for |x| <= 2^34:
// x + 1.5 2^36 lies in [2^36, 2^37), where the float64 spacing is 2^-16,
// and subtracting 1.5 2^36 again is exact. (For larger |x| the result is
// meaningless, and scanRewards does not use it.)
func offGrid(x float64) uint64 {
	const shift = 0x1.8p36
	return math.Float64bits(x - ((x + shift) - shift))
}
