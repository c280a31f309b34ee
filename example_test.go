package spiral_test

import (
	"errors"
	"fmt"

	"spiral"
	"spiral/combin"
	"spiral/lengthgate"
)

// A trainer's step: plan every problem of the batch, generate and score
// (not shown), then credit the whole batch into a result reused from step
// to step. Problem 1's rewards are all 0: it gives no signal, and a trainer
// using dynamic sampling resamples it.
func Example() {
	c := spiral.Paper()
	c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	planner, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	var plans spiral.Plans     // reused every step
	var out spiral.BatchCredit // reused every step: no allocation after the first
	const seed, step = 1, 0
	problems := []uint64{17, 42} // the problems' keys: their indices in the data set
	if err := planner.PlanTo(&plans, seed, step, problems); err != nil {
		panic(err)
	}
	in := spiral.Batch{Plans: &plans}
	// ... sample 8 search traces per problem, build aggregation prompt i of
	// problem q from traces plans.Member(q, i, j) for j < n, sample 4
	// outputs per prompt, score them and record every output's length ...
	in.Rewards = []float64{
		1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, // problem 0
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // problem 1
	}
	in.SearchLengths = make([]int, len(problems)*c.SearchTraces)
	in.AggregationLengths = make([]int, len(in.Rewards))
	in.SearchLengths[0] = 5000 // over the target: a positive advantage is gated
	if err := c.CreditBatch(&out, in); err != nil {
		panic(err)
	}
	w, err := c.RoleWeights(spiral.LossOptions{})
	if err != nil {
		panic(err)
	}
	for q, sp := range out.Spans() {
		fmt.Printf("problem %d: sets %v, search %.3g, no signal %v\n",
			q, plans.Plan(q).Sets, out.Search[sp.Trace:sp.Trace+sp.Traces], out.NoSignal[q])
	}
	fmt.Printf("search gate: %+v\n", out.Gates.Search)
	fmt.Printf("scale the search loss by %.4f and the aggregation loss by %.4f\n", w.SearchMultiplier, w.AggregationMultiplier)
	// Output:
	// problem 0: sets [[0 2 3 5] [1 3 5 7] [2 3 5 7] [0 1 4 7]], search [0 0 0 0 0 0 0 -0.0833], no signal false
	// problem 1: sets [[1 3 4 5] [0 1 5 6] [1 4 6 7] [2 4 5 6]], search [0 0 0 0 0 0 0 0], no signal true
	// search gate: {Outputs:16 Positive:1 AtTarget:0 Gated:1 MassRemoved:0.125}
	// scale the search loss by 1.1289 and the aggregation loss by 0.0833
}

// A plan lists, for one problem, which search traces go into each of the K
// aggregation prompts, in presentation order. The same seed gives the same
// plan on every machine: a plan is a function of the seed, the training
// step and the problem's key alone.
func ExampleConfig_Plan() {
	c := spiral.Paper()
	p, err := c.Plan(2026, 1, 0)
	if err != nil {
		panic(err)
	}
	for i, s := range p.Sets {
		fmt.Printf("aggregation prompt %d reads search traces %v\n", i, s)
	}
	// Output:
	// aggregation prompt 0 reads search traces [0 1 2 5]
	// aggregation prompt 1 reads search traces [2 3 4 7]
	// aggregation prompt 2 reads search traces [1 2 5 7]
	// aggregation prompt 3 reads search traces [0 1 4 7]
}

// The worked example of docs/method.md#worked-example: set scores (0.75,
// 0.50, 0.25, 0.50) give set advantages (+0.25, 0, -0.25, 0); trace 0,
// which is only in G1 and G3, gets (0.25 - 0.25)/2 = 0; G1's rewards
// (1, 1, 1, 0) give aggregation advantages (0.25, 0.25, 0.25, -0.75).
func ExampleConfig_Credit() {
	c := spiral.Paper()
	plan := spiral.Plan{Sets: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 6, 7}, {2, 3, 5, 6}}}
	rewards := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}
	cr, err := c.Credit(plan, rewards, spiral.Lengths{})
	if err != nil {
		panic(err)
	}
	fmt.Println("set scores:     ", cr.SetScores)
	fmt.Println("set advantages: ", cr.SetAdvantages)
	fmt.Printf("search credit:   %.4g\n", cr.Search)
	fmt.Println("appearances:    ", cr.Appearances)
	fmt.Println("G1 aggregation: ", cr.Aggregation[0])
	fmt.Println("no signal:      ", cr.NoSignal)
	// Output:
	// set scores:      [0.75 0.5 0.25 0.5]
	// set advantages:  [0.25 0 -0.25 0]
	// search credit:   [0 0.125 0.08333 0.125 -0.125 0 -0.125 -0.25]
	// appearances:     [2 2 3 2 2 2 2 1]
	// G1 aggregation:  [0.25 0.25 0.25 -0.75]
	// no signal:       false
}

// A reward that could not be computed: marked unscorable, it is left out of
// its set's score; left unmarked, the error names the problem, set and
// output, and every other problem is still credited.
func ExampleConfig_CreditBatch_unscorable() {
	c := spiral.Paper()
	planner, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	var plans spiral.Plans
	if err := planner.PlanTo(&plans, 1, 0, []uint64{0, 1}); err != nil {
		panic(err)
	}
	in := spiral.Batch{Plans: &plans}
	in.Rewards = make([]float64, 32)
	for i := range in.Rewards {
		in.Rewards[i] = float64(i % 3 % 2)
	}
	in.Rewards[21] = nan() // problem 1, set 1, output 1
	var out spiral.BatchCredit
	err = c.CreditBatch(&out, in)
	if e, ok := errors.AsType[*spiral.InputError](err); ok {
		fmt.Println(err)
		fmt.Printf("%s of problem %d, set %d, output %d: %v\n", e.Field, e.Problem, e.Set, e.Output, e.Err)
	}
	fmt.Println("rejected:", out.Rejected)

	in.Unscorable = make([]bool, len(in.Rewards))
	in.Unscorable[21] = true
	if err := c.CreditBatch(&out, in); err != nil {
		panic(err)
	}
	fmt.Println("scored outputs of problem 1:", out.ScoredOutputs[4:])
	// Output:
	// spiral: 1 bad problem: Batch.Rewards: problem 1, set 1, output 1 = NaN: reward is not finite
	// Batch.Rewards of problem 1, set 1, output 1: reward is not finite
	// rejected: [false true]
	// scored outputs of problem 1: [4 3 4 4]
}

func nan() float64 { zero := 0.0; return zero / zero }

// The multiplier M of the search update for the paper's uniform design and
// for the balanced design, in which every trace is in exactly two of the
// four sets (two random splits of the 8 traces into halves).
func ExampleConfig_M() {
	c := spiral.Paper()
	for _, d := range []combin.Design{combin.Uniform, combin.Balanced} {
		c.Design = d
		m, err := c.M()
		if err != nil {
			panic(err)
		}
		w, err := c.RoleWeights(spiral.LossOptions{})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8v M = %v, search multiplier %.4f\n", d, m.RatString(), w.SearchMultiplier)
	}
	plan, err := c.Plan(1, 2, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("a balanced plan:", plan.Sets)
	// Output:
	// uniform  M = 1365/1541, search multiplier 1.1289
	// balanced M = 1, search multiplier 1.0000
	// a balanced plan: [[0 1 2 4] [3 5 6 7] [0 1 3 4] [2 5 6 7]]
}
