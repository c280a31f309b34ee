package loss

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"spiral/internal/spiraltest"
)

// width is the padded length of the transcriptions' loss matrices: verl's
// loss_mask.shape[-1] and TRL's max_completion_length (S).
const width = 4

// exactScale is kappa in exact arithmetic, times the trainer's constant
// that Report.Scale leaves out (1/S for seq-mean-token-sum-norm and
// trl-dr-grpo), for B outputs of which R have a token.
func exactScale(r Reduction, outputs, rows int) (scale, constant *big.Rat) {
	constant = big.NewRat(1, 1)
	switch r {
	case SeqMeanTokenSumNorm:
		constant = big.NewRat(1, width)
		return big.NewRat(1, 1), constant
	case Sum:
		return big.NewRat(1, 1), constant
	case TRLDrGRPO:
		return big.NewRat(1, int64(outputs)), big.NewRat(1, width)
	}
	return big.NewRat(1, int64(rows)), constant
}

// tokenWeights returns d[o][t] = the derivative of the trainer's loss
// (each term reduced over its own outputs, the terms added) with respect
// to the per-token loss of token t of output o, by linearity: the loss of
// the matrix that is 1 there and 0 elsewhere. The slices it returns are
// shared: callers read them only.
func tokenWeights(r Reduction, lengths, terms []int) [][]*big.Rat {
	b := len(lengths)
	termOf := func(o int) int {
		if terms == nil {
			return 0
		}
		return terms[o]
	}
	d := make([][]*big.Rat, b)
	for o := range b {
		var rows []int // the lengths of o's term's outputs, in order
		at := 0        // o's row among them
		for p := range b {
			if termOf(p) == termOf(o) {
				if p == o {
					at = len(rows)
				}
				rows = append(rows, lengths[p])
			}
		}
		d[o] = rowWeights(r, rows, at)
	}
	return d
}

// rowWeightsMemo holds rowWeights' answers by reduction, row lengths and
// row: the batches the tests enumerate share most of their terms' shapes.
var rowWeightsMemo sync.Map

// rowWeights returns, for every token t of row at, the trainer's loss of
// the term whose rows have the given lengths, on the matrix that is 1 at
// (at, t) and 0 elsewhere.
func rowWeights(r Reduction, rows []int, at int) []*big.Rat {
	key := fmt.Sprint(r, rows, at)
	if d, ok := rowWeightsMemo.Load(key); ok {
		return d.([]*big.Rat)
	}
	tokens := 0
	for _, l := range rows {
		tokens += l
	}
	var d []*big.Rat
	if tokens == 0 {
		// No token in the term: verl's and OpenRLHF's means are 0/0 (NaN)
		// there; the outputs get 0 and carry nothing.
		d = make([]*big.Rat, width)
		for t := range d {
			d[t] = rat(0)
		}
	} else {
		d = unitLosses(rows, at, func(lossMat, mask mat) *big.Rat { return trainerLoss(r, lossMat, mask, width) })
	}
	rowWeightsMemo.Store(key, d)
	return d
}

// unitLosses returns, for every token t of row at, loss of the matrix that
// is 1 at (at, t) and 0 elsewhere, with the mask of rows of the given
// lengths. The transcriptions read their matrices only: the entries share
// one zero and one one, and the unit entry moves along row at.
func unitLosses(rows []int, at int, loss func(lossMat, mask mat) *big.Rat) []*big.Rat {
	zero, one := rat(0), rat(1)
	lossMat, mask := make(mat, len(rows)), make(mat, len(rows))
	for i, l := range rows {
		lossMat[i], mask[i] = make([]*big.Rat, width), make([]*big.Rat, width)
		for s := range width {
			lossMat[i][s], mask[i][s] = zero, zero
			if s < l {
				mask[i][s] = one
			}
		}
	}
	d := make([]*big.Rat, width)
	for t := range width {
		lossMat[at][t] = one
		d[t] = loss(lossMat, mask)
		lossMat[at][t] = zero
	}
	if zero.Sign() != 0 || one.Cmp(big.NewRat(1, 1)) != 0 {
		panic("a transcription wrote to its loss matrix")
	}
	return d
}

