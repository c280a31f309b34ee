package advantage

import (
	"math"
	"testing"

	"spiral/internal/numeric"

	"pgregory.net/rapid"
)

// TestExactSumsAgree: when scanRewards reports that plain sums are exact,
// every numeric.TwoSum error of setMean's compensated loop is 0 and its plain loop
// gives the same bits; rewards off the 2^-16 grid, or too large for their
// number, are never reported exact.
func TestExactSumsAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		// Rewards i 2^-e: on the grid when e <= 16 and |i| 2^-e small.
		e := rapid.IntRange(0, 20).Draw(t, "e")
		bits := rapid.IntRange(1, 62).Draw(t, "bits")
		rs := make([]float64, n)
		for j := range rs {
			i := rapid.Int64Range(-(1<<bits-1), 1<<bits-1).Draw(t, "i")
			rs[j] = math.Ldexp(float64(i), -e)
		}
		valid, exact := scanRewards(rs, nil)
		if !valid {
			return // beyond MaxAbsReward
		}
		var s, ea float64
		for _, x := range rs {
			var err float64
			s, err = numeric.TwoSum(s, x)
			ea += math.Abs(err)
		}
		if exact && ea != 0 {
			t.Fatalf("scanRewards reports exact sums of %v, but an addition erred", rs)
		}
		onGrid := true
		for _, x := range rs {
			onGrid = onGrid && math.Ldexp(x, 16) == math.Trunc(math.Ldexp(x, 16))
		}
		if exact && !onGrid {
			t.Fatalf("scanRewards reports exact sums of %v, off the 2^-16 grid", rs)
		}
		if !exact && e <= 16 && bits+16-e <= 40 && n <= 1<<10 {
			t.Fatalf("scanRewards does not report exact sums of %v (multiples of 2^-%d below 2^%d)", rs, e, bits-e)
		}
		var s0, s1 setStats
		setMean(&s0, rs, nil, false)
		if !exact {
			return
		}
		if setMean(&s1, rs, nil, true); s0 != s1 {
			t.Fatalf("setMean(%v): exact path %+v, compensated %+v", rs, s1, s0)
		}
	})
}

// TestExactSumsBatch: a batch of 0/1 and quarter rewards takes the exact
// path, one with a reward of 0.1 or a reward past the bound does not.
func TestExactSumsBatch(t *testing.T) {
	for _, c := range []struct {
		rs   []float64
		want bool
	}{
		{[]float64{0, 1, 1, 0, 1}, true},
		{[]float64{0.25, -0.75, 3, 0x1p-16}, true},
		{[]float64{0, 1, 0.1}, false},
		{[]float64{0, 1, 0x1p-17}, false},
		{[]float64{0, 1, 0x1p35}, false},
		{[]float64{0x1p35, 0x1p35}, false},
		{[]float64{0x1p34, 1}, true},
		{[]float64{1, math.NaN()}, false},
	} {
		if _, got := scanRewards(c.rs, nil); got != c.want {
			t.Errorf("scanRewards(%v) exact = %v, want %v", c.rs, got, c.want)
		}
		un := make([]bool, len(c.rs))
		if _, got := scanRewards(c.rs, un); got != c.want {
			t.Errorf("scanRewards(%v, none unscorable) exact = %v, want %v", c.rs, got, c.want)
		}
		rs := append([]float64{0.1}, c.rs...)
		un = append([]bool{true}, un...)
		if _, got := scanRewards(rs, un); got != c.want {
			t.Errorf("scanRewards(%v, the 0.1 unscorable) exact = %v, want %v", rs, got, c.want)
		}
	}
}

// TestScanRewardsVouched: ScanRewards finds what CheckRewards finds and
// reports exact sums as scanRewards does; a batch vouched for with
// Check = Unchecked and ExactSums gets the same credit, bit for bit, as
// the one the kernel sums with their (zero) errors.
func TestScanRewardsVouched(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const problems, k, n2 = 3, 4, 4
		quarters := rapid.Bool().Draw(t, "quarters")
		rs := make([]float64, problems*k*n2)
		un := make([]bool, len(rs))
		for j := range rs {
			i := rapid.IntRange(-1, 2).Draw(t, "i")
			rs[j] = float64(i)
			if quarters {
				rs[j] /= 4
			}
			un[j] = rapid.IntRange(0, 9).Draw(t, "u") == 0
		}
		if rapid.IntRange(0, 4).Draw(t, "tenth") == 0 {
			rs[rapid.IntRange(0, len(rs)-1).Draw(t, "at")] = 0.1
		}
		if rapid.IntRange(0, 9).Draw(t, "nan") == 0 {
			rs[rapid.IntRange(0, len(rs)-1).Draw(t, "at")] = math.NaN()
		}
		j, exact, err := ScanRewards(rs, un)
		wantJ, wantErr := CheckRewards(rs, un)
		_, wantExact := scanRewards(rs, un)
		if j != wantJ || err != wantErr || exact != (wantExact && j < 0) {
			t.Fatalf("ScanRewards = %d, %v, %v; CheckRewards = %d, %v; scanRewards exact = %v", j, exact, err, wantJ, wantErr, wantExact)
		}
		if j >= 0 || !exact {
			return
		}
		sets := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3, 5, 7}
		in := Batch[float64]{Rewards: rs, Unscorable: un, Check: Unchecked}
		for range problems {
			in.Traces = append(in.Traces, 8)
			in.Sets = append(in.Sets, k)
			in.Members = append(in.Members, sets...)
			for range k {
				in.SetSizes = append(in.SetSizes, 4)
				in.RewardCounts = append(in.RewardCounts, n2)
			}
		}
		var plain, vouched BatchCredit[float64]
		if err := ComputeBatch(&plain, in); err != nil {
			t.Fatal(err)
		}
		in.ExactSums = true
		if err := ComputeBatch(&vouched, in); err != nil {
			t.Fatal(err)
		}
		same := func(a, b []float64) bool {
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
					return false
				}
			}
			return len(a) == len(b)
		}
		if !same(plain.Search, vouched.Search) || !same(plain.Aggregation, vouched.Aggregation) ||
			!same(plain.SetScores, vouched.SetScores) || !same(plain.SetAdvantages, vouched.SetAdvantages) {
			t.Fatalf("rewards %v: vouched exact sums give %+v, the kernel's own %+v", rs, vouched, plain)
		}
	})
}
