// Package credit is SPIRAL's credit kernel: the one implementation of the
// formulas of package advantage's documentation, for the problems of a
// batch laid out flat. It trusts its input and checks nothing: package
// advantage checks a caller's batch before calling it, and the root
// package spiral calls it on plans and rewards it has checked itself. Being
// internal, no caller outside the module can vouch for its own input.
package credit

import (
	"math"
	"slices"

	"golang.org/x/exp/constraints"

	"spiral/internal/numeric"
)

// Numerics. Every reward is converted to float64 and results are rounded
// to F only when stored, so float32 rewards give the float64 results
// rounded. Per problem:
//
//   - Each set is reduced on its own, by setScores: its scored rewards are
//     summed with the exact error of every addition (numeric.TwoSum), and
//     the mean kept as a pair h + l (numeric.MeanPair). So f = h + l and
//     A_agg = (r - h) - l are accurate to a few units in the last place of
//     the set's own values, whatever other sets hold, and exactly 0 for a
//     set whose rewards are equal. When the batch's rewards are multiples
//     of 2^-16 small enough that every plain sum is exact (Scan, as with
//     0/1 rewards), every error is 0 and the set sums add plainly
//     (setScoresExact, when no output is marked).
//   - Across sets the kernel works on e_i = f_i - P, the deviation of f_i
//     from a pivot P near fbar (the plain mean of the h_i), computed from
//     the set's exact sum, not from its rounded mean: n_i e_i = S_i - n_i P
//     with n_i P split exactly (numeric.TwoProd), and e_i kept as a pair.
//     A large value common to every set (a penalty of -1e30 in each) then
//     cancels exactly, and A_set = e_i - ebar is within a few units in the
//     last place of its own exact value, not of the common value. When
//     every e_i is equal every set and search advantage is exactly 0.
//   - A_search(y) is the mean of A_set over the sets holding y; a value
//     within its rounding error of 0 is written as exactly 0 (searchTol).
//
// The only products that feed a sum are numeric's math.FMA (exactly
// rounded on every architecture) and those of searchTol, which are rounded
// explicitly, so the compiler has no multiply-add to fuse and the results
// are the same on every architecture.

// Input is a batch as the kernel reads it: the layout of package
// advantage's Batch (sets numbered across the batch, trace indices local
// to their problem), located problem by problem by a Span.
type Input[F constraints.Float] struct {
	SetSizes, RewardCounts []int
	Members                []int
	Rewards                []F
	Unscorable             []bool // nil, or parallel to Rewards
	// ExactSums says that every plain float64 sum of at most len(Rewards)
	// scored rewards is exact (Scan): the set sums then skip their error
	// terms, which would all be 0, and the credit has the same bits.
	ExactSums bool
}

// Span locates one problem in an Input and its Output (the fields of
// advantage.Span, which converts to it).
type Span struct {
	Trace, Traces   int
	Set, Sets       int
	Member, Members int
	Reward, Rewards int
}

// Output receives the credit, in the layout of the Input: the fields of
// advantage.BatchCredit without Rejected, and the kernel's scratch.
type Output[F constraints.Float] struct {
	SetScores, SetAdvantages []F
	Search                   []F
	Appearances              []int
	Aggregation              []F
	ScoredOutputs            []int
	ScoredSets               []int

	sc scratch
}

// Resize sets the length of every slice of o for p problems with traces
// traces, sets sets and rewards rewards in all, and at most maxTraces
// traces and maxSets sets in one problem, reusing its arrays when they are
// large enough.
func (o *Output[F]) Resize(p, traces, sets, rewards, maxTraces, maxSets int) {
	o.SetScores = resize(o.SetScores, sets)
	o.SetAdvantages = resize(o.SetAdvantages, sets)
	o.ScoredOutputs = resize(o.ScoredOutputs, sets)
	o.Search = resize(o.Search, traces)
	o.Appearances = resize(o.Appearances, traces)
	o.Aggregation = resize(o.Aggregation, rewards)
	o.ScoredSets = resize(o.ScoredSets, p)
	o.sc.sums = resize(o.sc.sums, maxTraces)
	o.sc.count = resize(o.sc.count, maxTraces)
	clear(o.sc.sums) // Problem keeps them zero between problems
	clear(o.sc.count)
	o.sc.sets = resize(o.sc.sets, maxSets)
}

