//go:build !386 && !arm && !mips && !mipsle

// The sizes of these tests, up to 2^62, need a 64-bit int.

package eval_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"spiral/eval"
	"spiral/internal/spiraltest"
)

// TestPassAtKCurveHugeKmax: kmax = 2^31 asked for 16 GB before any check,
// and 2^60 and MaxInt panicked in make. Each is refused before allocating,
// with an error naming kmax, the cap and the memory, whatever n is.
func TestPassAtKCurveHugeKmax(t *testing.T) {
	for _, kmax := range []int{1<<24 + 1, 1 << 31, 1 << 60, math.MaxInt} {
		for _, n := range []int{kmax, math.MaxInt} {
			var err error
			if b := spiraltest.Allocated(func() { _, err = eval.PassAtKCurve(n, 1, kmax) }); b > errorBudget {
				t.Errorf("PassAtKCurve(%d, 1, %d) allocated %d bytes", n, kmax, b)
			}
			wantCostError(t, fmt.Sprintf("PassAtKCurve(%d, 1, %d)", n, kmax), err, "kmax",
				fmt.Sprintf("kmax: %d > 16777216, the longest curve", kmax), "memory")
		}
	}
	// At the cap the curve is computed (128 MB): to 1 for n - c < k.
	if !spiraltest.Long() {
		return
	}
	curve, err := eval.PassAtKCurve(1<<24, 1<<23, 1<<24)
	if err != nil || len(curve) != 1<<24 || curve[len(curve)-1] != 1 || curve[0] != 0.5 {
		t.Errorf("PassAtKCurve(2^24, 2^23, 2^24): len %d, err %v", len(curve), err)
	}
}

// TestCoverageCurveHugeKmax: kmax = 2^40 (with problems of 2^40 samples)
// asked for 8 TB. It is refused before allocating; and a test set whose
// len(problems)·len(dst) would take more than 2^30 steps is refused by the
// dst-first form too.
func TestCoverageCurveHugeKmax(t *testing.T) {
	ps := []eval.PassCount{{N: 1 << 40, C: 3}, {N: 1 << 40, C: 1 << 39}}
	var err error
	if b := spiraltest.Allocated(func() { _, err = eval.CoverageCurve(ps, 1<<40) }); b > errorBudget {
		t.Errorf("CoverageCurve(kmax = 2^40) allocated %d bytes", b)
	}
	wantCostError(t, "CoverageCurve(kmax = 2^40)", err, "kmax", "kmax: 1099511627776 > 16777216, the longest curve", "memory")

	dst := make([]float64, 1<<16)
	many := make([]eval.PassCount, 1<<15)
	for i := range many {
		many[i] = eval.PassCount{N: 1 << 40, C: i}
	}
	if b := spiraltest.Allocated(func() { err = eval.CoverageCurveTo(dst, many) }); b > errorBudget {
		t.Errorf("CoverageCurveTo(2^15 problems, len 2^16) allocated %d bytes", b)
	}
	wantCostError(t, "CoverageCurveTo(2^15 problems, len 2^16)", err, "kmax", "32768·65536 > 2^30 steps", "time")
	if dst[0] != 0 {
		t.Errorf("CoverageCurveTo changed dst on error")
	}
}

// TestCoverageBootstrapHugeB: b = 2^33 asked for 2^33·kmax values (out of
// memory), b = 2^62 and MaxInt panicked (index out of range, as b·kmax
// overflowed). Each is refused before allocating, naming b, the cap and
// the memory; a bootstrap within memory but over 2^30 steps is refused
// naming the time.
func TestCoverageBootstrapHugeB(t *testing.T) {
	ps := []eval.PassCount{{N: 64, C: 1}, {N: 64, C: 20}, {N: 80, C: 0}}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, b := range []int{1 << 33, 1 << 62, math.MaxInt} {
		var err error
		if n := spiraltest.Allocated(func() { _, err = eval.CoverageBootstrap(ps, 16, b, 0.9, rnd) }); n > errorBudget {
			t.Errorf("CoverageBootstrap(b = %d) allocated %d bytes", b, n)
		}
		wantCostError(t, fmt.Sprintf("CoverageBootstrap(b = %d)", b), err, "b",
			fmt.Sprintf("b·kmax = %d·16 > 16777216 values, the most held", b), "memory")
	}
	wide := make([]eval.PassCount, 128)
	for i := range wide {
		wide[i] = eval.PassCount{N: 64, C: i % 65}
	}
	var err error
	if n := spiraltest.Allocated(func() { _, err = eval.CoverageBootstrap(wide, 16, 1<<20, 0.9, rnd) }); n > errorBudget {
		t.Errorf("CoverageBootstrap(b = 2^20, 128 problems) allocated %d bytes", n)
	}
	wantCostError(t, "CoverageBootstrap(b = 2^20, 128 problems)", err, "b", "1048576·128·16 > 2^30 steps", "time")
	// Many problems with a long curve: one curve per problem is too much.
	many := make([]eval.PassCount, 1<<20)
	for i := range many {
		many[i] = eval.PassCount{N: 64, C: i % 65}
	}
	if n := spiraltest.Allocated(func() { _, err = eval.CoverageBootstrap(many, 32, 1, 0.9, rnd) }); n > errorBudget {
		t.Errorf("CoverageBootstrap(2^20 problems, kmax 32) allocated %d bytes", n)
	}
	wantCostError(t, "CoverageBootstrap(2^20 problems, kmax 32)", err, "problems", "problems: len·kmax = 1048576·32 > 16777216 values, the most held", "memory")
}

