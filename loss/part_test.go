package loss

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"spiral/internal/spiraltest"
)

// overLoss is the reduction of the trainers that divide a part by counts
// beyond it, transcribed: verl's agg_loss with the new engine's
// batch_num_tokens and global_batch_size (dp_size 1), and TRL's dapo with
// num_items_in_batch (one process).
//
//	token-mean:          masked_sum(loss_mat, loss_mask) / batch_num_tokens
//	seq-mean-token-sum:  masked_sum(seq_losses, seq_mask) / global_batch_size
//	seq-mean-token-mean: the same, seq_losses divided by (seq_mask + 1e-8) first
//	dapo:                (per_token_loss * mask).sum() / num_items_in_batch.clamp(min=1.0)
func overLoss(r Reduction, lossMat, mask mat, over Divisors) *big.Rat {
	num := sumRows(mul(lossMat, mask))
	counts := sumRows(mask)
	s := new(big.Rat)
	for i := range num {
		switch r {
		case SeqMeanTokenMean:
			if counts[i].Sign() > 0 {
				s.Add(s, quo(num[i], f32add(counts[i], 1e-8)))
			}
		default:
			s.Add(s, num[i])
		}
	}
	switch r {
	case TokenMean:
		return quo(s, rat(over.Tokens))
	case TRLDAPO:
		return quo(s, maxRat(rat(over.Tokens), rat(1)))
	case SeqMeanTokenSum, SeqMeanTokenMean:
		return quo(s, rat(over.Sequences))
	}
	panic("overLoss: " + r.String())
}

// partWeights is tokenWeights for one part: d[o][t] for the outputs of
// the part, with the trainer's reduction of the part alone (over nil) or
// over the divisors.
func partWeights(r Reduction, lengths []int, over *Divisors) [][]*big.Rat {
	if over == nil {
		return tokenWeights(r, lengths, nil)
	}
	d := make([][]*big.Rat, len(lengths))
	for o := range lengths {
		d[o] = unitLosses(lengths, o, func(lossMat, mask mat) *big.Rat { return overLoss(r, lossMat, mask, *over) })
	}
	return d
}

// TestPartCoefficientsAgainstTrainers splits random batches into
// micro-batches of unequal counts, computes each micro-batch's
// coefficients with the whole batch's kappa, and checks in exact
// arithmetic that the trainer's reduction of each micro-batch (on its own,
// or over the whole batch's divisors) gives every token of output o the
// weight kappa u_o (times the trainer's constant): the micro-batches'
// gradients add up to kappa times the update.
func TestPartCoefficientsAgainstTrainers(t *testing.T) {
	t.Parallel() // the package's costliest tests, independent: they overlap on two cores
	rnd := rand.New(rand.NewPCG(3, 4))
	overReductions := []Reduction{TokenMean, SeqMeanTokenSum, SeqMeanTokenMean, TRLDAPO}
	trials := 40
	if spiraltest.Long() {
		trials = 3000
	}
	checked := 0
	for range trials {
		b := 2 + rnd.IntN(7)
		lengths := make([]int, b)
		update := make([]float64, b)
		var rows, tokens int64
		for o := range b {
			lengths[o] = rnd.IntN(width + 1)
			update[o] = (rnd.Float64()*2 - 1) * math.Ldexp(1, rnd.IntN(20)-10)
			if lengths[o] > 0 {
				rows++
				tokens += int64(lengths[o])
			}
		}
		if rows == 0 {
			continue
		}
		// Cut points: micro-batches of unequal sizes, at least one output each.
		var cuts []int
		for o := 1; o < b; o++ {
			if rnd.IntN(2) == 0 {
				cuts = append(cuts, o)
			}
		}
		cuts = append(cuts, b)
		for r := range Reduction(len(reductions)) {
			modes := []*Divisors{nil}
			for _, g := range overReductions {
				if g == r {
					// verl's new engine: every row of the mini-batch, empty ones included.
					modes = append(modes, &Divisors{Sequences: int64(b), Tokens: tokens})
				}
			}
			for _, over := range modes {
				scale := ScaleOf(r, int64(b), rows)
				_, constant := exactScale(r, b, int(rows))
				lo := 0
				for _, hi := range cuts {
					part := Part{Scale: scale}
					if over != nil {
						part.Over = []Divisors{*over}
					}
					c := make([]float64, hi-lo)
					rep, err := PartCoefficients(c, Rows{Update: update[lo:hi], Lengths: lengths[lo:hi]}, r, part)
					if err != nil {
						t.Fatal(err)
					}
					if rep.Scale != scale || rep.Outputs != hi-lo {
						t.Fatalf("%v: report %+v, want Scale %v and %d outputs", r, rep, scale, hi-lo)
					}
					d := partWeights(r, lengths[lo:hi], over)
					for o := range c {
						want := new(big.Rat).Mul(new(big.Rat).SetFloat64(update[lo+o]), new(big.Rat).SetFloat64(scale))
						want.Mul(want, constant)
						for tok := range lengths[lo+o] {
							got := new(big.Rat).Mul(d[o][tok], new(big.Rat).SetFloat64(c[o]))
							diff := new(big.Rat).Sub(got, want)
							bound := new(big.Rat).Mul(new(big.Rat).Abs(want), new(big.Rat).SetFloat64(0x1p-50))
							if diff.Abs(diff).Cmp(bound) > 0 {
								t.Fatalf("%v over %v, lengths %v cut %v: output %d: weight %s, want kappa u = %s",
									r, over, lengths, cuts, lo+o, got.FloatString(20), want.FloatString(20))
							}
						}
					}
					lo = hi
				}
				checked++
			}
		}
	}
	t.Logf("%d split batches", checked)
}

