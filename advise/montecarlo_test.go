package advise

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/spiraltest"
)

// At the paper's configuration (N1 = 8, n = 4, K = 4 uniform) on the find-one
// model, the exact terms agree with estimator's Monte Carlo (the library's
// sampler and credit code): the total variance of g with exact set scores
// (Sets + Traces) and with N2 = 4 rewards per set, and the noise term as
// their difference, each within 3 standard errors. A standard error comes
// from the spread of 20 independent batches' sample variances.
func TestMonteCarloPaperVariance(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	f, _ := combin.Subsets(8, 4)
	req := paperRequest()
	c, err := estimator.NewCategorical([]*big.Rat{req.Reward.Correct, new(big.Rat).Sub(big.NewRat(1, 1), req.Reward.Correct)})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := setObjective(4, req.Reward)
	if err != nil {
		t.Fatal(err)
	}
	d, err := estimator.UniformSets(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecomposeSearch(d, c, tab, combin.IndexOrder)
	if err != nil {
		t.Fatal(err)
	}
	m2 := new(big.Rat).Mul(v.M, v.M)
	exact := func(x *big.Rat) float64 { y, _ := new(big.Rat).Mul(x, m2).Float64(); return y }
	const batches, R = 20, 25_000
	estimate := func(N2 int, seed uint64) (mean, se float64) {
		mc := estimator.MonteCarlo{Family: f, K: 4, N2: N2, Policy: c, Objective: tab}
		var s, s2 float64
		for b := range batches {
			res, err := mc.Run(R, seed+uint64(b))
			if err != nil {
				t.Fatal(err)
			}
			x := res.Variance[0] + res.Variance[1]
			s += x
			s2 += x * x
		}
		mean = s / batches
		return mean, math.Sqrt((s2/batches - mean*mean) / (batches - 1))
	}
	clean, cleanSE := estimate(0, spiraltest.Seed)
	noisy, noisySE := estimate(4, spiraltest.Seed+1000)
	for _, x := range []struct {
		name          string
		got, se, want float64
	}{
		{"Var(g), exact scores", clean, cleanSE, exact(new(big.Rat).Add(v.Sets, v.Traces))},
		{"Var(g), N2 = 4", noisy, noisySE, exact(v.Total(4))},
		{"noise, N2 = 4", noisy - clean, math.Hypot(cleanSE, noisySE), exact(v.Noise(4))},
	} {
		z := (x.got - x.want) / x.se
		t.Logf("%s: Monte Carlo %.6f +- %.6f, exact %.6f (z = %.2f)", x.name, x.got, x.se, x.want, z)
		if math.Abs(z) > 3 {
			t.Errorf("%s: %s", x.name, fmt.Sprintf("z = %.2f", z))
		}
	}
}
