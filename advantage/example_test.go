package advantage_test

import (
	"fmt"

	"spiral/advantage"
)

// The worked example of SPIRAL.md section 2: 8 search traces, K = 4 sets
// of n = 4 and N2 = 4 rewards per set, with set scores
// f = (0.75, 0.50, 0.25, 0.50). Trace 0 is only in G1 and G3, so its
// search advantage is (0.25 - 0.25)/2 = 0; trace 7 is in no set.
func ExampleCompute() {
	groups := [][]int{
		{0, 1, 2, 3}, // G1
		{1, 2, 4, 5}, // G2
		{0, 4, 5, 6}, // G3
		{2, 3, 5, 6}, // G4
	}
	rewards := [][]float64{
		{1, 1, 1, 0}, // f1 = 0.75
		{1, 0, 1, 0}, // f2 = 0.50
		{0, 0, 1, 0}, // f3 = 0.25
		{0, 1, 1, 0}, // f4 = 0.50
	}
	c, err := advantage.Compute(8, groups, rewards)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("f     =", c.SetScores)
	fmt.Println("fbar  =", c.SetScores[0]-c.SetAdvantages[0])
	fmt.Println("A_set =", c.SetAdvantages)
	fmt.Println("A_agg(G1) =", c.Aggregation[0])
	for y, a := range c.Search {
		fmt.Printf("trace %d: in %d sets, A_search = %+.4f\n", y, c.Appearances[y], a)
	}
	// Output:
	// f     = [0.75 0.5 0.25 0.5]
	// fbar  = 0.5
	// A_set = [0.25 0 -0.25 0]
	// A_agg(G1) = [0.25 0.25 0.25 -0.75]
	// trace 0: in 2 sets, A_search = +0.0000
	// trace 1: in 2 sets, A_search = +0.1250
	// trace 2: in 3 sets, A_search = +0.0833
	// trace 3: in 2 sets, A_search = +0.1250
	// trace 4: in 2 sets, A_search = -0.1250
	// trace 5: in 3 sets, A_search = -0.0833
	// trace 6: in 2 sets, A_search = -0.1250
	// trace 7: in 0 sets, A_search = +0.0000
}
