package eval_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"spiral/eval"
)

// The p-value is Student's: against gonum's t distribution on random
// differences of 2 to 200 units, and exact small cases.
func TestPairedTTestAgainstStudent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 2 + r.IntN(199)
		if trial < 40 {
			n = 2 + trial%4
		}
		a, b := make([]float64, n), make([]float64, n)
		shift := r.NormFloat64()
		for i := range a {
			a[i] = r.Float64()
			b[i] = a[i] - shift*r.Float64() + 0.5*r.NormFloat64()
		}
		got, err := eval.PairedTTest(a, b)
		if err != nil {
			t.Fatal(err)
		}
		var mean, ss float64
		for i := range a {
			mean += a[i] - b[i]
		}
		mean /= float64(n)
		for i := range a {
			d := a[i] - b[i] - mean
			ss += d * d
		}
		se := math.Sqrt(ss / float64(n-1) / float64(n))
		st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
		want := 2 * st.CDF(-math.Abs(mean/se))
		if math.Abs(got.Diff-mean) > 1e-12 || math.Abs(got.SE-se) > 1e-12*se || got.DF != n-1 {
			t.Fatalf("n = %d: diff %v se %v, want %v %v", n, got.Diff, got.SE, mean, se)
		}
		if math.Abs(got.P-want) > 1e-10*math.Max(want, 1e-6) && math.Abs(got.P-want) > 1e-13 {
			t.Fatalf("n = %d, t = %v: p = %v, want %v", n, got.T, got.P, want)
		}
	}
	// Two degrees of freedom have a closed form: p = 1 - |t|/sqrt(2+t^2).
	for _, tt := range []float64{0.1, 1, 4.303, 14.7, 100} {
		// differences 1+h, 1-h, 1 have mean 1, sd h, SE h/sqrt(3)
		h := math.Sqrt(3) / tt
		got, _ := eval.PairedTTest([]float64{1 + h, 1 - h, 1}, []float64{0, 0, 0})
		want := 1 - tt/math.Sqrt(2+tt*tt)
		if math.Abs(got.P-want) > 1e-12 {
			t.Errorf("t = %v: p = %v, want %v", tt, got.P, want)
		}
	}
}

func TestPairedTTestEdges(t *testing.T) {
	one, _ := eval.PairedTTest([]float64{1}, []float64{0})
	if one.Diff != 1 || !math.IsNaN(one.SE) || !math.IsNaN(one.P) {
		t.Errorf("one unit: %+v", one)
	}
	same, _ := eval.PairedTTest([]float64{1, 2}, []float64{0.5, 1.5})
	if same.SE != 0 || !math.IsInf(same.T, 1) || same.P != 0 {
		t.Errorf("constant difference: %+v", same)
	}
	zero, _ := eval.PairedTTest([]float64{1, 2}, []float64{1, 2})
	if zero.P != 1 {
		t.Errorf("no difference: %+v", zero)
	}
	var ae *eval.InputError
	if _, err := eval.PairedTTest(nil, nil); !errors.As(err, &ae) || ae.Field != "a" {
		t.Errorf("no units: %v", err)
	}
	if _, err := eval.PairedTTest([]float64{1}, []float64{1, 2}); !errors.As(err, &ae) || ae.Field != "b" {
		t.Errorf("lengths: %v", err)
	}
	if _, err := eval.PairedTTest([]float64{1, math.NaN()}, []float64{1, 2}); !errors.As(err, &ae) || ae.Field != "a" || ae.Output != 1 {
		t.Errorf("NaN: %v", err)
	}
}
