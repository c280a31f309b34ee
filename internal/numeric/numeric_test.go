package numeric

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// float draws a float64 of any finite magnitude, subnormals included, or
// one of a few awkward values.
func float(t *rapid.T, label string) float64 {
	return rapid.OneOf(
		rapid.Float64(),
		rapid.Float64Range(-1, 1),
		rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 0.1, 1e308, -1e308, 1 + 0x1p-52, 0x1p-1022}),
		rapid.Custom(func(t *rapid.T) float64 {
			return math.Ldexp(rapid.Float64Range(1, 2).Draw(t, "m"), rapid.IntRange(-1074, 1000).Draw(t, "e"))
		}),
	).Draw(t, label)
}

// ratOf returns x exactly.
func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// TestTwoSumExact: s + e = a + b exactly and s = fl(a + b), checked with
// math/big, whenever a + b does not overflow.
func TestTwoSumExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := float(t, "a"), float(t, "b")
		s, e := TwoSum(a, b)
		if math.IsInf(s, 0) {
			t.Skip("overflow")
		}
		if s != a+b {
			t.Fatalf("s = %v, want fl(a+b) = %v", s, a+b)
		}
		got := new(big.Rat).Add(ratOf(s), ratOf(e))
		want := new(big.Rat).Add(ratOf(a), ratOf(b))
		if got.Cmp(want) != 0 {
			t.Fatalf("TwoSum(%v, %v) = %v + %v, not exact", a, b, s, e)
		}
	})
}

// TestTwoProdExact: p + e = a b exactly and p = fl(a b), checked with
// math/big, when the product neither overflows nor has an error below the
// subnormal range.
func TestTwoProdExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := float(t, "a"), float(t, "b")
		p, e := TwoProd(a, b)
		if math.IsInf(p, 0) || math.IsNaN(e) {
			t.Skip("overflow")
		}
		if p != float64(a*b) {
			t.Fatalf("p = %v, want fl(ab) = %v", p, a*b)
		}
		_, ea := math.Frexp(a)
		_, eb := math.Frexp(b)
		if a != 0 && b != 0 && ea+eb < -968 {
			t.Skip("error below the subnormal range")
		}
		got := new(big.Rat).Add(ratOf(p), ratOf(e))
		want := new(big.Rat).Mul(ratOf(a), ratOf(b))
		if got.Cmp(want) != 0 {
			t.Fatalf("TwoProd(%v, %v) = %v + %v, not exact", a, b, p, e)
		}
	})
}

// TestSumBound: a Sum of values and products is within 2^-53 |total| +
// n 2^-106 sum |x| (doubled for margin) of the exact total, checked with
// math/big, on mixed magnitudes with cancellation.
func TestSumBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) float64 {
			x := math.Ldexp(rapid.Float64Range(1, 2).Draw(t, "m"), rapid.IntRange(-60, 60).Draw(t, "e"))
			if rapid.Bool().Draw(t, "negative") {
				x = -x
			}
			return x
		}), 1, 300).Draw(t, "xs")
		products := rapid.Bool().Draw(t, "products")
		var z Sum
		exact, abs := new(big.Rat), new(big.Rat)
		for i, x := range xs {
			v := ratOf(x)
			if products {
				y := xs[len(xs)-1-i]
				z.AddProduct(x, y)
				v.Mul(v, ratOf(y))
			} else {
				z.Add(x)
			}
			exact.Add(exact, v)
			abs.Add(abs, new(big.Rat).Abs(v))
		}
		got := ratOf(z.Value())
		diff := new(big.Rat).Sub(got, exact)
		diff.Abs(diff)
		bound := new(big.Rat).Mul(new(big.Rat).Abs(exact), ratOf(0x1p-53))
		bound.Add(bound, new(big.Rat).Mul(abs, ratOf(float64(len(xs))*0x1p-106)))
		bound.Mul(bound, big.NewRat(2, 1))
		if diff.Cmp(bound) > 0 {
			t.Fatalf("sum off by %s > %s", diff.FloatString(30), bound.FloatString(30))
		}
	})
	// Cancellation a plain sum loses entirely.
	var z Sum
	for _, x := range []float64{1e16, 1, -1e16, 1} {
		z.Add(x)
	}
	if z.Value() != 2 {
		t.Errorf("1e16 + 1 - 1e16 + 1 = %v, want 2", z.Value())
	}
}

