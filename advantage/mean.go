package advantage

import "spiral/internal/numeric"

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

// twoSum is numeric.TwoSum: t = fl(s + x) and t + e = s + x exactly.
func twoSum(s, x float64) (t, e float64) { return numeric.TwoSum(s, x) }

// meanPair is numeric.MeanPair of the sum s + c of n >= 1 values: the mean
// as h + l, h = fl((s + c)/n) and l what h misses.
func meanPair(s, c float64, n int) (h, l float64) {
	return numeric.MeanPair(numeric.Sum{S: s, C: c}, n)
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