// TestPassAtKHugeCounts: PassAtK(2^62, 2^61, k) looped over the 2^61
// correct samples. It now costs at most 2^20 factors: the k-factor product
// for k <= 2^20, and 1 (exactly, as the ratio is below 2^-1075) or the
// Stirling series beyond.
func TestPassAtKHugeCounts(t *testing.T) {
	const n, c = 1 << 62, 1 << 61
	for _, tc := range []struct {
		k    int
		want float64
		tol  float64
	}{
		{1, 0.5, 0}, // c/n
		{2, 1 - 0.5*float64(c-1)/float64(n-1), 0x1p-52}, // 1 - (n-c)(n-c-1)/(n(n-1))
		{1 << 21, 1, 0}, // c·k/n = 2^20: q < 2^-1000000
		{1 << 61, 1, 0},
		{math.MaxInt - c, 1, 0}, // n - c < k: exactly 1
	} {
		k := min(tc.k, n)
		got, err := eval.PassAtK(n, c, k)
		if err != nil || math.Abs(got-tc.want) > tc.tol {
			t.Errorf("PassAtK(2^62, 2^61, %d) = %v, %v; want %v", k, got, err, tc.want)
		}
	}
	// c and k both over 2^20 with c·k/n small: the Stirling path, against
	// the exact product of the min(c, k) factors in 256-bit floats.
	for _, tc := range []struct{ n, c, k int }{
		{1 << 62, 1 << 30, 1 << 30},     // c·k/n = 1/4
		{1 << 62, 1 << 21, 1 << 40},     // 1/2
		{math.MaxInt, 3 << 20, 5 << 30}, // about 7.5e-3
	} {
		got, err := eval.PassAtK(tc.n, tc.c, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		want := passAtKStirlingReference(tc.n, tc.c, tc.k)
		if d := math.Abs(got - want); d > 0x1p-48 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, series reference %v: off by %g > 2^-48", tc.n, tc.c, tc.k, got, want, d)
		}
	}
	// n = MaxInt with c just over the product's reach.
	if got, err := eval.PassAtK(math.MaxInt, eval.ProductMax+1, 1); err != nil || math.Abs(got-float64(eval.ProductMax+1)/math.MaxInt) > 5*0x1p-53 {
		t.Errorf("PassAtK(MaxInt, 2^20+1, 1) = %v, %v", got, err)
	}
}

