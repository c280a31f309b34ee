package combin

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/big"
	"math/bits"

	"spiral/internal/inputerr"
	"spiral/internal/numeric"
)

// MaxSize is the one size cap of the module: the largest N1 that Subsets and
// Tuples accept, and the bound on K*n for the samplers and on the length of
// the sets that CheckSets reads (2^24).
const MaxSize = numeric.MaxSize

// A Family is all sets of n distinct traces from {0, ..., N1-1}: either
// the C(N1, n) unordered subsets (made by Subsets) or the
// (N1)_n = N1!/(N1-n)! ordered tuples (made by Tuples). T denotes the
// number of sets in the family.
//
// A Family is a small comparable value: two families are == exactly when
// they were made with the same N1, n and kind. The zero Family is not a
// valid family: its methods that return an error report that it is invalid.
//
// A subset is written as its traces in ascending order, a tuple as its
// traces in order. Families are ordered lexicographically: subsets as sorted
// sequences, tuples as sequences. All, Rank and Unrank follow that order.
type Family struct {
	size    int    // N1
	n       int    // set size
	ordered bool   // tuples rather than subsets
	fits    bool   // T < 2^64
	t64     uint64 // T, when fits
	avoid64 uint64 // T_avoid, when fits
}

// Subsets returns the family of the C(N1, n) unordered n-subsets of
// {0, ..., N1-1}. It returns an error unless 1 <= n <= N1 <= MaxSize.
func Subsets(N1, n int) (Family, error) { return newFamily(N1, n, false) }

// Tuples returns the family of the (N1)_n = N1!/(N1-n)! ordered n-tuples of
// distinct traces from {0, ..., N1-1}. It returns an error unless
// 1 <= n <= N1 <= MaxSize.
func Tuples(N1, n int) (Family, error) { return newFamily(N1, n, true) }

// NewFamily returns Tuples(N1, n) when ordered is true and Subsets(N1, n)
// otherwise.
func NewFamily(N1, n int, ordered bool) (Family, error) { return newFamily(N1, n, ordered) }

func newFamily(N, n int, ordered bool) (Family, error) {
	switch {
	case N < 1:
		return Family{}, argError(FieldN1, N, "%d < 1", N)
	case N > MaxSize:
		return Family{}, argError(FieldN1, N, "%d > %d, the most traces a family holds", N, MaxSize)
	case n < 1:
		return Family{}, argError(FieldN, n, "%d < 1", n)
	case n > N:
		return Family{}, argError(FieldN, n, "%d > N1 = %d", n, N)
	}
	f := Family{size: N, n: n, ordered: ordered}
	f.t64, f.fits = count64(N, n, ordered)
	if f.fits {
		f.avoid64, _ = count64(N-1, n, ordered) // T_avoid < T, so it fits
	}
	return f, nil
}

// Traces returns N1, the number of traces {0, ..., N1-1} that the sets are
// drawn from.
func (f Family) Traces() int { return f.size }

// SetSize returns n, the number of traces in each set.
func (f Family) SetSize() int { return f.n }

// Ordered reports whether f is a family of ordered tuples (made by Tuples)
// rather than unordered subsets (made by Subsets).
func (f Family) Ordered() bool { return f.ordered }

// String returns the expression that makes f, such as "Subsets(8, 4)" or
// "Tuples(8, 4)"; the zero Family is "Family{}".
func (f Family) String() string {
	switch {
	case f.n == 0:
		return "Family{}"
	case f.ordered:
		return fmt.Sprintf("Tuples(%d, %d)", f.size, f.n)
	default:
		return fmt.Sprintf("Subsets(%d, %d)", f.size, f.n)
	}
}

