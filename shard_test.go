package spiral

import (
	"math"
	"math/rand/v2"
	"slices"
	"spiral/internal/spiraltest"
	"sync"
	"testing"

	"spiral/advantage"
	"spiral/lengthgate"
)

// shardInput returns the rewards and lengths of the problem of the given
// key at c, a function of the key alone: rewards uniform in [0, 1) (some
// problems all 0, which give no signal), lengths around the gates' target
// and the overlong punishment's interval.
func shardInput(c Config, key uint64) (rewards []float64, searchLengths, aggLengths []int) {
	rnd := rand.New(rand.NewPCG(key, 77))
	rewards = make([]float64, c.AggregationOutputs())
	if key%5 != 0 {
		for i := range rewards {
			rewards[i] = rnd.Float64()
		}
	}
	searchLengths = make([]int, c.SearchTraces)
	for i := range searchLengths {
		searchLengths[i] = 3000 + rnd.IntN(2000)
	}
	aggLengths = make([]int, len(rewards))
	for i := range aggLengths {
		aggLengths[i] = 3000 + rnd.IntN(2000)
	}
	return rewards, searchLengths, aggLengths
}

// shardResult is what a step gives for one problem.
type shardResult struct {
	members                  []int
	search, aggregation      []float64
	setScores, setAdvantages []float64
	noSignal, outOfRange     bool
}

// creditKeys plans the problems of keys with pl at (seed, step), credits
// them as one batch and returns each problem's result and the reports.
func creditKeys(t *testing.T, c Config, pl *Planner, seed, step uint64, keys []uint64) ([]shardResult, lengthgate.GatesReport, lengthgate.PenaltyReport) {
	var plans Plans
	if err := pl.PlanTo(&plans, seed, step, keys); err != nil {
		t.Error(err)
		return nil, lengthgate.GatesReport{}, lengthgate.PenaltyReport{}
	}
	in := Batch{Plans: &plans}
	for _, key := range keys {
		r, sl, al := shardInput(c, key)
		in.Rewards = append(in.Rewards, r...)
		in.SearchLengths = append(in.SearchLengths, sl...)
		in.AggregationLengths = append(in.AggregationLengths, al...)
	}
	var out BatchCredit
	if err := c.CreditBatch(&out, in); err != nil {
		t.Error(err)
		return nil, lengthgate.GatesReport{}, lengthgate.PenaltyReport{}
	}
	res := make([]shardResult, len(keys))
	members := plans.AppendMembers(nil)
	for q, sp := range out.Spans() {
		res[q] = shardResult{
			members:       slices.Clone(members[sp.Member : sp.Member+sp.Members]),
			search:        slices.Clone(out.Search[sp.Trace : sp.Trace+sp.Traces]),
			aggregation:   slices.Clone(out.Aggregation[sp.Reward : sp.Reward+sp.Rewards]),
			setScores:     slices.Clone(out.SetScores[sp.Set : sp.Set+sp.Sets]),
			setAdvantages: slices.Clone(out.SetAdvantages[sp.Set : sp.Set+sp.Sets]),
			noSignal:      out.NoSignal[q],
			outOfRange:    out.OutOfRange[q],
		}
	}
	return res, out.Gates, out.Overlong
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestShardedSteps: 1,024 problems planned and credited as one batch, and
// as 8 shards in a shuffled order of problems by 1, 2 and 8 goroutines
// (each with its own Planner and BatchCredit), give the same plans and
// credit, bit for bit, and the same reports of the gates and the overlong
// punishment once the shards' reports are added up, in any order.
func TestShardedSteps(t *testing.T) {
	c := benchConfig()
	o := lengthgate.NewSoftOverlong(4500, 1024)
	c.Overlong = &o
	c.RewardRange = advantage.RewardRange{Low: 0.05, High: 0.95}
	const problems, shards, seed, step = 1024, 8, 2026, 17
	keys := make([]uint64, problems)
	for q := range keys {
		keys[q] = 1_000_003*uint64(q) + 12345
	}
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	want, wantGates, wantOverlong := creditKeys(t, c, pl, seed, step, keys)
	if wantGates.Search.Gated == 0 || wantGates.Aggregation.Gated == 0 || wantOverlong.Penalized == 0 {
		t.Fatalf("reports %+v, %+v: the test does not exercise the gates and the punishment", wantGates, wantOverlong)
	}

	perm := rand.New(rand.NewPCG(1, 2)).Perm(problems)
	for _, workers := range []int{1, 2, 8} {
		got := make([]shardResult, problems)
		gates := make([]lengthgate.GatesReport, shards)
		overlong := make([]lengthgate.PenaltyReport, shards)
		next := make(chan int, shards)
		for s := range shards {
			next <- s
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				pl, err := c.NewPlanner()
				if err != nil {
					t.Error(err)
					return
				}
				for s := range next {
					idx := perm[s*problems/shards : (s+1)*problems/shards]
					ks := make([]uint64, len(idx))
					for i, q := range idx {
						ks[i] = keys[q]
					}
					res, g, ov := creditKeys(t, c, pl, seed, step, ks)
					for i, q := range idx {
						got[q] = res[i]
					}
					gates[s], overlong[s] = g, ov
				}
			})
		}
		wg.Wait()
		for q := range problems {
			w, g := want[q], got[q]
			if !slices.Equal(w.members, g.members) || !sameBits(w.search, g.search) || !sameBits(w.aggregation, g.aggregation) ||
				!sameBits(w.setScores, g.setScores) || !sameBits(w.setAdvantages, g.setAdvantages) || w.noSignal != g.noSignal || w.outOfRange != g.outOfRange {
				t.Fatalf("%d workers: problem %d differs from the single batch:\n%+v\n%+v", workers, q, g, w)
			}
		}
		for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 1, 7, 2, 5, 4}} {
			var g lengthgate.GatesReport
			var ov lengthgate.PenaltyReport
			for _, s := range order {
				g.Add(gates[s])
				ov.Add(overlong[s])
			}
			if g != wantGates || ov != wantOverlong {
				t.Errorf("%d workers, shards added in order %v: reports %+v, %+v; the single batch's %+v, %+v", workers, order, g, ov, wantGates, wantOverlong)
			}
		}
	}
}

// TestNoFusedMultiplyAdd: no architecture's compiler fuses a product into
// a sum in the root package (long only).
func TestNoFusedMultiplyAdd(t *testing.T) { spiraltest.NoFusedMultiplyAdd(t, "spiral") }
