// Package credit is the one implementation of SPIRAL's credit formulas
// (SPIRAL.md section 2), shared by spiral/advantage and the root package
// spiral. It trusts its input: each caller validates its own input first,
// with errors in its own terms, and then calls [Compute]. Being internal,
// it cannot be reached by a trainer, who goes through one of those two
// packages and so through their validation.
//
// For one problem with sets G_1..G_K and rewards r_ij of set i:
//
//	f_i          = (1/N2_i) sum_j r_ij             SetScores
//	fbar         = (1/K) sum_i f_i
//	A_set(G_i)   = f_i - fbar                      SetAdvantages
//	A_search(y)  = (1/|G(y)|) sum_{G_i ∋ y} A_set(G_i), 0 if G(y) is empty
//	                                               Search
//	|G(y)|                                         Appearances
//	A_agg(i, j)  = r_ij - f_i                      Aggregation
//
// # Numerics
//
// Rewards are converted to float64, every sum is taken in float64, in
// input order, and results are rounded to F only when stored. Every
// quantity is computed on deviations d = r - pivot from the problem's mean
// reward pivot (two passes): f'_i = mean_j d_ij, so f_i = pivot + f'_i,
// A_set = f'_i - fbar', A_agg = d_ij - f'_i, and A_search(y) =
// mean_{i: y in G_i} f'_i - fbar', the definition's mean of A_set
// rearranged. A mean whose values are all equal (compared with ==) is that
// value exactly, not sum/n, which can differ from it in the last bit; so
// the advantages of a set whose rewards are all equal are exactly 0, and
// when all set scores are equal every set and search advantage is exactly
// 0. A trace in every set gets exactly 0, because its sum of f' is
// accumulated in the same order as fbar's.
//
// These results are part of the library's contract: advantage's tests
// compare its batch and one-problem forms bit for bit, and the cmd/spiral
// conformance vectors hold them; a change in the order of any sum here
// changes the last bits of the outputs.
package credit

import (
	"math"

	"golang.org/x/exp/constraints"
)

// MaxAbsReward is advantage.MaxAbsReward, the largest reward magnitude the
// formulas accept: with |r| <= 1e30 no mean, deviation or advantage can
// overflow, in float64 or when stored as float32.
const MaxAbsReward = 1e30

// RewardsValid reports whether every x is finite with |x| <= MaxAbsReward,
// the condition on rewards of [Compute]. It compares bit patterns without
// the sign, which order non-negative floats as their values and put
// infinities and NaNs above every finite value, four at a time and with no
// branch on the data. (Each caller then looks for the first bad reward
// itself, to name it in its own terms.)
func RewardsValid[F constraints.Float](xs []F) bool {
	const abs = 1<<63 - 1
	var m0, m1, m2, m3 uint64
	for ; len(xs) >= 4; xs = xs[4:] {
		m0 = max(m0, math.Float64bits(float64(xs[0]))&abs)
		m1 = max(m1, math.Float64bits(float64(xs[1]))&abs)
		m2 = max(m2, math.Float64bits(float64(xs[2]))&abs)
		m3 = max(m3, math.Float64bits(float64(xs[3]))&abs)
	}
	for _, x := range xs {
		m0 = max(m0, math.Float64bits(float64(x))&abs)
	}
	return max(m0, m1, m2, m3) <= math.Float64bits(MaxAbsReward)
}

// Layout is the flat layout of a batch of problems, field for field the
// same as advantage.Batch (which converts to it): problem after problem
// and, inside a problem, set after set. Sets are numbered across the whole
// batch, and so are rewards; trace indices in Members are local to their
// problem.
type Layout[F constraints.Float] struct {
	Traces       []int // N1 of each problem
	Sets         []int // K of each problem
	SetSizes     []int // n of each set
	Members      []int // the trace indices of every set
	RewardCounts []int // N2 of each set
	Rewards      []F   // the rewards of every set
}

// Result receives the credit of a Layout, field for field the same as
// advantage.BatchCredit.
type Result[F constraints.Float] struct {
	SetScores     []F   // f of each set
	SetAdvantages []F   // A_set of each set
	Search        []F   // A_search of each trace, traces numbered across the batch
	Appearances   []int // |G(y)| of each trace
	Aggregation   []F   // A_agg of each reward
}

