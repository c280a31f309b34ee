package combin

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"spiral/internal/inputerr"
)

// rankError returns the *InputError about the rank argument.
func rankError(err error) *InputError {
	return inputerr.New("combin", "", InputError{Field: FieldRank, Problem: -1, Set: -1, Output: -1, Err: err})
}

// memberError returns the *InputError about member i of the set argument,
// the trace v.
func memberError(i, v int, err error) *InputError {
	return inputerr.Int("combin", "", InputError{Field: FieldSet, Problem: -1, Set: -1, Output: i, Err: err}, v)
}

// Rank returns the position of set g in the lexicographic order of f, in
// [0, T): the number of sets of f that come before g.
//
// For subsets, g must list n distinct traces of [0, N1) in ascending order;
// for tuples, n distinct traces of [0, N1) in any order. Rank returns an
// error naming the offending entry otherwise.
//
// When T < 2^64 Rank uses machine words only (see Rank64), in O(N1 + n)
// steps for subsets and O(n²) for tuples. Otherwise it works on numbers of
// T's size: at most N1 + n steps for subsets (a few thousand per entry when
// n <= 64) and n² + n for tuples, and it returns an error naming the bound,
// before any work, when these would exceed 2^27 word operations or T would
// exceed MaxExactBits bits.
func (f Family) Rank(g []int) (*big.Int, error) {
	if f.n != 0 && !f.fits {
		if err := f.checkBigRank("Rank"); err != nil {
			return nil, err
		}
	}
	if err := f.checkSet(g); err != nil {
		return nil, err
	}
	if f.fits {
		return new(big.Int).SetUint64(f.rank64(g)), nil
	}
	if f.ordered {
		return f.rankTupleBig(g), nil
	}
	return f.rankSubsetBig(g), nil
}

// Rank64 is Rank for ranks below 2^64. It returns an error if g is not a
// set of f, or if its rank is 2^64 or more (possible only when T does not
// fit a uint64; see Count64). It does not allocate when T < 2^64.
func (f Family) Rank64(g []int) (uint64, error) {
	if err := f.checkSet(g); err != nil {
		return 0, err
	}
	if f.fits {
		return f.rank64(g), nil
	}
	r, err := f.Rank(g)
	if err != nil {
		return 0, err
	}
	if !r.IsUint64() {
		return 0, inputerr.New("combin", "", InputError{Field: FieldSet, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf("rank %v in %v does not fit a uint64; use Rank", r, f)})
	}
	return r.Uint64(), nil
}

// Unrank returns the set at position r in the lexicographic order of f,
// the inverse of Rank. It returns an error unless 0 <= r < T.
//
// Its cost and its refusals of large families are those of Rank; when
// r < 2^64 it writes through UnrankTo.
func (f Family) Unrank(r *big.Int) ([]int, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, rankError(errors.New("nil *big.Int"))
	}
	if f.fits {
		if r.Sign() < 0 || !r.IsUint64() || r.Uint64() >= f.t64 {
			return nil, rankError(fmt.Errorf("%v out of range [0, T = %d) for %v", r, f.t64, f))
		}
	} else {
		if err := f.checkBigRank("Unrank"); err != nil {
			return nil, err
		}
		if T, _ := f.bigCounts(); r.Sign() < 0 || r.Cmp(T) >= 0 {
			return nil, rankError(fmt.Errorf("%v out of range [0, T = %v) for %v", r, T, f))
		}
	}
	g := make([]int, f.n)
	if r.IsUint64() {
		// UnrankTo cannot fail here: r < T.
		_ = f.UnrankTo(g, r.Uint64())
		return g, nil
	}
	if f.ordered {
		f.unrankTupleBig(g, r)
	} else {
		f.unrankSubsetBig(g, r)
	}
	return g, nil
}

// Unrank64 is Unrank for a uint64 rank. It returns an error unless r < T.
func (f Family) Unrank64(r uint64) ([]int, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.fits && r >= f.t64 {
		return nil, rankError(fmt.Errorf("%d out of range [0, T = %d) for %v", r, f.t64, f))
	}
	if !f.fits {
		if err := f.checkBigRank("Unrank64"); err != nil {
			return nil, err
		}
	}
	g := make([]int, f.n)
	if err := f.UnrankTo(g, r); err != nil {
		return nil, err
	}
	return g, nil
}

// UnrankTo writes the set at position r in the lexicographic order of f
// into dst and returns nil, or returns an error unless r < T. It does not
// allocate when T < 2^64 (see Count64).
//
// UnrankTo panics if len(dst) != n.
func (f Family) UnrankTo(dst []int, r uint64) error {
	if err := f.check(); err != nil {
		return err
	}
	if len(dst) != f.n {
		panic(fmt.Sprintf("combin: UnrankTo: len(dst) = %d, want n = %d", len(dst), f.n))
	}
	if !f.fits {
		// T >= 2^64 > r.
		if err := f.checkBigRank("UnrankTo"); err != nil {
			return err
		}
		rb := new(big.Int).SetUint64(r)
		if f.ordered {
			f.unrankTupleBig(dst, rb)
		} else {
			f.unrankSubsetBig(dst, rb)
		}
		return nil
	}
	if r >= f.t64 {
		return rankError(fmt.Errorf("%d out of range [0, T = %d) for %v", r, f.t64, f))
	}
	if f.ordered {
		f.unrankTuple64(dst, r)
	} else {
		f.unrankSubset64(dst, r)
	}
	return nil
}

