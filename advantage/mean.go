package advantage

import "golang.org/x/exp/constraints"

// The means below are taken in float64, summing in order, with one rule
// added: if every value equals the first (compared with ==), the mean is
// that first value exactly instead of sum/n, which can differ from it in
// the last bit (three copies of 0.1 sum to 0.30000000000000004).
// Deviations from such a mean are exactly zero, so a set or group whose
// rewards are all equal gets advantages that are exactly 0, not ±1 ulp.
// meanOf, meanDev and meanAcc agree bitwise on the same values in the same
// order.

// meanOf returns the mean of xs, which must not be empty.
func meanOf[F constraints.Float](xs []F) float64 {
	s := 0.0
	for _, x := range xs {
		s += float64(x)
	}
	for _, x := range xs[1:] {
		if x != xs[0] {
			return s / float64(len(xs))
		}
	}
	return float64(xs[0])
}

// meanDev returns the mean of the deviations x - pivot over xs, which must
// not be empty.
func meanDev[F constraints.Float](xs []F, pivot float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += float64(x) - pivot
	}
	d0 := float64(xs[0]) - pivot
	for _, x := range xs[1:] {
		if float64(x)-pivot != d0 {
			return s / float64(len(xs))
		}
	}
	return d0
}

// meanAcc accumulates a mean one value at a time, for values that are not
// contiguous in memory.
type meanAcc struct {
	sum   float64
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
