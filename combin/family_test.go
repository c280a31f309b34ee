package combin

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	gc "gonum.org/v1/gonum/stat/combin"
)

// TestCountsAgainstPascal checks T, T_avoid and the uint64 fast path of every
// family with N <= 70 (N <= 120 in the long run) against Pascal's triangle:
// C(N, n) for subsets and n! C(N, n) for tuples. The range crosses 2^64
// for both kinds (C(70, 35) > 2^66).
func TestCountsAgainstPascal(t *testing.T) {
	maxN := 70
	if long() {
		maxN = 120
	}
	c := pascal(maxN)
	zero := new(big.Int)
	for N := 1; N <= maxN; N++ {
		fact := big.NewInt(1)
		for n := 1; n <= N; n++ {
			fact.Mul(fact, big.NewInt(int64(n)))
			avoid := zero
			if n <= N-1 {
				avoid = c[N-1][n]
			}
			for _, ordered := range []bool{false, true} {
				f := mustFamily(t, ordered, N, n)
				wantT, wantAvoid := new(big.Int).Set(c[N][n]), new(big.Int).Set(avoid)
				if ordered {
					wantT.Mul(wantT, fact)
					wantAvoid.Mul(wantAvoid, fact)
				}
				if got := bigT(f); got.Cmp(wantT) != 0 {
					t.Fatalf("%v.Count() = %v, want %v", f, got, wantT)
				}
				if got := bigAvoid(f); got.Cmp(wantAvoid) != 0 {
					t.Fatalf("%v.Avoiding() = %v, want %v", f, got, wantAvoid)
				}
				got64, ok := f.Count64()
				if ok != wantT.IsUint64() || (ok && got64 != wantT.Uint64()) || (!ok && got64 != 0) {
					t.Fatalf("%v.Count64() = %d, %t; T = %v", f, got64, ok, wantT)
				}
				if f.Traces() != N || f.SetSize() != n || f.Ordered() != ordered {
					t.Fatalf("%v: Traces, SetSize, Ordered = %d, %d, %t", f, f.Traces(), f.SetSize(), f.Ordered())
				}
			}
		}
	}
}

// TestCount64Boundary pins the largest families that fit a uint64.
func TestCount64Boundary(t *testing.T) {
	for _, tc := range []struct {
		ordered bool
		N, n    int
		fits    bool
	}{
		{false, 67, 33, true},     // C(67, 33) = 14226520737620288370 < 2^64
		{false, 68, 34, false},    // C(68, 34) = 28453041475240576740 > 2^64
		{true, 20, 20, true},      // 20! = 2432902008176640000
		{true, 21, 21, false},     // 21! = 51090942171709440000
		{true, MaxSize, 2, true},  // about 2^48
		{true, MaxSize, 3, false}, // about 2^72
		{false, 1024, 16, false},
	} {
		f := mustFamily(t, tc.ordered, tc.N, tc.n)
		want := bigT(f).IsUint64()
		if tc.fits != want {
			t.Fatalf("table error for %v: fits = %t, but T = %v", f, tc.fits, bigT(f))
		}
		if _, ok := f.Count64(); ok != tc.fits {
			t.Errorf("%v.Count64() ok = %t, want %t", f, ok, tc.fits)
		}
	}
}

// TestCountsAgainstGonum compares with gonum's Binomial and NumPermutations
// where they do not overflow an int.
func TestCountsAgainstGonum(t *testing.T) {
	for N := 1; N <= 20; N++ {
		for n := 1; n <= N; n++ {
			s, tu := mustFamily(t, false, N, n), mustFamily(t, true, N, n)
			if got, want := bigT(s).Int64(), int64(gc.Binomial(N, n)); got != want {
				t.Errorf("%v.Count() = %d, gonum Binomial = %d", s, got, want)
			}
			if bigT(tu).Int64() > math.MaxInt {
				continue // gonum's int overflows (on 32-bit platforms)
			}
			if got, want := bigT(tu).Int64(), int64(gc.NumPermutations(N, n)); got != want {
				t.Errorf("%v.Count() = %d, gonum NumPermutations = %d", tu, got, want)
			}
		}
	}
}

