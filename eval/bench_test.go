package eval_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"spiral/eval"
)

// aimeSet is a test set the size of an AIME year, 30 problems with
// n = 256 samples each, most of them hard: C = floor(257 u^3) correct for
// u uniform, from a fixed seed.
func aimeSet() []eval.PassCount {
	rnd := rand.New(rand.NewPCG(2025, 30))
	ps := make([]eval.PassCount, 30)
	for i := range ps {
		u := rnd.Float64()
		ps[i] = eval.PassCount{N: 256, C: min(256, int(257*u*u*u))}
	}
	return ps
}

// lgammaPassAtK is the naive floating-point way: the binomials through
// math.Lgamma, 1 - exp(lnC(n-c, k) - lnC(n, k)).
func lgammaPassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	lnC := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		d, _ := math.Lgamma(float64(n - k + 1))
		return a - b - d
	}
	return 1 - math.Exp(lnC(n-c, k)-lnC(n, k))
}

// BenchmarkCoverageCurve computes the coverage curve k = 1..256 of the
// AIME-sized test set four ways, side by side: the recurrence of
// CoverageCurveTo; PassAtK (the Codex product) at every (problem, k); the
// exact big.Rat binomials at every (problem, k); and binomials through
// math.Lgamma. Each reports maxerr-x1e-15, its largest distance from the
// exact rational curve in units of 1e-15.
func BenchmarkCoverageCurve(b *testing.B) {
	ps := aimeSet()
	const kmax = 256
	exact := make([]float64, kmax)
	for k := 1; k <= kmax; k++ {
		sum := new(big.Rat)
		for _, p := range ps {
			r, _ := eval.PassAtKRat(p.N, p.C, k)
			sum.Add(sum, r)
		}
		exact[k-1], _ = sum.Quo(sum, big.NewRat(int64(len(ps)), 1)).Float64()
	}
	maxErr := func(curve []float64) float64 {
		e := 0.0
		for i := range curve {
			e = max(e, math.Abs(curve[i]-exact[i]))
		}
		return e
	}
	perPoint := func(dst []float64, passAtK func(n, c, k int) float64) {
		for k := 1; k <= kmax; k++ {
			s := 0.0
			for _, p := range ps {
				s += passAtK(p.N, p.C, k)
			}
			dst[k-1] = s / float64(len(ps))
		}
	}
	product := func(n, c, k int) float64 { v, _ := eval.PassAtK(n, c, k); return v }
	bigRat := func(n, c, k int) float64 {
		r, _ := eval.PassAtKRat(n, c, k)
		v, _ := r.Float64()
		return v
	}
	dst := make([]float64, kmax)
	for _, bc := range []struct {
		name string
		run  func()
	}{
		{"recurrence", func() { _ = eval.CoverageCurveTo(dst, ps) }},
		{"product-per-k", func() { perPoint(dst, product) }},
		{"bigrat-binomial", func() { perPoint(dst, bigRat) }},
		{"lgamma-float", func() { perPoint(dst, lgammaPassAtK) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.run()
			}
			b.ReportMetric(maxErr(dst)*1e15, "maxerr-x1e-15")
		})
	}
}

// shuffledAnswers lays out counts[v] copies of answer v, shuffled with a fixed
// seed.
func shuffledAnswers(counts ...int) []int {
	var a []int
	for v, c := range counts {
		for range c {
			a = append(a, v)
		}
	}
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	return a
}

// BenchmarkExpectedMajority times the exact expected maj@k at n = 256 for
// each tie rule: with 3 and 4 distinct answers (an easy problem), and with
// 129 (a correct answer 128 times and 128 distinct wrong ones, the worst
// case for TieFirstSeen). The 3-answer case also runs the exact rational
// enumeration of all compositions as the baseline.
func BenchmarkExpectedMajority(b *testing.B) {
	ones := make([]int, 129)
	for i := range ones {
		ones[i] = 1
	}
	ones[0] = 128
	for _, bc := range []struct {
		name    string
		answers []int
		k       int
	}{
		{"n=256/D=3/k=64", shuffledAnswers(120, 80, 56), 64},
		{"n=256/D=4/k=64", shuffledAnswers(120, 70, 40, 26), 64},
		{"n=256/D=4/k=128", shuffledAnswers(120, 70, 40, 26), 128},
		{"n=256/D=129/k=64", shuffledAnswers(ones...), 64},
	} {
		for _, rule := range tieRules {
			name := bc.name + "/" + map[eval.TieRule]string{
				eval.TieFirstSeen: "first-seen", eval.TieSmallest: "smallest", eval.TieRandom: "random",
			}[rule]
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _ = eval.ExpectedMajority(bc.answers, 0, bc.k, rule)
				}
			})
			if bc.name == "n=256/D=3/k=64" {
				b.Run(name+"/composition-rat", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						_ = compositionMajority(bc.answers, 0, bc.k, rule)
					}
				})
			}
		}
	}
}

// BenchmarkCoverageBootstrap times the bootstrap band of the AIME-sized
// test set, k = 1..256 with 2000 replicates; sorting each width's
// replicates for its quantiles takes most of the time.
func BenchmarkCoverageBootstrap(b *testing.B) {
	ps := aimeSet()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = eval.CoverageBootstrap(ps, 256, 2000, 0.95, rand.New(rand.NewPCG(1, 2)))
	}
}
