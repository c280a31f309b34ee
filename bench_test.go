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
// bench/numpy.sh runs "spiral" beside the numpy peer.

func benchStep(b *testing.B, problems int) {
	c := benchConfig()
	in := paperBatch(c, problems, 9)
	pl, err := c.NewPlanner()
	if err != nil {
		b.Fatal(err)
	}
	ks := keys(problems)
	step := uint64(0)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil { // grow dst once, as a trainer's first step does
		b.Fatal(err)
	}
	cpubench.Loop(b, func() {
		step++
		if err := pl.PlanTo(in.Plans, 1, step, ks); err != nil {
			b.Fatal(err)
		}
		if err := c.CreditBatch(&dst, in); err != nil {
			b.Fatal(err)
		}
	})
}

func benchNaive(b *testing.B, problems int) {
	c := benchConfig()
	in := paperBatch(c, problems, 9)
	fam, err := combin.Subsets(c.SearchTraces, c.SetSize)
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	k, n2, n1 := c.Sets, c.AggregationsPerSet, c.SearchTraces
	cpubench.Loop(b, func() {
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

// BenchmarkStepParts splits the batch of 256 into its parts: planning
// (Planner.PlanTo), credit of planned sets (CreditBatch, whose kernel
// advantage.ComputeBatch is measured by ./advantage's benchmarks), and
// credit of the same sets from outside, which Config.CheckPlans checked.
func BenchmarkStepParts(b *testing.B) {
	c := benchConfig()
	in := paperBatch(c, 256, 9)
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
		in := in
		if outside {
			name += "-outside-sets"
			in.Plans = checked(c, in.Plans.AppendMembers(nil))
		}
		b.Run(name, func(b *testing.B) {
			var dst BatchCredit
			if err := c.CreditBatch(&dst, in); err != nil {
				b.Fatal(err)
			}
			cpubench.Loop(b, func() {
				if err := c.CreditBatch(&dst, in); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