// resize returns s with length n, its contents kept where its array is
// large enough.
func resize[T any](s []T, n int) []T { return slices.Grow(s[:0], n)[:n] }

// Clear writes zero credit for problem q at sp.
func (o *Output[F]) Clear(q int, sp Span) {
	clear(o.SetScores[sp.Set : sp.Set+sp.Sets])
	clear(o.SetAdvantages[sp.Set : sp.Set+sp.Sets])
	clear(o.ScoredOutputs[sp.Set : sp.Set+sp.Sets])
	clear(o.Search[sp.Trace : sp.Trace+sp.Traces])
	clear(o.Appearances[sp.Trace : sp.Trace+sp.Traces])
	clear(o.Aggregation[sp.Reward : sp.Reward+sp.Rewards])
	o.ScoredSets[q] = 0
}

// scratch is the memory the kernel reuses from problem to problem, kept in
// a BatchCredit: the search sums and set counts of one problem's traces,
// and the statistics of its sets.
type scratch struct {
	sums  []float64
	count []int
	sets  []setStats
	means []setMean // Uniform's, a set of the batch
}

// setStats is what the kernel keeps of one set of a problem.
type setStats struct {
	sum  numeric.Sum // the exact sum of the values the mean divides, S + C
	div  int         // what it divides: the scored outputs, or 1 for a set whose rewards are equal (sum is then their value)
	n    int         // N2_i: the scored outputs
	h, l float64     // the mean as h + l; setAdvantages makes them e = f - P, then A_set in h
	err  float64     // a bound on the error of the mean: u sum_k |e_k| / n over its additions' errors e_k
}

// Problem computes the credit of problem q of in at sp into dst, resized
// for in (Resize). The problem must be sound: at least one trace and one
// set, every set nonempty with members in [0, sp.Traces) and at least one
// output, every scored reward finite with magnitude at most 2e30. On other
// input it gives meaningless credit or panics (an index out of range).
//
// It reports whether every search and aggregation advantage it computed
// is 0 (before rounding to F): every set's scored rewards are equal, which
// makes each A_agg exactly 0, and every A_search is 0 or written as 0.
func Problem[F constraints.Float](dst *Output[F], in *Input[F], q int, sp Span) (zero bool) {
	k := sp.Sets
	st := dst.sc.sets[:k]
	if in.Unscorable == nil && in.ExactSums {
		r, s := sp.Reward, sp.Set
		setScoresExact(dst.Aggregation[r:r+sp.Rewards], in.Rewards[r:r+sp.Rewards], in.RewardCounts[s:s+k], st)
	} else {
		setScores(dst, in, sp, st)
	}
	s := sp.Set
	scoredSets, equal, advMax, errMax := setAdvantages(dst.ScoredOutputs[s:s+k], dst.SetScores[s:s+k], dst.SetAdvantages[s:s+k], st)
	dst.ScoredSets[q] = scoredSets

	// The sums and counts of the sets holding each trace, in scratch that
	// is all zero between problems (Resize clears it, and the last loop
	// clears what this one used).
	search, app := dst.Search[sp.Trace:sp.Trace+sp.Traces], dst.Appearances[sp.Trace:sp.Trace+sp.Traces]
	// len(search) each, so the last loop needs no bound checks.
	sums, cnt, app := dst.sc.sums[:len(search)], dst.sc.count[:len(search)], app[:len(search)]
	members := in.Members[sp.Member : sp.Member+sp.Members]
	for i, size := range in.SetSizes[sp.Set : sp.Set+k] {
		g := members[:size]
		members = members[size:]
		if st[i].n == 0 {
			continue
		}
		ai := st[i].h // A_set, which setAdvantages left there
		for _, y := range g {
			sums[y] += ai
			cnt[y]++
		}
	}
	tol := searchTol(scoredSets, advMax, errMax)
	var written uint64 // the bits of every search advantage written, ORed
	for y := range search {
		n := cnt[y]
		app[y] = n
		// A trace in no set has sum 0 and gets 0/1 = +0, without a branch.
		a := sums[y] / float64(max(n, 1))
		cnt[y], sums[y] = 0, 0
		// a, or 0 if |a| <= tol, without a branch on the data: in a
		// problem with 0/1 rewards many search advantages are exactly 0.
		keep := uint64(0)
		if math.Abs(a) > tol {
			keep = 1<<64 - 1
		}
		bits := math.Float64bits(a) & keep
		written |= bits
		search[y] = F(math.Float64frombits(bits))
	}
	return equal && written&^(1<<63) == 0
}

