package combin

import (
	"math"
	"math/big"

	"spiral/internal/numeric"
)

// MaxExactBits bounds the size of the numbers that the exact paths
// ([Family.MissProb], [Family.AppearanceDist], the exact fields of
// [Family.Constants]) work with: they refuse a question whose answer would
// need numerators or denominators of more than MaxExactBits bits, so that
// every exact answer comes within a fraction of a second. It is the
// module's one cap on exact arithmetic (eval's exact pass@k obeys it too).
const MaxExactBits = numeric.MaxExactBits

// maxAppearanceEntries bounds the length K+1 of AppearanceDist's result.
const maxAppearanceEntries = 1 << 16

// maxAppearanceCost bounds (K+1) b² for AppearanceDist's K+1 reductions of
// b-bit fractions.
const maxAppearanceCost = 1 << 36

// MissProb returns the exact probability that one given index is in none of
// K distinct sets drawn uniformly without replacement from f:
//
//	C(T_avoid, K) / C(T, K) = prod_{i=0}^{K-1} (T_avoid - i) / (T - i),
//
// where T is the family size (Count) and T_avoid the number of sets that
// avoid the index (Avoiding). It is 1 for K = 0 and 0 for K > T_avoid. For
// Subsets(8, 4) and K = 4 it is C(35, 4)/C(70, 4) = 88/1541, about 5.71%.
//
// MissProb returns an error unless 0 <= K <= T, and an error naming the
// bound when the numbers involved, m = min(K, T - T_avoid) factors of T's
// size, would exceed MaxExactBits bits (m log2 T > 2^17: K > 2125 for
// Subsets(64, 32), K > 131 for Subsets(1000, 500)); use MissProbFloat then.
func (f Family) MissProb(K int) (*big.Rat, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	return f.missProbRat(K)
}

// exactFactors returns how many factors m the exact miss probability takes
// and an upper bound on their total size in bits; m = min(K, T - T_avoid),
// using C(T_avoid, K)/C(T, K) = C(T-K, D)/C(T, D) for D = T - T_avoid.
func (f Family) exactFactors(K int) (m int, bits float64) {
	m = K
	if f.fits {
		if d := f.t64 - f.avoid64; d < uint64(K) {
			m = int(d)
		}
	}
	return m, float64(m) * (f.logCount()/math.Ln2 + 1)
}

// errExactCost returns the error for an exact question too large to answer.
func (f Family) errExactCost(what string, K int, bits float64) error {
	return costError(FieldK, K, "%s of %v with %d sets needs numbers of about %.3g bits > %d, the most computed exactly (too slow); use the float path", what, f, K, bits, MaxExactBits)
}

// missProbRat is MissProb after the K check.
func (f Family) missProbRat(K int) (*big.Rat, error) {
	if (f.fits && uint64(K) > f.avoid64) || (K > 0 && f.n == f.size) {
		return new(big.Rat), nil
	}
	m, bits := f.exactFactors(K)
	if bits > MaxExactBits {
		return nil, f.errExactCost("MissProb", K, bits)
	}
	T, avoid := f.bigCounts()
	if K > 0 && avoid.Cmp(big.NewInt(int64(K))) < 0 {
		return new(big.Rat), nil
	}
	if m == K {
		return numeric.FallingRatio(avoid, T, K), nil
	}
	// C(T_avoid, K)/C(T, K) = C(T-K, D)/C(T, D) = (T-K)_D / (T)_D.
	return numeric.FallingRatio(new(big.Int).Sub(T, big.NewInt(int64(K))), T, m), nil
}

// MissProbFloat returns MissProb(K) as a float64, computed without big
// numbers as exp of the sum over i < K of ln((T_avoid - i)/(T - i)).
//
// Each factor is 1 - y_i with y_i = (T - T_avoid)/(T - i), whose logarithm is
// taken as log1p(-y_i) when y_i <= 1/2 and as ln of the factor otherwise, so
// that every term has an absolute error of a few ulps of its size; the terms
// are added with a compensated sum (numeric.Sum). When T >= 2^64 the exact
// identity (T - T_avoid)/T = n/N1 gives y_i = (n/N1)/(1 - i/T). Runs of
// consecutive factors whose length L is at most 2^-8 (T_avoid - i) are added
// in one step when K > 2^16, as L ln(1 - y_i) plus a power series in
// L/(T_avoid - i) of seven terms, so the cost is at most 2^16 factors or
// about 30,000 steps, whatever K is.
//
// The relative error is below 1e-12 whenever the result is at least 1e-300;
// smaller results lose precision as subnormals and underflow to 0 below
// about 5e-324. The result is exactly 0 for K > T_avoid. Every product is
// rounded before it is added, so no multiply-add is fused on any
// architecture; the result differs across architectures only where the
// standard library's Log, Log1p or Exp does.
//
// MissProbFloat returns an error unless 0 <= K <= T. It does not allocate.
func (f Family) MissProbFloat(K int) (float64, error) {
	if err := f.checkK(K); err != nil {
		return 0, err
	}
	return math.Exp(f.logMissProb(K)), nil
}

