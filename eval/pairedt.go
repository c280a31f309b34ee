package eval

import (
	"fmt"
	"math"
)

// PairedT is a paired comparison of two measurements a and b of the same
// N units (seeds, or problems when the sets of a problem are averaged
// first, which clusters the standard error by problem): Diff, the mean of
// the differences d_i = a_i - b_i; SE = s/sqrt(N), s^2 their sample
// variance (divisor N-1); T = Diff/SE with DF = N-1 degrees of freedom;
// and P, the two-sided p-value of Student's t test of a zero mean
// difference, P = I_{DF/(DF+T^2)}(DF/2, 1/2) (I the regularised incomplete
// beta function). SE, T and P are NaN for N = 1. When every difference is
// the same, SE = 0: T is ±Inf and P = 0 for Diff != 0, and T is NaN and
// P = 1 for Diff = 0.
type PairedT struct {
	N           int
	Diff, SE, T float64
	DF          int
	P           float64
	Differences []float64 `json:"-"`
}

// PairedTTest compares a and b, two measurements of the same units
// (a[i] and b[i] of unit i). It returns an *[InputError] for no units,
// slices of different lengths or a value that is not finite.
func PairedTTest(a, b []float64) (PairedT, error) {
	const what = "paired t test"
	if len(a) == 0 {
		return PairedT{}, argError(what, "a", "no units")
	}
	if len(a) != len(b) {
		return PairedT{}, argError(what, "b", fmt.Sprintf("%d units, a has %d", len(b), len(a)))
	}
	r := PairedT{N: len(a), DF: len(a) - 1}
	d := make([]float64, len(a))
	for i := range a {
		for _, v := range []struct {
			arg string
			x   float64
		}{{"a", a[i]}, {"b", b[i]}} {
			if math.IsNaN(v.x) || math.IsInf(v.x, 0) {
				return PairedT{}, elementError(what, v.arg, i, v.x, "not finite")
			}
		}
		d[i] = a[i] - b[i]
		r.Diff += d[i]
	}
	n := float64(r.N)
	r.Diff /= n
	r.SE, r.T, r.P = math.NaN(), math.NaN(), math.NaN()
	if r.N < 2 {
		return r, nil
	}
	ss := 0.0
	for _, di := range d {
		ss += float64((di - r.Diff) * (di - r.Diff))
	}
	r.SE = math.Sqrt(ss / (n - 1) / n)
	switch {
	case r.SE > 0:
		r.T = r.Diff / r.SE
		df := float64(r.DF)
		r.P = regIncBeta(df/2, 0.5, df/(df+float64(r.T*r.T)))
	case r.Diff != 0:
		r.T, r.P = math.Copysign(math.Inf(1), r.Diff), 0
	default:
		r.P = 1
	}
	return r, nil
}

// regIncBeta is the regularised incomplete beta function I_x(a, b) for
// a, b > 0 and 0 <= x <= 1, by its continued fraction (modified Lentz),
// using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction
// converges slowly; relative error near 1e-14.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + float64(a*math.Log(x)) + float64(b*math.Log1p(-x)))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(b, a, 1-x)/b
	}
	return front * betaFraction(a, b, x) / a
}

// betaFraction is the continued fraction of the incomplete beta function.
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range [2]float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + float64(num*d)
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= d * c
		}
		if math.Abs(float64(d*c)-1) < 1e-15 {
			break
		}
	}
	return f
}
