package advantage

import "golang.org/x/exp/constraints"

// meanAcc accumulates the mean of a sequence of float64 values.
//
// If every value added is equal to the first (compared with ==), mean returns
// that first value exactly instead of sum/n, which can differ from it in the
// last bit (three copies of 0.1 sum to 0.30000000000000004). Deviations from
// such a mean are then exactly zero, so a set or group whose rewards are all
// equal gets advantages that are exactly 0, not ±1 ulp.
//
// Two accumulators fed the same values in the same order return bitwise equal
// means; the credit code relies on that to give exactly 0 to a trace that is
// in every sampled set.
type meanAcc struct {
	sum   float64
	first float64
	n     int
	mixed bool
}

func (a *meanAcc) add(x float64) {
	switch {
	case a.n == 0:
		a.first = x
	case x != a.first:
		a.mixed = true
	}
	a.sum += x
	a.n++
}

// mean returns the mean of the values added, or 0 if none were.
func (a *meanAcc) mean() float64 {
	if !a.mixed {
		return a.first
	}
	return a.sum / float64(a.n)
}

// meanOf returns the mean of xs, in float64, as meanAcc computes it.
func meanOf[F constraints.Float](xs []F) float64 {
	var a meanAcc
	for _, x := range xs {
		a.add(float64(x))
	}
	return a.mean()
}

// meanDev returns the mean of the deviations x - pivot, as meanAcc computes it.
func meanDev[F constraints.Float](xs []F, pivot float64) float64 {
	var a meanAcc
	for _, x := range xs {
		a.add(float64(x) - pivot)
	}
	return a.mean()
}