const (
	// blockShift sets the largest run of factors added in one step:
	// L <= 2^-blockShift (T_avoid - i).
	blockShift = 8
	// minBlock is the shortest run added in one step; shorter runs are
	// added factor by factor.
	minBlock = 64
	// directTerms is the largest K whose factors are all added one by one.
	directTerms = 1 << 16
	// underflowLog is a logarithm below which exp is 0 in float64.
	underflowLog = -800
)

// logMissProb returns the natural logarithm of MissProb(K) for 0 <= K <= T
// (see MissProbFloat), -Inf when MissProb(K) = 0, or a number below
// underflowLog when MissProb(K) underflows.
func (f Family) logMissProb(K int) float64 {
	if K == 0 {
		return 0
	}
	// T_avoid, exactly when it is below 2^64.
	avoid, avoidFits := f.avoid64, f.fits
	if !f.fits {
		avoid, avoidFits = count64(f.size-1, f.n, f.ordered)
	}
	if avoidFits && uint64(K) > avoid {
		return math.Inf(-1)
	}
	// factor returns, for factor i, a = (T_avoid - i)/U and s = (T - i)/U
	// in a unit U (1 when T < 2^64, T otherwise), y = (T - T_avoid)/(T - i),
	// and alpha = 1/(T_avoid - i).
	var factor func(i uint64) (a, s, y, alpha float64)
	if f.fits {
		d := float64(f.t64 - f.avoid64)
		factor = func(i uint64) (a, s, y, alpha float64) {
			a, s = float64(f.avoid64-i), float64(f.t64-i)
			return a, s, d / s, 1 / a
		}
	} else {
		// T >= 2^64 > K, so i/T < 1/2 and 1 - i/T is well conditioned; T
		// is only needed coarsely (it may even overflow, giving 1/T = 0).
		p := float64(f.n) / float64(f.size)        // (T - T_avoid)/T
		q := float64(f.size-f.n) / float64(f.size) // T_avoid/T
		invT := math.Exp(-f.logCount())
		factor = func(i uint64) (a, s, y, alpha float64) {
			u := float64(float64(i) * invT)
			s = 1 - u
			if avoidFits {
				// q (T_avoid - i)/T_avoid, free of cancellation and of the
				// error of 1/T.
				ai := float64(avoid - i)
				return float64(q*ai) / float64(avoid), s, p / s, 1 / ai
			}
			a = q - u // T_avoid >= 2^64 > 2K: a >= q/2
			return a, s, p / s, invT / a
		}
	}
	var z numeric.Sum
	k := uint64(K)
	for i := uint64(0); i < k; {
		a, s, y, alpha := factor(i)
		lnFactor := math.Log(a / s)
		if y <= 0.5 {
			lnFactor = math.Log1p(-y)
		}
		L := k - i
		if m := math.Ldexp(1/alpha, -blockShift); m < float64(L) {
			L = uint64(m) // alpha > 0 here
		}
		if L < minBlock || k <= directTerms {
			z.Add(lnFactor)
			i++
		} else {
			z.Add(blockLog(L, lnFactor, y, alpha, alpha*(1-y)))
			i += L
		}
		if z.S < underflowLog {
			break
		}
	}
	return z.Value()
}

// blockLog returns sum_{j<L} ln((a-j)/(s-j)) for a run of L factors that
// starts at a = 1/alpha, s = 1/beta, with lnFactor = ln(a/s) and
// y = 1 - a/s, and alpha L <= 2^-8:
//
//	L ln(a/s) - sum_{k>=1} (alpha^k - beta^k) S_k(L) / k,
//
// with S_k(L) = sum_{j<L} j^k, from ln(1 - j/x) = -sum_k (j/x)^k / k. With
// alpha - beta = y alpha and x = alpha L, term k is y x L x^{k-1} h_k r_k / k,
// where h_k = sum_{j<k} (beta/alpha)^j and r_k = S_k(L)/L^{k+1}; the series
// is cut after seven terms, the first left out being below 2^-64 of the
// first. Products are rounded explicitly so that no multiply-add is fused.
func blockLog(L uint64, lnFactor, y, alpha, beta float64) float64 {
	l := float64(L)
	if alpha == 0 {
		return float64(l * lnFactor) // T_avoid beyond float64: no correction
	}
	x := float64(alpha * l)
	w := beta / alpha
	inv := 1 / l
	// r_k for k = 1, 2, 3 exactly; for k >= 4 by Euler-Maclaurin, whose next
	// term is below k^3/(720 L^4) relative.
	r := [8]float64{
		1: float64(1-inv) / 2,
		2: float64(float64(1-inv)*float64(2-inv)) / 6,
		3: float64(float64(1-inv)*float64(1-inv)) / 4,
	}
	for k := 4; k <= 7; k++ {
		fk := float64(k)
		r[k] = 1/(fk+1) - float64(inv/2) + float64(fk*float64(inv*inv))/12
	}
	var corr numeric.Sum
	xk := 1.0 // x^{k-1}
	h := 1.0  // h_k
	wk := 1.0 // w^{k-1}
	base := float64(float64(y*x) * l)
	for k := 1; k <= 7; k++ {
		corr.Add(float64(float64(float64(base*xk)*h)*r[k]) / float64(k))
		xk = float64(xk * x)
		wk = float64(wk * w)
		h += wk
	}
	return float64(l*lnFactor) - corr.Value()
}