// passAtKStirlingReference is 1 - q with log q = sum_{j<u} log1p(-x/(n-j))
// (u = min(c, k), x = max(c, k)) summed by the Euler-Maclaurin formula in
// 256-bit floats: sum_{j=0}^{u-1} g(j) = integral_0^u g + (g(0) - g(u))/2
// - (g'(u) - g'(0))/12, with g(t) = log(n-t-x) - log(n-t). The next term,
// (g”'(u) - g”'(0))/720, is below 2^-80 here (n - x - u > 2^60), so the
// reference is exact to far better than float64. Written independently of
// the package's Stirling series.
func passAtKStirlingReference(n, c, k int) float64 {
	const prec = 256
	u, x := min(c, k), max(c, k)
	f := func(v int) *big.Float { return new(big.Float).SetPrec(prec).SetInt64(int64(v)) }
	// log on big.Float: log(a) = log(m·2^e) with m in [0.5, 1), from
	// math.Log1p of a correction would lose precision, so use the series
	// log(a) = 2 atanh((a-1)/(a+1)) after scaling a into [0.5, 1).
	logB := func(a *big.Float) *big.Float {
		m := new(big.Float).SetPrec(prec)
		e := a.MantExp(m) // a = m·2^e, m in [0.5, 1)
		num := new(big.Float).SetPrec(prec).Sub(m, f(1))
		den := new(big.Float).SetPrec(prec).Add(m, f(1))
		z := num.Quo(num, den)
		z2 := new(big.Float).SetPrec(prec).Mul(z, z)
		sum := new(big.Float).SetPrec(prec)
		term := new(big.Float).SetPrec(prec).Set(z)
		for i := 1; i < 400; i += 2 {
			sum.Add(sum, new(big.Float).SetPrec(prec).Quo(term, f(i)))
			term.Mul(term, z2)
		}
		sum.Mul(sum, f(2))
		ln2 := new(big.Float).SetPrec(prec)
		ln2.SetString("0.693147180559945309417232121458176568075500134360255254120680009493393621969694715605863326996418687542")
		return sum.Add(sum, new(big.Float).SetPrec(prec).Mul(ln2, f(e)))
	}
	// F(z) = z log z - z, an antiderivative of log z.
	F := func(z *big.Float) *big.Float {
		r := new(big.Float).SetPrec(prec).Mul(z, logB(z))
		return r.Sub(r, z)
	}
	// g(t) = log(n-t-x) - log(n-t); integral_0^u g = [F(n-x) - F(n-x-u)] - [F(n) - F(n-u)].
	integral := new(big.Float).SetPrec(prec).Sub(F(f(n-x)), F(f(n-x-u)))
	integral.Sub(integral, F(f(n)))
	integral.Add(integral, F(f(n-u)))
	g := func(t int) *big.Float {
		r := logB(f(n - t - x))
		return r.Sub(r, logB(f(n-t)))
	}
	// g'(t) = 1/(n-t) - 1/(n-t-x)
	gp := func(t int) *big.Float {
		a := new(big.Float).SetPrec(prec).Quo(f(1), f(n-t))
		return a.Sub(a, new(big.Float).SetPrec(prec).Quo(f(1), f(n-t-x)))
	}
	sum := integral
	half := new(big.Float).SetPrec(prec).Sub(g(0), g(u))
	sum.Add(sum, half.Quo(half, f(2)))
	d := new(big.Float).SetPrec(prec).Sub(gp(u), gp(0))
	sum.Sub(sum, d.Quo(d, f(12)))
	logq, _ := sum.Float64()
	return -math.Expm1(logq)
}

// TestPassAtKLargeExact checks the Stirling path against the exact ratio,
// the product of u factors (n-x-j)/(n-j) in 256-bit floats, for u from 2
// to 4096 (where the exact product is cheap) and n from 2^30 to MaxInt,
// within the documented 2^-48. The path is used only for u > 2^20, where
// the series is more accurate still (its terms are relatively smaller).
func TestPassAtKLargeExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1<<30, math.MaxInt).Draw(t, "n")
		u := rapid.IntRange(2, 4096).Draw(t, "u")
		// x from u to where c·k/n reaches 800 (or n - u).
		xmax := min(n-u, int(min(800*float64(n)/float64(u), float64(math.MaxInt/2))))
		x := rapid.IntRange(u, max(u, xmax)).Draw(t, "x")
		got := eval.PassAtKLarge(n, u, x)
		q := new(big.Float).SetPrec(256).SetInt64(1)
		for j := range u {
			num := new(big.Float).SetPrec(256).SetInt64(int64(n - x - j))
			q.Mul(q, num.Quo(num, new(big.Float).SetPrec(256).SetInt64(int64(n-j))))
		}
		p := new(big.Float).SetPrec(256).Sub(new(big.Float).SetInt64(1), q)
		want, _ := p.Float64()
		if d := math.Abs(got - want); d > 0x1p-48 {
			t.Fatalf("Stirling path for n = %d, u = %d, x = %d: %v, exact %v: off by %g > 2^-48", n, u, x, got, want, d)
		}
	})
}

