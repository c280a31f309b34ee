package spiral_test

import (
	"fmt"
	"math/rand/v2"

	"spiral"
	"spiral/lengthgate"
)

// The paper's configuration: 8 search traces, sets of 4 drawn from the 70
// subsets, 4 sets, 4 aggregations per set.
func ExamplePaper() {
	c := spiral.Paper()
	size, err := c.FamilySize()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", c)
	fmt.Printf("possible sets: %v\n", size)
	fmt.Printf("generations per problem: %d + %d = %d, rewarded: %d\n",
		c.SearchTraces, c.AggregationOutputs(), c.Generations(), c.AggregationOutputs())
	// Output:
	// {SearchTraces:8 SetSize:4 Sets:4 AggregationsPerSet:4 Family:Subsets Order:IndexOrder Design:Uniform Gates:{Search:{Target:0 Boundary:GateAtTarget} Aggregation:{Target:0 Boundary:GateAtTarget}}}
	// possible sets: 70
	// generations per problem: 8 + 16 = 24, rewarded: 16
}

// A plan lists, for one problem, which search traces go into each of the K
// aggregation prompts, in presentation order. The same seed gives the same
// plan on every machine.
func ExampleConfig_Plan() {
	c := spiral.Paper()
	p, err := c.Plan(rand.New(rand.NewPCG(2026, 1)))
	if err != nil {
		panic(err)
	}
	for i, g := range p.Groups {
		fmt.Printf("aggregation prompt %d reads search traces %v\n", i, g)
	}
	// Output:
	// aggregation prompt 0 reads search traces [0 4 5 7]
	// aggregation prompt 1 reads search traces [0 1 6 7]
	// aggregation prompt 2 reads search traces [2 4 5 6]
	// aggregation prompt 3 reads search traces [0 1 5 7]
}

// SPIRAL.md's worked example: set scores (0.75, 0.50, 0.25, 0.50) give set
// advantages (+0.25, 0, -0.25, 0); trace 0, which is only in G1 and G3, gets
// (0.25 - 0.25)/2 = 0; G1's rewards (1, 1, 1, 0) give aggregation advantages
// (0.25, 0.25, 0.25, -0.75).
func ExampleConfig_Credit() {
	c := spiral.Paper()
	plan := spiral.Plan{Groups: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 6, 7}, {2, 3, 5, 6}}}
	rewards := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}
	cr, err := c.Credit(plan, rewards, spiral.Lengths{})
	if err != nil {
		panic(err)
	}
	fmt.Println("set scores:     ", cr.SetScores)
	fmt.Println("set advantages: ", cr.SetAdvantages)
	fmt.Printf("search credit:   %.4g\n", cr.Search.Advantages)
	fmt.Println("appearances:    ", cr.Search.Appearances)
	fmt.Println("G1 aggregation: ", cr.Aggregation.Advantages[0])
	fmt.Println("no signal:      ", cr.NoSignal)
	// Output:
	// set scores:      [0.75 0.5 0.25 0.5]
	// set advantages:  [0.25 0 -0.25 0]
	// search credit:   [0 0.125 0.08333 0.125 -0.125 0 -0.125 -0.25]
	// appearances:     [2 2 3 2 2 2 2 1]
	// G1 aggregation:  [0.25 0.25 0.25 -0.75]
	// no signal:       false
}

// The length gates act on the advantages after the baselines: here trace 1
// (+0.125) is longer than the target and loses its credit, trace 7 (-0.25)
// is longer too and keeps its penalty.
func ExampleConfig_Credit_gates() {
	c := spiral.Paper()
	c.Gates.Search = lengthgate.Gate{Target: 4096}
	plan := spiral.Plan{Groups: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 6, 7}, {2, 3, 5, 6}}}
	rewards := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}
	lengths := spiral.Lengths{Search: []int{900, 5000, 1200, 3000, 2500, 4000, 800, 4500}}
	cr, err := c.Credit(plan, rewards, lengths)
	if err != nil {
		panic(err)
	}
	fmt.Printf("search credit: %.4g\n", cr.Search.Advantages)
	fmt.Printf("search gate:   %+v\n", cr.Search.Gate)
	// Output:
	// search credit: [0 0 0.08333 0.125 -0.125 0 -0.125 -0.25]
	// search gate:   {Outputs:8 Positive:3 AtTarget:0 Gated:1 MassRemoved:0.125}
}

// A trainer's step over a batch: plan every problem, generate and score (not
// shown), then compute the credit of the whole batch into a reused result.
func ExampleConfig_CreditBatch() {
	c := spiral.Paper()
	planner, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	const problems = 2
	in := spiral.Batch{
		Groups:  make([]int, problems*c.PlanSize()),
		Rewards: make([]float64, problems*c.AggregationOutputs()),
	}
	var out spiral.BatchCredit // reuse it every step: no allocation after the first
	if err := planner.PlanTo(in.Groups, rnd); err != nil {
		panic(err)
	}
	// ... sample 8 search traces per problem, build aggregation prompt i of
	// problem q from traces in.Groups[(q*K+i)*n : (q*K+i+1)*n], sample 4
	// outputs per prompt and score them into in.Rewards ...
	for i := range in.Rewards[:16] {
		in.Rewards[i] = float64(i % 3 % 2) // problem 0: mixed rewards; problem 1: all 0
	}
	if err := c.CreditBatch(&out, in); err != nil {
		panic(err)
	}
	for q := range out.Problems {
		fmt.Printf("problem %d: search %.3g, in no set %d, no signal %v\n",
			q, out.Search.Advantages[q*8:(q+1)*8], out.Search.InNoSet[q], out.NoSignal[q])
	}
	// Output:
	// problem 0: search [0 0.0625 0.0208 -0.0625 -0.0625 0.0625 -0.0625 0.0625], in no set 1, no signal false
	// problem 1: search [0 0 0 0 0 0 0 0], in no set 0, no signal true
}

// The search estimator's multiplier M for the paper's uniform design and for
// the balanced design, in which every trace is in exactly two of the four
// sets (two random splits of the 8 traces into halves).
func ExampleConfig_M() {
	c := spiral.Paper()
	for _, d := range []spiral.Design{spiral.Uniform, spiral.Balanced} {
		c.Design = d
		m, err := c.M()
		if err != nil {
			panic(err)
		}
		f, _ := m.Float64()
		fmt.Printf("%-8v M = %v = %.4f\n", d, m.RatString(), f)
	}
	plan, err := c.Plan(rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println("a balanced plan:", plan.Groups)
	// Output:
	// Uniform  M = 1365/1541 = 0.8858
	// Balanced M = 1 = 1.0000
	// a balanced plan: [[0 2 5 6] [1 3 4 7] [0 2 5 7] [1 3 4 6]]
}
