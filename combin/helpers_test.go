package combin

import (
	"encoding/binary"
	"math"
	"math/big"
	"os"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
	"pgregory.net/rapid"
)

// long reports whether the longer test campaign was asked for (SPIRAL_LONG=1).
func long() bool { return os.Getenv("SPIRAL_LONG") == "1" }

// budget scales a sample size n: half of it by default (the statistics
// merge cells to an expected count of at least 5, so they hold at any
// size), a fifth under -short, ten times with SPIRAL_LONG=1.
func budget(n int) int {
	switch {
	case long():
		return 10 * n
	case testing.Short():
		return max(1, n/5)
	}
	return max(1, n/2)
}

func mustFamily(t testing.TB, ordered bool, N, n int) Family {
	t.Helper()
	var f Family
	var err error
	if ordered {
		f, err = Tuples(N, n)
	} else {
		f, err = Subsets(N, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// drawFamily draws a family with N <= maxN and n <= maxn.
func drawFamily(t *rapid.T, maxN, maxn int) Family {
	N := rapid.IntRange(1, maxN).Draw(t, "N")
	n := rapid.IntRange(1, min(N, maxn)).Draw(t, "n")
	if rapid.Bool().Draw(t, "ordered") {
		f, _ := Tuples(N, n)
		return f
	}
	f, _ := Subsets(N, n)
	return f
}

// drawBelow draws a big.Int uniformly-ish from [0, T).
func drawBelow(t *rapid.T, T *big.Int, label string) *big.Int {
	b := rapid.SliceOfN(rapid.Byte(), len(T.Bytes())+8, len(T.Bytes())+8).Draw(t, label)
	r := new(big.Int).SetBytes(b)
	return r.Mod(r, T)
}

// pascal returns C(m, k) for 0 <= k <= m <= maxN by Pascal's rule, an
// exact computation independent of the package's and of math/big's
// binomial code.
func pascal(maxN int) [][]*big.Int {
	c := make([][]*big.Int, maxN+1)
	for m := range c {
		c[m] = make([]*big.Int, m+1)
		c[m][0], c[m][m] = big.NewInt(1), big.NewInt(1)
		for k := 1; k < m; k++ {
			c[m][k] = new(big.Int).Add(c[m-1][k-1], c[m-1][k])
		}
	}
	return c
}

// chiSquareThreshold returns the chi-square quantile with df degrees of
// freedom at upper tail probability 1e-4: a correct sampler exceeds it with
// probability 1e-4 (for a fixed seed, deterministically never or always).
func chiSquareThreshold(df int) float64 { return chiSquareQuantile(df, 1e-4) }

// chiSquareQuantile returns the chi-square quantile with df degrees of
// freedom at upper tail probability alpha.
func chiSquareQuantile(df int, alpha float64) float64 {
	return distuv.ChiSquared{K: float64(df)}.Quantile(1 - alpha)
}

// chiSquare returns Pearson's statistic and its degrees of freedom for the
// observed counts against the expected counts, after pooling adjacent cells
// so that every pooled cell expects at least 5 (a short tail joins the last
// pooled cell). An observation in a cell that expects nothing makes the
// statistic +Inf.
func chiSquare(observed []int, expected []float64) (stat float64, df int) {
	var obsP, expP []float64
	var obs, exp float64
	for i := range observed {
		if expected[i] == 0 && observed[i] > 0 {
			return math.Inf(1), 0
		}
		obs += float64(observed[i])
		exp += expected[i]
		if exp >= 5 {
			obsP, expP = append(obsP, obs), append(expP, exp)
			obs, exp = 0, 0
		}
	}
	if exp > 0 {
		if len(expP) == 0 {
			obsP, expP = append(obsP, 0), append(expP, 0)
		}
		obsP[len(obsP)-1] += obs
		expP[len(expP)-1] += exp
	}
	for i := range obsP {
		d := obsP[i] - expP[i]
		stat += d * d / expP[i]
	}
	return stat, len(obsP) - 1
}

// bigT returns T for f, computed whatever its size.
func bigT(f Family) *big.Int { T, _ := f.bigCounts(); return T }

// bigAvoid returns T_avoid for f, computed whatever its size.
func bigAvoid(f Family) *big.Int { _, a := f.bigCounts(); return a }

// intsKey returns a map key for xs: their varints, one after another (each
// is prefix-free, so two slices of one length have one key exactly when
// they are equal). It costs a small fraction of fmt.Sprint.
func intsKey(xs []int) string {
	b := make([]byte, 0, 2*len(xs))
	for _, x := range xs {
		b = binary.AppendVarint(b, int64(x))
	}
	return string(b)
}
