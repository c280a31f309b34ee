package credit

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestScanBoundAsMarked: Scan's root case (no marks, exact), which first
// bounds the largest reward by the OR of the bit patterns, gives the
// results of the per-reward largest (the case with marks, none set) on
// rewards that are 0/1, on and off the 2^-16 grid, -0, of magnitude 2 or
// more (whose exponents OR past the largest), near and over the
// 2^34 and MaxAbsReward limits, NaN and ±Inf, and on lengths that are and
// are not multiples of the loop's eight.
func TestScanBoundAsMarked(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.25, 0.75, 2, -3, 1e30, -1e30,
		math.Nextafter(1e30, math.Inf(1)), 2e30, 0x1p34, -0x1p34, 0x1p34 + 0x1p-16, 0x1p37, 0x1p-16, 0x1p-17, 0.1,
		math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64}
	// Bounds that fail where the largest passes: exponents ORed past the
	// largest (1 and 2 give a NaN's pattern, 2^33 and 2^31 2^63, over
	// the 2^34 of exact sums), with -0, whose offGrid bits are the sign
	// alone.
	for _, rs := range [][]float64{{0, 2, 1}, {1, 2, -3}, {math.Copysign(0, -1), 0x1p33, 0x1p31}, {0x1p33, -0x1p31, 0x1p-16}} {
		valid, exact := Scan(rs, nil, true)
		wantValid, wantExact := Scan(rs, make([]bool, len(rs)), true)
		if valid != wantValid || exact != wantExact || !valid || !exact {
			t.Errorf("Scan(%v, nil, true) = %v, %v; with no marks set %v, %v; want valid exact sums", rs, valid, exact, wantValid, wantExact)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		rs := make([]float64, n)
		for j := range rs {
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				rs[j] = float64(rapid.IntRange(0, 1).Draw(t, "bit"))
			case 1:
				rs[j] = rapid.SampledFrom(special).Draw(t, "special")
			case 2:
				rs[j] = math.Ldexp(float64(rapid.Int64Range(-1<<40, 1<<40).Draw(t, "i")), -rapid.IntRange(-20, 30).Draw(t, "e"))
			default:
				rs[j] = rapid.Float64().Draw(t, "x")
			}
		}
		valid, exact := Scan(rs, nil, true)
		wantValid, wantExact := Scan(rs, make([]bool, n), true)
		if valid != wantValid || exact != wantExact {
			t.Fatalf("Scan(%v, nil, true) = %v, %v; with no marks set %v, %v", rs, valid, exact, wantValid, wantExact)
		}
		if v, _ := Scan(rs, nil, false); v != valid {
			t.Fatalf("Scan(%v, nil, true) valid = %v, Scan(nil, false) %v", rs, valid, v)
		}
	})
}
