package advise

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"spiral/advantage"
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

// At the paper's configuration (N1 = 8, n = 4, K = 4 uniform, N2 = 4) the
// exact terms of Var(u/(K a)) agree with a simulation through the library's
// sampler (combin.Sampler) and credit code (advantage.Compute), under find
// one and majority in index order and find one shuffled: each replicate
// draws the traces, the sets and (shuffled) each set's presentation, then
// two independent rounds of N2 outputs per set, u and u', each the sum over
// outputs of A_agg (e_z - pi(ctx)) on its set's presented context. The
// sample variance of u estimates the total, ||u - u'||^2/2 the outputs'
// term E Var(u | y, S), and their difference the draws' term, each within 3
// standard errors from the spread of 20 independent batches.
func TestMonteCarloPaperAggregation(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	const N1, n, K, N2 = 8, 4, 4, 4
	f, _ := combin.Subsets(N1, n)
	base := paperRequest().Reward
	for i, x := range []struct {
		rule  Rule
		order combin.Order
	}{{FindOne, combin.IndexOrder}, {Majority, combin.IndexOrder}, {FindOne, combin.Shuffled}} {
		rule := x.rule
		model := base
		model.Rule = rule
		c, err := estimator.NewCategorical([]*big.Rat{model.Correct, new(big.Rat).Sub(big.NewRat(1, 1), model.Correct)})
		if err != nil {
			t.Fatal(err)
		}
		tab, err := setObjective(n, model)
		if err != nil {
			t.Fatal(err)
		}
		terms, err := newAggregationTerms(n, c, tab)
		if err != nil {
			t.Fatal(err)
		}
		terms.shuffled = x.order == combin.Shuffled
		if err := terms.pairsUniform(f, K, c); err != nil {
			t.Fatal(err)
		}
		v := terms.at(N2)
		exact := func(x *big.Rat) float64 { y, _ := x.Float64(); return y }
		pCorrect := exact(model.Correct)
		w := exact(v.Weight)
		const batches, R = 20, 25_000
		var est [3][batches]float64 // total, outputs, draws per batch
		for b := range batches {
			rnd := rand.New(rand.NewPCG(spiraltest.Seed+uint64(i), uint64(b)))
			sampler, err := combin.NewSampler(f, K)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]int, K*n)
			correct := make([]bool, N1)
			sets := make([][]int, K)
			presented := make([]int, n)
			ctx := make([]int, K)
			s := make([]float64, K)
			sum := make([]float64, 2<<n)
			var sumSq, outputs float64
			u := [2][]float64{make([]float64, 2<<n), make([]float64, 2<<n)}
			rewards := make([][]float64, K)
			for k := range rewards {
				rewards[k] = make([]float64, N2)
			}
			for range R {
				for j := range correct {
					correct[j] = rnd.Float64() < pCorrect
				}
				if err := sampler.SampleTo(dst, rnd); err != nil {
					t.Fatal(err)
				}
				for k := range K {
					sets[k] = dst[k*n : (k+1)*n]
					copy(presented, sets[k])
					if x.order == combin.Shuffled {
						rnd.Shuffle(n, func(a, b int) { presented[a], presented[b] = presented[b], presented[a] })
					}
					ctx[k], s[k] = 0, exact(model.Missed)
					hits := 0
					for _, j := range presented {
						ctx[k] *= 2
						if correct[j] {
							hits++
						} else {
							ctx[k]++ // symbol 1 is wrong
						}
					}
					if need, _ := model.Needed(n); hits >= need {
						s[k] = exact(model.Found)
					}
				}
				for round := range u {
					clear(u[round])
					for k := range K {
						for j := range N2 {
							rewards[k][j] = 0
							if rnd.Float64() < s[k] {
								rewards[k][j] = 1
							}
						}
					}
					credit, err := advantage.Compute(N1, sets, rewards)
					if err != nil {
						t.Fatal(err)
					}
					for k := range K {
						for j, a := range credit.Aggregation[k] {
							// Output 0 (correct, reward 1) has score (1 - s, -(1 - s)),
							// output 1 (wrong) (-s, s).
							score := 1 - s[k]
							if rewards[k][j] == 0 {
								score = -s[k]
							}
							u[round][2*ctx[k]] += a * score
							u[round][2*ctx[k]+1] -= a * score
						}
					}
				}
				for x := range sum {
					y := u[0][x] / w
					sum[x] += y
					sumSq += y * y
					d := (u[0][x] - u[1][x]) / w
					outputs += d * d / 2
				}
			}
			total := sumSq
			for _, x := range sum {
				total -= x * x / R
			}
			total /= R - 1
			est[0][b], est[1][b] = total, outputs/R
			est[2][b] = est[0][b] - est[1][b]
		}
		for j, c := range []struct {
			name string
			want *big.Rat
		}{{"Var(u/(K a))", v.Total()}, {"outputs", v.Outputs}, {"draws", v.Draws}} {
			var m, m2 float64
			for _, e := range est[j] {
				m += e
				m2 += e * e
			}
			m /= batches
			se := math.Sqrt((m2/batches - m*m) / (batches - 1))
			want := exact(c.want)
			z := (m - want) / se
			t.Logf("%v %v %s: Monte Carlo %.6f +- %.6f, exact %.6f (z = %.2f)", rule, x.order, c.name, m, se, want, z)
			if math.Abs(z) > 3 {
				t.Errorf("%v %v %s: z = %.2f", rule, x.order, c.name, z)
			}
		}
	}
}
