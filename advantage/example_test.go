package advantage_test

import (
	"errors"
	"fmt"
	"math"

	"spiral/advantage"
)

// The worked example of docs/method.md#worked-example: 8 search traces,
// K = 4 sets of n = 4 and N2 = 4 rewards per set, with set scores
// f = (0.75, 0.50, 0.25, 0.50). Trace 0 is only in G1 and G3, so its
// search advantage is (0.25 - 0.25)/2 = 0; trace 7 is in no set.
func ExampleCompute() {
	sets := [][]int{
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
	c, err := advantage.Compute(8, sets, rewards)
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

// Group baselines over verl's layout: a group id per row, rows in any
// order. Problem "p" has rewards (1, 0, 1, 1), mean 0.75; "q" got all four
// wrong and "r" has a single row: both get 0 and are reported, as a
// dynamic-sampling trainer needs.
func ExampleGroupRelative() {
	rewards := []float64{1, 0, 0, 1, 0, 1, 0, 1, 0}
	ids := []string{"p", "q", "p", "r", "q", "p", "q", "p", "q"}
	dst := make([]float64, len(rewards))

	rep, err := advantage.GroupRelative(dst, rewards, ids, advantage.GroupOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Dr. GRPO:", dst)
	fmt.Printf("%d groups, singletons %v, zero variance %v\n", rep.Groups, rep.Singletons, rep.ZeroVariance)

	// verl's default GRPO: divide by torch.std (Bessel) + 1e-6. For p,
	// std = sqrt(0.75/3) = 0.5.
	verl := advantage.GroupOptions{Scale: advantage.ScaleGroup, Bessel: true, Epsilon: 1e-6}
	if _, err := advantage.GroupRelative(dst, rewards, ids, verl); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("GRPO (verl): %.6f\n", dst)
	// Output:
	// Dr. GRPO: [0.25 0 -0.75 0 0 0.25 0 0.25 0]
	// 3 groups, singletons [r], zero variance [q]
	// GRPO (verl): [0.499999 0.000000 -1.499997 0.000000 0.000000 0.499999 0.000000 0.499999 0.000000]
}

// The allocation-free batch form: two problems of the paper's shape (8
// traces, 4 sets of 4, 4 rewards per set) in one flat layout. The first is
// the worked example; in the second every set has the same rewards, so
// every advantage is exactly 0 (a problem a dynamic-sampling trainer would
// resample). A trainer keeps the BatchCredit and reuses it every step.
func ExampleComputeBatch() {
	in, err := advantage.NewUniformBatch[float64](2, 8, 4, 4, 4)
	if err != nil {
		panic(err)
	}
	copy(in.Members, []int{
		0, 1, 2, 3, 1, 2, 4, 5, 0, 4, 5, 6, 2, 3, 5, 6, // problem 0
		0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3, 5, 7, // problem 1
	})
	copy(in.Rewards, []float64{
		1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, // f = 0.75, 0.50, 0.25, 0.50
		1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, // f = 0.25 for every set
	})
	var dst advantage.BatchCredit[float64] // reused from step to step
	if err := advantage.ComputeBatch(&dst, in); err != nil {
		panic(err)
	}
	fmt.Println("set scores:    ", dst.SetScores)
	fmt.Println("set advantages:", dst.SetAdvantages)
	fmt.Println("search:        ", dst.Search)
	fmt.Println("appearances:   ", dst.Appearances)
	// Output:
	// set scores:     [0.75 0.5 0.25 0.5 0.25 0.25 0.25 0.25]
	// set advantages: [0.25 0 -0.25 0 0 0 0 0]
	// search:         [0 0.125 0.08333333333333333 0.125 -0.125 -0.08333333333333333 -0.125 0 0 0 0 0 0 0 0 0]
	// appearances:    [2 2 3 2 2 3 2 0 2 2 2 2 2 2 2 2]
}

// A batch in which one output could not be scored and one problem has a
// bad reward. The unscorable output is marked, so its NaN is not read and
// its set's score is the mean of the other three. The bad
// problem is reported and zeroed, and the others are credited; errors.As
// recovers the problem, set and output of the error, and errors.Is its
// reason.
func ExampleBatchError() {
	in, err := advantage.NewUniformBatch[float64](3, 2, 1, 2, 4)
	if err != nil {
		panic(err)
	}
	copy(in.Members, []int{0, 1, 0, 1, 0, 1})
	copy(in.Rewards, []float64{
		1, 0, math.NaN(), 1, // problem 0: the third output could not be scored
		1, 1, 0, 0, // problem 1
		0, 1, math.Inf(1), 0, // problem 2: a bad reward, not marked
	})
	in.Unscorable = make([]bool, len(in.Rewards))
	in.Unscorable[2] = true

	var dst advantage.BatchCredit[float64]
	err = advantage.ComputeBatch(&dst, in)
	var batchErr *advantage.BatchError
	if err != nil && !errors.As(err, &batchErr) {
		fmt.Println(err) // the layout does not hold together: nothing credited
		return
	}
	if batchErr != nil {
		for _, e := range batchErr.Problems {
			fmt.Printf("resample problem %d (%s, set %d, output %d, not finite: %v)\n",
				e.Problem, e.Field, e.Set, e.Output, errors.Is(e, advantage.ErrNotFinite))
		}
	}
	fmt.Println("set scores:   ", dst.SetScores)
	fmt.Println("scored:       ", dst.ScoredOutputs)
	fmt.Println("aggregation:  ", dst.Aggregation[:4])
	fmt.Println("rejected:     ", dst.Rejected)
	// Output:
	// resample problem 2 (Rewards, set 0, output 2, not finite: true)
	// set scores:    [0.6666666666666666 0.5 0]
	// scored:        [3 4 0]
	// aggregation:   [0.3333333333333333 -0.6666666666666666 0 0.3333333333333333]
	// rejected:      [false false true]
}

// Compute's errors name the argument, problem, set and position of a bad
// entry; errors.As recovers them, and errors.Is the reason.
func ExampleInputError() {
	_, err := advantage.Compute(4, [][]int{{0, 1}, {2, 3}}, [][]float64{{1, 0}, {1, math.NaN()}})
	var e *advantage.InputError
	if errors.As(err, &e) {
		fmt.Println(err)
		fmt.Println(e.Field, e.Problem, e.Set, e.Output, errors.Is(err, advantage.ErrNotFinite))
	}
	_, err = advantage.Compute(4, [][]int{{0, 1}, {1, 0}}, [][]float64{{1}, {0}})
	if errors.As(err, &e) {
		fmt.Println(err)
	}
	// Output:
	// advantage: rewards: problem 0, set 1, output 1 = NaN: reward is not finite
	// rewards 0 1 1 true
	// advantage: sets: problem 0, set 1: identical to set 0
}
