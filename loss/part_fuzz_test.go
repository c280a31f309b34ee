package loss

import (
	"math"
	"testing"
)

// FuzzPartCoefficients holds PartCoefficients to its contract on arbitrary
// input: an error (an *InputError for a defined reduction) before anything
// is written, or finite coefficients of the update's sign, 0 for an output
// of no tokens, Report.Scale the kappa given; and, for the whole batch as
// its one part at ScaleOf's kappa, the coefficients of Coefficients.
func FuzzPartCoefficients(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 5, 6}, uint8(2), false, uint8(1), []byte{})
	f.Add([]byte{0, 0}, uint8(0), true, uint8(0), []byte{3, 9})
	f.Add([]byte{255, 9, 7, 130, 4, 4, 1}, uint8(11), true, uint8(5), []byte{1, 1, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte, reduction uint8, split bool, scale uint8, over []byte) {
		in := fuzzRows(data, split)
		r := Reduction(int(reduction) % (len(reductions) + 1))
		part := Part{Scale: [...]float64{0, 1, 0.5, 1e-300, MaxScale, -1, math.NaN(), math.Inf(1)}[scale%8]}
		if len(over) > 0 {
			counts := [...]int64{-1, 0, 1, 5, 300, MaxRows, MaxRows + 1, 1 << 53}
			for i := 0; i+1 < len(over); i += 2 {
				part.Over = append(part.Over, Divisors{Sequences: counts[over[i]%8], Tokens: counts[over[i+1]%8]})
			}
		}
		dst := sevens(len(in.Update))
		rep, err := PartCoefficients(dst, in, r, part)
		if refused(t, r, dst, err) {
			return
		}
		if rep.Scale != part.Scale {
			t.Fatalf("Scale = %v, want %v", rep.Scale, part.Scale)
		}
		for o, c := range dst {
			u := in.Update[o]
			switch {
			case math.IsNaN(c) || math.IsInf(c, 0):
				t.Fatalf("%v: dst[%d] = %v for update %v", r, o, c, u)
			case in.Lengths[o] == 0 && c != 0:
				t.Fatalf("%v: output %d has no token but coefficient %v", r, o, c)
			case c*u < 0:
				t.Fatalf("%v: dst[%d] = %v has not the sign of the update %v", r, o, c, u)
			}
		}
		// The whole batch as its one part.
		want := make([]float64, len(in.Update))
		whole, err := Coefficients(want, in, r)
		if err != nil {
			t.Fatalf("Coefficients refuses what PartCoefficients accepts: %v", err)
		}
		got := make([]float64, len(in.Update))
		if _, err := PartCoefficients(got, in, r, Part{Scale: whole.Scale}); err != nil {
			t.Fatal(err)
		}
		for o := range got {
			if math.Abs(got[o]-want[o]) > 1e-15*math.Abs(want[o]) {
				t.Fatalf("%v: output %d: PartCoefficients %v, Coefficients %v", r, o, got[o], want[o])
			}
		}
	})
}
