package spiral

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

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
// arithmetic.
func TestLossCoefficientsJointGradient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, c := range []Config{Paper(), {SearchTraces: 5, SetSize: 2, Sets: 3, AggregationsPerSet: 3}, {SearchTraces: 4, SetSize: 3, Sets: 2, AggregationsPerSet: 2}} {
		m, err := c.M()
		if err != nil {
			t.Fatal(err)
		}
		planner, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
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
			var dst LossCoefficients
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
	if err := c.LossCoefficients(&dst, &b, in, LossOptions{}); err == nil {
		t.Fatal("no lengths: no error")
	}
	in.SearchLengths, in.AggregationLengths = make([]int, 8), make([]int, 16)
	in.AggregationLengths[5] = -1
	err := c.LossCoefficients(&dst, &b, in, LossOptions{Reduction: loss.TokenMean})
	if e, ok := errors.AsType[*loss.InputError](err); !ok || e.Field != "AggregationLengths" || e.Row != 5 {
		t.Fatalf("negative length: %v, want a *loss.InputError for AggregationLengths row 5", err)
	}
	if err := c.LossCoefficients(&dst, &b, in, LossOptions{Update: 7}); err == nil {
		t.Fatal("undefined update: no error")
	}
}
