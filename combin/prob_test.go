package combin

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/internal/spiraltest"
)

// TestMissProbPaper: the paper's 5.71%, C(35, 4)/C(70, 4) = 52360/916895 =
// 88/1541, and the tuple family's C(840, 4)/C(1680, 4).
func TestMissProbPaper(t *testing.T) {
	for _, tc := range []struct {
		f    Family
		want *big.Rat
	}{
		{mustFamily(t, false, 8, 4), big.NewRat(88, 1541)},
		{mustFamily(t, false, 8, 4), big.NewRat(52360, 916895)},
		{mustFamily(t, true, 8, 4), new(big.Rat).SetFrac(new(big.Int).Binomial(840, 4), new(big.Int).Binomial(1680, 4))},
	} {
		got, err := tc.f.MissProb(4)
		if err != nil || got.Cmp(tc.want) != 0 {
			t.Errorf("%v.MissProb(4) = %v, %v, want %v", tc.f, got, err, tc.want)
		}
		f, _ := tc.f.MissProbFloat(4)
		if want, _ := tc.want.Float64(); math.Abs(f-want) > 1e-15*want {
			t.Errorf("%v.MissProbFloat(4) = %v, want %v", tc.f, f, want)
		}
	}
}

// enumerate returns, for a small family, the exact distribution of the
// number of sets containing index x over every K-subset of the family,
// found by listing all C(T, K) of them.
func enumerate(f Family, K, x int) []*big.Rat {
	sets := collect(f)
	contains := make([]bool, len(sets))
	for i, g := range sets {
		contains[i] = count(g, x) > 0
	}
	counts := make([]int64, K+1)
	var total int64
	if K == 0 {
		counts[0], total = 1, 1
	} else {
		choice, _ := Subsets(len(sets), K)
		for c := range choice.All() {
			j := 0
			for _, i := range c {
				if contains[i] {
					j++
				}
			}
			counts[j]++
			total++
		}
	}
	dist := make([]*big.Rat, K+1)
	for j, c := range counts {
		dist[j] = big.NewRat(c, total)
	}
	return dist
}

// TestProbsByEnumeration: MissProb and AppearanceDist equal the frequencies
// found by listing every K-subset of small families, for every K and two
// indices.
func TestProbsByEnumeration(t *testing.T) {
	fams := []Family{
		mustFamily(t, false, 1, 1), mustFamily(t, false, 3, 3), mustFamily(t, false, 4, 1),
		mustFamily(t, false, 5, 2), mustFamily(t, false, 6, 2), mustFamily(t, false, 6, 3),
		mustFamily(t, false, 7, 6), mustFamily(t, true, 3, 2), mustFamily(t, true, 4, 2),
		mustFamily(t, true, 3, 3), mustFamily(t, true, 5, 1),
	}
	if long() {
		fams = append(fams, mustFamily(t, true, 4, 3), mustFamily(t, false, 7, 3)) // T = 24, 35
	}
	for _, f := range fams {
		T, _ := f.Count64()
		for K := 0; K <= int(T); K++ {
			if bigT(f).Int64() > 24 && K > 5 && K < int(T)-5 {
				continue // C(T, K) too large to list in the default budget
			}
			dist, err := f.AppearanceDist(K)
			if err != nil {
				t.Fatal(err)
			}
			miss, _ := f.MissProb(K)
			for _, x := range []int{0, f.Traces() - 1} {
				want := enumerate(f, K, x)
				if miss.Cmp(want[0]) != 0 {
					t.Errorf("%v.MissProb(%d) = %v, enumeration of index %d gives %v", f, K, miss, x, want[0])
				}
				for j := range want {
					if dist[j].Cmp(want[j]) != 0 {
						t.Errorf("%v.AppearanceDist(%d)[%d] = %v, enumeration of index %d gives %v", f, K, j, dist[j], x, want[j])
					}
				}
			}
		}
	}
}

