package estimator

import (
	"iter"
	"math/big"
)

// outputOutcome is one joint outcome of N2 aggregation outputs: output j
// answers Z[j] and earns reward R[j] in {0, 1}, with probability Prob.
type outputOutcome struct {
	Prob *big.Rat
	Z, R []int
}

// outputOutcomes enumerates the joint outcomes of N2 independent
// aggregation outputs, output j answering z_j in [0, V) with probability
// p[z_j] and earning r_j = 1 with probability reward[z_j] (V = len(p)):
// the (2V)^N2 sequences of digits 2 z_j + r_j in base 2V, leaves of them,
// in that order, each with its exact probability
//
//	prod_j p[z_j] (reward[z_j] if r_j = 1, else 1 - reward[z_j]),
//
// skipping those of probability 0. The yielded outcome's slices and Prob
// are reused from one outcome to the next: a caller that keeps them copies
// them. The caller bounds leaves = (2V)^N2.
func outputOutcomes(p, reward []*big.Rat, N2, leaves int) iter.Seq[outputOutcome] {
	return func(yield func(outputOutcome) bool) {
		V := len(p)
		o := outputOutcome{Prob: new(big.Rat), Z: make([]int, N2), R: make([]int, N2)}
		one := big.NewRat(1, 1)
		var miss big.Rat
		for leaf := range leaves {
			x := leaf
			o.Prob.SetInt64(1)
			for j := range N2 {
				d := x % (2 * V)
				x /= 2 * V
				z, r := d/2, d%2
				o.Z[j], o.R[j] = z, r
				o.Prob.Mul(o.Prob, p[z])
				if r == 1 {
					o.Prob.Mul(o.Prob, reward[z])
				} else {
					o.Prob.Mul(o.Prob, miss.Sub(one, reward[z]))
				}
			}
			if o.Prob.Sign() != 0 && !yield(o) {
				return
			}
		}
	}
}
