package combin

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"spiral/internal/numeric"
	"spiral/internal/spiraltest"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// huge is the largest K these tests ask for: 2^40, or MaxInt on 32-bit
// platforms.
const huge = int(min(uint64(1)<<40, uint64(math.MaxInt)))

// TestBoundedCost: each size from a caller that once made a call hang,
// exhaust memory or panic now gives an error naming the argument and the
// bound, or a bounded answer, within a stated allocation.
func TestBoundedCost(t *testing.T) {
	half := mustFamily(t, false, MaxSize, MaxSize/2) // Subsets(2^24, 2^23)
	s1000 := mustFamily(t, false, 1000, 500)
	s64 := mustFamily(t, false, 64, 32)
	rnd := rand.New(rand.NewPCG(1, 2))
	t20 := mustFamily(t, true, 1<<20, 1<<20)
	dst20 := make([]int, 1<<20)
	var answer float64
	for _, row := range []struct {
		name     string
		call     func() error
		wantErr  string // "" for an answer
		maxBytes uint64
	}{
		{"Sample(Subsets(2^24, 2^23), K = 2^40)", func() error { _, err := half.Sample(rnd, huge); return err }, "> 16777216, the most indices a draw holds", 1 << 12},
		{"NewSampler(Subsets(2^24, 2^23), K = 2^40)", func() error { _, err := NewSampler(half, huge); return err }, "> 16777216, the most indices a draw holds", 1 << 12},
		{"NewSampler(Subsets(1024, 16), K = MaxInt/4)", func() error { _, err := NewSampler(mustFamily(t, false, 1024, 16), math.MaxInt/4); return err }, "> 16777216, the most indices a draw holds", 1 << 12},
		{"NewBalancedSampler(Subsets(2^24, 2^23), K = 2^40)", func() error { _, err := NewBalancedSampler(half, huge); return err }, "> 16777216, the most indices a draw holds", 1 << 12},
		{"SampleBalanced(Subsets(2^24, 2^23), K = 2^40)", func() error { _, err := half.SampleBalanced(rnd, huge); return err }, "> 16777216, the most indices a draw holds", 1 << 12},
		{"Count(Subsets(2^24, 2^23))", func() error { _, err := half.Count(); return err }, "the most computed exactly", 1 << 12},
		{"Avoiding(Subsets(2^24, 2^23))", func() error { _, err := half.Avoiding(); return err }, "the most computed exactly", 1 << 12},
		{"Count(Tuples(2^24, 2^24))", func() error { _, err := mustFamily(t, true, MaxSize, MaxSize).Count(); return err }, "the most computed exactly", 1 << 12},
		{"MissProb(Subsets(2^24, 2^23), K = MaxInt)", func() error { _, err := half.MissProb(math.MaxInt); return err }, "the most computed exactly", 1 << 12},
		{"AppearanceDist(Subsets(2^24, 2^23), K = MaxInt)", func() error { _, err := half.AppearanceDist(math.MaxInt); return err }, "entries > 2^16", 1 << 12},
		{"MissProb(Subsets(8, 4), K = MaxInt)", func() error { _, err := mustFamily(t, false, 8, 4).MissProb(math.MaxInt); return err }, "> T = 70", 1 << 12},
		{"MissProb(Subsets(1000, 500), K = 2^17)", func() error { _, err := s1000.MissProb(1 << 17); return err }, "the most computed exactly", 1 << 12},
		{"AppearanceDist(Subsets(1000, 500), K = 2^17)", func() error { _, err := s1000.AppearanceDist(1 << 17); return err }, "entries > 2^16", 1 << 12},
		{"MissProb(Subsets(64, 32), K = 2^14)", func() error { _, err := s64.MissProb(1 << 14); return err }, "the most computed exactly", 1 << 12},
		{"AppearanceDist(Subsets(64, 32), K = 2^14)", func() error { _, err := s64.AppearanceDist(1 << 14); return err }, "the most computed exactly", 1 << 12},
		{"Rank(Subsets(2^24, 2^23))", func() error { _, err := half.Rank([]int{0}); return err }, "too slow", 1 << 12},
		{"Unrank(Subsets(2^24, 2^23))", func() error { _, err := half.Unrank(big.NewInt(1)); return err }, "too slow", 1 << 12},
		{"UnrankTo(Tuples(2^20, 2^20))", func() error { return t20.UnrankTo(dst20, 1) }, "too slow", 1 << 12},
		{"AppearanceDist(Subsets(2^24, 1), K = 2^24)", func() error { _, err := mustFamily(t, false, MaxSize, 1).AppearanceDist(MaxSize); return err }, "entries", 1 << 12},
		{"Unrank64(Tuples(2^24, 2^24))", func() error { _, err := mustFamily(t, true, MaxSize, MaxSize).Unrank64(1); return err }, "too slow", 1 << 12},
		{"MissProbFloat(Subsets(2^24, 2^23), K = 2^40)", func() (err error) { answer, err = half.MissProbFloat(huge); return err }, "", 1 << 12},
		{"MissProbFloat(Subsets(2^24, 2^23), K = MaxInt)", func() (err error) { answer, err = half.MissProbFloat(math.MaxInt); return err }, "", 1 << 12},
		{"MissProbFloat(Subsets(1000, 500), K = 2^17)", func() (err error) { answer, err = s1000.MissProbFloat(1 << 17); return err }, "", 1 << 12},
		{"Constants(Subsets(64, 32), Uniform, K = 2^16)", func() error {
			c, err := s64.Constants(Uniform, 1<<16)
			if err == nil && (c.M != nil || c.MFloat != 1) {
				t.Errorf("Constants(Subsets(64, 32), Uniform, 2^16) = %+v, want float path with MFloat = 1", c)
			}
			return err
		}, "", 1 << 12},
		{"Constants(Subsets(2^24, 2^23), Uniform, K = MaxInt)", func() error {
			c, err := half.Constants(Uniform, math.MaxInt)
			if err == nil && (c.M != nil || c.MFloat != 1) {
				t.Errorf("Constants(Subsets(2^24, 2^23), Uniform, MaxInt) = %+v, want float path with MFloat = 1", c)
			}
			return err
		}, "", 1 << 12},
		{"Constants(Subsets(2^24, 2^23), Balanced, K = 2^40)", func() error {
			c, err := half.Constants(Balanced, huge)
			if err == nil && (c.M.Cmp(big.NewRat(1, 1)) != 0 || c.MFloat != 1) {
				t.Errorf("Constants(Subsets(2^24, 2^23), Balanced, 2^40) = %+v, want M = 1", c)
			}
			return err
		}, "", 1 << 12},
	} {
		var err error
		bytes := spiraltest.Allocated(func() { err = row.call() })
		switch {
		case row.wantErr == "" && err != nil:
			t.Errorf("%s: error %v, want an answer", row.name, err)
		case row.wantErr != "" && (err == nil || !strings.Contains(err.Error(), row.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", row.name, err, row.wantErr)
		}
		// (A few hundred bytes of slack: the count is process-wide.)
		if bytes > max(row.maxBytes, 1<<12) {
			t.Errorf("%s: %d bytes allocated, want at most %d", row.name, bytes, row.maxBytes)
		}
	}
	if answer != 0 {
		t.Errorf("MissProbFloat: %v, want 0 (the probability is below 2^-4000)", answer)
	}
}

// directLogMiss is the sum of ln((T_avoid - i)/(T - i)) over i < K, factor
// by factor, for T < 2^64: the reference for the runs that MissProbFloat
// adds in one step.
func directLogMiss(f Family, K int) float64 {
	var z numeric.Sum
	d := float64(f.t64 - f.avoid64)
	for i := range uint64(K) {
		s := float64(f.t64 - i)
		if y := d / s; y <= 0.5 {
			z.Add(math.Log1p(-y))
		} else {
			z.Add(math.Log(float64(f.avoid64-i) / s))
		}
	}
	return z.Value()
}

// TestMissProbFloatRuns: beyond 2^16 factors, where runs of factors are
// added in one step, MissProbFloat agrees with the factor-by-factor sum to
// 1e-13 relative, on families with miss probabilities from 1e-300 to near 1.
func TestMissProbFloatRuns(t *testing.T) {
	scale := 1
	if long() {
		scale = 16
	}
	for _, tc := range []struct {
		N, n, K int
	}{
		{1 << 20, 2, scale << 20},
		{1 << 24, 2, scale << 20},
		{1 << 12, 3, 1 << 18},
		{5000, 2, 300_000},
		{1 << 20, 1, 1<<20 - 5}, // T - K = 5: runs shrink to single factors
		{200_000, 2, 1 << 17},
		{1 << 20, 1, 943_718}, // K = 90% of T
	} {
		f := mustFamily(t, false, tc.N, tc.n)
		if T, _ := f.Count64(); uint64(tc.K) > T {
			t.Fatalf("table error: K = %d > T = %d", tc.K, T)
		}
		got, err := f.MissProbFloat(tc.K)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Exp(directLogMiss(f, tc.K))
		if want < 1e-300 {
			t.Fatalf("table error: %v, K = %d: %g is beyond the documented range", f, tc.K, want)
		}
		if math.Abs(got-want) > 1e-13*want {
			t.Errorf("%v.MissProbFloat(%d) = %.17g, factor by factor %.17g", f, tc.K, got, want)
		}
	}
}

// TestMissProbFloatBits pins the bits of MissProbFloat on the factor-by-
// factor path, the path of runs and the path for T >= 2^64, on amd64 and
// 386 (where the standard library's Log, Log1p and Exp are the same Go
// code); a change of arithmetic, such as a fused multiply-add, changes
// them. The values themselves are checked against exact and 300-bit
// references by the other tests.
func TestMissProbFloatBits(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "386" {
		t.Skip("bits pinned on amd64 and 386")
	}
	for _, tc := range []struct {
		ordered bool
		N, n, K int
		bits    uint64
	}{
		{false, 8, 4, 4, 0x3fad3cf7dc1de714},
		{false, 1 << 20, 2, 1 << 20, 0x3fc152a64f14c1c4},
		{false, 1 << 24, 2, 1 << 27, 0x3e7e354abceee51c},
		{false, 300, 280, 30, 0x389bba6b67a90231},
		{true, 21, 20, 3, 0x3f1c4e651e0c37d3},
		{false, 16_000_001, 15_999_998, 3, 0x3bbf20fdf02688ef},
	} {
		f := mustFamily(t, tc.ordered, tc.N, tc.n)
		got, err := f.MissProbFloat(tc.K)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != tc.bits {
			t.Errorf("%v.MissProbFloat(%d) = %v, bits %#x, want %#x", f, tc.K, got, math.Float64bits(got), tc.bits)
		}
	}
}

// TestHugeSizesProperty: over random sizes up to and beyond every bound,
// every function that takes a size from a caller returns an error or an
// answer in range, and never panics.
func TestHugeSizesProperty(t *testing.T) {
	size := rapid.OneOf(rapid.IntRange(-2, 70), rapid.IntRange(1, MaxSize+2), rapid.SampledFrom([]int{MaxSize - 1, MaxSize, MaxSize + 1, math.MaxInt, math.MinInt}))
	count := rapid.OneOf(rapid.IntRange(-2, 300), rapid.IntRange(0, math.MaxInt), rapid.SampledFrom([]int{huge, math.MaxInt, 1 << 14, 1 << 16, 1 << 17}))
	rapid.Check(t, func(t *rapid.T) {
		N1, n := size.Draw(t, "N1"), size.Draw(t, "n")
		ordered := rapid.Bool().Draw(t, "ordered")
		K := count.Draw(t, "K")
		f, err := NewFamily(N1, n, ordered)
		if err != nil {
			if 1 <= n && n <= N1 && N1 <= MaxSize {
				t.Fatalf("NewFamily(%d, %d): %v", N1, n, err)
			}
			return
		}
		if l := f.LogCount(); !(l >= 0) || math.IsInf(l, 0) {
			t.Fatalf("%v.LogCount() = %v", f, l)
		}
		if T, err := f.Count(); err == nil && T.Sign() <= 0 {
			t.Fatalf("%v.Count() = %v", f, T)
		}
		if p, err := f.MissProbFloat(K); err == nil && !(p >= 0 && p <= 1) {
			t.Fatalf("%v.MissProbFloat(%d) = %v", f, K, p)
		}
		if p, err := f.MissProb(K); err == nil && (p.Sign() < 0 || p.Cmp(big.NewRat(1, 1)) > 0) {
			t.Fatalf("%v.MissProb(%d) = %v", f, K, p)
		}
		if d, err := f.AppearanceDist(K); err == nil && len(d) != K+1 {
			t.Fatalf("%v.AppearanceDist(%d): %d entries", f, K, len(d))
		}
		for _, d := range []Design{Uniform, Balanced} {
			c, err := f.Constants(d, K)
			if err != nil {
				continue
			}
			maxM := float64(f.Traces())/float64(f.SetSize()) - 1
			if !(c.MFloat >= 0 && c.MFloat <= maxM*(1+1e-12)) || !(c.CoverProbFloat >= 0 && c.CoverProbFloat <= 1) {
				t.Fatalf("%v.Constants(%v, %d) = %+v", f, d, K, c)
			}
		}
		if K > MaxSize/f.SetSize() {
			if _, err := NewSampler(f, K); err == nil {
				t.Fatalf("NewSampler(%v, %d): no error for K*n > MaxSize", f, K)
			}
			if _, err := NewBalancedSampler(f, K); err == nil {
				t.Fatalf("NewBalancedSampler(%v, %d): no error for K*n > MaxSize", f, K)
			}
		}
		if _, fits := f.Count64(); fits {
			// (Beyond 2^64 an unrank may take up to its bound of 2^27 word
			// operations; TestBoundedCost checks the refusal.)
			if g, err := f.Unrank(big.NewInt(int64(K))); err == nil && len(g) != n {
				t.Fatalf("%v.Unrank(%d) = %v", f, K, g)
			}
		}
		g := rapid.SliceOfN(rapid.IntRange(-1, N1), 0, 16).Draw(t, "set")
		if _, err := f.Rank(g); err == nil && len(g) != n {
			t.Fatalf("%v.Rank(%v): no error", f, g)
		}
		if _, err := f.Rank64(g); err == nil && len(g) != n {
			t.Fatalf("%v.Rank64(%v): no error", f, g)
		}
		var se *SetError
		if err := f.CheckSets(g); err != nil && !errors.As(err, &se) {
			t.Fatalf("%v.CheckSets(%v): %v is not a *SetError", f, g, err)
		}
	})
}

// TestMissProbFloatRunsBeyond64: the runs for T >= 2^64, where T is known
// only through ln T, against the factor-by-factor sum with T - i from big
// integers: Subsets(2^24, 3), T about 2^69, with K = 2^18 (and 2^20, 2^22
// under SPIRAL_LONG=1).
func TestMissProbFloatRunsBeyond64(t *testing.T) {
	f := mustFamily(t, false, MaxSize, 3)
	if _, fits := f.Count64(); fits {
		t.Fatal("table error: T < 2^64")
	}
	T, A := bigT(f), bigAvoid(f)
	d, _ := new(big.Float).SetInt(new(big.Int).Sub(T, A)).Float64()
	Ks := []int{1 << 18}
	if long() {
		Ks = append(Ks, 1<<20, 1<<22)
	}
	for _, K := range Ks {
		var z numeric.Sum
		var ti big.Int
		var tf big.Float
		for i := range K {
			ti.Sub(T, big.NewInt(int64(i)))
			s, _ := tf.SetInt(&ti).Float64()
			z.Add(math.Log1p(-d / s))
		}
		want := math.Exp(z.Value())
		got, err := f.MissProbFloat(K)
		if err != nil || math.Abs(got-want) > 1e-13*want {
			t.Errorf("%v.MissProbFloat(%d) = %.17g, %v; factor by factor %.17g", f, K, got, err, want)
		}
	}
}

// TestRank64Refused: Rank64 passes on the refusal of a family too large to
// rank, without a panic.
func TestRank64Refused(t *testing.T) {
	f := mustFamily(t, false, MaxSize, 65) // walks of 2^24 steps on 1258-bit numbers
	g := make([]int, 65)
	for i := range g {
		g[i] = i
	}
	if r, err := f.Rank64(g); err == nil || !strings.Contains(err.Error(), "too slow") {
		t.Errorf("%v.Rank64 = %d, %v; want the cost error", f, r, err)
	}
}
