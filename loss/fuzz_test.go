package loss

import (
	"errors"
	"math"
	"testing"
)

// FuzzCoefficients holds Coefficients to its contract on arbitrary input:
// an *InputError (or an error for an undefined reduction) before anything
// is written, or finite coefficients of the update's sign, 0 for an output
// of no tokens, the update itself for the sums, Scale in (0, 1] when some
// output has a token.
func FuzzCoefficients(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 5, 6}, uint8(2), false)
	f.Add([]byte{0, 0}, uint8(0), true)
	f.Add([]byte{255, 9, 7, 130, 4, 4, 1}, uint8(11), true)
	f.Fuzz(func(t *testing.T, data []byte, reduction uint8, split bool) {
		in := fuzzRows(data, split)
		r := Reduction(int(reduction) % (len(reductions) + 1))
		dst := sevens(len(in.Update))
		rep, err := Coefficients(dst, in, r)
		if refused(t, r, dst, err) {
			return
		}
		if rep.Rows > 0 && !(rep.Scale > 0 && rep.Scale <= 1) {
			t.Fatalf("Scale = %v with %d rows", rep.Scale, rep.Rows)
		}
		for o, c := range dst {
			u := in.Update[o]
			switch {
			case math.IsNaN(c) || math.IsInf(c, 0):
				t.Fatalf("%v: dst[%d] = %v for update %v", r, o, c, u)
			case in.Lengths[o] == 0 && c != 0:
				t.Fatalf("%v: output %d has no token but coefficient %v", r, o, c)
			case in.Lengths[o] > 0 && reductions[r].kind == kindSum && c != u:
				t.Fatalf("%v: dst[%d] = %v, want the update %v", r, o, c, u)
			case c*u < 0:
				t.Fatalf("%v: dst[%d] = %v has not the sign of the update %v", r, o, c, u)
			}
		}
	})
}

// fuzzRows builds Rows from a fuzzer's bytes, two a row: the update from
// the first (finite, infinite, NaN, subnormal and the bounds), the length
// from the second (negative, zero, MaxLength and past it), and with split
// a term from the first's high bits.
func fuzzRows(data []byte, split bool) Rows {
	values := [...]float64{0, 1, -1, 0.25, 1e300, -1e-300, 5e-324, math.NaN(), math.Inf(1), 3, MaxUpdate, -MaxUpdate}
	lengths := [...]int{-1, 0, 1, 2, 7, 300, MaxLength, MaxLength + 1}
	var in Rows
	for i := 0; i+1 < len(data); i += 2 {
		in.Update = append(in.Update, values[data[i]%byte(len(values))])
		in.Lengths = append(in.Lengths, lengths[data[i+1]%8])
		if split {
			in.Terms = append(in.Terms, int(data[i]/16)%(MaxTerms+1))
		}
	}
	return in
}

// sevens returns n sevens, a dst whose every entry shows whether it was
// written.
func sevens(n int) []float64 {
	dst := make([]float64, n)
	for i := range dst {
		dst[i] = 7
	}
	return dst
}

// refused reports whether err is non-nil, failing t unless it is an
// *InputError (for a defined reduction r) and dst, filled by sevens, is
// unwritten.
func refused(t *testing.T, r Reduction, dst []float64, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	if _, ok := errors.AsType[*InputError](err); r.defined() && !ok {
		t.Fatalf("%v: error %v is not an *InputError", r, err)
	}
	for _, c := range dst {
		if c != 7 {
			t.Fatalf("dst written before the error %v", err)
		}
	}
	return true
}