// AppearanceDist returns the exact distribution of the number of sets that
// contain one given trace among K distinct sets drawn uniformly without
// replacement from f: entry j, for j = 0..K, is the probability that the
// trace is in exactly j of the K sets. It is hypergeometric, with
// population T, D = T - T_avoid successes (the sets containing the trace)
// and K draws:
//
//	P(j) = C(D, j) C(T_avoid, K - j) / C(T, K),
//
// with mean K n/N1 (the expected number of appearances: 2 for
// Subsets(8, 4), K = 4). Entry 0 is MissProb(K).
//
// AppearanceDist returns an error unless 0 <= K <= T, and an error naming
// the bound when its K+1 fractions, each reduced from numbers of about
// b = log2 C(T, K) bits at a cost of order b², would cost more than
// (K+1) b² = 2^36 (K > 262 for Subsets(64, 32), K > 40 for
// Subsets(1000, 500)), when b > MaxExactBits, or when K+1 > 2^16.
func (f Family) AppearanceDist(K int) ([]*big.Rat, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	if K >= maxAppearanceEntries {
		return nil, costError(FieldK, K, "AppearanceDist of %v with %d sets: K+1 entries > 2^16 (too much memory)", f, K)
	}
	b := f.log2Binomial(K, MaxExactBits+1)
	if b > MaxExactBits || (float64(K)+1)*b*b > maxAppearanceCost {
		return nil, costError(FieldK, K, "AppearanceDist of %v with %d sets: %d fractions of about %.4g bits cost more than (K+1) b² = 2^36 or exceed %d bits, the most computed exactly (too slow)", f, K, K+1, b, MaxExactBits)
	}
	T, A := f.bigCounts()
	D := new(big.Int).Sub(T, A)
	bigK := big.NewInt(int64(K))
	den := binomialBig(T, bigK)
	// P(j) > 0 for max(0, K - T_avoid) <= j <= min(K, D).
	lo, hi := int64(0), int64(K)
	if t := new(big.Int).Sub(bigK, A); t.Sign() > 0 {
		lo = t.Int64()
	}
	if D.Cmp(bigK) < 0 {
		hi = D.Int64()
	}
	dist := make([]*big.Rat, K+1)
	for j := range dist {
		dist[j] = new(big.Rat)
	}
	var t, u big.Int
	cd := binomialBig(D, t.SetInt64(lo))              // C(D, j)
	ca := binomialBig(A, t.Sub(bigK, u.SetInt64(lo))) // C(T_avoid, K - j)
	num := new(big.Int)
	for j := lo; j <= hi; j++ {
		num.Mul(cd, ca)
		dist[j].SetFrac(num, den)
		if j == hi {
			break
		}
		// C(D, j+1) = C(D, j) (D-j)/(j+1);
		// C(A, m-1) = C(A, m) m/(A-m+1) for m = K-j.
		cd.Mul(cd, t.Sub(D, t.SetInt64(j)))
		cd.Quo(cd, t.SetInt64(j+1))
		m := int64(K) - j
		ca.Mul(ca, t.SetInt64(m))
		ca.Quo(ca, t.Sub(A, t.SetInt64(m-1)))
	}
	return dist, nil
}

// binomialBig returns C(x, k) for 0 <= k <= x, as (x)_m / m! with
// m = min(k, x-k) through product trees. Callers bound its cost.
func binomialBig(x, k *big.Int) *big.Int {
	m := new(big.Int).Sub(x, k)
	if m.Cmp(k) > 0 {
		m.Set(k)
	}
	mi := int(m.Int64())
	num := numeric.Falling(x, 0, mi)
	return num.Quo(num, numeric.Falling(m, 0, mi))
}

// log2Binomial returns log2 C(T, K), or a number above limit once it is
// known to exceed limit. It takes O(min(K, T-K, limit)) steps.
func (f Family) log2Binomial(K int, limit float64) float64 {
	if !f.fits {
		// T >= 2^64 > K: C(T, K) >= (T/K)^K with T/K > 2.
		lgK, _ := math.Lgamma(float64(K) + 1)
		if K == 0 {
			return 0
		}
		return float64(float64(K)*(f.logCount()/math.Ln2)) - lgK/math.Ln2
	}
	T := f.t64
	m := min(uint64(K), T-uint64(K))
	sum := 0.0
	for i := range m {
		sum += math.Log2(float64(T-i) / float64(i+1))
		if sum > limit {
			break
		}
	}
	return sum
}