// setScores reduces each set of the problem at sp on its own into st: the
// number n of its scored rewards (those not marked in in.Unscorable), their
// mean as the pair h + l of numeric.MeanPair and their sum with the exact
// error of every addition; or, if they are all equal, their first value as
// the mean (h = x0, l = 0) and as a sum of one. It writes the aggregation
// advantages A_agg = (r - h) - l to dst, 0 for an unscorable output.
//
// The loop calls no function that is not inlined: a call spills and
// reloads every live value (Go keeps none in registers across it), which
// cost about 60 instructions a set (BenchmarkStepParts/credit,
// cachegrind).
func setScores[F constraints.Float](dst *Output[F], in *Input[F], sp Span, st []setStats) {
	exact := in.ExactSums
	counts := in.RewardCounts[sp.Set : sp.Set+sp.Sets]
	st = st[:len(counts)]
	rewards, agg := in.Rewards[sp.Reward:sp.Reward+sp.Rewards], dst.Aggregation[sp.Reward:sp.Reward+sp.Rewards]
	unscorable := sub(in.Unscorable, sp.Reward, sp.Reward+sp.Rewards)
	o := 0
	for i, c := range counts {
		rs, a := rewards[o:o+c], agg[o:o+c]
		var un []bool
		if unscorable != nil {
			un = unscorable[o : o+c]
		}
		o += c
		// The sums live in locals (addReward returns them), not in st[i],
		// which the compiler would store at every step; a set with no
		// unscorable marks skips the test for them.
		var sum numeric.Sum
		var x0, ea float64 // the first value, sum |e_k|
		var diff uint64    // the bits of every x - x0, ORed
		n := 0
		if un == nil {
			x0 = float64(rs[0]) // every set has an output
			for _, x := range rs {
				sum, ea, diff = addReward(sum, ea, diff, float64(x), x0, exact)
			}
			n = len(rs)
		} else {
			for j, x := range rs {
				if un[j] {
					continue
				}
				if n == 0 {
					x0 = float64(x)
				}
				sum, ea, diff = addReward(sum, ea, diff, float64(x), x0, exact)
				n++
			}
		}
		var h, l float64
		switch {
		case n == 0:
			st[i] = setStats{}
		case diff&^(1<<63) == 0:
			// For finite values, x - x0 is ±0 exactly when x == x0 (gradual
			// underflow makes the difference of two distinct floats nonzero).
			h = x0
			st[i] = setStats{sum: numeric.Sum{S: x0}, div: 1, n: n, h: x0}
		default:
			h, l = numeric.MeanPair(sum, n)
			st[i] = setStats{sum: sum, div: n, n: n, h: h, l: l, err: float64(0x1p-53*ea) / float64(n)}
		}
		for j, x := range rs {
			a[j] = F((float64(x) - h) - l)
		}
		for j, u := range un {
			if u {
				a[j] = 0
			}
		}
	}
}