// Count returns T, the exact number of sets in f: C(N1, n) for subsets and
// (N1)_n = N1!/(N1-n)! for tuples. The result is a new big.Int that the
// caller owns.
//
// Count returns an error for the zero Family, and an error naming the bound
// when T has more than MaxExactBits bits (log2 T > 2^17, such as
// Subsets(2^18, 2^17) or Tuples(2^14, 2^14)); Count64 answers every family
// whose T is below 2^64, and LogCount every family. It takes well under a
// second for every T it computes.
func (f Family) Count() (*big.Int, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.fits {
		return new(big.Int).SetUint64(f.t64), nil
	}
	if bits := f.logCount() / math.Ln2; bits > MaxExactBits {
		return nil, familyError(inputerr.TooCostly(fmt.Sprintf("%v.Count: T has about %.4g bits > %d, the most computed exactly; use LogCount", f, bits, MaxExactBits)))
	}
	return countBig(f.size, f.n, f.ordered), nil
}

// Count64 returns T, the number of sets in f, and true when T < 2^64;
// otherwise it returns 0 and false. It costs nothing: the value is computed
// once by Subsets or Tuples. The zero Family gives 0 and true.
func (f Family) Count64() (uint64, bool) {
	if f.n == 0 {
		return 0, true
	}
	return f.t64, f.fits
}

// LogCount returns ln T, the natural logarithm of the number of sets in f,
// with an absolute error below 1e-6 (exact to rounding when T < 2^64). It
// returns -Inf for the zero Family.
func (f Family) LogCount() float64 {
	if f.n == 0 {
		return math.Inf(-1)
	}
	if f.fits {
		return math.Log(float64(f.t64))
	}
	return f.logCount()
}

// Avoiding returns T_avoid, the exact number of sets in f that do not
// contain one given trace (by symmetry, the same for every trace): the sets
// drawn from the other N1-1 traces, C(N1-1, n) for subsets and (N1-1)_n for
// tuples. It is 0 when n = N1. The result is a new big.Int that the caller
// owns. The sets that do contain a given trace number T - T_avoid, a
// fraction n/N1 of the family.
//
// Its errors are those of Count (T_avoid < T).
func (f Family) Avoiding() (*big.Int, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.fits {
		return new(big.Int).SetUint64(f.avoid64), nil
	}
	if bits := f.logCount() / math.Ln2; bits > MaxExactBits {
		return nil, familyError(inputerr.TooCostly(fmt.Sprintf("%v.Avoiding: T has about %.4g bits > %d, the most computed exactly; use LogCount", f, bits, MaxExactBits)))
	}
	return countBig(f.size-1, f.n, f.ordered), nil
}

// bigCounts returns T and T_avoid; the caller has bounded their size.
func (f Family) bigCounts() (T, avoid *big.Int) {
	if f.fits {
		return new(big.Int).SetUint64(f.t64), new(big.Int).SetUint64(f.avoid64)
	}
	return countBig(f.size, f.n, f.ordered), countBig(f.size-1, f.n, f.ordered)
}

// countBig returns C(N, n), or (N)_n when ordered, for 0 <= N, 1 <= n. Its
// cost grows with the size of the result: callers bound it first.
func countBig(N, n int, ordered bool) *big.Int {
	if n > N {
		return new(big.Int)
	}
	if ordered {
		return new(big.Int).MulRange(int64(N-n+1), int64(N))
	}
	return binomial(N, n)
}

// binomial returns C(N, k), which is 0 unless 0 <= k <= N. For small k it divides a
// product tree by k!; otherwise it multiplies the prime powers p^e of
// C(N, k), with e the number of carries when adding k and N-k in base p
// (Kummer), so that no number is larger than the result.
func binomial(N, k int) *big.Int {
	if k < 0 || k > N {
		return new(big.Int)
	}
	k = min(k, N-k)
	if k <= 256 {
		num := numeric.Falling(big.NewInt(int64(N)), 0, k)
		return num.Quo(num, numeric.Falling(big.NewInt(int64(k)), 0, k))
	}
	var factors []*big.Int
	for p := range primesUpTo(N) {
		// Legendre: e = sum_i floor(N/p^i) - floor(k/p^i) - floor((N-k)/p^i).
		e := 0
		for pi := p; ; {
			e += N/pi - k/pi - (N-k)/pi
			if pi > N/p {
				break
			}
			pi *= p
		}
		if e > 0 {
			x := big.NewInt(int64(p))
			if e > 1 {
				x.Exp(x, big.NewInt(int64(e)), nil)
			}
			factors = append(factors, x)
		}
	}
	return productTree(factors)
}

