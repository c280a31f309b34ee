package spiral

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/cpubench"
)

// The benchmarks time one training step's bookkeeping at the paper's
// configuration with both gates on (target 4096): draw the plan, then
// compute the credit from given rewards and lengths, for one problem and
// for a batch of 256. "spiral" is Planner.PlanTo plus CreditBatch into a
// reused BatchCredit; "naive" composes the packages by hand the obvious
// way, with fresh slices per problem per call: combin's Family.Sample,
// advantage.Compute, then lengthgate's Gate.Apply on each role.
//
// Every iteration takes the next batch of a pool of freshInputs problems
// in all, so that the branches on rewards and lengths (the gates, the
// checks, NoSignal) see new data each time, as in training: a benchmark
// that reuses one input lets the branch predictor learn it, which flatters
// branchy code. bench/compare.sh runs "spiral" beside the numpy peer
// bench/peer.py, and bench/cachegrind.sh counts its instructions.

// freshInputs is the number of problems a benchmark's pool of inputs holds:
// 4096 problems of 8 search traces and 16 aggregation outputs are about
// 100,000 outcomes of the gates' branches, far more than a branch
// predictor's history.
const freshInputs = 4096

// stepPool returns batches of problems each, freshInputs problems in all,
// planned, with random 0/1 rewards and lengths in [0, 5000).
func stepPool(c Config, problems int) []Batch {
	pool := make([]Batch, max(1, freshInputs/problems))
	for i := range pool {
		pool[i] = paperBatch(c, problems, uint64(100+i))
	}
	return pool
}

func benchStep(b *testing.B, problems int) {
	c := benchConfig()
	pool := stepPool(c, problems)
	pl, err := c.NewPlanner()
	if err != nil {
		b.Fatal(err)
	}
	ks := keys(problems)
	step := uint64(0)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, pool[0]); err != nil { // grow dst once, as a trainer's first step does
		b.Fatal(err)
	}
	i := 0
	cpubench.Loop(b, func() {
		in := &pool[i]
		if i++; i == len(pool) {
			i = 0
		}
		step++
		if err := pl.PlanTo(in.Plans, 1, step, ks); err != nil {
			b.Fatal(err)
		}
		if err := c.CreditBatch(&dst, *in); err != nil {
			b.Fatal(err)
		}
	})
}

func benchNaive(b *testing.B, problems int) {
	c := benchConfig()
	pool := stepPool(c, problems)
	fam, err := combin.Subsets(c.SearchTraces, c.SetSize)
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	k, n2, n1 := c.Sets, c.AggregationsPerSet, c.SearchTraces
	i := 0
	cpubench.Loop(b, func() {
		in := &pool[i]
		if i++; i == len(pool) {
			i = 0
		}
		for q := range problems {
			sets, err := fam.Sample(rnd, k)
			if err != nil {
				b.Fatal(err)
			}
			rewards := make([][]float64, k)
			for i := range rewards {
				rewards[i] = slices.Clone(in.Rewards[(q*k+i)*n2 : (q*k+i+1)*n2])
			}
			cr, err := advantage.Compute(n1, sets, rewards)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Gates.Search.Apply(cr.Search, in.SearchLengths[q*n1:(q+1)*n1]); err != nil {
				b.Fatal(err)
			}
			agg := slices.Concat(cr.Aggregation...)
			if _, err := c.Gates.Aggregation.Apply(agg, in.AggregationLengths[q*k*n2:(q+1)*k*n2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStep(b *testing.B) {
	for _, problems := range []int{1, 256} {
		b.Run(fmt.Sprintf("problems=%d/spiral", problems), func(b *testing.B) { benchStep(b, problems) })
		b.Run(fmt.Sprintf("problems=%d/naive", problems), func(b *testing.B) { benchNaive(b, problems) })
	}
}

// BenchmarkStepParts splits the batch of 256 into its parts, on the same
// pool of fresh inputs: planning (Planner.PlanTo), credit of planned sets
// (CreditBatch, whose kernel advantage.ComputeBatch is measured by
// ./advantage's benchmarks), and credit of the same sets from outside,
// which Config.CheckPlans checked.
func BenchmarkStepParts(b *testing.B) {
	c := benchConfig()
	pool := stepPool(c, 256)
	b.Run("problems=256/plan", func(b *testing.B) {
		pl, err := c.NewPlanner()
		if err != nil {
			b.Fatal(err)
		}
		ks := keys(256)
		step := uint64(0)
		var plans Plans
		cpubench.Loop(b, func() {
			step++
			if err := pl.PlanTo(&plans, 1, step, ks); err != nil {
				b.Fatal(err)
			}
		})
	})
	for _, outside := range []bool{false, true} {
		name := "problems=256/credit"
		pool := slices.Clone(pool)
		if outside {
			name += "-outside-sets"
			for i := range pool {
				pool[i].Plans = checked(c, pool[i].Plans.AppendMembers(nil))
			}
		}
		b.Run(name, func(b *testing.B) {
			var dst BatchCredit
			if err := c.CreditBatch(&dst, pool[0]); err != nil {
				b.Fatal(err)
			}
			i := 0
			cpubench.Loop(b, func() {
				if err := c.CreditBatch(&dst, pool[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(pool) {
					i = 0
				}
			})
		})
	}
}
