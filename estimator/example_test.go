package estimator_test

import (
	"fmt"
	"math/big"

	"spiral/combin"
	"spiral/estimator"
)

// The constants of Proposition 3.1 at the paper's configuration, N = 8,
// n = 4, K = 4, for the unordered subsets the paper samples and the ordered
// tuples its proof uses.
func ExampleM() {
	subsets, _ := combin.Subsets(8, 4)
	tuples, _ := combin.Tuples(8, 4)
	for _, f := range []combin.Family{subsets, tuples} {
		q, _ := estimator.CoverProb(f, 4)
		m, _ := estimator.M(f, 4)
		mf, _ := estimator.MFloat(f, 4)
		fmt.Printf("%v: q_K = %s, M = %s ~ %.4f\n", f, q.RatString(), m.RatString(), mf)
	}
	one, _ := estimator.M(subsets, 1)
	fmt.Println("K = 1: M =", one.RatString())
	// Output:
	// Subsets(8, 4): q_K = 1453/1541, M = 1365/1541 ~ 0.8858
	// Tuples(8, 4): q_K = 1760221/1877122, M = 821660/938561 ~ 0.8754
	// K = 1: M = 0
}

// Finite K at N = 8, n = 4: the probability that a trace gets no credit
// (it is in none of the K sets), 1 - q_K, and the multiplier M, for both
// families.
func ExampleCoverProb() {
	subsets, _ := combin.Subsets(8, 4)
	tuples, _ := combin.Tuples(8, 4)
	fmt.Println(" K  no credit (subsets)   no credit (tuples)  M (subsets)  M (tuples)")
	for K := 2; K <= 16; K++ {
		qs, _ := estimator.CoverProbFloat(subsets, K)
		qt, _ := estimator.CoverProbFloat(tuples, K)
		ms, _ := estimator.MFloat(subsets, K)
		mt, _ := estimator.MFloat(tuples, K)
		fmt.Printf("%2d  %19.6f  %19.6f  %11.6f  %10.6f\n", K, 1-qs, 1-qt, ms, mt)
	}
	// Output:
	//  K  no credit (subsets)   no credit (tuples)  M (subsets)  M (tuples)
	//  2             0.246377             0.249851     0.507246    0.500298
	//  3             0.119565             0.124777     0.760870    0.750447
	//  4             0.057106             0.062277     0.885788    0.875447
	//  5             0.026822             0.031064     0.946355    0.937872
	//  6             0.012380             0.015486     0.975241    0.969029
	//  7             0.005609             0.007715     0.988781    0.984570
	//  8             0.002493             0.003841     0.995014    0.992317
	//  9             0.001086             0.001912     0.997829    0.996177
	// 10             0.000463             0.000951     0.999074    0.998099
	// 11             0.000193             0.000472     0.999614    0.999055
	// 12             0.000078             0.000235     0.999843    0.999531
	// 13             0.000031             0.000116     0.999938    0.999767
	// 14             0.000012             0.000058     0.999976    0.999884
	// 15             0.000005             0.000029     0.999991    0.999943
	// 16             0.000002             0.000014     0.999997    0.999972
}

// The role weights of the expected SPIRAL update at the paper's
// configuration (subsets, N = 8, n = 4, K = 4, N2 = 4, sum-reduced losses),
// and the multipliers that make it unbiased for grad J.
func ExampleRoleWeights() {
	f, _ := combin.Subsets(8, 4)
	for _, b := range []estimator.Baseline{estimator.WithinSet, estimator.LeaveOneOut} {
		w, _ := estimator.RoleWeights(f, 4, 4, b, estimator.SumReduction)
		ms, ma, _ := w.Multipliers()
		ratio := new(big.Rat).Quo(w.Aggregation, w.Search)
		r, _ := ratio.Float64()
		fmt.Printf("%v: E[update] = %s grad_search J + %s grad_agg J (ratio %.2f); multipliers %s, %s\n",
			b, w.Search.RatString(), w.Aggregation.RatString(), r, ms.RatString(), ma.RatString())
	}
	// Output:
	// WithinSet: E[update] = 1365/1541 grad_search J + 12 grad_agg J (ratio 13.55); multipliers 1541/1365, 1/12
	// LeaveOneOut: E[update] = 1365/1541 grad_search J + 16 grad_agg J (ratio 18.06); multipliers 1541/1365, 1/16
}

// The exact expectation of the search estimator at the paper's
// configuration (916,895 selections, 256 outcomes), for an order-sensitive
// aggregator that trusts the first candidate it reads, f(y) = [y_1 = 1],
// under the three presentation rules. Index order and shuffling follow
// J = E f; sorting by content follows J_sort = E f(sort(y)) = P(all four
// candidates are 1).
func ExampleWeights_Expectation() {
	f, _ := combin.Subsets(8, 4)
	w, _ := estimator.SelectionWeights(f, 4)
	m, _ := estimator.M(f, 4)
	pi, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)})
	first, _ := estimator.FirstTable(2, 4, []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)})
	gradJ, _ := estimator.Gradient(pi, first, estimator.PresentIndexOrder)
	for _, p := range []estimator.Presentation{estimator.PresentIndexOrder, estimator.PresentShuffled, estimator.PresentBySymbol} {
		e, _ := w.Expectation(pi, first, p)
		jp, _ := estimator.Objective(pi, first, p)
		fmt.Printf("%-17v E[g] = %s; J_p = %s; E[g]/M = %s; equals M grad J: %v\n",
			p, e[1].RatString(), jp.RatString(), new(big.Rat).Quo(e[1], m).RatString(), e[1].Cmp(new(big.Rat).Mul(m, gradJ[1])) == 0)
	}
	// Output:
	// PresentIndexOrder E[g] = 910/4623; J_p = 2/3; E[g]/M = 2/9; equals M grad J: true
	// PresentShuffled   E[g] = 910/4623; J_p = 2/3; E[g]/M = 2/9; equals M grad J: true
	// PresentBySymbol   E[g] = 29120/124821; J_p = 16/81; E[g]/M = 64/243; equals M grad J: false
}

// The aggregation credit of one set with the paper's N2 = 4 outputs: the
// within-set baseline (which includes the output's own reward) gives
// 3 grad E[r], leave-one-out gives 4 grad E[r].
func ExampleAggregationCredit() {
	agg, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big.NewRat(1, 6)})
	reward := []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 4), big.NewRat(0, 1)}
	g, _ := estimator.RewardGradient(agg, reward)
	fmt.Println("grad E[r]:", g[0].RatString(), g[1].RatString(), g[2].RatString())
	for _, b := range []estimator.Baseline{estimator.WithinSet, estimator.LeaveOneOut} {
		c, _ := estimator.AggregationCredit(agg, reward, 4, b)
		a, _ := estimator.AggregationFactor(4, b)
		fmt.Printf("%v: credit %s %s %s = %s grad E[r]\n", b, c[0].RatString(), c[1].RatString(), c[2].RatString(), a.RatString())
	}
	// Output:
	// grad E[r]: 5/24 -1/9 -7/72
	// WithinSet: credit 5/8 -1/3 -7/24 = 3 grad E[r]
	// LeaveOneOut: credit 5/6 -4/9 -7/18 = 4 grad E[r]
}