// setScoresExact is setScores for a problem without unscorable marks
// whose sums are exact (Input.ExactSums), as with 0/1 rewards: every
// reward is scored and every addition's error is 0, so the set's sum is
// the plain one and its error bound 0. It gives setScores' bits
// (TestSetScoresExactSameBits) with about 200 instructions a problem of
// the paper's shape fewer (BenchmarkStepParts/problems=256/credit,
// cachegrind): the loop keeps fewer values live, so fewer are spilled.
func setScoresExact[F constraints.Float](agg, rewards []F, counts []int, st []setStats) {
	st = st[:len(counts)]
	o := 0
	for i, c := range counts {
		rs, a := rewards[o:o+c], agg[o:o+c]
		o += c
		x0 := float64(rs[0]) // every set has an output
		var S float64
		var diff uint64 // the bits of every x - x0, ORed
		for _, x := range rs {
			S += float64(x)
			diff |= math.Float64bits(float64(x) - x0)
		}
		s := &st[i]
		h, l := x0, 0.0
		if diff&^(1<<63) == 0 { // every reward equals x0, as in setScores
			s.sum, s.div, s.n, s.h, s.l, s.err = numeric.Sum{S: x0}, 1, c, x0, 0, 0
		} else {
			h, l = numeric.MeanPair(numeric.Sum{S: S}, c)
			s.sum, s.div, s.n, s.h, s.l, s.err = numeric.Sum{S: S}, c, c, h, l, 0
		}
		for j, x := range rs {
			a[j] = F((float64(x) - h) - l)
		}
	}
}

// setAdvantages writes each set's scored outputs and score f = h + l
// from st, and computes A_set = e_i - ebar of each scored set, with e_i =
// f_i - P as pairs (deviation) from the pivot P near fbar (the plain mean
// of the h_i); it writes A_set to setAdv (0 for a set left out) and leaves
// it in st[i].h. It returns the number of scored sets, whether every
// scored set's rewards are equal, the largest |A_set| and the largest
// error bound of a set's mean.
func setAdvantages[F constraints.Float](scored []int, scores, setAdv []F, st []setStats) (scoredSets int, equal bool, advMax, errMax float64) {
	scored, scores, setAdv = scored[:len(st)], scores[:len(st)], setAdv[:len(st)]
	var hsum float64
	equal = true
	for i := range st {
		s := &st[i]
		scored[i] = s.n
		scores[i] = F(s.h + s.l) // 0 for a set left out
		if s.n != 0 {
			hsum += s.h
			scoredSets++
			equal = equal && s.div == 1
		}
	}
	P := 0.0 // the pivot: near fbar
	if scoredSets > 0 {
		P = hsum / float64(scoredSets)
	}
	var ebar numeric.Sum
	var e0 float64
	mixed, seen := false, false
	for i := range st {
		s := &st[i]
		if s.n == 0 {
			continue
		}
		// When the mean is h exactly (l = 0, as with 0/1 rewards, and for
		// a set whose rewards are equal) and h - P is exact too, that is e,
		// the value deviation gives; the test is inline, as a call spills
		// every live value (BenchmarkStepParts/problems=256/credit: about
		// 100 instructions a problem of the paper's shape with 0/1 rewards).
		if d, de := numeric.TwoSum(s.h, -P); s.l == 0 && de == 0 {
			s.h = d
		} else {
			s.h, s.l = deviation(s.sum, s.div, P)
		}
		if !seen {
			e0, seen = s.h+s.l, true
		} else if s.h+s.l != e0 {
			mixed = true
		}
		ebar.Add(s.h)
		ebar.C += s.l
		if s.err > errMax { // s.err >= +0 is never NaN: this is max(errMax, s.err)
			errMax = s.err
		}
	}
	var b1, b2 float64 // ebar as a pair
	if mixed {
		b1, b2 = numeric.MeanPair(ebar, scoredSets)
	}
	for i := range st {
		s := &st[i]
		a := 0.0
		if s.n != 0 && mixed {
			t, te := numeric.TwoSum(s.h, -b1)
			a = t + ((te + s.l) - b2)
		}
		s.h = a
		setAdv[i] = F(a)
		if math.Abs(a) > advMax { // a is finite: this is max(advMax, |a|)
			advMax = math.Abs(a)
		}
	}
	return scoredSets, equal, advMax, errMax
}

