package credit

import (
	"math"
	"testing"

	"spiral/internal/numeric"

	"pgregory.net/rapid"
)

// TestExactSumsAgree: when Scan reports that plain sums are exact,
// every numeric.TwoSum error of setScores' compensated loop is 0 and its plain loop
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
		valid, exact := Scan(rs, nil, true)
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
			t.Fatalf("Scan reports exact sums of %v, but an addition erred", rs)
		}
		onGrid := true
		for _, x := range rs {
			onGrid = onGrid && math.Ldexp(x, 16) == math.Trunc(math.Ldexp(x, 16))
		}
		if exact && !onGrid {
			t.Fatalf("Scan reports exact sums of %v, off the 2^-16 grid", rs)
		}
		if !exact && e <= 16 && bits+16-e <= 40 && n <= 1<<10 {
			t.Fatalf("Scan does not report exact sums of %v (multiples of 2^-%d below 2^%d)", rs, e, bits-e)
		}
		s0 := oneSet(rs, false)
		if !exact {
			return
		}
		if s1 := oneSet(rs, true); s0 != s1 {
			t.Fatalf("setScores(%v): exact path %+v, compensated %+v", rs, s1, s0)
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
		if _, got := Scan(c.rs, nil, true); got != c.want {
			t.Errorf("Scan(%v) exact = %v, want %v", c.rs, got, c.want)
		}
		un := make([]bool, len(c.rs))
		if _, got := Scan(c.rs, un, true); got != c.want {
			t.Errorf("Scan(%v, none unscorable) exact = %v, want %v", c.rs, got, c.want)
		}
		rs := append([]float64{0.1}, c.rs...)
		un = append([]bool{true}, un...)
		if _, got := Scan(rs, un, true); got != c.want {
			t.Errorf("Scan(%v, the 0.1 unscorable) exact = %v, want %v", rs, got, c.want)
		}
	}
}

// TestExactSumsSameBits: a batch whose rewards Scan finds on the grid
// gets the same credit, bit for bit, with ExactSums as without (the
// kernel then sums with their errors, which are all 0).
func TestExactSumsSameBits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const problems, k, n2 = 3, 4, 4
		quarters := rapid.Bool().Draw(t, "quarters")
		in := Input[float64]{Rewards: make([]float64, problems*k*n2), Unscorable: make([]bool, problems*k*n2)}
		for j := range in.Rewards {
			in.Rewards[j] = float64(rapid.IntRange(-1, 2).Draw(t, "i"))
			if quarters {
				in.Rewards[j] /= 4
			}
			in.Unscorable[j] = rapid.IntRange(0, 9).Draw(t, "u") == 0
		}
		if valid, exact := Scan(in.Rewards, in.Unscorable, true); !valid || !exact {
			t.Fatalf("Scan(%v) = %v, %v; want valid exact sums", in.Rewards, valid, exact)
		}
		sets := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3, 5, 7}
		for range problems {
			in.Members = append(in.Members, sets...)
			for range k {
				in.SetSizes = append(in.SetSizes, 4)
				in.RewardCounts = append(in.RewardCounts, n2)
			}
		}
		credit := func(exact bool) *Output[float64] {
			in.ExactSums = exact
			var out Output[float64]
			out.Resize(problems, problems*8, problems*k, len(in.Rewards), 8, k)
			for q := range problems {
				Problem(&out, &in, q, Span{Trace: 8 * q, Traces: 8, Set: k * q, Sets: k, Member: 16 * q, Members: 16, Reward: k * n2 * q, Rewards: k * n2})
			}
			return &out
		}
		plain, exact := credit(false), credit(true)
		same := func(a, b []float64) bool {
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
					return false
				}
			}
			return len(a) == len(b)
		}
		if !same(plain.Search, exact.Search) || !same(plain.Aggregation, exact.Aggregation) ||
			!same(plain.SetScores, exact.SetScores) || !same(plain.SetAdvantages, exact.SetAdvantages) {
			t.Fatalf("rewards %v: exact sums give %+v, compensated %+v", in.Rewards, exact, plain)
		}
	})
}

// oneSet returns what setScores keeps of one set of rewards rs.
func oneSet(rs []float64, exact bool) setStats {
	in := Input[float64]{SetSizes: []int{1}, RewardCounts: []int{len(rs)}, Members: []int{0}, Rewards: rs, ExactSums: exact}
	var out Output[float64]
	out.Resize(1, 1, 1, len(rs), 1, 1)
	setScores(&out, &in, Span{Traces: 1, Sets: 1, Members: 1, Rewards: len(rs)}, out.sc.sets)
	return out.sc.sets[0]
}

// TestSetScoresExactSameBits: setScoresExact, which Problem takes for a
// problem without unscorable marks whose sums are exact, keeps the set
// statistics and writes the A_agg that setScores does, bit for bit, for
// sets of every size and rewards on the grid (equal ones included), both
// with ExactSums and with the compensated sums.
func TestSetScoresExactSameBits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		counts := rapid.SliceOfN(rapid.IntRange(1, 6), 1, 6).Draw(t, "counts")
		in := Input[float64]{RewardCounts: counts}
		grid := rapid.SampledFrom([]float64{1, 0.25, 3}).Draw(t, "grid")
		for _, c := range counts {
			for range c {
				in.Rewards = append(in.Rewards, grid*float64(rapid.IntRange(-2, 3).Draw(t, "i")))
			}
		}
		if _, exact := Scan(in.Rewards, nil, true); !exact {
			t.Fatalf("Scan(%v): not exact sums", in.Rewards)
		}
		k, n := len(counts), len(in.Rewards)
		sp := Span{Traces: 1, Sets: k, Rewards: n}
		got, gotAgg := make([]setStats, k), make([]float64, n)
		setScoresExact(gotAgg, in.Rewards, counts, got)
		for _, exact := range []bool{true, false} {
			in.ExactSums = exact
			var out Output[float64]
			out.Resize(1, 1, k, n, 1, k)
			setScores(&out, &in, sp, out.sc.sets)
			for i, s := range out.sc.sets[:k] {
				if s != got[i] {
					t.Fatalf("rewards %v, ExactSums %v: set %d: setScoresExact keeps %+v, setScores %+v", in.Rewards, exact, i, got[i], s)
				}
			}
			for o, a := range out.Aggregation {
				if math.Float64bits(a) != math.Float64bits(gotAgg[o]) {
					t.Fatalf("rewards %v, ExactSums %v: output %d: setScoresExact writes %v, setScores %v", in.Rewards, exact, o, gotAgg[o], a)
				}
			}
		}
	})
}
