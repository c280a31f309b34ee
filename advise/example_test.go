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
// four and whose aggregator finds a correct candidate three times in four.
func ExampleAdvise() {
	res, err := advise.Advise(advise.Request{
		Budget:    14 * 4096,
		Lengths:   budget.PaperLimits(0),
		Reward:    advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
		MaxTraces: 6,
		MaxSets:   4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("N1  n  K N2 design       M     miss  tokens  SNR/token")
	for _, c := range res.Candidates[:5] {
		cfg := c.Config
		fmt.Printf("%2d %2d %2d %2d %-8s %5.3f %8v %7d %10.3g\n", cfg.SearchTraces, cfg.SetSize, cfg.Sets,
			cfg.AggregationsPerSet, cfg.Design, c.Constants.MFloat, c.Constants.MissProb, c.Tokens, c.SNRPerToken)
	}
	fmt.Println(len(res.Candidates), "candidates")
	// Output:
	// N1  n  K N2 design       M     miss  tokens  SNR/token
	//  6  2  3  2 balanced 2.000      0/1   49152    1.6e-05
	//  6  2  4  2 balanced 2.000      0/1   57344   1.58e-05
	//  5  2  4  2 balanced 1.500      0/1   53248   1.46e-05
	//  4  2  4  2 balanced 1.000      0/1   49152    1.4e-05
	//  5  2  3  3 balanced 1.500      0/1   57344   1.39e-05
	// 115 candidates
}

// The figures of one configuration without ranking the space: the top of
// ExampleAdvise's ranking, alone.
func ExampleEvaluate() {
	cfg := spiral.Paper()
	cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design = 6, 2, 3, 2, combin.Balanced
	c, err := advise.Evaluate(cfg, advise.Request{
		Lengths: budget.PaperLimits(0),
		Reward:  advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("M = %v, %d tokens, search SNR %.4f, SNR %.4f, SNR/token %.3g\n",
		c.Constants.M, c.Tokens, ratF(c.SearchSNR), ratF(c.SNR), c.SNRPerToken)
	// Output:
	// M = 2/1, 49152 tokens, search SNR 1.1628, SNR 0.7856, SNR/token 1.6e-05
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
	fmt.Println("N1  n  K N2 design   tokens  SNR/token")
	for _, c := range res.Frontier() {
		cfg := c.Config
		fmt.Printf("%2d %2d %2d %2d %-8s %6d %10.3g\n", cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design, c.Tokens, c.SNRPerToken)
	}
	// Output:
	// N1  n  K N2 design   tokens  SNR/token
	//  3  2  2  2 uniform   28672   7.73e-06
	//  3  2  2  2 balanced  28672   7.73e-06
	//  4  2  2  2 balanced  32768    1.2e-05
	//  4  2  2  3 balanced  40960   1.21e-05
	//  5  2  3  2 balanced  45056   1.39e-05
}