// deviation returns e = f - P, the set's mean less the pivot P, as a pair
// e1 + e2, from the exact sum S + C of the set: div e = (S - div P) + C,
// with div P = p + pe and S - p - pe taken exactly (numeric.TwoProd,
// numeric.TwoSum), so that whatever S and P have in common cancels exactly
// and only the small terms are rounded. setAdvantages takes a shorter way
// first, where it gives the same e.
func deviation(sum numeric.Sum, div int, P float64) (e1, e2 float64) {
	p, pe := numeric.TwoProd(float64(div), P)
	d, de := numeric.TwoSum(sum.S, -p) // S - p = d + de
	t, te := numeric.TwoSum(d, -pe)    // S - div P = t + te + de
	return numeric.MeanPair(numeric.Sum{S: t, C: (te + de) + sum.C}, div)
}

// addReward is one step of setScores: it adds x to the sum (with the exact
// error of the addition, and its magnitude to ea, unless exact vouches
// that it is 0) and ORs the bits of x - x0 into diff.
func addReward(sum numeric.Sum, ea float64, diff uint64, x, x0 float64, exact bool) (numeric.Sum, float64, uint64) {
	if exact {
		sum.S += x
	} else {
		var e float64
		sum.S, e = numeric.TwoSum(sum.S, x)
		sum.C += e
		ea += math.Abs(e)
	}
	return sum, ea, diff | math.Float64bits(x-x0)
}

// searchTol returns the magnitude at or below which a computed search
// advantage is rounding error, for a problem of K scored sets whose set
// advantages have magnitude at most F and whose set means err by at most
// E (the error bound of a set's sum over its divisor):
//
//	tol = 4 (K + 2) (u F + eta) + 4 E,  u = 2^-53, eta = 2^-1074.
//
// Each computed A_set is within a few u F of exact, plus E (and a few eta
// when the values are subnormal, where every operation may err by eta/2
// absolutely); a trace's mean of at most K of them adds at most (K + 1) u F
// and a few eta more. So a computed value within tol of 0 has no
// significant bit and is written as exactly 0: otherwise a problem whose
// exact search advantages are all 0 (set scores (2/3, 1/3, 7/12, 1/4) with
// a trace in the first and the last set only) gets advantages like 7e-18,
// which a dynamic-sampling trainer would take for a signal. E is 0 when
// every addition of every set mean was exact, as with 0/1 rewards. Each
// product is rounded explicitly, so no multiply-add is fused.
func searchTol(K int, F, E float64) float64 {
	const u, eta = 0x1p-53, 0x1p-1074
	return float64(float64(4*float64(K+2))*(float64(u*F)+eta)) + float64(4*E)
}

