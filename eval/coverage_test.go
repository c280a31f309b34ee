package eval_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	"pgregory.net/rapid"

	"spiral/eval"
	"spiral/internal/spiraltest"
)

// drawProblems draws a random test set whose problems all have at
// least kmax samples.
func drawProblems(t *rapid.T, kmax int) []eval.PassCount {
	P := rapid.IntRange(1, 12).Draw(t, "P")
	ps := make([]eval.PassCount, P)
	for i := range ps {
		n := rapid.IntRange(kmax, kmax+40).Draw(t, "N")
		ps[i] = eval.PassCount{N: n, C: rapid.IntRange(0, n).Draw(t, "C")}
	}
	return ps
}

// TestCoverageCurveExact checks the coverage curve against the mean of the
// exact rational pass@k values, its exact monotonicity in k, and that the
// dst-first and allocating forms agree.
func TestCoverageCurveExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kmax := rapid.IntRange(1, 64).Draw(t, "kmax")
		ps := drawProblems(t, kmax)
		curve, err := eval.CoverageCurve(ps, kmax)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, kmax)
		if err := eval.CoverageCurveTo(dst, ps); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dst, curve) {
			t.Fatalf("CoverageCurveTo = %v, CoverageCurve = %v", dst, curve)
		}
		for k := 1; k <= kmax; k++ {
			sum := new(big.Rat)
			for _, p := range ps {
				r, err := eval.PassAtKRat(p.N, p.C, k)
				if err != nil {
					t.Fatal(err)
				}
				sum.Add(sum, r)
			}
			want := spiraltest.Float(sum.Quo(sum, big.NewRat(int64(len(ps)), 1)))
			if d := math.Abs(curve[k-1] - want); d > passAtKTol {
				t.Fatalf("coverage at k = %d: %v, exact mean %v, off by %g", k, curve[k-1], want, d)
			}
			if k > 1 && curve[k-1] < curve[k-2] {
				t.Fatalf("coverage decreases at k = %d: %v < %v", k, curve[k-1], curve[k-2])
			}
		}
	})
}

// TestCoverageErrors checks that bad test sets are rejected with errors
// naming the value and, for the dst-first form, that dst is unchanged.
func TestCoverageErrors(t *testing.T) {
	good := []eval.PassCount{{N: 8, C: 3}, {N: 4, C: 0}}
	for _, tc := range []struct {
		ps   []eval.PassCount
		kmax int
		want string
	}{
		{nil, 3, "no problems"},
		{good, 0, "kmax: 0 < 1"},
		{good, 5, "problems[1].N = 4: fewer samples than kmax = 5"},
		{[]eval.PassCount{{N: 8, C: 9}}, 1, "problems[0].C = 9: more correct samples than N = 8"},
		{[]eval.PassCount{{N: 8, C: 1}, {N: 8, C: -2}}, 1, "problems[1].C = -2: negative"},
	} {
		if _, err := eval.CoverageCurve(tc.ps, tc.kmax); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CoverageCurve(%v, %d): error %v, want one containing %q", tc.ps, tc.kmax, err, tc.want)
		}
		if _, err := eval.CoverageBootstrap(tc.ps, tc.kmax, 10, 0.9, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CoverageBootstrap(%v, %d): error %v, want one containing %q", tc.ps, tc.kmax, err, tc.want)
		}
	}
	dst := []float64{7, 7, 7, 7, 7}
	if err := eval.CoverageCurveTo(dst, good); err == nil || !strings.Contains(err.Error(), "problems[1].N = 4: fewer samples than kmax = 5") {
		t.Errorf("CoverageCurveTo(len 5): error %v, want one naming N = 4 < kmax = 5", err)
	}
	if slices.ContainsFunc(dst, func(v float64) bool { return v != 7 }) {
		t.Errorf("CoverageCurveTo changed dst on error: %v", dst)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		b     int
		level float64
		rnd   *rand.Rand
		want  string
	}{
		{0, 0.9, rnd, "b: 0 < 1"},
		{10, 0, rnd, "level: 0 not in (0, 1)"},
		{10, 1, rnd, "level: 1 not in (0, 1)"},
		{10, math.NaN(), rnd, "level: NaN"},
		{10, 0.9, nil, "nil *rand.Rand"},
	} {
		if _, err := eval.CoverageBootstrap(good, 2, tc.b, tc.level, tc.rnd); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CoverageBootstrap(b=%d, level=%v): error %v, want one containing %q", tc.b, tc.level, err, tc.want)
		}
	}
}