// productTree returns the product of xs, multiplying numbers of similar size.
// It may modify xs.
func productTree(xs []*big.Int) *big.Int {
	switch len(xs) {
	case 0:
		return big.NewInt(1)
	case 1:
		return xs[0]
	}
	h := len(xs) / 2
	a := productTree(xs[:h])
	return a.Mul(a, productTree(xs[h:]))
}

// primesUpTo yields the primes p <= N in increasing order, from a bit
// sieve of the odd numbers (N/16 bytes).
func primesUpTo(N int) iter.Seq[int] {
	return func(yield func(int) bool) {
		if N < 2 || !yield(2) {
			return
		}
		composite := make([]uint64, N/128+1) // bit i: 2i+1 is composite
		for i := 1; 2*i+1 <= N; i++ {
			if composite[i/64]&(1<<(i%64)) != 0 {
				continue
			}
			p := 2*i + 1
			if !yield(p) {
				return
			}
			if p > N/p {
				continue
			}
			for j := p * p / 2; 2*j+1 <= N; j += p {
				composite[j/64] |= 1 << (j % 64)
			}
		}
	}
}

// count64 returns C(N, n), or (N)_n when ordered, and whether it is below
// 2^64, for 0 <= N and 0 <= n.
func count64(N, n int, ordered bool) (uint64, bool) {
	if n > N {
		return 0, true
	}
	if ordered {
		return falling64(uint64(N), uint64(n))
	}
	return binom64(uint64(N), uint64(n))
}

// binom64 returns C(m, k) and true, or 0 and false when C(m, k) >= 2^64.
// It requires k <= m.
func binom64(m, k uint64) (uint64, bool) {
	k = min(k, m-k)
	// After step i, c = C(m-k+i, i), which grows with i: once a step
	// overflows, so does the result.
	c := uint64(1)
	for i := uint64(1); i <= k; i++ {
		hi, lo := bits.Mul64(c, m-k+i)
		if hi >= i {
			return 0, false
		}
		c, _ = bits.Div64(hi, lo, i)
	}
	return c, true
}

// falling64 returns (m)_k = m (m-1) ... (m-k+1) and true, or 0 and false
// when it is >= 2^64. It requires k <= m.
func falling64(m, k uint64) (uint64, bool) {
	p := uint64(1)
	for i := uint64(0); i < k; i++ {
		hi, lo := bits.Mul64(p, m-i)
		if hi != 0 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

// mulDiv64 returns a*b/c for a result known to be exact and below 2^64.
func mulDiv64(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// logCount returns ln T from math.Lgamma, with an absolute error below about
// 1e-7 for N <= MaxSize; it is only used where T >= 2^64 and a coarse value
// suffices.
func (f Family) logCount() float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	l := lg(f.size) - lg(f.size-f.n)
	if !f.ordered {
		l -= lg(f.n)
	}
	return l
}

// errZeroFamily is the error of a method called on the zero Family.
var errZeroFamily = familyError(errors.New("the zero Family; make one with Subsets or Tuples"))

// check returns an error for the zero Family.
func (f Family) check() error {
	if f.n == 0 {
		return errZeroFamily
	}
	return nil
}

// checkDraw returns an error unless 0 <= K <= T and K*n <= MaxSize, the
// sizes for which a sampler can hold K sets.
func (f Family) checkDraw(K int) error {
	if err := f.checkK(K); err != nil {
		return err
	}
	if K > MaxSize/f.n {
		return argError(FieldK, K, "K*n = %d*%d > %d, the most indices a draw holds", K, f.n, MaxSize)
	}
	return nil
}

// checkK returns an error unless 0 <= K <= T.
func (f Family) checkK(K int) error {
	if err := f.check(); err != nil {
		return err
	}
	if K < 0 {
		return argError(FieldK, K, "%d < 0", K)
	}
	if f.fits && uint64(K) > f.t64 {
		return argError(FieldK, K, "%d > T = %d, the number of sets in %v", K, f.t64, f)
	}
	// Otherwise T >= 2^64 > K.
	return nil
}
