package eval_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/combin"
	"pgregory.net/rapid"

	"spiral/eval"
	"spiral/internal/spiraltest"
)

// ratPassAtKBinomial is 1 - C(n-c, k)/C(n, k) through big-integer
// binomial coefficients: the definition, written independently of
// PassAtKRat's product.
func ratPassAtKBinomial(n, c, k int) *big.Rat {
	num := new(big.Int).Binomial(int64(n-c), int64(k)) // 0 when n-c < k
	den := new(big.Int).Binomial(int64(n), int64(k))
	q := new(big.Rat).SetFrac(num, den)
	return q.Sub(big.NewRat(1, 1), q)
}

// passAtKTol is the float tolerance of PassAtK and the pass@k curves
// against the exact rational: at most about (2 max(c, k) + 3) roundings of
// relative size 2^-53 each, with n <= 400 in these tests, so 1e-12 leaves
// a margin of more than ten over the bound.
const passAtKTol = 1e-12

// TestPassAtKEnumeration checks pass@k against its definition: the
// fraction of the k-subsets of n samples (the first c correct) that hold a
// correct sample, counted by visiting every subset.
func TestPassAtKEnumeration(t *testing.T) {
	for n := 1; n <= 11; n++ {
		for c := 0; c <= n; c++ {
			curve, err := eval.PassAtKCurve(n, c, n)
			if err != nil {
				t.Fatal(err)
			}
			for k := 1; k <= n; k++ {
				hits, total := 0, 0
				gen := combin.NewCombinationGenerator(n, k)
				subset := make([]int, k)
				for gen.Next() {
					gen.Combination(subset)
					total++
					if subset[0] < c { // indices are increasing
						hits++
					}
				}
				want := big.NewRat(int64(hits), int64(total))
				got, err := eval.PassAtKRat(n, c, k)
				if err != nil {
					t.Fatal(err)
				}
				if got.Cmp(want) != 0 {
					t.Errorf("PassAtKRat(%d, %d, %d) = %v, enumeration gives %v", n, c, k, got, want)
				}
				w := spiraltest.Float(want)
				f, err := eval.PassAtK(n, c, k)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(f-w) > 1e-15 || math.Abs(curve[k-1]-w) > 1e-15 {
					t.Errorf("n=%d c=%d k=%d: PassAtK = %v, curve = %v, enumeration gives %v", n, c, k, f, curve[k-1], w)
				}
			}
		}
	}
}

// TestPassAtKHandValues checks values derived by hand: n = 16, c = 2 gives
// pass@1 = 2/16, pass@4 = 1 - C(14,4)/C(16,4) = 1 - 1001/1820 = 9/20,
// pass@8 = 1 - C(14,8)/C(16,8) = 1 - 3003/12870 = 23/30.
func TestPassAtKHandValues(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want *big.Rat
	}{{1, big.NewRat(1, 8)}, {4, big.NewRat(9, 20)}, {8, big.NewRat(23, 30)}, {15, big.NewRat(1, 1)}, {16, big.NewRat(1, 1)}} {
		got, err := eval.PassAtKRat(16, 2, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cmp(tc.want) != 0 {
			t.Errorf("PassAtKRat(16, 2, %d) = %v, want %v", tc.k, got, tc.want)
		}
		f, _ := eval.PassAtK(16, 2, tc.k)
		if w := spiraltest.Float(tc.want); math.Abs(f-w) > 1e-15 {
			t.Errorf("PassAtK(16, 2, %d) = %v, want %v", tc.k, f, w)
		}
	}
}

