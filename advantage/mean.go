package advantage

import "math"

// The package's one mean, used for SPIRAL's set scores (setMean) and for
// the group baselines (meanAcc). The sum is kept as an unevaluated pair
// s + c, s the float64 sum and c the sum of the exact errors of its
// additions (twoSum), and the mean as
// a pair h + l (meanPair), so that deviations r - mean = (r - h) - l are
// accurate to a few units in the last place of the values themselves. If
// every value equals the first (compared with ==), the mean is that value
// exactly, l = 0, since sum/n can differ from it in the last bit (three
// copies of 0.1 sum to 0.30000000000000004): deviations from such a mean
// are exactly zero, so a group or set whose rewards are all equal gets
// advantages that are exactly 0, not ±1 ulp.

// twoSum returns t = fl(s + x) and the error e of that addition:
// t + e = s + x exactly (Knuth).
func twoSum(s, x float64) (t, e float64) {
	t = s + x
	z := t - s
	return t, (s - (t - z)) + (x - z)
}

// meanPair returns the mean of n >= 1 values whose sum is s + c as h + l:
// h = fl((s + c)/n) and l = (s - n h + c)/n, s - n h taken exactly by one
// math.FMA (exactly rounded on every architecture).
func meanPair(s, c float64, n int) (h, l float64) {
	fn := float64(n)
	if n&(n-1) == 0 {
		// n = 2^k: multiplying by the exact 2^-k rounds the same exact
		// quotient as dividing, in a quarter of the time.
		inv := 1 / fn
		h = (s + c) * inv
		l = (math.FMA(-h, fn, s) + c) * inv
		return h, l
	}
	h = (s + c) / fn
	if d := math.FMA(-h, fn, s) + c; d != 0 { // 0 when h is the exact mean
		l = d / fn
	}
	return h, l
}

// meanAcc accumulates the mean of values added one at a time, for values
// that are not contiguous in memory.
type meanAcc struct {
	s, c  float64 // the sum is s + c
	first float64
	n     int
	mixed bool // some value differs from first
}

func (a *meanAcc) add(x float64) {
	switch {
	case a.n == 0:
		a.first = x
	case x != a.first:
		a.mixed = true
	}
	var e float64
	a.s, e = twoSum(a.s, x)
	a.c += e
	a.n++
}

// pair returns the mean as h + l (see meanPair), or 0, 0 if no value was
// added.
func (a *meanAcc) pair() (h, l float64) {
	if !a.mixed {
		return a.first, 0
	}
	return meanPair(a.s, a.c, a.n)
}

// mean returns the mean, rounded to float64, or 0 if no value was added.
func (a *meanAcc) mean() float64 {
	h, l := a.pair()
	return h + l
}