// TestCoverageCurveToAllocs checks that the dst-first curve does not
// allocate.
func TestCoverageCurveToAllocs(t *testing.T) {
	ps := make([]eval.PassCount, 30)
	for i := range ps {
		ps[i] = eval.PassCount{N: 256, C: 8 * i}
	}
	dst := make([]float64, 256)
	if a := testing.AllocsPerRun(10, func() { _ = eval.CoverageCurveTo(dst, ps) }); a != 0 {
		t.Errorf("CoverageCurveTo allocates %v times per call", a)
	}
}

// TestCoverageBootstrapDeterministic checks that the same seed gives the
// same band, that Mean is the coverage curve, that 0 <= Lo <= Hi <= 1, and
// that a test set of identical problems gives a zero-width band.
func TestCoverageBootstrapDeterministic(t *testing.T) {
	ps := []eval.PassCount{{16, 0}, {16, 1}, {16, 5}, {16, 16}, {20, 3}}
	a, err := eval.CoverageBootstrap(ps, 16, 500, 0.95, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := eval.CoverageBootstrap(ps, 16, 500, 0.95, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Lo, b.Lo) || !slices.Equal(a.Hi, b.Hi) || !slices.Equal(a.Mean, b.Mean) {
		t.Fatalf("same seed, different bands:\n%+v\n%+v", a, b)
	}
	curve, _ := eval.CoverageCurve(ps, 16)
	if !slices.Equal(a.Mean, curve) {
		t.Errorf("Mean = %v, CoverageCurve = %v", a.Mean, curve)
	}
	if a.Level != 0.95 || a.B != 500 || len(a.Lo) != 16 || len(a.Hi) != 16 {
		t.Errorf("band metadata: level %v, B %d, lengths %d %d", a.Level, a.B, len(a.Lo), len(a.Hi))
	}
	for k := range a.Lo {
		if !(a.Lo[k] <= a.Hi[k]) || a.Lo[k] < 0 || a.Hi[k] > 1 {
			t.Errorf("k = %d: interval [%v, %v]", k+1, a.Lo[k], a.Hi[k])
		}
	}
	// Identical problems: every resample is the same test set.
	same := []eval.PassCount{{10, 3}, {10, 3}, {10, 3}}
	s, err := eval.CoverageBootstrap(same, 10, 50, 0.9, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Lo, s.Mean) || !slices.Equal(s.Hi, s.Mean) {
		t.Errorf("identical problems: Lo %v, Hi %v, want both %v", s.Lo, s.Hi, s.Mean)
	}
}

// TestCoverageBootstrapTwoProblems checks the percentile rule on a case
// whose bootstrap distribution is known exactly: with two problems of
// pass@k values a < b, a replicate's coverage is a, (a+b)/2 or b with
// probabilities 1/4, 1/2, 1/4. With B = 2000 replicates the fraction at a
// is 0.25 with standard error 0.0097, so the 5% quantile is a and the 40%
// and 60% quantiles are the middle value, each by more than 15 standard
// errors (the seed is fixed, so the test is deterministic).
func TestCoverageBootstrapTwoProblems(t *testing.T) {
	ps := []eval.PassCount{{8, 1}, {8, 4}}
	mean, _ := eval.CoverageCurve(ps, 3)
	lo, _ := eval.PassAtK(8, 1, 2)
	hi, _ := eval.PassAtK(8, 4, 2)
	wide, err := eval.CoverageBootstrap(ps, 3, 2000, 0.9, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(wide.Lo[1]-lo) > 1e-15 || math.Abs(wide.Hi[1]-hi) > 1e-15 {
		t.Errorf("90%% band at k = 2: [%v, %v], want [%v, %v]", wide.Lo[1], wide.Hi[1], lo, hi)
	}
	narrow, err := eval.CoverageBootstrap(ps, 3, 2000, 0.2, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if math.Abs(narrow.Lo[k]-mean[k]) > 1e-15 || math.Abs(narrow.Hi[k]-mean[k]) > 1e-15 {
			t.Errorf("20%% band at k = %d: [%v, %v], want both %v", k+1, narrow.Lo[k], narrow.Hi[k], mean[k])
		}
	}
}

// TestCoverageBootstrapNormalWidth checks the band's width and centre
// against the normal approximation on a test set of P = 200 problems: the
// bootstrap distribution of a mean over P resampled problems has standard
// deviation s = sd/sqrt(P), sd the plug-in (divide by P) standard deviation
// of the problems' pass@k, so the 90% band is about mean -+ 1.645 s.
//
// Tolerance: an empirical quantile from B replicates has standard error
// sqrt(p(1-p)/B) / f(q), with density f(q) = phi(1.645)/s = 0.1031/s at the
// 5% and 95% points; for B = 4000 that is 0.0335 s per end, so the width
// (two ends) has standard error at most 0.067 s and the centre at most
// 0.034 s. We allow 5 standard errors plus 0.05 s for the skewness of a
// mean of 200 bounded values (Cornish-Fisher shift (z^2-1) g/6 s with
// g <= 2/sqrt(200)).
func TestCoverageBootstrapNormalWidth(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	ps := make([]eval.PassCount, 200)
	for i := range ps {
		ps[i] = eval.PassCount{N: 64, C: rnd.IntN(65)}
	}
	const B, z = 4000, 1.6448536269514722
	band, err := eval.CoverageBootstrap(ps, 16, B, 0.9, rand.New(rand.NewPCG(13, 14)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 4, 16} {
		var sum, sum2 float64
		for _, p := range ps {
			v, _ := eval.PassAtK(p.N, p.C, k)
			sum += v
			sum2 += v * v
		}
		m := sum / float64(len(ps))
		s := math.Sqrt((sum2/float64(len(ps)) - m*m) / float64(len(ps)))
		width, centre := band.Hi[k-1]-band.Lo[k-1], (band.Hi[k-1]+band.Lo[k-1])/2
		if d := math.Abs(width - 2*z*s); d > (5*0.067+0.05)*s {
			t.Errorf("k = %d: width %v, normal approximation %v: off by %.3g s", k, width, 2*z*s, d/s)
		}
		if d := math.Abs(centre - m); d > (5*0.034+0.05)*s {
			t.Errorf("k = %d: centre %v, mean %v: off by %.3g s", k, centre, m, d/s)
		}
	}
}

// TestEmpiricalQuantile checks the bootstrap's quantile rule against gonum's
// stat.Quantile with stat.Empirical, on random sorted samples (with ties)
// and levels, including p·b exactly whole.
func TestEmpiricalQuantile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.IntRange(1, 300).Draw(t, "b")
		xs := make([]float64, b)
		for i := range xs {
			xs[i] = float64(rapid.IntRange(0, 20).Draw(t, "x")) / 20
		}
		slices.Sort(xs)
		p := rapid.Float64Range(0, 1).Draw(t, "p")
		if rapid.Bool().Draw(t, "whole") {
			p = float64(rapid.IntRange(1, b).Draw(t, "i")) / float64(b)
		}
		if p <= 0 || p >= 1 {
			return
		}
		if got, want := eval.EmpiricalQuantile(p, xs), stat.Quantile(p, stat.Empirical, xs, nil); got != want {
			t.Fatalf("quantile %v of %v: %v, gonum %v", p, xs, got, want)
		}
	})
}
