package advise_test

import (
	"fmt"
	"math/big"

	"spiral"
	"spiral/advise"
	"spiral/budget"
	"spiral/combin"
)

// Rank the configurations of at most 6 search traces that fit 14 calls of
// 4,096 tokens, for a problem whose search traces are correct one time in
// four and whose aggregator finds a correct candidate three times in four,
// for a trainer that spends 8 such problems' tokens a step: by the
// expected improvement per token of one step (in units of 1/L), with rho =
// B SNR and the former ranking's SNR per token beside it.
func ExampleAdvise() {
	res, err := advise.Advise(advise.Request{
		Budget:    14 * 4096,
		Lengths:   budget.PaperLimits(0),
		Reward:    advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
		Step:      advise.Step{Tokens: 8 * 14 * 4096},
		MaxTraces: 6,
		MaxSets:   4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("N1  n  K N2 design       M  tokens     B   rho  gain/token  SNR/token")
	for _, c := range res.Candidates[:5] {
		cfg := c.Config
		fmt.Printf("%2d %2d %2d %2d %-8s %5.3f %7d %5.2f %5.2f %11.4g %10.3g\n", cfg.SearchTraces, cfg.SetSize, cfg.Sets,
			cfg.AggregationsPerSet, cfg.Design, c.Constants.MFloat, c.Tokens, ratF(c.Problems), ratF(c.Rho), ratF(c.ImprovementPerToken), c.SNRPerToken)
	}
	fmt.Println(len(res.Candidates), "candidates")
	// Output:
	// N1  n  K N2 design       M  tokens     B   rho  gain/token  SNR/token
	//  6  3  4  2 balanced 1.000   57344  8.00  4.93   8.348e-08   1.07e-05
	//  5  3  4  2 balanced 0.667   53248  8.62  4.14   8.089e-08   9.03e-06
	//  6  3  3  2 balanced 1.000   49152  9.33  4.06   8.057e-08   8.85e-06
	//  6  3  2  3 balanced 1.000   49152  9.33  3.98   8.027e-08   8.68e-06
	//  6  3  2  2 balanced 1.000   40960 11.20  3.85   7.973e-08    8.4e-06
	// 116 candidates
}

// The figures of one configuration without ranking the space: the top of
// ExampleAdvise's ranking, alone, at the same step budget.
func ExampleEvaluate() {
	cfg := spiral.Paper()
	cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design = 6, 3, 4, 2, combin.Balanced
	c, err := advise.Evaluate(cfg, advise.Request{
		Lengths: budget.PaperLimits(0),
		Reward:  advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
		Step:    advise.Step{Tokens: 8 * 14 * 4096},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("M = %v, %d tokens, search SNR %.4f, SNR %.4f, ||G||^2 %.4f, rho %.3f\n",
		c.Constants.M, c.Tokens, ratF(c.SearchSNR), ratF(c.SNR), ratF(c.Signal), ratF(c.Rho))
	fmt.Printf("per token: %.4g, limits %.4g (tokens) and %.4g (large batch)\n",
		ratF(c.ImprovementPerToken), ratF(c.TokenLimited), ratF(c.LargeBatch))
	// Output:
	// M = 1/1, 57344 tokens, search SNR 0.7612, SNR 0.6163, ||G||^2 0.0921, rho 4.930
	// per token: 8.348e-08, limits 4.951e-07 (tokens) and 1.004e-07 (large batch)
}

func ratF(x *big.Rat) float64 { f, _ := x.Float64(); return f }

// How many of n candidates must be correct for the aggregator to succeed
// with probability Found, under each rule.
func ExampleRewardModel_Needed() {
	for _, m := range []advise.RewardModel{{}, {Rule: advise.NeedsPieces, Needs: 2}, {Rule: advise.Majority}} {
		fmt.Printf("%-8v", m.Rule)
		for n := 2; n <= 5; n++ {
			k, err := m.Needed(n)
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf(" n=%d:%d", n, k)
		}
		fmt.Println()
	}
	// Output:
	// find-one n=2:1 n=3:1 n=4:1 n=5:1
	// needs    n=2:2 n=3:2 n=4:2 n=5:2
	// majority n=2:2 n=3:2 n=4:3 n=5:3
}

// The frontier of a small space: for each cap on tokens per problem, the
// last row within it is the best configuration.
func ExampleResult_Frontier() {
	res, err := advise.Advise(advise.Request{
		Budget:          12 * 4096,
		Lengths:         budget.PaperLimits(0),
		Reward:          advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
		MaxTraces:       5,
		MaxSets:         3,
		MaxAggregations: 3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("N1  n  K N2 design   tokens  gain/token")
	for _, c := range res.Frontier() {
		cfg := c.Config
		fmt.Printf("%2d %2d %2d %2d %-8s %6d %11.4g\n", cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design, c.Tokens, ratF(c.ImprovementPerToken))
	}
	// Output:
	// N1  n  K N2 design   tokens  gain/token
	//  3  2  2  2 uniform   28672   3.036e-09
	//  3  2  2  2 balanced  28672   3.036e-09
	//  4  3  2  2 uniform   32768   3.594e-09
	//  4  3  2  2 balanced  32768   3.594e-09
	//  5  3  2  2 balanced  36864   3.619e-09
	//  5  3  3  2 balanced  45056   3.626e-09
}
