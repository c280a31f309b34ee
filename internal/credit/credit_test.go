package credit

import (
	"math"
	"testing"
)

// TestRewardsValid puts each edge value at every position of slices of 0
// to 9 rewards, so that each lane of the four-way loop and the tail see it,
// for float64 and float32.
func TestRewardsValid(t *testing.T) {
	over := math.Nextafter(MaxAbsReward, math.Inf(1))
	good := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 1, MaxAbsReward, -MaxAbsReward}
	bad := []float64{over, -over, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0xfff8000000000001)} // a NaN with the sign bit set
	for n := range 10 {
		if xs := make([]float64, n); !RewardsValid(xs) {
			t.Errorf("%d zeros: not valid", n)
		}
		for p := range n {
			for _, v := range good {
				xs := make([]float64, n)
				xs[p] = v
				if !RewardsValid(xs) {
					t.Errorf("%v at %d of %d: not valid", v, p, n)
				}
			}
			for _, v := range bad {
				xs := make([]float64, n)
				xs[p] = v
				if RewardsValid(xs) {
					t.Errorf("%v at %d of %d: valid", v, p, n)
				}
			}
			// float32: the largest float32 below 1e30 is valid, float32(1e30)
			// (1.0000000150474662e30) and the non-finite values are not.
			for _, tc := range []struct {
				v  float32
				ok bool
			}{{math.Nextafter32(1e30, 0), true}, {-math.Nextafter32(1e30, 0), true}, {1e30, false},
				{float32(math.Inf(-1)), false}, {float32(math.NaN()), false}} {
				xs := make([]float32, n)
				xs[p] = tc.v
				if RewardsValid(xs) != tc.ok {
					t.Errorf("float32 %v at %d of %d: valid = %v, want %v", tc.v, p, n, !tc.ok, tc.ok)
				}
			}
		}
	}
}
