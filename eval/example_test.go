package eval_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"spiral/eval"
)

// Two policies evaluated on the same four problems, 64 samples each:
// their coverage curves, how many times fewer samples the second needs for
// the first's coverage, and a width too large to allocate.
func Example() {
	grpo := []eval.PassCount{{N: 64, C: 0}, {N: 64, C: 1}, {N: 64, C: 6}, {N: 64, C: 40}}
	spiral := []eval.PassCount{{N: 64, C: 1}, {N: 64, C: 5}, {N: 64, C: 12}, {N: 64, C: 41}}
	ks := []int{1, 2, 4, 8, 16, 32, 64}
	a, _ := eval.CoverageCurve(grpo, 64)
	b, _ := eval.CoverageCurve(spiral, 64)
	onGrid := func(curve []float64) []float64 {
		y := make([]float64, len(ks))
		for i, k := range ks {
			y[i] = curve[k-1]
		}
		return y
	}
	eff, _ := eval.ScalingEfficiency(ks, onGrid(a), onGrid(b))
	for _, p := range eff.Points {
		fmt.Printf("k = %2d  coverage %.3f vs %.3f  efficiency %.2f (%v)\n", p.KA, a[p.KA-1], b[p.KA-1], p.Efficiency, p.Status)
	}
	_, err := eval.CoverageCurve(grpo, 1<<30)
	fmt.Println(errors.Is(err, eval.ErrTooCostly), err)
	// Output:
	// k =  1  coverage 0.184 vs 0.230  efficiency 1.00 (lower bound)
	// k =  2  coverage 0.269 vs 0.350  efficiency 1.60 (reached)
	// k =  4  coverage 0.345 vs 0.477  efficiency 2.06 (reached)
	// k =  8  coverage 0.423 vs 0.613  efficiency 2.68 (reached)
	// k = 16  coverage 0.522 vs 0.751  efficiency 3.18 (reached)
	// k = 32  coverage 0.622 vs 0.868  efficiency 3.83 (reached)
	// k = 64  coverage 0.750 vs 1.000  efficiency 4.02 (reached)
	// true eval: coverage: kmax: 1073741824 > 16777216, the longest curve (memory: the curve takes 8·kmax bytes)
}

// pass@k from n = 16 samples of which c = 2 are correct: the unbiased
// estimator 1 - C(14, k)/C(16, k), in floating point and exactly. With
// fewer samples than k the estimator is undefined, and asking for it is an
// error (the Codex reference code returns 1.0 there, even for c = 0).
func ExamplePassAtK() {
	for _, k := range []int{1, 4, 8} {
		p, _ := eval.PassAtK(16, 2, k)
		exact, _ := eval.PassAtKRat(16, 2, k)
		fmt.Printf("pass@%d = %.6f = %v\n", k, p, exact)
	}
	_, err := eval.PassAtK(16, 0, 32)
	fmt.Println(err)
	// Output:
	// pass@1 = 0.125000 = 1/8
	// pass@4 = 0.450000 = 9/20
	// pass@8 = 0.766667 = 23/30
	// eval: pass@k: k: 32 > n = 16: pass@k needs at least k samples
}

// The coverage curve of a small test set, each problem with its own
// number of samples and of correct samples, with a 90% percentile
// bootstrap interval over problems.
func ExampleCoverageBootstrap() {
	problems := []eval.PassCount{
		{N: 16, C: 0}, {N: 16, C: 1}, {N: 16, C: 3}, {N: 16, C: 12}, {N: 20, C: 20},
	}
	band, _ := eval.CoverageBootstrap(problems, 16, 2000, 0.9, rand.New(rand.NewPCG(1, 2)))
	for _, k := range []int{1, 4, 16} {
		fmt.Printf("coverage@%-2d = %.3f  90%% interval [%.3f, %.3f]\n", k, band.Mean[k-1], band.Lo[k-1], band.Hi[k-1])
	}
	// Output:
	// coverage@1  = 0.400  90% interval [0.087, 0.713]
	// coverage@4  = 0.571  90% interval [0.250, 0.850]
	// coverage@16 = 0.800  90% interval [0.400, 1.000]
}

// The scaling efficiency of a method whose samples are correct with
// probability 0.05 over a baseline at 0.01, on the grid k = 1, 2, 4, ...,
// 256: both coverage curves are 1 - (1-p)^k, and the exact efficiency at
// every width is log(0.95)/log(0.99) = 5.104. Interpolating in log k on
// this coarse grid gives 4.75 to 5.38 (finer grids come closer; see
// ScalingEfficiency); the first widths are lower bounds, since the method
// beats the baseline's coverage there with one sample.
func ExampleScalingEfficiency() {
	ks := []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
	base, method := make([]float64, len(ks)), make([]float64, len(ks))
	for i, k := range ks {
		base[i] = 1 - math.Pow(0.99, float64(k))
		method[i] = 1 - math.Pow(0.95, float64(k))
	}
	res, _ := eval.ScalingEfficiency(ks, base, method)
	fmt.Printf("exact efficiency %.3f\n", math.Log(0.95)/math.Log(0.99))
	for _, p := range res.Points {
		fmt.Printf("k_A = %3d  coverage %.3f  k_B = %6.2f  efficiency %.3f  %v\n", p.KA, p.Coverage, p.KB, p.Efficiency, p.Status)
	}
	fmt.Printf("max %.3f at k_A = %d\n", res.Max, res.MaxKA)
	// Output:
	// exact efficiency 5.104
	// k_A =   1  coverage 0.010  k_B =   1.00  efficiency 1.000  lower bound
	// k_A =   2  coverage 0.020  k_B =   1.00  efficiency 2.000  lower bound
	// k_A =   4  coverage 0.039  k_B =   1.00  efficiency 4.000  lower bound
	// k_A =   8  coverage 0.077  k_B =   1.49  efficiency 5.375  reached
	// k_A =  16  coverage 0.149  k_B =   2.99  efficiency 5.351  reached
	// k_A =  32  coverage 0.275  k_B =   6.03  efficiency 5.305  reached
	// k_A =  64  coverage 0.474  k_B =  12.27  efficiency 5.215  reached
	// k_A = 128  coverage 0.724  k_B =  25.37  efficiency 5.045  reached
	// k_A = 256  coverage 0.924  k_B =  53.88  efficiency 4.751  reached
	// max 5.375 at k_A = 8
}

// A majority vote over five final answers with a tie between "17" and
// "42", under each tie rule.
func ExampleMajorityVote() {
	answers := []string{"42", "17", "17", "42", "9"}
	first, _ := eval.MajorityVote(answers, eval.TieFirstSeen, nil)
	smallest, _ := eval.MajorityVote(answers, eval.TieSmallest, nil)
	random, _ := eval.MajorityVote(answers, eval.TieRandom, rand.New(rand.NewPCG(1, 2)))
	fmt.Println(first, smallest, random == "17" || random == "42")
	// Output:
	// 42 17 true
}

// The expected maj@3 over all C(5, 3) = 10 subsets of five answers, with
// "a" correct: 3 subsets hold both a's, and 4 tie a, b and c, of which a
// comes first in 3.
func ExampleExpectedMajority() {
	answers := []string{"a", "b", "a", "b", "c"}
	for _, rule := range []eval.TieRule{eval.TieFirstSeen, eval.TieSmallest, eval.TieRandom} {
		e, _ := eval.ExpectedMajority(answers, "a", 3, rule)
		fmt.Printf("%-10s %.4f\n", rule, e)
	}
	// Output:
	// first seen 0.6000
	// smallest   0.7000
	// random     0.4333
}