// TestCountsLarge checks families far beyond Pascal's triangle against a
// product of exact rationals.
func TestCountsLarge(t *testing.T) {
	for _, tc := range []struct {
		ordered bool
		N, n    int
	}{{false, 1024, 16}, {true, 1024, 16}, {false, MaxSize, 2}, {true, MaxSize, 5}, {false, 3000, 1500}} {
		f := mustFamily(t, tc.ordered, tc.N, tc.n)
		want := big.NewRat(1, 1)
		for i := range tc.n {
			want.Mul(want, big.NewRat(int64(tc.N-i), 1))
			if !tc.ordered {
				want.Quo(want, big.NewRat(int64(i+1), 1))
			}
		}
		if !want.IsInt() || bigT(f).Cmp(want.Num()) != 0 {
			t.Errorf("%v.Count() = %v, want %v", f, bigT(f), want)
		}
		// T_avoid/T = (N-n)/N.
		ratio := new(big.Rat).SetFrac(bigAvoid(f), bigT(f))
		if want := big.NewRat(int64(tc.N-tc.n), int64(tc.N)); ratio.Cmp(want) != 0 {
			t.Errorf("%v: T_avoid/T = %v, want %v", f, ratio, want)
		}
	}
}

func TestFamilyErrors(t *testing.T) {
	for _, tc := range []struct {
		N, n int
		want string
	}{
		{0, 1, "N1: 0 < 1"},
		{-3, 1, "N1: -3 < 1"},
		{MaxSize + 1, 1, fmt.Sprintf("N1: %d > %d, the most traces a family holds", MaxSize+1, MaxSize)},
		{5, 0, "n: 0 < 1"},
		{5, -2, "n: -2 < 1"},
		{4, 5, "n: 5 > N1 = 4"},
	} {
		for _, ctor := range []func(int, int) (Family, error){Subsets, Tuples} {
			f, err := ctor(tc.N, tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("(%d, %d): error %v, want one containing %q", tc.N, tc.n, err, tc.want)
			}
			if f != (Family{}) {
				t.Errorf("(%d, %d): got %v with the error, want the zero Family", tc.N, tc.n, f)
			}
		}
	}
}

func TestZeroFamily(t *testing.T) {
	var f Family
	if !math.IsInf(f.LogCount(), -1) {
		t.Errorf("zero Family: LogCount = %v, want -Inf", f.LogCount())
	}
	if v, ok := f.Count64(); v != 0 || !ok {
		t.Errorf("zero Family: Count64 = %d, %t, want 0, true", v, ok)
	}
	if f.String() != "Family{}" {
		t.Errorf("zero Family: String = %q", f.String())
	}
	for range f.All() {
		t.Fatal("zero Family: All yielded a set")
	}
	errs := map[string]error{}
	_, errs["Count"] = f.Count()
	_, errs["Avoiding"] = f.Avoiding()
	_, errs["Rank"] = f.Rank(nil)
	_, errs["Rank64"] = f.Rank64(nil)
	_, errs["Unrank"] = f.Unrank(big.NewInt(0))
	_, errs["Unrank64"] = f.Unrank64(0)
	errs["UnrankTo"] = f.UnrankTo(nil, 0)
	_, errs["Sample"] = f.Sample(rand.New(rand.NewPCG(1, 1)), 0)
	_, errs["NewSampler"] = NewSampler(f, 0)
	_, errs["MissProb"] = f.MissProb(0)
	_, errs["MissProbFloat"] = f.MissProbFloat(0)
	_, errs["AppearanceDist"] = f.AppearanceDist(0)
	for name, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "zero Family") {
			t.Errorf("zero Family: %s error = %v", name, err)
		}
	}
}

func TestFamilyValue(t *testing.T) {
	a, b := mustFamily(t, false, 8, 4), mustFamily(t, false, 8, 4)
	c := mustFamily(t, true, 8, 4)
	if a != b || a == c {
		t.Errorf("Subsets(8, 4) == Subsets(8, 4): %t; == Tuples(8, 4): %t", a == b, a == c)
	}
	m := map[Family]int{a: 1, c: 2}
	if m[b] != 1 || len(m) != 2 {
		t.Errorf("Family as a map key: %v", m)
	}
	if a.String() != "Subsets(8, 4)" || c.String() != "Tuples(8, 4)" {
		t.Errorf("String: %q, %q", a, c)
	}
}

func TestNewFamily(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		f, err := NewFamily(8, 4, ordered)
		if err != nil || f != mustFamily(t, ordered, 8, 4) {
			t.Errorf("NewFamily(8, 4, %t) = %v, %v", ordered, f, err)
		}
		if _, err := NewFamily(4, 8, ordered); err == nil {
			t.Errorf("NewFamily(4, 8, %t): no error", ordered)
		}
	}
}
