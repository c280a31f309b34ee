package spiral

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral/internal/spiraltest"
	"spiral/loss"
)

// trainerWeight is w_o, the weight the trainer's reduction gives every
// token of an output of length l in a term of all outputs, rows of them
// with a token and tokens tokens (loss's doc table, which its tests pin
// against the trainers' code).
func trainerWeight(r loss.Reduction, l, all, rows, tokens int) *big.Rat {
	switch r {
	case loss.Sum, loss.SeqMeanTokenSumNorm, loss.TRLDrGRPO: // constants left to the trainer
		if r == loss.TRLDrGRPO {
			return big.NewRat(1, int64(all))
		}
		return big.NewRat(1, 1)
	case loss.TokenMean, loss.TRLBNPO, loss.TRLDAPO, loss.OpenRLHFToken:
		return big.NewRat(1, int64(tokens))
	case loss.SeqMeanTokenSum:
		return big.NewRat(1, int64(rows))
	case loss.SeqMeanTokenMean, loss.OpenRLHFSequence:
		return big.NewRat(1, int64(rows*l))
	case loss.TRLGRPO:
		return big.NewRat(1, int64(all*l))
	case loss.TRLRLOO:
		return big.NewRat(1, int64(all))
	}
	panic("unknown reduction")
}

// TestLossCoefficientsJointGradient credits random batches (small
// configurations, 0/1 and continuous rewards, lengths 0 to 9) and checks,
// for every reduction, pooled and with split roles, and both updates, that
// the trainer's weight times each coefficient is Report.Scale times the
// chosen update: A_search/M and A_agg/(K (N2-1)) for JointGradient, the
// advantages for PaperUpdate, to within three roundings, in exact
// arithmetic: 8 random batches a configuration, 20 under SPIRAL_LONG=1.
func TestLossCoefficientsJointGradient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	trials := 8
	if spiraltest.Long() {
		trials = 20
	}
	for _, c := range []Config{Paper(), {SearchTraces: 5, SetSize: 2, Sets: 3, AggregationsPerSet: 3}, {SearchTraces: 4, SetSize: 3, Sets: 2, AggregationsPerSet: 2}} {
		m, err := c.M()
		if err != nil {
			t.Fatal(err)
		}
		planner, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		var dst LossCoefficients // one for the configuration's batches, as a trainer keeps it
		for trial := range trials {
			problems := 1 + rnd.IntN(3)
			in := Batch{Plans: new(Plans)}
			if err := planner.PlanTo(in.Plans, rnd.Uint64(), 0, keys(problems)); err != nil {
				t.Fatal(err)
			}
			in.Rewards = make([]float64, problems*c.AggregationOutputs())
			for o := range in.Rewards {
				in.Rewards[o] = float64(rnd.IntN(2))
				if trial%2 == 1 {
					in.Rewards[o] = rnd.Float64()
				}
			}
			in.SearchLengths = make([]int, problems*c.SearchTraces)
			in.AggregationLengths = make([]int, len(in.Rewards))
			for i := range in.SearchLengths {
				in.SearchLengths[i] = rnd.IntN(10)
			}
			for i := range in.AggregationLengths {
				in.AggregationLengths[i] = rnd.IntN(10)
			}
			var b BatchCredit
			if err := c.CreditBatch(&b, in); err != nil {
				t.Fatal(err)
			}
			for r := range loss.Reduction(12) {
				for _, split := range []bool{false, true} {
					for _, u := range []Update{JointGradient, PaperUpdate} {
						opt := LossOptions{Update: u, Reduction: r, SplitRoles: split}
						if err := c.LossCoefficients(&dst, &b, in, opt); err != nil {
							t.Fatal(err)
						}
						checkJoint(t, c, m, b, in, dst, opt)
					}
				}
			}
		}
	}
}

