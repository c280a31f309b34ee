package combin

import (
	"fmt"
	"math"
	"math/big"
)

// MaxExactBits bounds the size of the numbers that the exact paths
// ([Family.MissProb], [Family.AppearanceDist], the exact fields of
// [Family.Constants]) work with: they refuse a question whose answer would
// need numerators or denominators of more than MaxExactBits bits, so that
// every exact answer comes within a fraction of a second.
const MaxExactBits = 1 << 17

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
	return fmt.Errorf("combin: %s of %v with K = %d needs numbers of about %.3g bits > MaxExactBits = %d (too slow to compute exactly); use the float path", what, f, K, bits, MaxExactBits)
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
	T, avoid := f.Count(), f.Avoiding()
	if K > 0 && avoid.Cmp(big.NewInt(int64(K))) < 0 {
		return new(big.Rat), nil
	}
	var num, den *big.Int
	if m == K {
		num, den = fallingTree(avoid, 0, K), fallingTree(T, 0, K)
	} else {
		// C(T-K, D)/C(T, D) = (T-K)_D / (T)_D.
		num, den = fallingTree(T, K, m), fallingTree(T, 0, m)
	}
	return new(big.Rat).SetFrac(num, den), nil
}

// fallingTree returns prod_{i=lo}^{lo+k-1} (x - i) by a balanced product
// tree, so that the large multiplications are between numbers of similar
// size. It requires x >= lo + k - 1.
func fallingTree(x *big.Int, lo, k int) *big.Int {
	if k <= 16 {
		p := big.NewInt(1)
		var t big.Int
		for i := lo; i < lo+k; i++ {
			p.Mul(p, t.Sub(x, t.SetInt64(int64(i))))
		}
		return p
	}
	h := k / 2
	a := fallingTree(x, lo, h)
	return a.Mul(a, fallingTree(x, lo+h, k-h))
}

// MissProbFloat returns MissProb(K) as a float64, computed without big
// numbers as exp of the sum over i < K of ln((T_avoid - i)/(T - i)).
//
// Each factor is 1 - y_i with y_i = (T - T_avoid)/(T - i), whose logarithm is
// taken as log1p(-y_i) when y_i <= 1/2 and as ln of the factor otherwise, so
// that every term has an absolute error of a few ulps of its size; the terms
// are added with Neumaier's compensated summation. When T >= 2^64, the exact
// identity (T - T_avoid)/T = n/N gives y_i = (n/N)/(1 - i/T). The relative
// error is below 1e-12 whenever the result is at least 1e-300; smaller
// results lose precision as subnormals and underflow to 0 below about
// 5e-324. The result is exactly 0 for K > T_avoid.
//
// MissProbFloat returns an error unless 0 <= K <= T. It takes O(K) time and
// does not allocate, whatever the size of T.
func (f Family) MissProbFloat(K int) (float64, error) {
	if err := f.checkK(K); err != nil {
		return 0, err
	}
	return math.Exp(f.logMissProb(K)), nil
}

// logMissProb returns the natural logarithm of MissProb(K), for 0 <= K <= T,
// or -Inf when MissProb(K) = 0.
func (f Family) logMissProb(K int) float64 {
	if K == 0 {
		return 0
	}
	var sum, comp float64 // Neumaier: the total is sum + comp
	add := func(x float64) {
		t := sum + x
		if math.Abs(sum) >= math.Abs(x) {
			comp += (sum - t) + x
		} else {
			comp += (x - t) + sum
		}
		sum = t
	}
	if f.fits {
		if uint64(K) > f.avoid64 {
			return math.Inf(-1)
		}
		d := float64(f.t64 - f.avoid64)
		for i := range uint64(K) {
			ti := float64(f.t64 - i)
			if y := d / ti; y <= 0.5 {
				add(math.Log1p(-y))
			} else {
				add(math.Log(float64(f.avoid64-i) / ti))
			}
		}
		return sum + comp
	}
	if f.n == f.size {
		return math.Inf(-1) // T_avoid = 0 < K
	}
	// T >= 2^64 > K, so i/T < 1/2 and 1 - i/T is well conditioned; T is
	// only needed coarsely (it may even overflow a float64, giving 1/T = 0).
	p := float64(f.n) / float64(f.size)        // (T - T_avoid)/T
	q := float64(f.size-f.n) / float64(f.size) // T_avoid/T
	invT := math.Exp(-f.logCount())
	for i := range K {
		u := float64(i) * invT
		if y := p / (1 - u); y <= 0.5 {
			add(math.Log1p(-y))
		} else {
			add(math.Log((q - u) / (1 - u)))
		}
	}
	return sum + comp
}

// AppearanceDist returns the exact distribution of the number of groups that
// contain one given index among K distinct groups drawn uniformly without
// replacement from f: entry j, for j = 0..K, is the probability that the
// index is in exactly j of the K groups. It is hypergeometric, with
// population T, T - T_avoid successes (the groups containing the index) and
// K draws:
//
//	P(j) = C(T - T_avoid, j) C(T_avoid, K - j) / C(T, K),
//
// with mean K*n/N (the expected number of appearances: 2 for Subsets(8, 4),
// K = 4). Entry 0 is MissProb(K).
//
// AppearanceDist returns an error unless 0 <= K <= T, and an error naming
// the bound when its K+1 fractions, each reduced from numbers of up to
// b = K log2 T bits at a cost of order b², would cost more than
// (K+1) b² = 2^36 (K > 262 for Subsets(64, 32), K > 40 for
// Subsets(1000, 500)), or when b > MaxExactBits.
func (f Family) AppearanceDist(K int) ([]*big.Rat, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	// P(j) = C(K, j) (D)_j (T_avoid)_{K-j} / (T)_K with D = T - T_avoid.
	T, avoid := f.Count(), f.Avoiding()
	D := new(big.Int).Sub(T, avoid)
	den := fallingTree(T, 0, K)
	fa := make([]*big.Int, K+1) // fa[m] = (T_avoid)_m
	fa[0] = big.NewInt(1)
	var t big.Int
	for m := 1; m <= K; m++ {
		// Once m > T_avoid a factor T_avoid - (m-1) = 0 has made fa[m] = 0.
		fa[m] = new(big.Int).Mul(fa[m-1], t.Sub(avoid, t.SetInt64(int64(m-1))))
	}
	dist := make([]*big.Rat, K+1)
	binom := big.NewInt(1) // C(K, j)
	fd := big.NewInt(1)    // (D)_j
	num := new(big.Int)
	for j := 0; j <= K; j++ {
		num.Mul(binom, fd)
		num.Mul(num, fa[K-j])
		dist[j] = new(big.Rat).SetFrac(num, den)
		// C(K, j+1) = C(K, j) (K-j)/(j+1); (D)_{j+1} = (D)_j (D-j).
		binom.Mul(binom, t.SetInt64(int64(K-j)))
		binom.Quo(binom, t.SetInt64(int64(j+1)))
		// As with fa, (D)_j stays 0 once j > D.
		fd.Mul(fd, t.Sub(D, t.SetInt64(int64(j))))
	}
	return dist, nil
}