// maxBigRankWork bounds the work, in word operations, of one rank or
// unrank with big numbers.
const maxBigRankWork = 1 << 27

// checkBigRank returns an error when ranking or unranking in f with big
// numbers (T >= 2^64) would cost more than maxBigRankWork: for subsets,
// N1 + n steps on numbers of T's size when n > jumpK, plus a few thousand
// per position for the last jumpK positions; n² + n steps for tuples.
func (f Family) checkBigRank(what string) error {
	bits := f.logCount() / math.Ln2
	words := float64(bits/64) + 4
	// Subsets: a walk of at most N1 + n steps while k > jumpK, then per
	// position at most 2 jumpK steps and 25 direct binomials of jumpK
	// products.
	walk := 0.0
	if f.n > jumpK {
		walk = float64(f.size + f.n)
	}
	work := float64(walk+float64(min(f.n, jumpK)*(2*jumpK+25*jumpK))) * words
	if f.ordered {
		work = float64(float64(f.n)*float64(f.n)) + float64(float64(f.n)*words)
	}
	if bits > MaxExactBits || work > maxBigRankWork {
		return familyError(inputerr.TooCostly(fmt.Sprintf("%s in %v: T has about %.4g bits; the %.3g word operations exceed the bound 2^27 (too slow)", what, f, bits, work)))
	}
	return nil
}

// checkSet returns an error unless g is a set of f. The messages do not
// hold g itself, so that g does not escape. It takes O(n) steps for
// subsets, O(n²) for tuples with n <= 64 and O(n log n) for longer tuples.
func (f Family) checkSet(g []int) error {
	if err := f.check(); err != nil {
		return err
	}
	if len(g) != f.n {
		return inputerr.Int("combin", "", InputError{Field: FieldSet, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf("len = %d, want n = %d for %v", len(g), f.n, f)}, len(g))
	}
	for i, v := range g {
		if v < 0 || v >= f.size {
			return memberError(i, v, fmt.Errorf("out of range [0, N1 = %d)", f.size))
		}
	}
	if !f.ordered {
		for i := 1; i < len(g); i++ {
			if g[i] == g[i-1] {
				return memberError(i, g[i], fmt.Errorf("repeats member %d", i-1))
			}
			if g[i] < g[i-1] {
				return memberError(i, g[i], fmt.Errorf("< member %d = %d; a subset must be sorted ascending", i-1, g[i-1]))
			}
		}
		return nil
	}
	if len(g) > smallSet {
		s := slices.Clone(g)
		slices.Sort(s)
		if !hasAdjacentEqual(s) {
			return nil
		}
		first := make(map[int]int, len(g))
		for i, v := range g {
			if j, ok := first[v]; ok {
				return memberError(i, v, fmt.Errorf("repeats member %d", j))
			}
			first[v] = i
		}
		return nil
	}
	for i := 1; i < len(g); i++ {
		for j := range i {
			if g[i] == g[j] {
				return memberError(i, g[i], fmt.Errorf("repeats member %d", j))
			}
		}
	}
	return nil
}

// hasAdjacentEqual reports whether two neighbours of s are equal.
func hasAdjacentEqual(s []int) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return true
		}
	}
	return false
}

// The rank of a subset c_0 < ... < c_{n-1} is
//
//	T - 1 - sum_i C(N-1-c_i, n-i),
//
// the lexicographic rank as the complement of the combinatorial number
// system. The binomials are reached by walking (m, k) from (N-1, n) with the
// exact ratios C(m-1, k) = C(m, k) (m-k)/m and C(m-1, k-1) = C(m, k) k/m, so
// the walk takes at most N + n steps and every value stays below T.

// rank64 returns the rank of a valid set g of f, for T < 2^64.
func (f Family) rank64(g []int) uint64 {
	N := uint64(f.size)
	if f.ordered {
		// Mixed radix: digit i is the number of unused indices below g[i],
		// with radix N-i.
		var r uint64
		for i, v := range g {
			less := v
			for _, u := range g[:i] {
				if u < v {
					less--
				}
			}
			r = r*(N-uint64(i)) + uint64(less)
		}
		return r
	}
	var sum uint64
	c, m, k := f.avoid64, N-1, uint64(f.n) // c = C(m, k)
	for i, v := range g {
		mi := N - 1 - uint64(v)
		if mi < k {
			break // C(mi, k) = 0, and so is every later term
		}
		for ; m > mi; m-- {
			c = mulDiv64(c, m-k, m)
		}
		sum += c
		if i < len(g)-1 {
			c = mulDiv64(c, k, m)
			m--
			k--
		}
	}
	return f.t64 - 1 - sum
}

