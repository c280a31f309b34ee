package numeric

import (
	"math"
	"math/big"
)

// Falling returns the falling factorial prod_{i=lo}^{lo+k-1} (x - i), the
// k factors x - lo down to x - lo - k + 1 (1 when k = 0), by a balanced
// product tree, so that the large multiplications are between numbers of
// similar size. The caller bounds its cost (see FallingBits).
func Falling(x *big.Int, lo, k int) *big.Int {
	if k <= 16 {
		p := big.NewInt(1)
		var t big.Int
		for i := lo; i < lo+k; i++ {
			p.Mul(p, t.Sub(x, t.SetInt64(int64(i))))
		}
		return p
	}
	h := k / 2
	a := Falling(x, lo, h)
	return a.Mul(a, Falling(x, lo+h, k-h))
}

// FallingRatio returns the ratio of falling factorials
//
//	(a)_k / (b)_k = prod_{i<k} (a - i)/(b - i),
//
// exactly: the hypergeometric ratio C(a, k)/C(b, k), which is combin's
// probability that a trace is in none of K sets (a = T_avoid, b = T) and
// eval's 1 - pass@k (a = n - c, b = n). It needs b >= k and b - i != 0 for
// i < k; the caller bounds its cost with FallingBits.
func FallingRatio(a, b *big.Int, k int) *big.Rat {
	return new(big.Rat).SetFrac(Falling(a, 0, k), Falling(b, 0, k))
}

// FallingBits returns k·b, an upper bound on the size in bits of k
// factors of at most b bits each (such as (x)_k for x < 2^b), for k, b >= 0,
// saturating at the largest int instead of overflowing. A caller refuses an
// exact question whose numbers have more than MaxExactBits bits.
func FallingBits(k, b int) int {
	if b != 0 && k > math.MaxInt/b {
		return math.MaxInt
	}
	return k * b
}