// Compute writes the credit of every problem of in to dst. It trusts in
// and dst: in must satisfy every condition advantage.ComputeBatch checks
// (consistent lengths, every problem with at least 1 trace and 1 set, every
// set non-empty with at least 1 reward, members in range and not repeated
// inside a set, no two identical sets, every reward finite with |r| <=
// MaxAbsReward), and dst's slices must have the lengths
// advantage.NewBatchCredit gives them. Input that breaks these conditions
// gives meaningless results or a panic, never memory corruption. Compute
// allocates nothing.
func Compute[F constraints.Float](dst Result[F], in Layout[F]) {
	var sc scratch
	t, s, m, r := 0, 0, 0, 0 // offsets of the current trace, set, member and reward
	for p, nt := range in.Traces {
		k := in.Sets[p]
		sizes, counts := in.SetSizes[s:s+k], in.RewardCounts[s:s+k]
		nm, nr := sum(sizes), sum(counts)
		rewards := in.Rewards[r : r+nr]
		pivot := meanOf(rewards)
		fbar, mixed, tol := setPass(&sc, pivot, counts, rewards, dst.SetScores[s:s+k], dst.Aggregation[r:r+nr])
		setAdvantages(&sc, pivot, fbar, counts, rewards, dst.SetAdvantages[s:s+k])
		if nt <= TraceChunk && k <= SetCache {
			searchSmall(&sc, sizes, in.Members[m:m+nm], fbar, mixed, tol, dst.Search[t:t+nt], dst.Appearances[t:t+nt])
		} else {
			searchChunked(&sc, sizes, counts, in.Members[m:m+nm], rewards, pivot, fbar, mixed, tol, dst.Search[t:t+nt], dst.Appearances[t:t+nt])
		}
		t, s, m, r = t+nt, s+k, m+nm, r+nr
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TraceChunk is the number of traces whose search credit is accumulated in
// one pass over a problem's sets, and SetCache the number of sets whose f'
// is kept between passes; larger problems take more passes or recompute
// f'. Both buffers live on the stack. (Exported for the tests of the
// packages that use this one, which exercise problems larger than these.)
const (
	TraceChunk = 64
	SetCache   = 64
)

// scratch is the stack memory of Compute.
type scratch struct {
	dev   [SetCache]float64   // f'_i of the first SetCache sets
	sum   [TraceChunk]float64 // sum of f' over the sets holding each trace of a chunk
	count [TraceChunk]int     // number of sets holding each trace of a chunk
}

// setAdvantages writes A_set = f'_i - fbar' of every set.
func setAdvantages[F constraints.Float](sc *scratch, pivot, fbar float64, counts []int, rewards []F, setAdv []F) {
	setAdv = setAdv[:len(counts)]
	if len(counts) <= SetCache {
		for i, f := range sc.dev[:len(setAdv)] {
			setAdv[i] = F(f - fbar)
		}
		return
	}
	o := 0
	for i, c := range counts {
		setAdv[i] = F(devAt(sc, i, rewards, o, o+c, pivot) - fbar)
		o += c
	}
}

// setPass computes f'_i of every set, keeps the first SetCache in sc.dev,
// writes the set scores f_i = pivot + f'_i and the aggregation advantages
// (which do not need fbar), and returns fbar', the mean of the f'_i (equal
// ones giving exactly the first), whether they are not all equal, and the
// rounding tolerance of the problem's search advantages (see searchTol).
func setPass[F constraints.Float](sc *scratch, pivot float64, counts []int, rewards []F, setScores, agg []F) (fbar float64, mixed bool, tol float64) {
	setScores = setScores[:len(counts)]
	agg = agg[:len(rewards)]
	fsum, f0 := 0.0, 0.0
	fmax, cmax := 0.0, 0 // the largest |f'_i| and the largest N2
	o := 0
	for i, c := range counts {
		end := o + c
		if o < 0 || o >= end || end > len(rewards) {
			panic("credit: reward counts do not fit the rewards")
		}
		f := meanDev(rewards, o, end, pivot)
		if i < SetCache {
			sc.dev[i] = f
		}
		if i == 0 {
			f0 = f
		}
		if f != f0 {
			mixed = true
		}
		fsum += f
		setScores[i] = F(pivot + f)
		for j := o; j < end; j++ {
			agg[j] = F((float64(rewards[j]) - pivot) - f)
		}
		fmax = max(fmax, math.Abs(f))
		cmax = max(cmax, c)
		o = end
	}
	if mixed {
		return fsum / float64(len(counts)), true, searchTol(len(counts), cmax, fmax)
	}
	return f0, false, 0
}

// searchTol returns the magnitude below which a computed search advantage
// is rounding error, for a problem of K sets of at most N2 rewards whose
// set scores deviate from the pivot by at most F = max_i |f'_i|:
//
//	tol = 4 (K + N2 + 2) u F,  u = 2^-53.
//
// Given the f'_i, fbar' (a mean of K of them) is within K u F of exact, and
// a trace's sum of at most K set scores, its division and the final
// subtraction add at most (K + 2) u F; each f'_i is itself a mean of at most
// N2 deviations, within about N2 u F of exact when the rewards deviate from
// the pivot by no more than their set scores do, as rewards in [0, 1] do.
// So a computed sums/|G(y)| - fbar' within tol of 0 has no significant
// bit, and is written as exactly 0: otherwise a problem whose exact search
// advantages are all 0 (for example set scores (2/3, 1/3, 7/12, 1/4) with a
// trace in the first and the last set only) gets advantages like 7e-18,
// which a trainer would take for a signal. Only values at most
// 4 (K + N2 + 2) u ~ 4e-15 (paper configuration) times the largest set
// score deviation are affected.
func searchTol(K, N2 int, F float64) float64 {
	return 4 * float64(K+N2+2) * 0x1p-53 * F
}

// devAt returns f'_i of set i, whose rewards are rewards[lo:hi].
func devAt[F constraints.Float](sc *scratch, i int, rewards []F, lo, hi int, pivot float64) float64 {
	if i < SetCache {
		return sc.dev[i]
	}
	return meanDev(rewards, lo, hi, pivot)
}

// searchSmall writes the search credit and appearances of a problem of at
// most TraceChunk traces and SetCache sets, whose f'_i are all in sc.dev:
// the sum of f' over the sets holding each trace, set after set, then
// A_search = sum/|G(y)| - fbar'.
func searchSmall[F constraints.Float](sc *scratch, sizes, members []int, fbar float64, mixed bool, tol float64, search []F, appearances []int) {
	sums, cnt := sc.sum[:len(search)], sc.count[:len(search)]
	clear(sums)
	clear(cnt)
	m := 0
	for i, size := range sizes {
		f := sc.dev[i&(SetCache-1)]
		end := m + size
		if m < 0 || m >= end || end > len(members) {
			panic("credit: set sizes do not fit the members")
		}
		for j := m; j < end; j++ {
			// y < len(search) <= TraceChunk for a valid problem.
			y := members[j] & (TraceChunk - 1)
			sc.sum[y] += f
			sc.count[y]++
		}
		m = end
	}
	finishSearch(sums, cnt, fbar, mixed, tol, search, appearances)
}

// searchChunked writes the search credit and appearances of a problem of
// any size, TraceChunk traces at a time: for each chunk, one pass over the
// sets, recomputing f'_i for sets beyond the first SetCache.
func searchChunked[F constraints.Float](sc *scratch, sizes, counts, members []int, rewards []F, pivot, fbar float64, mixed bool, tol float64, search []F, appearances []int) {
	traces := len(search)
	for lo := 0; lo < traces; lo += TraceChunk {
		w := min(traces-lo, TraceChunk)
		sums, cnt := sc.sum[:w], sc.count[:w]
		clear(sums)
		clear(cnt)
		o, m := 0, 0
		for i, size := range sizes {
			f := devAt(sc, i, rewards, o, o+counts[i], pivot)
			for _, y := range members[m : m+size] {
				if d := uint(y - lo); d < uint(w) {
					sums[d] += f
					cnt[d]++
				}
			}
			o, m = o+counts[i], m+size
		}
		finishSearch(sums, cnt, fbar, mixed, tol, search[lo:lo+w], appearances[lo:lo+w])
	}
}

// finishSearch writes the appearances cnt and the search advantages
// sums/cnt - fbar' of a run of traces: 0 for a trace in no set, 0 for
// every trace when the set scores are all equal (every A_set is 0), and 0
// for a value within the rounding tolerance tol of 0 (see searchTol).
func finishSearch[F constraints.Float](sums []float64, cnt []int, fbar float64, mixed bool, tol float64, search []F, appearances []int) {
	search, appearances = search[:len(cnt)], appearances[:len(cnt)]
	for d, n := range cnt {
		appearances[d] = n
		a := 0.0
		if n != 0 && mixed {
			a = sums[d]/float64(n) - fbar
			if math.Abs(a) <= tol {
				a = 0
			}
		}
		search[d] = F(a)
	}
}

// meanOf returns the mean of xs, which must not be empty: the sum in order
// divided by len(xs), or xs[0] exactly if every value equals it.
func meanOf[F constraints.Float](xs []F) float64 {
	x0 := float64(xs[0])
	s := 0.0
	var diff uint64 // nonzero, but for the sign bit, if some x != x0
	for _, x := range xs {
		s += float64(x)
		diff |= math.Float64bits(float64(x) - x0)
	}
	if !equal(diff) {
		return s / float64(len(xs))
	}
	return x0
}

// meanDev returns the mean of the deviations x - pivot over xs[lo:hi],
// which must not be empty: their sum in order divided by hi-lo, or the
// first deviation exactly if every deviation equals it. (It takes xs whole
// and the bounds, rather than xs[lo:hi], because cutting a slice for every
// set is a measurable cost.)
func meanDev[F constraints.Float](xs []F, lo, hi int, pivot float64) float64 {
	d0 := float64(xs[lo]) - pivot
	s := 0.0
	var diff uint64 // nonzero, but for the sign bit, if some deviation != d0
	for j := lo; j < hi; j++ {
		d := float64(xs[j]) - pivot
		s += d
		diff |= math.Float64bits(d - d0)
	}
	if !equal(diff) {
		return s / float64(hi-lo)
	}
	return d0
}

// equal reports whether the values whose differences from one of them were
// ORed into diff (as bits) are all equal. For finite floats, a - b is ±0
// exactly when a == b (gradual underflow makes the difference of two
// distinct floats nonzero; the inputs are at most 2e30 in magnitude, so it
// does not overflow), so the values are equal exactly when diff has no bit
// set but the sign; -0 and +0 count as equal, as with ==.
func equal(diff uint64) bool { return diff&^(1<<63) == 0 }
