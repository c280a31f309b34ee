package rsa_test

import (
	"fmt"
	"math/rand/v2"

	"spiral/rsa"
)

// Recursive self-aggregation at inference: a population of 8, sets of 4,
// each member of the next population aggregating its own set.
func ExampleConfig_Schedule() {
	r := rsa.Paper()
	r.Steps = 2
	s, err := r.Schedule(rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		panic(err)
	}
	for t, step := range s {
		fmt.Printf("step %d: %v\n", t+1, step)
	}
	// Output:
	// step 1: [[3 4 6 7] [0 1 2 4] [1 4 6 7] [0 1 4 6] [0 2 3 5] [0 2 4 7] [2 3 4 6] [0 1 5 7]]
	// step 2: [[0 3 6 7] [1 2 4 5] [1 2 3 5] [0 2 5 7] [0 1 5 7] [0 4 6 7] [1 3 5 7] [0 3 4 6]]
}
