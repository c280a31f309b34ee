package spiral_test

import (
	"fmt"

	"spiral"
)

// With each aggregation output missing with probability 1/4, the paper's
// update weights the aggregation part by the expected count K E[(S-1)+]
// instead of K (N2 - 1), and ScoredGradient divides each set by its own
// scored count and by P(S >= 2).
func ExampleConfig_ScoredConstants() {
	c := spiral.Config{SearchTraces: 2, SetSize: 1, Sets: 2, AggregationsPerSet: 3}
	all, _ := c.RoleWeights(spiral.LossOptions{})
	missing, _ := c.RoleWeights(spiral.LossOptions{MissingRate: 0.25})
	sc, _ := c.ScoredConstants(0.25)
	fmt.Println("aggregation weight, every output scored:", all.Aggregation.RatString())
	fmt.Println("aggregation weight, a quarter missing:  ", missing.Aggregation.RatString())
	fmt.Printf("P(K' >= 2) = %.6f, P(S >= 2) = %.6f\n", sc.Search, sc.Aggregation)
	// Output:
	// aggregation weight, every output scored: 4
	// aggregation weight, a quarter missing:   81/32
	// P(K' >= 2) = 0.968994, P(S >= 2) = 0.843750
}