// TestPassAtKProperties checks, over random (n, c, k): agreement with the
// exact rational; monotonicity in k and in c (exact, in floating point);
// pass@1 = c/n; pass@k = 1 exactly when n - c < k and 0 exactly when c = 0;
// the curve agrees with the pointwise values.
func TestPassAtKProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 400).Draw(t, "n")
		c := rapid.IntRange(0, n).Draw(t, "c")
		k := rapid.IntRange(1, n).Draw(t, "k")
		f, err := eval.PassAtK(n, c, k)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := eval.PassAtKRat(n, c, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := ratPassAtKBinomial(n, c, k); exact.Cmp(want) != 0 {
			t.Fatalf("PassAtKRat(%d, %d, %d) = %v, binomials give %v", n, c, k, exact, want)
		}
		if d := math.Abs(f - spiraltest.Float(exact)); d > passAtKTol {
			t.Fatalf("PassAtK(%d, %d, %d) = %v, exact %v: off by %g", n, c, k, f, exact.FloatString(20), d)
		}
		// The documented bound, (2c+1) 2^-53, plus one rounding of the exact
		// value to float64: catches a formula less stable than the product.
		if d, bound := math.Abs(f-spiraltest.Float(exact)), float64(2*c+2)*0x1p-53; d > bound {
			t.Fatalf("PassAtK(%d, %d, %d) = %v, exact %v: off by %g > the documented (2c+1) 2^-53 = %g", n, c, k, f, exact.FloatString(20), d, bound)
		}
		if k < n {
			next, _ := eval.PassAtK(n, c, k+1)
			if next < f {
				t.Fatalf("not monotone in k: pass@%d = %v > pass@%d = %v (n=%d c=%d)", k, f, k+1, next, n, c)
			}
		}
		if c < n {
			next, _ := eval.PassAtK(n, c+1, k)
			if next < f {
				t.Fatalf("not monotone in c: c=%d gives %v > c=%d gives %v (n=%d k=%d)", c, f, c+1, next, n, k)
			}
		}
		one, _ := eval.PassAtKRat(n, c, 1)
		if one.Cmp(big.NewRat(int64(c), int64(n))) != 0 {
			t.Fatalf("PassAtKRat(%d, %d, 1) = %v, want c/n", n, c, one)
		}
		if f1, _ := eval.PassAtK(n, c, 1); math.Abs(f1-float64(c)/float64(n)) > passAtKTol {
			t.Fatalf("PassAtK(%d, %d, 1) = %v, want c/n = %v", n, c, f1, float64(c)/float64(n))
		}
		if n-c < k && (f != 1 || exact.Cmp(big.NewRat(1, 1)) != 0) {
			t.Fatalf("n - c < k: PassAtK(%d, %d, %d) = %v, exact %v, want 1", n, c, k, f, exact)
		}
		if n-c >= k && exact.Cmp(big.NewRat(1, 1)) == 0 {
			t.Fatalf("n - c >= k but exact pass@k = 1 (n=%d c=%d k=%d)", n, c, k)
		}
		if c == 0 && f != 0 {
			t.Fatalf("c = 0: PassAtK(%d, 0, %d) = %v, want 0", n, k, f)
		}
		curve, err := eval.PassAtKCurve(n, c, k)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range curve {
			if j > 0 && v < curve[j-1] {
				t.Fatalf("curve not monotone at k = %d: %v < %v", j+1, v, curve[j-1])
			}
		}
		if d := math.Abs(curve[k-1] - spiraltest.Float(exact)); d > passAtKTol {
			t.Fatalf("PassAtKCurve(%d, %d, %d)[k-1] = %v, exact %v: off by %g", n, c, k, curve[k-1], exact.FloatString(20), d)
		}
	})
}

// TestPassAtKErrors checks that bad input is rejected with an error that
// names the value, in particular k > n with c = 0, where the Codex
// reference code returns 1.
func TestPassAtKErrors(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		want    string
	}{
		{2, 0, 5, "k: 5 > n = 2"},
		{4, 4, 5, "k: 5 > n = 4"},
		{4, 5, 2, "c: 5 > n = 4"},
		{4, -1, 2, "c: -1 < 0"},
		{-3, 0, 1, "n: -3 < 0"},
		{4, 1, 0, "k: 0 < 1"},
		{4, 1, -2, "k: -2 < 1"},
		{0, 0, 1, "k: 1 > n = 0"},
	} {
		if f, err := eval.PassAtK(tc.n, tc.c, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PassAtK(%d, %d, %d) = %v, %v; want error containing %q", tc.n, tc.c, tc.k, f, err, tc.want)
		}
		if r, err := eval.PassAtKRat(tc.n, tc.c, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PassAtKRat(%d, %d, %d) = %v, %v; want error containing %q", tc.n, tc.c, tc.k, r, err, tc.want)
		}
		if tc.k >= 1 {
			if _, err := eval.PassAtKCurve(tc.n, tc.c, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("PassAtKCurve(%d, %d, %d): error %v, want one containing %q", tc.n, tc.c, tc.k, err, tc.want)
			}
		}
	}
	if _, err := eval.PassAtKCurve(4, 1, 0); err == nil || !strings.Contains(err.Error(), "kmax: 0") {
		t.Errorf("PassAtKCurve(4, 1, 0): error %v, want one naming kmax = 0", err)
	}
	dst := []float64{7, 7, 7}
	if err := eval.PassAtKCurveTo(dst, 2, 1); err == nil || !strings.Contains(err.Error(), "k: 3 > n = 2") {
		t.Errorf("PassAtKCurveTo(len 3, 2, 1): error %v, want one naming k = 3 > n = 2", err)
	}
	if dst[0] != 7 || dst[1] != 7 || dst[2] != 7 {
		t.Errorf("PassAtKCurveTo changed dst on error: %v", dst)
	}
	if err := eval.PassAtKCurveTo(nil, 2, 1); err == nil || !strings.Contains(err.Error(), "dst: len = 0 < 1") {
		t.Errorf("PassAtKCurveTo(nil, 2, 1): error %v, want one naming dst: len = 0", err)
	}
}

// TestPassAtKCurveToAllocs checks that the dst-first curve does not
// allocate.
func TestPassAtKCurveToAllocs(t *testing.T) {
	dst := make([]float64, 256)
	if a := testing.AllocsPerRun(10, func() { _ = eval.PassAtKCurveTo(dst, 256, 17) }); a != 0 {
		t.Errorf("PassAtKCurveTo allocates %v times per call", a)
	}
}
