package spiral_test

import (
	"fmt"

	"spiral"
	"spiral/loss"
)

// A verl-shaped step: the search traces and the aggregation outputs of a
// batch are rows of one tensor reduced with loss_agg_mode=token-mean. The
// coefficients go where verl puts the advantages (broadcast over each
// row's response mask); its gradient is then Scale = 1/R times SPIRAL's
// joint gradient estimate, whatever the lengths. Each coefficient is the
// advantage times its role multiplier (1541/1365 for search, 1/12 for
// aggregation) times the batch's mean length T/R = 775: a learning rate
// tuned on plain advantages under token-mean is divided by a typical mean
// length to keep the step's size.
func ExampleConfig_LossCoefficients() {
	c := spiral.Paper()
	planner, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	var plans spiral.Plans
	if err := planner.PlanTo(&plans, 1, 0, []uint64{0}); err != nil {
		panic(err)
	}
	in := spiral.Batch{Plans: &plans}
	in.Rewards = []float64{1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0}
	in.SearchLengths = []int{900, 1200, 700, 1500, 800, 1000, 1100, 600}
	in.AggregationLengths = make([]int, len(in.Rewards))
	for o := range in.AggregationLengths {
		in.AggregationLengths[o] = 300 + 50*o
	}
	var credit spiral.BatchCredit
	if err := c.CreditBatch(&credit, in); err != nil {
		panic(err)
	}
	var coef spiral.LossCoefficients // reused every step
	opt := spiral.LossOptions{Update: spiral.JointGradient, Reduction: loss.TokenMean}
	if err := c.LossCoefficients(&coef, &credit, in, opt); err != nil {
		panic(err)
	}
	fmt.Printf("search advantages %.4g\n", credit.Search)
	fmt.Printf("search coefficients %.4g\n", coef.Search)
	fmt.Printf("aggregation advantages %.4g\n", credit.Aggregation[:4])
	fmt.Printf("aggregation coefficients %.4g\n", coef.Aggregation[:4])
	fmt.Printf("gradient = %.4g x joint gradient estimate (%d rows, %d tokens)\n", coef.Report.Scale, coef.Report.Rows, coef.Report.Tokens)
	// Output:
	// search advantages [0 0 0 0.125 0.125 -0.125 -0.25 0]
	// search coefficients [0 0 0 109.4 109.4 -109.4 -218.7 0]
	// aggregation advantages [0.25 0.25 0.25 -0.75]
	// aggregation coefficients [16.15 16.15 16.15 -48.44]
	// gradient = 0.04167 x joint gradient estimate (24 rows, 18600 tokens)
}
