package loss_test

import (
	"fmt"

	"spiral/loss"
)

// Two micro-batches of unequal counts, each reduced by verl's legacy
// dp_actor with token-mean over its own tokens: with the whole batch's
// kappa, the micro-batches' gradients add up to kappa times the update.
func ExamplePartCoefficients() {
	update := []float64{1, -1, 0.5, 2}
	lengths := []int{4, 2, 0, 6}
	kappa := loss.ScaleOf(loss.TokenMean, 4, 3) // 3 outputs with tokens
	c := make([]float64, 4)
	for _, mb := range [][2]int{{0, 1}, {1, 4}} {
		in := loss.Rows{Update: update[mb[0]:mb[1]], Lengths: lengths[mb[0]:mb[1]]}
		rep, err := loss.PartCoefficients(c[mb[0]:mb[1]], in, loss.TokenMean, loss.Part{Scale: kappa})
		if err != nil {
			panic(err)
		}
		fmt.Printf("micro-batch %v: %d tokens, dropped %d\n", mb, rep.Tokens, rep.Dropped)
	}
	fmt.Printf("kappa %.4f, coefficients %.4f\n", kappa, c)
	// Output:
	// micro-batch [0 1]: 4 tokens, dropped 0
	// micro-batch [1 4]: 8 tokens, dropped 1
	// kappa 0.3333, coefficients [1.3333 -2.6667 0.0000 5.3333]
}