func checkJoint(t *testing.T, c Config, m *big.Rat, b BatchCredit, in Batch, dst LossCoefficients, opt LossOptions) {
	t.Helper()
	ns := len(in.SearchLengths)
	lengths := append(append([]int(nil), in.SearchLengths...), in.AggregationLengths...)
	adv := append(append([]float64(nil), b.Search...), b.Aggregation...)
	coef := append(append([]float64(nil), dst.Search...), dst.Aggregation...)
	term := func(o int) int {
		if opt.SplitRoles && o >= ns {
			return 1
		}
		return 0
	}
	var all, rows, tokens [2]int
	for o, l := range lengths {
		all[term(o)]++
		if l > 0 {
			rows[term(o)]++
			tokens[term(o)] += l
		}
	}
	scale := new(big.Rat).SetFloat64(dst.Report.Scale)
	agg := big.NewRat(int64(c.Sets*(c.AggregationsPerSet-1)), 1)
	for o, l := range lengths {
		want := new(big.Rat).SetFloat64(adv[o])
		if opt.Update == JointGradient {
			div := m
			if o >= ns {
				div = agg
			}
			if div.Sign() == 0 {
				want.SetInt64(0) // a role whose advantages are all 0
			} else {
				want.Quo(want, div)
			}
		}
		want.Mul(want, scale)
		if l == 0 {
			if coef[o] != 0 {
				t.Fatalf("%+v: output %d has no token but coefficient %v", opt, o, coef[o])
			}
			continue
		}
		got := trainerWeight(opt.Reduction, l, all[term(o)], rows[term(o)], tokens[term(o)])
		got.Mul(got, new(big.Rat).SetFloat64(coef[o]))
		diff := new(big.Rat).Sub(got, want)
		bound := new(big.Rat).Mul(new(big.Rat).Abs(want), new(big.Rat).SetFloat64(0x1p-50))
		if diff.Abs(diff).Cmp(bound) > 0 {
			t.Fatalf("%v %+v: output %d (length %d, advantage %v): trainer's weight %s, want %s",
				c, opt, o, l, adv[o], got.FloatString(18), want.FloatString(18))
		}
	}
}

// TestLossCoefficientsErrors: missing or bad lengths are named in the
// Batch's words.
func TestLossCoefficientsErrors(t *testing.T) {
	c := Paper()
	planner, _ := c.NewPlanner()
	in := Batch{Plans: new(Plans)}
	if err := planner.PlanTo(in.Plans, 1, 1, keys(1)); err != nil {
		t.Fatal(err)
	}
	in.Rewards = make([]float64, 16)
	in.Rewards[3] = 1
	var b BatchCredit
	if err := c.CreditBatch(&b, in); err != nil {
		t.Fatal(err)
	}
	var dst LossCoefficients
	err := c.LossCoefficients(&dst, &b, in, LossOptions{})
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Batch.SearchLengths" {
		t.Fatalf("no lengths: %v, want an *InputError about Batch.SearchLengths", err)
	}
	in.SearchLengths = make([]int, 8)
	err = c.LossCoefficients(&dst, &b, in, LossOptions{})
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Batch.AggregationLengths" {
		t.Fatalf("no aggregation lengths: %v, want an *InputError about Batch.AggregationLengths", err)
	}
	in.SearchLengths, in.AggregationLengths = make([]int, 8), make([]int, 16)
	in.AggregationLengths[5] = -1
	err = c.LossCoefficients(&dst, &b, in, LossOptions{Reduction: loss.TokenMean})
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != FieldAggregationLengths || e.Output != 5 || e.Value != -1 ||
		err.Error() != "spiral: Batch.AggregationLengths[5] = -1: length outside [0, 536870912] tokens" {
		t.Fatalf("negative length: %v, want an *InputError for Batch.AggregationLengths[5]", err)
	}
	if err := c.LossCoefficients(&dst, &b, in, LossOptions{Update: 7}); err == nil {
		t.Fatal("undefined update: no error")
	}
}