// TestMeanPair: h = fl(total/n) and h + l is within 2^-100 |mean| (plus
// the subnormal spacing) of the exact mean of the pair's total, checked
// with math/big, for large means with small spread.
func TestMeanPair(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := float(t, "base")
		if math.Abs(base) > 1e300 {
			t.Skip("overflow")
		}
		n := rapid.IntRange(1, 5000).Draw(t, "n")
		var z Sum
		for i := range n {
			z.Add(base + math.Ldexp(float64(i%7)-3, rapid.IntRange(-80, 0).Draw(t, "spread")))
		}
		total := new(big.Rat).Add(ratOf(z.S), ratOf(z.C))
		mean := new(big.Rat).Quo(total, big.NewRat(int64(n), 1))
		h, l := MeanPair(z, n)
		if want := (z.S + z.C) / float64(n); h != want {
			t.Fatalf("h = %v, want fl((S+C)/n) = %v", h, want)
		}
		diff := new(big.Rat).Sub(new(big.Rat).Add(ratOf(h), ratOf(l)), mean)
		diff.Abs(diff)
		bound := new(big.Rat).Mul(new(big.Rat).Abs(mean), ratOf(0x1p-100))
		bound.Add(bound, ratOf(0x1p-1070))
		if diff.Cmp(bound) > 0 {
			t.Fatalf("h + l = %v + %v off the mean by %s", h, l, diff.FloatString(40))
		}
	})
}

func TestMeanPairPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MeanPair(_, 0) did not panic")
		}
	}()
	MeanPair(Sum{}, 0)
}

// TestFalling: Falling agrees with the plain product of its factors, and
// FallingRatio with the product of the fractions, on random arguments.
func TestFalling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(0, 300).Draw(t, "k")
		lo := rapid.IntRange(0, 50).Draw(t, "lo")
		x := new(big.Int).SetUint64(rapid.Uint64Range(uint64(lo+k), math.MaxUint64).Draw(t, "x"))
		want := big.NewInt(1)
		for i := lo; i < lo+k; i++ {
			want.Mul(want, new(big.Int).Sub(x, big.NewInt(int64(i))))
		}
		if got := Falling(x, lo, k); got.Cmp(want) != 0 {
			t.Fatalf("Falling(%v, %d, %d) = %v, want %v", x, lo, k, got, want)
		}
		a := new(big.Int).SetUint64(rapid.Uint64Range(0, x.Uint64()).Draw(t, "a"))
		r := big.NewRat(1, 1)
		for i := range k {
			r.Mul(r, new(big.Rat).SetFrac(new(big.Int).Sub(a, big.NewInt(int64(i))), new(big.Int).Sub(x, big.NewInt(int64(i)))))
		}
		if k > 0 && x.Cmp(big.NewInt(int64(k))) < 0 {
			return
		}
		if got := FallingRatio(a, x, k); got.Cmp(r) != 0 {
			t.Fatalf("FallingRatio(%v, %v, %d) = %v, want %v", a, x, k, got, r)
		}
	})
	// C(35, 4)/C(70, 4) = 88/1541: a trace misses all 4 sets of Subsets(8, 4).
	if got := FallingRatio(big.NewInt(35), big.NewInt(70), 4); got.Cmp(big.NewRat(88, 1541)) != 0 {
		t.Errorf("(35)_4/(70)_4 = %v, want 88/1541", got)
	}
}

func TestFallingBits(t *testing.T) {
	for _, tc := range []struct{ k, b, want int }{
		{0, 64, 0}, {5, 0, 0}, {3, 7, 21}, {math.MaxInt, 2, math.MaxInt}, {math.MaxInt / 3, 4, math.MaxInt}, {1 << 20, 1 << 10, 1 << 30},
	} {
		if got := FallingBits(tc.k, tc.b); got != tc.want {
			t.Errorf("FallingBits(%d, %d) = %d, want %d", tc.k, tc.b, got, tc.want)
		}
	}
}

// TestMeanPairCancelling: a sum whose terms cancel leaves C a quarter of S
// (0.1 - 3·2^-57, 0.1 - 0.5 twice, 0.1, 0.1 + 0.5: S = -2^-53, C = 2^-55);
// h + l is still within TestMeanPair's bound of the exact mean, which
// taking S - n h by the FMA from S alone misses by about 2^-110.
func TestMeanPairCancelling(t *testing.T) {
	var z Sum
	for _, x := range []float64{0.1 - 3*0x1p-57, 0.1 - 0.5, 0.1 - 0.5, 0.1, 0.1 + 0.5} {
		z.Add(x)
	}
	if z.C == 0 {
		t.Fatalf("the sum's error term is 0: the case does not cancel")
	}
	total := new(big.Rat).Add(ratOf(z.S), ratOf(z.C))
	mean := new(big.Rat).Quo(total, big.NewRat(5, 1))
	h, l := MeanPair(z, 5)
	diff := new(big.Rat).Sub(new(big.Rat).Add(ratOf(h), ratOf(l)), mean)
	diff.Abs(diff)
	bound := new(big.Rat).Mul(new(big.Rat).Abs(mean), ratOf(0x1p-100))
	if diff.Cmp(bound) > 0 {
		t.Errorf("S = %v, C = %v: h + l = %v + %v off the mean by %s > %s", z.S, z.C, h, l, diff.FloatString(40), bound.FloatString(60))
	}
}