// TestAppearanceDistMoments: on families of every size the distribution
// sums to 1, has mean K*n/N and the hypergeometric variance
// K p (1-p) (T-K)/(T-1) with p = n/N, and starts with MissProb: listed
// cases and 40 random ones (100 with SPIRAL_LONG=1).
func TestAppearanceDistMoments(t *testing.T) {
	check := func(t tester, f Family, K int) {
		dist, err := f.AppearanceDist(K)
		if err != nil || len(dist) != K+1 {
			t.Fatalf("%v.AppearanceDist(%d): %d entries, %v", f, K, len(dist), err)
		}
		sum, mean, second := new(big.Rat), new(big.Rat), new(big.Rat)
		var x big.Rat
		for j, p := range dist {
			if p.Sign() < 0 {
				t.Fatalf("%v.AppearanceDist(%d)[%d] = %v < 0", f, K, j, p)
			}
			sum.Add(sum, p)
			mean.Add(mean, x.Mul(p, big.NewRat(int64(j), 1)))
			second.Add(second, x.Mul(p, big.NewRat(int64(j)*int64(j), 1)))
		}
		N, n := int64(f.Traces()), int64(f.SetSize())
		wantMean := big.NewRat(int64(K)*n, N)
		variance := new(big.Rat).Sub(second, x.Mul(mean, mean))
		T := new(big.Rat).SetInt(bigT(f))
		wantVar := big.NewRat(int64(K)*n*(N-n), N*N)
		if T.Cmp(big.NewRat(1, 1)) > 0 {
			tk := new(big.Rat).Sub(T, big.NewRat(int64(K), 1))
			wantVar.Mul(wantVar, tk.Quo(tk, x.Sub(T, big.NewRat(1, 1))))
		} else {
			wantVar.SetInt64(0)
		}
		miss, _ := f.MissProb(K)
		if sum.Cmp(big.NewRat(1, 1)) != 0 || mean.Cmp(wantMean) != 0 || variance.Cmp(wantVar) != 0 || dist[0].Cmp(miss) != 0 {
			t.Fatalf("%v, K = %d: sum %v, mean %v (want %v), variance %v (want %v), P(0) %v (MissProb %v)",
				f, K, sum, mean, wantMean, variance, wantVar, dist[0], miss)
		}
	}
	for _, tc := range []struct {
		f Family
		K int
	}{
		{mustFamily(t, false, 8, 4), 4},
		{mustFamily(t, false, 8, 4), 70},
		{mustFamily(t, true, 8, 4), 1680},
		{mustFamily(t, false, 1024, 16), 64},
		{mustFamily(t, true, 30, 20), 50},
		{mustFamily(t, false, 1, 1), 1},
	} {
		check(t, tc.f, tc.K)
	}
	spiraltest.Check(t, 40, 100, func(t *rapid.T) {
		f := drawFamily(t, rapid.SampledFrom([]int{8, 100, MaxSize}).Draw(t, "maxN"), 30)
		maxK := 24
		if long() {
			maxK = 60
		}
		if T, ok := f.Count64(); ok && T < uint64(maxK) {
			maxK = int(T)
		}
		check(t, f, rapid.IntRange(0, maxK).Draw(t, "K"))
	})
}

// relErr returns |got - want|/want computed exactly, or |got| when want = 0.
func relErr(got float64, want *big.Rat) float64 {
	d := new(big.Rat).SetFloat64(got)
	d.Sub(d, want)
	if want.Sign() != 0 {
		d.Quo(d, want)
	}
	r, _ := d.Abs(d).Float64()
	return r
}