// checkBatch computes the coefficients of one batch and checks, in exact
// arithmetic, that the trainer's reduction gives every token of output o
// the gradient weight Scale u_o (times the trainer's constant), every
// padding token 0, and Scale itself.
func checkBatch(t *testing.T, r Reduction, update []float64, lengths, terms []int) {
	t.Helper()
	c := make([]float64, len(update))
	rep, err := Coefficients(c, Rows{Update: update, Lengths: lengths, Terms: terms}, r)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range lengths {
		if l > 0 {
			rows++
		}
	}
	if rows == 0 {
		for o := range c {
			if c[o] != 0 {
				t.Fatalf("%v, lengths %v: c = %v, want 0 without tokens", r, lengths, c)
			}
		}
		return
	}
	scale, constant := exactScale(r, len(lengths), rows)
	if want, _ := scale.Float64(); rep.Scale != want {
		t.Fatalf("%v, lengths %v: Scale = %v, want %v", r, lengths, rep.Scale, want)
	}
	d := tokenWeights(r, lengths, terms)
	for o, u := range update {
		want := new(big.Rat).Mul(new(big.Rat).SetFloat64(u), scale)
		want.Mul(want, constant)
		cr := new(big.Rat).SetFloat64(c[o])
		for tok := range width {
			got := new(big.Rat).Mul(d[o][tok], cr)
			if tok >= lengths[o] {
				if d[o][tok].Sign() != 0 {
					t.Fatalf("%v: padding token %d of output %d weighs %v", r, tok, o, d[o][tok])
				}
				continue
			}
			// Two roundings at most: |got - want| <= 2^-51 |want|.
			diff := new(big.Rat).Sub(got, want)
			bound := new(big.Rat).Mul(new(big.Rat).Abs(want), new(big.Rat).SetFloat64(0x1p-51))
			if diff.Abs(diff).Cmp(bound) > 0 {
				t.Fatalf("%v, lengths %v, terms %v, update %v: output %d token %d: trainer's weight %s, want Scale u = %s (c = %v)",
					r, lengths, terms, update, o, tok, got.FloatString(20), want.FloatString(20), c[o])
			}
		}
	}
}

// TestCoefficientsAgainstTrainers enumerates every batch of up to 3
// outputs with lengths 0 to 3 and every assignment to two loss terms (for
// 3 outputs, with SPIRAL_LONG=1; otherwise one term and one random
// assignment), and batches of 4 (with SPIRAL_LONG=1 all of them, otherwise
// the 16 length vectors whose code is a multiple of 17, from all zeros to
// all 3s) with one term and two random assignments, for every reduction,
// with random updates (zeros, integers, mixed magnitudes), and checks them
// against the trainers' transcribed reductions.
func TestCoefficientsAgainstTrainers(t *testing.T) {
	t.Parallel() // the package's costliest tests, independent: they overlap on two cores
	rnd := rand.New(rand.NewPCG(1, 2))
	draw := func() float64 {
		switch rnd.IntN(4) {
		case 0:
			return 0
		case 1:
			return float64(rnd.IntN(7) - 3)
		}
		return (rnd.Float64()*2 - 1) * math.Ldexp(1, rnd.IntN(40)-20)
	}
	batches := 0
	for b := 1; b <= 4; b++ {
		lengths := make([]int, b)
		for code := range 1 << (2 * b) {
			if b == 4 && !spiraltest.Long() && code%17 != 0 {
				continue // every length vector of 4 outputs with SPIRAL_LONG=1
			}
			for o := range b {
				lengths[o] = code >> (2 * o) & 3
			}
			assignments := [][]int{nil}
			if b < 3 || b == 3 && spiraltest.Long() {
				for a := range 1 << b {
					terms := make([]int, b)
					for o := range b {
						terms[o] = a >> o & 1
					}
					assignments = append(assignments, terms)
				}
			} else {
				random := 2
				if b == 3 {
					random = 1 // every assignment with SPIRAL_LONG=1
				}
				for range random {
					terms := make([]int, b)
					for o := range b {
						terms[o] = rnd.IntN(2)
					}
					assignments = append(assignments, terms)
				}
			}
			for _, terms := range assignments {
				for r := range Reduction(len(reductions)) {
					update := make([]float64, b)
					for o := range update {
						update[o] = draw()
					}
					checkBatch(t, r, update, lengths, terms)
					batches++
				}
			}
		}
	}
	t.Logf("%d batches", batches)
}

