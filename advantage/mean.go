package advantage

import "spiral/internal/numeric"

// The package's one mean, used for the group baselines (meanAcc); SPIRAL's
// set scores (internal/credit's setScores) use the same numeric.Sum and numeric.MeanPair. The
// sum is compensated (numeric.Sum) and the mean kept as a pair h + l
// (numeric.MeanPair), so that deviations r - mean = (r - h) - l are
// accurate to a few units in the last place of the values themselves. If
// every value equals the first (compared with ==), the mean is that value
// exactly, l = 0, since sum/n can differ from it in the last bit (three
// copies of 0.1 sum to 0.30000000000000004): deviations from such a mean
// are exactly zero, so a group or set whose rewards are all equal gets
// advantages that are exactly 0, not ±1 ulp.

// meanAcc accumulates the mean of values added one at a time, for values
// that are not contiguous in memory.
type meanAcc struct {
	sum   numeric.Sum
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
	a.sum.Add(x)
	a.n++
}

// pair returns the mean as h + l (numeric.MeanPair), or 0, 0 if no value
// was added.
func (a *meanAcc) pair() (h, l float64) {
	if !a.mixed {
		return a.first, 0
	}
	return numeric.MeanPair(a.sum, a.n)
}

// mean returns the mean, rounded to float64, or 0 if no value was added.
func (a *meanAcc) mean() float64 {
	h, l := a.pair()
	return h + l
}
