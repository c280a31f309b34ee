package loss

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestJoinedCoefficients: the coefficients of rows given in parts are bit
// for bit those of their concatenation, with and without multipliers and
// terms, for every reduction; an error's Row is the position in the
// concatenation.
func TestJoinedCoefficients(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 9))
	for trial := range 200 {
		n := 1 + rnd.IntN(40)
		all := Rows{Update: make([]float64, n), Lengths: make([]int, n)}
		if trial%2 == 0 {
			all.Multipliers = make([]float64, n)
		}
		if trial%3 == 0 {
			all.Terms = make([]int, n)
		}
		for o := range n {
			all.Update[o] = rnd.NormFloat64() * math.Ldexp(1, rnd.IntN(40)-20)
			all.Lengths[o] = rnd.IntN(6)
			if all.Multipliers != nil {
				all.Multipliers[o] = 1 / float64(1+rnd.IntN(13))
			}
			if all.Terms != nil {
				all.Terms[o] = rnd.IntN(3)
			}
		}
		cut := rnd.IntN(n + 1)
		part := func(lo, hi int) Rows {
			p := Rows{Update: all.Update[lo:hi], Lengths: all.Lengths[lo:hi]}
			if all.Multipliers != nil {
				p.Multipliers = all.Multipliers[lo:hi]
			}
			if all.Terms != nil {
				p.Terms = all.Terms[lo:hi]
			}
			return p
		}
		for r := range Reduction(len(reductions)) {
			want := make([]float64, n)
			wantRep, err := Coefficients(want, all, r)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, n)
			rep, err := JoinedCoefficients([][]float64{got[:cut], got[cut:]}, []Rows{part(0, cut), part(cut, n)}, r)
			if err != nil {
				t.Fatal(err)
			}
			for o := range n {
				if math.Float64bits(got[o]) != math.Float64bits(want[o]) {
					t.Fatalf("%v, %d outputs cut at %d: output %d = %v, want %v", r, n, cut, o, got[o], want[o])
				}
			}
			if rep != wantRep {
				t.Fatalf("%v: report %+v, want %+v", r, rep, wantRep)
			}
		}
	}
	_, err := JoinedCoefficients([][]float64{make([]float64, 2), make([]float64, 2)},
		[]Rows{{Update: []float64{1, 2}, Lengths: []int{1, 1}}, {Update: []float64{1, 2}, Lengths: []int{1, -1}}}, Sum)
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Lengths" || e.Output != 3 {
		t.Errorf("a negative length at 1 of the second part: %v, want an *InputError about Lengths row 3", err)
	}
}

// TestMultipliersErrors: a multiplier that is not finite or too large, and
// an update whose product with its multiplier is too large, are
// *InputErrors naming the row, before anything is written; a product that
// overflows float64 is one of them.
func TestMultipliersErrors(t *testing.T) {
	for _, tc := range []struct {
		u, m  float64
		field string
	}{
		{1, math.NaN(), "Multipliers"},
		{1, math.Inf(1), "Multipliers"},
		{1, -2 * MaxUpdate, "Multipliers"},
		{1e150, 1e60, "Update"},
		{MaxUpdate, MaxUpdate, "Update"},
	} {
		dst := []float64{7, 7}
		_, err := Coefficients(dst, Rows{Update: []float64{1, tc.u}, Multipliers: []float64{1, tc.m}, Lengths: []int{1, 1}}, TokenMean)
		if e, ok := errors.AsType[*InputError](err); !ok || e.Field != tc.field || e.Output != 1 || dst[0] != 7 {
			t.Errorf("update %v, multiplier %v: %v (dst %v), want an *InputError about %s row 1 and dst untouched", tc.u, tc.m, err, dst, tc.field)
		}
	}
	_, err := Coefficients(make([]float64, 2), Rows{Update: []float64{1, 2}, Multipliers: []float64{1}, Lengths: []int{1, 1}}, Sum)
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Multipliers" || e.Output != -1 {
		t.Errorf("one multiplier for two outputs: %v", err)
	}
}

// TestMultipliersSubnormal: an update of 4 x 2^-1074 times a multiplier of
// 1/12 is below the smallest subnormal, but the coefficient, times a
// token-mean ratio of 3000, is 1000 x 2^-1074: the multiplier meets the
// ratio first, and the coefficient is the exact one rounded once.
func TestMultipliersSubnormal(t *testing.T) {
	tiny := math.Ldexp(4, -1074)
	dst := make([]float64, 2)
	_, err := Coefficients(dst, Rows{Update: []float64{tiny, -tiny}, Multipliers: []float64{1.0 / 12, 1.0 / 12}, Lengths: []int{3000, 3000}}, TokenMean)
	if err != nil {
		t.Fatal(err)
	}
	exact := new(big.Rat).Mul(new(big.Rat).SetFloat64(tiny), big.NewRat(3000, 12))
	want, _ := exact.Float64()
	if dst[0] != want || dst[1] != -want || want == 0 {
		t.Errorf("coefficients %v, want +-%v", dst, want)
	}
}

// TestJoinedCoefficientsAllocs: JoinedCoefficients, and Coefficients with
// multipliers, allocate nothing.
func TestJoinedCoefficientsAllocs(t *testing.T) {
	const n = 1000
	in := Rows{Update: make([]float64, n), Multipliers: make([]float64, n), Lengths: make([]int, n), Terms: make([]int, n)}
	for o := range n {
		in.Update[o], in.Multipliers[o], in.Lengths[o], in.Terms[o] = float64(o%5)-2, 0.25, o%300, o%2
	}
	dst := make([]float64, n)
	parts := []Rows{{Update: in.Update[:300], Multipliers: in.Multipliers[:300], Lengths: in.Lengths[:300]}, {Update: in.Update[300:], Lengths: in.Lengths[300:], Terms: in.Terms[300:]}}
	dsts := [][]float64{dst[:300], dst[300:]}
	for _, r := range []Reduction{TokenMean, TRLGRPO} {
		if a := testing.AllocsPerRun(10, func() { _, _ = Coefficients(dst, in, r) }); a != 0 {
			t.Errorf("Coefficients with multipliers, %v: %v allocations, want 0", r, a)
		}
		if a := testing.AllocsPerRun(10, func() { _, _ = JoinedCoefficients(dsts, parts, r) }); a != 0 {
			t.Errorf("JoinedCoefficients, %v: %v allocations, want 0", r, a)
		}
	}
}

// TestPartMultipliersSubnormal: PartCoefficients, too, applies a multiplier
// to its ratio before the update: 4 x 2^-1074 times 1/12 times a token
// mean's 3000 tokens at kappa 1 is 1000 x 2^-1074, not 0.
func TestPartMultipliersSubnormal(t *testing.T) {
	tiny := math.Ldexp(4, -1074)
	dst := make([]float64, 1)
	_, err := PartCoefficients(dst, Rows{Update: []float64{tiny}, Multipliers: []float64{1.0 / 12}, Lengths: []int{3000}}, TokenMean, Part{Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Ldexp(1000, -1074); dst[0] != want {
		t.Errorf("coefficient %v, want %v", dst[0], want)
	}
}