// TestCoefficientsWorked: one term, lengths 1, 2, 3 and an empty output.
func TestCoefficientsWorked(t *testing.T) {
	in := Rows{Update: []float64{1, -2, 3, 5}, Lengths: []int{1, 2, 3, 0}}
	for _, tc := range []struct {
		r     Reduction
		want  []float64
		scale float64
	}{
		{Sum, []float64{1, -2, 3, 0}, 1},
		{TokenMean, []float64{2, -4, 6, 0}, 1.0 / 3},             // T/R = 6/3
		{SeqMeanTokenSum, []float64{1, -2, 3, 0}, 1.0 / 3},       // R/R
		{SeqMeanTokenMean, []float64{1, -4, 9, 0}, 1.0 / 3},      // R L/R = L
		{TRLGRPO, []float64{4.0 / 3, -16.0 / 3, 12, 0}, 1.0 / 3}, // B L/R = 4L/3
		{TRLRLOO, []float64{4.0 / 3, -8.0 / 3, 4, 0}, 1.0 / 3},   // B/R
		{TRLDrGRPO, []float64{1, -2, 3, 0}, 1.0 / 4},             // B/B
	} {
		got := make([]float64, 4)
		rep, err := Coefficients(got, in, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		for o := range got {
			if math.Abs(got[o]-tc.want[o]) > 1e-15*math.Abs(tc.want[o]) {
				t.Errorf("%v: %v, want %v", tc.r, got, tc.want)
				break
			}
		}
		if rep.Scale != tc.scale || rep.Dropped != 1 || rep.Rows != 3 || rep.Tokens != 6 || rep.Outputs != 4 {
			t.Errorf("%v: %+v, want Scale %v, 1 dropped, 3 rows, 6 tokens", tc.r, rep, tc.scale)
		}
	}
}

// TestCoefficientsErrors: every bad entry is an *InputError naming the
// field and the row, before anything is written.
func TestCoefficientsErrors(t *testing.T) {
	for _, tc := range []struct {
		in    Rows
		field string
		row   int
	}{
		{Rows{Update: []float64{1, 2}, Lengths: []int{1}}, "Lengths", -1},
		{Rows{Update: []float64{1, 2}, Lengths: []int{1, 2}, Terms: []int{0}}, "Terms", -1},
		{Rows{Update: []float64{1, math.NaN()}, Lengths: []int{1, 2}}, "Update", 1},
		{Rows{Update: []float64{math.Inf(-1), 0}, Lengths: []int{1, 2}}, "Update", 0},
		{Rows{Update: []float64{0, -2 * MaxUpdate}, Lengths: []int{1, 2}}, "Update", 1},
		{Rows{Update: []float64{1, 2}, Lengths: []int{1, -1}}, "Lengths", 1},
		{Rows{Update: []float64{1, 2}, Lengths: []int{MaxLength + 1, 1}}, "Lengths", 0},
		{Rows{Update: []float64{1, 2}, Lengths: []int{1, 1}, Terms: []int{0, MaxTerms}}, "Terms", 1},
		{Rows{Update: []float64{1, 2}, Lengths: []int{1, 1}, Terms: []int{-1, 0}}, "Terms", 0},
	} {
		dst := []float64{7, 7}[:len(tc.in.Update)]
		_, err := Coefficients(dst, tc.in, TokenMean)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field || ie.Output != tc.row {
			t.Errorf("%+v: %v, want an *InputError for %s row %d", tc.in, err, tc.field, tc.row)
		}
		if dst[0] != 7 {
			t.Errorf("%+v: dst written before the error", tc.in)
		}
	}
	if _, err := Coefficients(nil, Rows{}, Reduction(99)); err == nil {
		t.Error("undefined reduction: no error")
	}
	var r Reduction
	if err := r.UnmarshalText([]byte("token_mean")); err == nil {
		t.Error("unknown name: no error")
	}
	for v := range Reduction(len(reductions)) {
		b, _ := v.MarshalText()
		var back Reduction
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("%v: text %q decodes to %v, %v", v, b, back, err)
		}
	}
	if got := fmt.Sprint(Reduction(-1)); got != "Reduction(-1)" {
		t.Errorf("String = %q", got)
	}
}

// TestCoefficientsAllocs: no allocation.
func TestCoefficientsAllocs(t *testing.T) {
	n := 4096
	in := Rows{Update: make([]float64, n), Lengths: make([]int, n), Terms: make([]int, n)}
	for o := range n {
		in.Update[o], in.Lengths[o], in.Terms[o] = float64(o%5)-2, o%300, o%2
	}
	dst := make([]float64, n)
	if a := testing.AllocsPerRun(10, func() {
		if _, err := Coefficients(dst, in, SeqMeanTokenMean); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations, want 0", a)
	}
}