// TestMissProbFloatAccuracy: the float64 twin is within 1e-12 relative of
// the exact rational, for probabilities down to 1e-300, on families of
// every size (many beyond 2^64) and for K up to and past T_avoid: listed
// cases and 40 random ones (100 with SPIRAL_LONG=1).
func TestMissProbFloatAccuracy(t *testing.T) {
	const tol = 1e-12
	tiny := new(big.Rat).SetFloat64(1e-300)
	check := func(t tester, f Family, K int) {
		exact, err := f.MissProb(K)
		if err != nil {
			// Beyond MaxExactBits: a 300-bit product of the K factors.
			exact = missProbRef(f, K)
		}
		got, err := f.MissProbFloat(K)
		if err != nil {
			t.Fatalf("%v.MissProbFloat(%d): %v", f, K, err)
		}
		if exact.Sign() == 0 {
			if got != 0 {
				t.Fatalf("%v.MissProbFloat(%d) = %g, want 0", f, K, got)
			}
			return
		}
		if exact.Cmp(tiny) < 0 {
			return // beyond the documented range
		}
		if e := relErr(got, exact); e > tol {
			want, _ := exact.Float64()
			t.Fatalf("%v.MissProbFloat(%d) = %.17g, exact %.17g: relative error %.2g > %g", f, K, got, want, e, tol)
		}
	}
	for _, tc := range []struct {
		f  Family
		Ks []int
	}{
		{mustFamily(t, false, 8, 4), []int{0, 1, 4, 10, 34, 35, 36, 70}},
		{mustFamily(t, true, 8, 4), []int{1, 4, 100, 800, 839, 840, 841, 1680}},
		{mustFamily(t, false, 12, 6), []int{1, 50, 400, 450, 461, 462, 463}},
		{mustFamily(t, false, 67, 33), []int{1, 64, 1000}},   // largest C(N, N/2) below 2^64
		{mustFamily(t, false, 68, 34), []int{1, 64, 1000}},   // just above
		{mustFamily(t, false, 1024, 16), []int{1, 64, 1000}}, // far above
		{mustFamily(t, true, 30, 20), []int{1, 500, 1000}},
		{mustFamily(t, false, 100, 99), []int{1, 2, 5, 100}}, // y = 0.99: the ln branch
		{mustFamily(t, false, 1000, 999), []int{1, 3, 1000}},
		{mustFamily(t, false, 300, 280), []int{1, 30, 200}}, // T > 2^64, y = 14/15
		{mustFamily(t, true, MaxSize, 2), []int{1, 1000}},
		{mustFamily(t, false, MaxSize, MaxSize-1), []int{1, 10, 40}}, // T = MaxSize, tiny miss probability
		// y = (N-1)/N is not a float64, so ln(1-y) through log1p(-y) would
		// lose about log2(N) bits: only the ln branch is within tol.
		{mustFamily(t, false, 3_000_001, 3_000_000), []int{1, 2}},
		{mustFamily(t, false, 16_000_001, 15_999_998), []int{1, 2}}, // the same with T > 2^64
	} {
		for _, K := range tc.Ks {
			check(t, tc.f, K)
		}
	}
	spiraltest.Check(t, 40, 100, func(t *rapid.T) {
		f := drawFamily(t, rapid.SampledFrom([]int{10, 70, 2000}).Draw(t, "maxN"), 40)
		maxK := 500
		if T, ok := f.Count64(); ok && T < uint64(maxK) {
			maxK = int(T)
		}
		check(t, f, rapid.IntRange(0, maxK).Draw(t, "K"))
	})
}

func TestProbErrors(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	for _, tc := range []struct {
		K    int
		want string
	}{{-1, "K: -1 < 0"}, {71, "K: 71 > T = 70"}} {
		_, e1 := f.MissProb(tc.K)
		_, e2 := f.MissProbFloat(tc.K)
		_, e3 := f.AppearanceDist(tc.K)
		for i, err := range []error{e1, e2, e3} {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("K = %d, function %d: error %v, want %q", tc.K, i, err, tc.want)
			}
		}
	}
	p, _ := f.MissProb(0)
	pf, _ := f.MissProbFloat(0)
	d, _ := f.AppearanceDist(0)
	if p.Cmp(big.NewRat(1, 1)) != 0 || pf != 1 || fmt.Sprint(d) != "[1/1]" {
		t.Errorf("K = 0: MissProb %v, MissProbFloat %v, AppearanceDist %v; want 1, 1, [1]", p, pf, d)
	}
	// n = N beyond 2^64: no set avoids an index.
	all := mustFamily(t, true, 21, 21)
	if p, _ := all.MissProbFloat(0); p != 1 {
		t.Errorf("%v.MissProbFloat(0) = %v, want 1", all, p)
	}
	if p, _ := all.MissProbFloat(1); p != 0 {
		t.Errorf("%v.MissProbFloat(1) = %v, want 0", all, p)
	}
}

// missProbRef returns prod_{i<K} (T_avoid - i)/(T - i) rounded to a
// 300-bit float: a reference for MissProbFloat where MissProb refuses, with
// a relative error below K 2^-290.
func missProbRef(f Family, K int) *big.Rat {
	T, A := bigT(f), bigAvoid(f)
	p := new(big.Float).SetPrec(300).SetInt64(1)
	var num, den, t big.Int
	var nf, df big.Float
	nf.SetPrec(300)
	df.SetPrec(300)
	for i := range K {
		num.Sub(A, t.SetInt64(int64(i)))
		if num.Sign() <= 0 {
			return new(big.Rat)
		}
		den.Sub(T, t.SetInt64(int64(i)))
		nf.SetInt(&num)
		df.SetInt(&den)
		p.Mul(p, nf.Quo(&nf, &df))
	}
	r, _ := p.Rat(nil)
	return r
}