// TestPartCoefficientsWhole: the whole batch as its one part, with
// ScaleOf's kappa, gives Coefficients' coefficients.
func TestPartCoefficientsWhole(t *testing.T) {
	lengths := []int{3, 0, 5, 1, 2}
	update := []float64{0.5, 1, -1.25, 2, 0.75}
	terms := []int{0, 0, 1, 1, 0}
	for r := range Reduction(len(reductions)) {
		for _, tm := range [][]int{nil, terms} {
			want := make([]float64, 5)
			rep, err := Coefficients(want, Rows{Update: update, Lengths: lengths, Terms: tm}, r)
			if err != nil {
				t.Fatal(err)
			}
			if s := ScaleOf(r, 5, 4); s != rep.Scale {
				t.Fatalf("%v: ScaleOf = %v, Coefficients' Scale %v", r, s, rep.Scale)
			}
			got := make([]float64, 5)
			if _, err := PartCoefficients(got, Rows{Update: update, Lengths: lengths, Terms: tm}, r, Part{Scale: rep.Scale}); err != nil {
				t.Fatal(err)
			}
			for o := range got {
				if math.Abs(got[o]-want[o]) > 1e-15*math.Abs(want[o]) {
					t.Fatalf("%v terms %v: PartCoefficients %v, Coefficients %v", r, tm, got, want)
				}
			}
		}
	}
}

func TestPartCoefficientsErrors(t *testing.T) {
	in := Rows{Update: []float64{1, 2}, Lengths: []int{2, 3}, Terms: []int{0, 1}}
	dst := make([]float64, 2)
	for _, tc := range []struct {
		part  Part
		field string
		row   int
	}{
		{Part{Scale: -1}, "Scale", -1},
		{Part{Scale: math.NaN()}, "Scale", -1},
		{Part{Scale: math.Inf(1)}, "Scale", -1},
		{Part{Scale: 1, Over: []Divisors{{Sequences: 1, Tokens: 2}}}, "Over", -1},
		{Part{Scale: 1, Over: []Divisors{{1, 1}, {1, 3}}}, "Over.Tokens", 0},
		{Part{Scale: 1, Over: []Divisors{{1, 2}, {1, 1<<53 + 1}}}, "Over.Tokens", 1},
		{Part{Scale: 1, Over: []Divisors{{0, 2}, {0, 3}}}, "", 0},
	} {
		dst[0], dst[1] = 7, 7
		_, err := PartCoefficients(dst, in, TokenMean, tc.part)
		if tc.field == "" { // token-mean reads no Sequences
			if err != nil {
				t.Errorf("%+v: %v", tc.part, err)
			}
			continue
		}
		e, ok := errors.AsType[*InputError](err)
		if !ok || e.Field != tc.field || e.Output != tc.row {
			t.Errorf("%+v: err = %v, want an InputError on %s row %d", tc.part, err, tc.field, tc.row)
		}
	}
	for _, over := range [][]Divisors{{{1, 2}, {0, 3}}, {{1, 2}, {MaxRows + 1, 3}}} {
		_, err := PartCoefficients(dst, in, SeqMeanTokenSum, Part{Scale: 1, Over: over})
		if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Over.Sequences" || e.Output != 1 {
			t.Errorf("%v: err = %v, want an InputError on Over.Sequences row 1", over, err)
		}
	}
	if _, err := PartCoefficients(dst, in, Reduction(99), Part{Scale: 1}); err == nil {
		t.Error("undefined reduction accepted")
	}
	if _, err := PartCoefficients(dst, Rows{Update: []float64{1}, Lengths: []int{-1}}, TokenMean, Part{Scale: 1}); err == nil {
		t.Error("negative length accepted")
	}
}

func TestPartCoefficientsAllocs(t *testing.T) {
	in := Rows{Update: []float64{1, 2, 3}, Lengths: []int{2, 0, 3}, Terms: []int{0, 1, 1}}
	dst := make([]float64, 3)
	over := []Divisors{{4, 9}, {5, 12}}
	if n := spiraltest.Allocated(func() { PartCoefficients(dst, in, SeqMeanTokenMean, Part{Scale: 0.25, Over: over}) }); n != 0 {
		t.Errorf("%d allocations", n)
	}
}