// TestLeaveOneOutCredit: with Config.AggregationBaseline = LeaveOneOut,
// CreditBatch's aggregation advantage of every scored output is its reward
// minus the mean of its set's other scored rewards (exactly, to a few
// units in the last place), 0 for an unscorable output and for a set of
// one scored output; ragged sets included; the search credit is unchanged.
func TestLeaveOneOutCredit(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	c := Config{SearchTraces: 6, SetSize: 3, Sets: 4, AggregationsPerSet: 4}
	loo := c
	loo.AggregationBaseline = LeaveOneOut
	planner, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	for trial := range 200 {
		var plans Plans
		if err := planner.PlanTo(&plans, 1, uint64(trial), []uint64{0, 1}); err != nil {
			t.Fatal(err)
		}
		in := Batch{Plans: &plans, RewardCounts: make([]int, 2*c.Sets)}
		for s := range in.RewardCounts {
			in.RewardCounts[s] = 1 + rnd.IntN(c.AggregationsPerSet)
			for range in.RewardCounts[s] {
				in.Rewards = append(in.Rewards, float64(rnd.IntN(3))/2+rnd.Float64()*float64(trial%2))
				in.Unscorable = append(in.Unscorable, rnd.IntN(6) == 0)
			}
		}
		var within, left BatchCredit
		if err := c.CreditBatch(&within, in); err != nil {
			t.Fatal(err)
		}
		if err := loo.CreditBatch(&left, in); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(within.Search, left.Search) {
			t.Fatalf("search credit changed: %v, %v", within.Search, left.Search)
		}
		o := 0
		for s, count := range in.RewardCounts {
			var scored []int
			for j := o; j < o+count; j++ {
				if !in.Unscorable[j] {
					scored = append(scored, j)
				}
			}
			for j := o; j < o+count; j++ {
				want := new(big.Rat)
				if !in.Unscorable[j] && len(scored) >= 2 && !left.Skip(s/c.Sets) {
					others := new(big.Rat)
					for _, k := range scored {
						if k != j {
							others.Add(others, new(big.Rat).SetFloat64(in.Rewards[k]))
						}
					}
					want.Sub(new(big.Rat).SetFloat64(in.Rewards[j]), others.Quo(others, big.NewRat(int64(len(scored)-1), 1)))
				}
				got := new(big.Rat).SetFloat64(left.Aggregation[j])
				diff := new(big.Rat).Sub(got, want)
				if diff.Abs(diff).Cmp(big.NewRat(1, 1<<50)) > 0 {
					t.Fatalf("trial %d, set %d, output %d: leave-one-out %v, want %s (within set %v)", trial, s, j, left.Aggregation[j], want.FloatString(17), within.Aggregation[j])
				}
			}
			o += count
		}
	}
}

// TestLeaveOneOutAgreesWithRoleWeights: enumerating every outcome of two
// sets of N2 = 3 outputs of a toy aggregator (outputs v = 0, 1, 2 with
// probabilities 1/2, 1/3, 1/6 and rewards 1, 1/4, 0, so that
// grad E[r] = (5/24, -1/9, -7/72) for the softmax's score e_v - p), the
// expected update sum_j A_agg(j) (e_{z_j} - p) of CreditBatch's credit is
// RoleWeights' aggregation weight times grad E[r], under both baselines:
// K (N2 - 1) = 4 within the set, K N2 = 6 leave one out.
func TestLeaveOneOutAgreesWithRoleWeights(t *testing.T) {
	p := []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big.NewRat(1, 6)}
	reward := []float64{1, 0.25, 0}
	grad := []*big.Rat{big.NewRat(5, 24), big.NewRat(-1, 9), big.NewRat(-7, 72)}
	for _, b := range []AggregationBaseline{WithinSet, LeaveOneOut} {
		c := Config{SearchTraces: 2, SetSize: 1, Sets: 2, AggregationsPerSet: 3, AggregationBaseline: b}
		w, err := c.RoleWeights(LossOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var plans Plans
		if err := c.CheckPlans(&plans, []int{0, 1}); err != nil {
			t.Fatal(err)
		}
		outputs := c.Sets * c.AggregationsPerSet
		expect := []*big.Rat{new(big.Rat), new(big.Rat), new(big.Rat)}
		z := make([]int, outputs)
		var credit BatchCredit
		in := Batch{Plans: &plans, Rewards: make([]float64, outputs)}
		for code := range 729 { // 3^6 outcomes
			prob := big.NewRat(1, 1)
			for o, x := 0, code; o < outputs; o, x = o+1, x/3 {
				z[o] = x % 3
				in.Rewards[o] = reward[z[o]]
				prob.Mul(prob, p[z[o]])
			}
			if err := c.CreditBatch(&credit, in); err != nil {
				t.Fatal(err)
			}
			for o, a := range credit.Aggregation {
				ap := new(big.Rat).Mul(new(big.Rat).SetFloat64(a), prob)
				for v := range 3 {
					score := new(big.Rat).Neg(p[v])
					if v == z[o] {
						score.Add(score, big.NewRat(1, 1))
					}
					expect[v].Add(expect[v], new(big.Rat).Mul(ap, score))
				}
			}
		}
		for v := range 3 {
			want := new(big.Rat).Mul(w.Aggregation, grad[v])
			diff := new(big.Rat).Sub(expect[v], want)
			if diff.Abs(diff).Cmp(big.NewRat(1, 1<<40)) > 0 {
				t.Errorf("%v: expected update[%d] = %s, RoleWeights' %s x grad E[r] = %s", b, v, expect[v].FloatString(15), w.Aggregation.RatString(), want.FloatString(15))
			}
		}
	}
}