// sub returns s[lo:hi], or nil when s is nil.
func sub[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// MaxAbsReward is advantage.MaxAbsReward, the largest reward magnitude a
// checked batch holds.
const MaxAbsReward = 1e30

// Scan reports whether every x is finite with |x| <= MaxAbsReward,
// skipping the entries marked in unscorable (nil: none), and, when exact
// is true and they are, whether every plain float64 sum of at most len(xs)
// of them is exact (Input.ExactSums): when each is an integer multiple
// i 2^-16 with |i| <= 2^53/len(xs), every partial sum is such a multiple
// with |i| <= 2^53, a float64, and the set sums need no error terms
// (numeric.TwoSum's would all be 0). It compares bit patterns without the
// sign, which order non-negative floats as their values and put
// infinities and NaNs above every finite value, with no branch on the
// data in its loops; frac collects the bits of each x less x rounded to a multiple of
// 2^-16 (see offGrid), which a caller that only checks (exact false)
// saves.
func Scan[F constraints.Float](xs []F, unscorable []bool, exact bool) (valid, exactSums bool) {
	const abs = 1<<63 - 1
	n := len(xs)
	var most, frac uint64
	switch {
	case unscorable == nil && exact: // the root's case: no test for marks or for exact
		// First a bound on most: the OR of the bit patterns is at least
		// each of them, so when the bound passes both of scanned's tests,
		// so does the largest |x|, and when frac is off the grid the bound
		// does not change the results; only otherwise (rewards of magnitude
		// 2 or more, whose exponents OR past the largest, or a bad reward)
		// is most found exactly, in a second pass. The OR is two
		// instructions a reward against the largest's four: Scan takes
		// about 156 instructions a problem of the paper's shape at 256
		// problems instead of 232 (BenchmarkStep/problems=256/spiral,
		// cachegrind, per function).
		var bound uint64
		bound, frac = scanBound(xs)
		if valid, exactSums := scanned(bound&abs, frac, n, true); valid && (exactSums || frac&abs != 0) {
			return valid, exactSums
		}
		for _, x := range xs {
			most, _ = scanReward(most, 0, float64(x), false)
		}
	case unscorable == nil:
		for _, x := range xs {
			most, frac = scanReward(most, frac, float64(x), false)
		}
	default:
		for j, x := range xs {
			keep := uint64(1<<64 - 1)
			if unscorable[j] {
				keep = 0 // read as 0
			}
			most, frac = scanReward(most, frac, math.Float64frombits(math.Float64bits(float64(x))&keep), exact)
		}
	}
	return scanned(most, frac, n, exact)
}

// scanned turns Scan's most and frac over n rewards into its results.
func scanned(most, frac uint64, n int, exact bool) (valid, exactSums bool) {
	const abs = 1<<63 - 1
	if most > math.Float64bits(MaxAbsReward) {
		return false, false
	}
	maxAbs := math.Float64frombits(most)
	exactSums = exact && frac&abs == 0 && maxAbs <= 0x1p34 && maxAbs*0x1p16 <= float64(int64(1<<53)/int64(max(n, 1)))
	return true, exactSums
}

// scanBound returns the OR of the bit patterns of xs, whose sign is set
// and cleared as theirs (a bound on their largest pattern without the
// sign), and the OR of their offGrid bits: Scan's first pass in the root's
// case. Eight rewards at a time: the loop's own test and count, and the
// slicing, are then an eighth of one at a time (about 25 instructions a
// problem fewer by four at a time, and 8 more by eight).
func scanBound[F constraints.Float](xs []F) (bound, frac uint64) {
	i := 0
	for ; i <= len(xs)-8; i += 8 {
		q := (*[8]F)(xs[i:])
		x0, x1, x2, x3 := float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])
		bound |= math.Float64bits(x0) | math.Float64bits(x1) | math.Float64bits(x2) | math.Float64bits(x3)
		frac |= offGrid(x0) | offGrid(x1) | offGrid(x2) | offGrid(x3)
		x0, x1, x2, x3 = float64(q[4]), float64(q[5]), float64(q[6]), float64(q[7])
		bound |= math.Float64bits(x0) | math.Float64bits(x1) | math.Float64bits(x2) | math.Float64bits(x3)
		frac |= offGrid(x0) | offGrid(x1) | offGrid(x2) | offGrid(x3)
	}
	for _, x := range xs[i:] {
		bound |= math.Float64bits(float64(x))
		frac |= offGrid(float64(x))
	}
	return bound, frac
}

// scanReward is one step of Scan: most the largest bits of |x| so far
// and, when exact, frac with offGrid(x) ORed in. (offGrid takes x with its
// sign, and Scan reads frac without the sign.)
func scanReward(most, frac uint64, x float64, exact bool) (uint64, uint64) {
	most = max(most, math.Float64bits(x)&(1<<63-1))
	if exact {
		frac |= offGrid(x)
	}
	return most, frac
}

// offGrid returns the bits of x less x rounded to a multiple of 2^-16,
// which are ±0 exactly when x is such a multiple, for |x| <= 2^34:
// x + 1.5 2^36 lies in [1.25 2^36, 1.75 2^36], where the float64 spacing is 2^-16,
// and subtracting 1.5 2^36 again is exact. (For larger |x| the result is
// meaningless, and Scan does not use it.)
func offGrid(x float64) uint64 {
	const shift = 0x1.8p36
	return math.Float64bits(x - ((x + shift) - shift))
}