// unrankSubset64 writes the subset of rank r < T into dst, for T < 2^64.
func (f Family) unrankSubset64(dst []int, r uint64) {
	N := uint64(f.size)
	x := f.t64 - 1 - r
	c, m, k := f.avoid64, N-1, uint64(f.n) // c = C(m, k)
	for i := range dst {
		// Find the largest m with C(m, k) <= x.
		for c > x {
			c = mulDiv64(c, m-k, m)
			m--
		}
		dst[i] = int(N - 1 - m)
		x -= c
		if i < len(dst)-1 {
			c = mulDiv64(c, k, m) // m >= k-1 >= 1
			m--
			k--
		}
	}
}

// unrankTuple64 writes the tuple of rank r < T into dst, for T < 2^64.
func (f Family) unrankTuple64(dst []int, r uint64) {
	N := uint64(f.size)
	for i := len(dst) - 1; i >= 0; i-- {
		radix := N - uint64(i)
		dst[i] = int(r % radix)
		r /= radix
	}
	lehmerToTuple(dst)
}

// lehmerToTuple turns digits d_i (d_i = the number of indices below the i-th
// entry that are not among the earlier entries) into the tuple, in place, in
// O(n²) steps: going backwards, each later entry that is at or above entry i
// among the remaining indices moves up by one.
func lehmerToTuple(d []int) {
	for i := len(d) - 2; i >= 0; i-- {
		for j := i + 1; j < len(d); j++ {
			if d[j] >= d[i] {
				d[j]++
			}
		}
	}
}

// rankSubsetBig is rank64 for subsets with big arithmetic.
func (f Family) rankSubsetBig(g []int) *big.Int {
	N := f.size
	sum := new(big.Int)
	T, c := f.bigCounts()
	m, k := N-1, f.n
	var t big.Int
	for i, v := range g {
		mi := N - 1 - v
		if mi < k {
			break
		}
		if k <= jumpK && m-mi > 2*jumpK {
			c.Set(binomial(mi, k)) // mi >= k
			m = mi
		}
		for ; m > mi; m-- {
			c.Mul(c, t.SetInt64(int64(m-k)))
			c.Quo(c, t.SetInt64(int64(m)))
		}
		sum.Add(sum, c)
		if i < len(g)-1 {
			c.Mul(c, t.SetInt64(int64(k)))
			c.Quo(c, t.SetInt64(int64(m)))
			m--
			k--
		}
	}
	T.Sub(T, sum)
	return T.Sub(T, t.SetInt64(1))
}

// unrankSubsetBig is unrankSubset64 with big arithmetic.
func (f Family) unrankSubsetBig(dst []int, r *big.Int) {
	N := f.size
	var t big.Int
	x, c := f.bigCounts()
	x.Sub(x, r)
	x.Sub(x, t.SetInt64(1))
	m, k := N-1, f.n
	for i := range dst {
		for steps := 0; c.Cmp(x) > 0; steps++ {
			if k <= jumpK && steps == 2*jumpK {
				m = largestBinomialAtMost(x, m, k)
				c.Set(binomial(m, k))
				break
			}
			c.Mul(c, t.SetInt64(int64(m-k)))
			c.Quo(c, t.SetInt64(int64(m)))
			m--
		}
		dst[i] = N - 1 - m
		x.Sub(x, c)
		if i < len(dst)-1 {
			c.Mul(c, t.SetInt64(int64(k)))
			c.Quo(c, t.SetInt64(int64(m)))
			m--
			k--
		}
	}
}

// jumpK is the largest k for which the big subset walks compute C(m, k)
// directly (k small products) rather than step m one by one, once the
// walk is longer than 2 jumpK steps.
const jumpK = 64

// largestBinomialAtMost returns the largest m' < m with C(m', k) <= x, for
// C(m, k) > x >= 0, by bisection on m' in [k-1, m) with C(m', k) computed
// directly.
func largestBinomialAtMost(x *big.Int, m, k int) int {
	lo, hi := k-1, m // C(lo, k) = 0 <= x < C(hi, k)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if binomial(mid, k).Cmp(x) <= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// rankTupleBig is rank64 for tuples with big arithmetic.
func (f Family) rankTupleBig(g []int) *big.Int {
	r := new(big.Int)
	var t big.Int
	for i, v := range g {
		less := v
		for _, u := range g[:i] {
			if u < v {
				less--
			}
		}
		r.Mul(r, t.SetInt64(int64(f.size-i)))
		r.Add(r, t.SetInt64(int64(less)))
	}
	return r
}

// unrankTupleBig is unrankTuple64 with big arithmetic.
func (f Family) unrankTupleBig(dst []int, r *big.Int) {
	q := new(big.Int).Set(r)
	var radix, digit big.Int
	for i := len(dst) - 1; i >= 0; i-- {
		q.QuoRem(q, radix.SetInt64(int64(f.size-i)), &digit)
		dst[i] = int(digit.Int64())
	}
	lehmerToTuple(dst)
}