// TestPassAtKLargeAgainstProduct checks the Stirling path against the
// k-factor product just over the product's reach (u = 2^20 + 1, whose
// product is within (4u+1)·2^-53 < 2^-30 of exact), at several c·k/n.
func TestPassAtKLargeAgainstProduct(t *testing.T) {
	u := eval.ProductMax + 1
	for _, tc := range []struct{ n, x int }{
		{1 << 62, 1 << 30}, {1 << 50, 1 << 21}, {math.MaxInt, 1 << 40}, {1 << 45, 1 << 28},
	} {
		q := 1.0
		for j := range u {
			q = float64(q * (float64(tc.n-tc.x-j) / float64(tc.n-j)))
		}
		got, err := eval.PassAtK(tc.n, tc.x, u)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(got - (1 - q)); d > 0x1p-30 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, product %v: off by %g", tc.n, tc.x, u, got, 1-q, d)
		}
	}
}

// TestPassAtKRatHuge: PassAtKRat(2^24, ...) ran for minutes reducing
// binomials of millions of bits. It now refuses fractions of more than
// 2^17 bits (combin.MaxExactBits), naming the smaller of c and k and the
// time, and answers
// exactly, quickly, when min(c, k) is small, at any n.
func TestPassAtKRatHuge(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		arg     string
	}{
		{1 << 24, 1 << 23, 1 << 22, "k"},
		{1 << 24, 1 << 20, 1 << 23, "c"},
		{math.MaxInt, 1 << 40, 1 << 40, "k"},
		{1 << 24, 12000, 12000, "k"}, // 12000·25 bits = 300000 > 2^17
		{1 << 24, 5300, 5243, "k"},   // 5243·25 bits = 131075 > 2^17
	} {
		var err error
		if b := spiraltest.Allocated(func() { _, err = eval.PassAtKRat(tc.n, tc.c, tc.k) }); b > errorBudget {
			t.Errorf("PassAtKRat(%d, %d, %d) allocated %d bytes", tc.n, tc.c, tc.k, b)
		}
		wantCostError(t, fmt.Sprintf("PassAtKRat(%d, %d, %d)", tc.n, tc.c, tc.k), err, tc.arg, "2^17 bits", "time")
	}
	exact := []struct{ n, c, k int }{
		{1 << 24, 3, 5}, {1 << 24, 1 << 23, 7}, {math.MaxInt, 9, 1 << 40}, {1 << 24, 2000, 2000},
	}
	if spiraltest.Long() {
		// At the bound: 5242·25 bits = 131050 <= 2^17.
		exact = append(exact, struct{ n, c, k int }{1 << 24, 5242, 5300})
	}
	for _, tc := range exact {
		got, err := eval.PassAtKRat(tc.n, tc.c, tc.k)
		if err != nil {
			t.Fatalf("PassAtKRat(%d, %d, %d): %v", tc.n, tc.c, tc.k, err)
		}
		u, x := min(tc.c, tc.k), max(tc.c, tc.k)
		want := ratPassAtKBinomial(tc.n, x, u) // symmetric in c and k
		if got.Cmp(want) != 0 {
			t.Errorf("PassAtKRat(%d, %d, %d) = %v, want %v", tc.n, tc.c, tc.k, got.FloatString(20), want.FloatString(20))
		}
		if f, _ := eval.PassAtK(tc.n, tc.c, tc.k); math.Abs(f-spiraltest.Float(want)) > float64(4*u+1)*0x1p-53 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, exact %v", tc.n, tc.c, tc.k, f, want.FloatString(20))
		}
	}
	// The exact shortcuts hold at every size.
	if r, err := eval.PassAtKRat(math.MaxInt, 0, 1<<62); err != nil || r.Sign() != 0 {
		t.Errorf("PassAtKRat(MaxInt, 0, 2^62) = %v, %v; want 0", r, err)
	}
	if r, err := eval.PassAtKRat(math.MaxInt, 1<<62, 1<<62); err != nil || r.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("PassAtKRat(MaxInt, 2^62, 2^62) = %v, %v; want 1", r, err)
	}
}

// BenchmarkPassAtK times one pass@k at the sizes of an evaluation (the
// product of c factors), with c beyond 2^20 (the product of k factors, at
// its longest), and with both beyond 2^20 (Stirling's series).
func BenchmarkPassAtK(b *testing.B) {
	for _, bc := range []struct {
		name    string
		n, c, k int
	}{
		{"n=256/c=17/k=64", 256, 17, 64},
		{"n=2^62/c=2^61/k=2^20", 1 << 62, 1 << 61, 1 << 20},
		{"n=2^62/c=2^30/k=2^30", 1 << 62, 1 << 30, 1 << 30},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = eval.PassAtK(bc.n, bc.c, bc.k)
			}
		})
	}
}
