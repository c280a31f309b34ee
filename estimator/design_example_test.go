package estimator_test

import (
	"fmt"
	"math/big"

	"spiral/combin"
	"spiral/estimator"
)

// Position weights decide whether E[g] is proportional to grad J when each
// set is read in index order. Two splits of the 8 traces into halves give
// every position the weight M = 1, so E[g] = grad J even for an aggregator
// that trusts its first candidate. Three sets that credit traces 0, 1, 4, 5
// twice and the others once do not: that aggregator gets E[g] = (1/2) grad J,
// not M grad J = grad J.
func ExampleSetDistribution_PositionWeights() {
	show := func(sets [][]int) {
		d, err := estimator.FixedSets(8, sets)
		if err != nil {
			panic(err)
		}
		a := d.PositionWeights()
		fmt.Println("M =", d.M().RatString(), "weights", a[0].RatString(), a[1].RatString(), a[2].RatString(), a[3].RatString())
	}
	show([][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}, {2, 3, 6, 7}})
	show([][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}})
	// Output:
	// M = 1 weights 1 1 1 1
	// M = 1 weights 1/2 1/2 3/2 3/2
}

// The exact moments of the search estimator under the balanced design at
// the paper's configuration, for an aggregator that trusts its first
// candidate (f = 1/4 or 1 as it is symbol 0 or 1, p = (1/3, 2/3)). The update
// is unbiased with M = 1, and its total variance is 10849/85680 ~ 0.1266,
// against 0.1494 for the uniform design divided by its M = 1365/1541
// (TestDesignVariancePaper).
func ExampleSetDistribution_Moments() {
	f, _ := combin.Subsets(8, 4)
	d, err := estimator.BalancedSets(f, 4)
	if err != nil {
		panic(err)
	}
	c, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)})
	first, _ := estimator.FirstTable(2, 4, []*big.Rat{big.NewRat(1, 4), big.NewRat(1, 1)})
	m, err := d.Moments(c, first, combin.IndexOrder, 0)
	if err != nil {
		panic(err)
	}
	g, _ := estimator.Gradient(c, first, combin.IndexOrder)
	v, _ := m.NormalisedVariance().Float64()
	fmt.Println("groups:", d.NumSets(), " M =", m.M.RatString())
	fmt.Println("E[g] =", m.Mean[0].RatString(), m.Mean[1].RatString(), " grad J =", g[0].RatString(), g[1].RatString())
	fmt.Printf("Var(g/M) = %s ~ %.4f\n", m.NormalisedVariance().RatString(), v)
	fmt.Println("E[A^2] =", m.SearchSquare.RatString(), " no credit:", m.NoCredit.RatString())
	// Output:
	// groups: 70  M = 1
	// E[g] = -1/6 1/6  grad J = -1/6 1/6
	// Var(g/M) = 10849/85680 ~ 0.1266
	// E[A^2] = 659/19040  no credit: 0
}
