package estimator_test

import (
	"fmt"
	"math/big"
	"spiral"

	"spiral/combin"
	"spiral/estimator"
)

// The exact expectation of the search estimator at the paper's
// configuration (916,895 selections, 256 outcomes), for an order-sensitive
// aggregator that trusts the first candidate it reads, f(y) = [y_1 = 1],
// under the three presentation rules. Index order and shuffling follow
// J = E f; sorting by content follows J_sort = E f(sort(y)) = P(all four
// candidates are 1).
func ExampleWeights_Expectation() {
	f, _ := combin.Subsets(8, 4)
	w, _ := estimator.SelectionWeights(f, 4)
	c, _ := f.Constants(combin.Uniform, 4)
	m := c.M
	pi, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)})
	first, _ := estimator.FirstTable(2, 4, []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)})
	gradJ, _ := estimator.Gradient(pi, first, combin.IndexOrder)
	for _, p := range []struct {
		name  string
		order combin.Order
	}{{"index", combin.IndexOrder}, {"shuffled", combin.Shuffled}, {"sorted", estimator.SortedBySymbol}} {
		e, _ := w.Expectation(pi, first, p.order)
		jp, _ := estimator.Objective(pi, first, p.order)
		fmt.Printf("%-8s E[g] = %s; J_p = %s; E[g]/M = %s; equals M grad J: %v\n",
			p.name, e[1].RatString(), jp.RatString(), new(big.Rat).Quo(e[1], m).RatString(), e[1].Cmp(new(big.Rat).Mul(m, gradJ[1])) == 0)
	}
	// Output:
	// index    E[g] = 910/4623; J_p = 2/3; E[g]/M = 2/9; equals M grad J: true
	// shuffled E[g] = 910/4623; J_p = 2/3; E[g]/M = 2/9; equals M grad J: true
	// sorted   E[g] = 29120/124821; J_p = 16/81; E[g]/M = 64/243; equals M grad J: false
}

// The aggregation credit of one set with the paper's N2 = 4 outputs: the
// within-set baseline (which includes the output's own reward) gives
// 3 grad E[r], leave-one-out gives 4 grad E[r].
func ExampleAggregationCredit() {
	agg, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big.NewRat(1, 6)})
	reward := []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 4), big.NewRat(0, 1)}
	g, _ := estimator.RewardGradient(agg, reward)
	fmt.Println("grad E[r]:", g[0].RatString(), g[1].RatString(), g[2].RatString())
	for _, b := range []spiral.AggregationBaseline{spiral.WithinSet, spiral.LeaveOneOut} {
		c, _ := estimator.AggregationCredit(agg, reward, 4, b)
		a := new(big.Rat).Quo(c[0], g[0])
		fmt.Printf("%v: credit %s %s %s = %s grad E[r]\n", b, c[0].RatString(), c[1].RatString(), c[2].RatString(), a.RatString())
	}
	// Output:
	// grad E[r]: 5/24 -1/9 -7/72
	// WithinSet: credit 5/8 -1/3 -7/24 = 3 grad E[r]
	// LeaveOneOut: credit 5/6 -4/9 -7/18 = 4 grad E[r]
}
