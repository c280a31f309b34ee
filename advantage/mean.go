package advantage

// meanAcc accumulates a mean one value at a time, for values that are not
// contiguous in memory, by the rule of SPIRAL's credit (see
// spiral/internal/credit): the sum in order divided by the count, or the
// first value exactly if every value equals it (compared with ==), since
// sum/n can differ from it in the last bit (three copies of 0.1 sum to
// 0.30000000000000004). Deviations from such a mean are exactly zero, so a
// group whose rewards are all equal gets advantages that are exactly 0,
// not ±1 ulp.
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
