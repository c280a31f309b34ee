package advise

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral"
	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/spiraltest"
)

// bruteAggregation enumerates the traces, the selection and every set's
// number of correct outputs, and returns E||u||^2, E||E[u | y, S]||^2 and
// E[u]'s coefficient on e_1 - e_2 per context.
func bruteAggregation(t *testing.T, d *estimator.SetDistribution, c *estimator.Categorical, s *estimator.Table, N2 int) (sq, condSq *big.Rat, mean []*big.Rat) {
	t.Helper()
	N, V := d.Traces(), c.Size()
	vals := s.Values()
	mean = make([]*big.Rat, s.Len())
	for i := range mean {
		mean[i] = new(big.Rat)
	}
	sq, condSq = new(big.Rat), new(big.Rat)
	// pmf[ctx][x] = P(X = x), X ~ Binomial(N2, s(ctx)), and half[ctx] = E[U | ctx].
	pmf := make([][]*big.Rat, len(vals))
	half := make([]*big.Rat, len(vals))
	for i, si := range vals {
		pmf[i] = make([]*big.Rat, N2+1)
		for x := range N2 + 1 {
			b := new(big.Rat).SetInt(new(big.Int).Binomial(int64(N2), int64(x)))
			for range x {
				b.Mul(b, si)
			}
			for range N2 - x {
				b.Mul(b, new(big.Rat).Sub(big.NewRat(1, 1), si))
			}
			pmf[i][x] = b
		}
		half[i], _ = binaryMoments(si, N2)
	}
	outcomes := map[string]*big.Rat{} // context tuple -> sum over X of P(X) sum_ctx coef^2
	y := make([]int, N)
	total := 1
	for range N {
		total *= V
	}
	for code := range total {
		r := code
		py := big.NewRat(1, 1)
		for i := range N {
			y[i] = r % V
			r /= V
			py.Mul(py, c.Prob(y[i]))
		}
		for sel, ps := range d.Selections() {
			p := new(big.Rat).Mul(py, ps)
			ctx := make([]int, len(sel))
			for k, h := range sel {
				set := d.Set(h)
				ctx[k] = 0
				for _, i := range set {
					ctx[k] = ctx[k]*V + y[i]
				}
			}
			// E[u | y, S] per context.
			cond := map[int]*big.Rat{}
			for k := range sel {
				if cond[ctx[k]] == nil {
					cond[ctx[k]] = new(big.Rat)
				}
				cond[ctx[k]].Add(cond[ctx[k]], half[ctx[k]])
			}
			for x, v := range cond {
				mean[x].Add(mean[x], new(big.Rat).Mul(p, v))
				condSq.Add(condSq, new(big.Rat).Mul(p, new(big.Rat).Mul(v, v)))
			}
			// Every outcome X_k in [0, N2] of every set: its sum depends on
			// the contexts only, so it is enumerated once a context tuple.
			key := fmt.Sprint(ctx)
			xs, ok := outcomes[key]
			if !ok {
				xs = new(big.Rat)
				X := make([]int, len(sel))
				for {
					px := big.NewRat(1, 1)
					coef := map[int]*big.Rat{}
					for k, x := range X {
						px.Mul(px, pmf[ctx[k]][x])
						if coef[ctx[k]] == nil {
							coef[ctx[k]] = new(big.Rat)
						}
						coef[ctx[k]].Add(coef[ctx[k]], big.NewRat(int64(x*(N2-x)), int64(N2)))
					}
					for _, v := range coef {
						xs.Add(xs, new(big.Rat).Mul(px, new(big.Rat).Mul(v, v)))
					}
					k := 0
					for ; k < len(X); k++ {
						if X[k]++; X[k] <= N2 {
							break
						}
						X[k] = 0
					}
					if k == len(X) {
						break
					}
				}
				outcomes[key] = xs
			}
			sq.Add(sq, new(big.Rat).Mul(p, xs))
		}
	}
	two := big.NewRat(2, 1)
	return sq.Mul(sq, two), condSq.Mul(condSq, two), mean
}

// The aggregation terms equal the brute-force moments of the update, and
// the brute force's mean is estimator's JointExpectation (the library's
// within-set credit), on three uniform and two balanced configurations
// (JointExpectation on the first uniform one by default, on all three
// under SPIRAL_LONG=1).
func TestAggregationVarianceExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(spiraltest.Seed, 19))
	c := policy(t, big.NewRat(1, 3), big.NewRat(2, 3))
	for _, x := range []struct {
		sc       smallCase
		N2       int
		balanced bool
	}{{smallCase{4, 2, 2, false}, 2, false}, {smallCase{4, 2, 3, false}, 2, false}, {smallCase{5, 3, 2, false}, 2, false},
		{smallCase{4, 2, 2, false}, 3, true}, {smallCase{5, 2, 3, false}, 2, true}} {
		f := family(t, x.sc)
		// Success probabilities in (0, 1), as the aggregator's softmax needs.
		values := make([]*big.Rat, 1<<x.sc.n)
		for i := range values {
			values[i] = big.NewRat(int64(1+rnd.IntN(4)), 5)
		}
		s, err := estimator.NewTable(2, x.sc.n, values)
		if err != nil {
			t.Fatal(err)
		}
		var d *estimator.SetDistribution
		if x.balanced {
			d, err = estimator.BalancedSets(f, x.sc.K)
		} else {
			d, err = estimator.UniformSets(f, x.sc.K)
		}
		if err != nil {
			t.Fatal(err)
		}
		v, err := DecomposeAggregation(d, c, s, x.N2)
		if err != nil {
			t.Fatal(err)
		}
		sq, condSq, mean := bruteAggregation(t, d, c, s, x.N2)
		w2 := new(big.Rat).Mul(v.Weight, v.Weight)
		meanSq := new(big.Rat)
		for _, m := range mean {
			meanSq.Add(meanSq, new(big.Rat).Mul(m, m))
		}
		meanSq.Mul(meanSq, big.NewRat(2, 1))
		total := new(big.Rat).Sub(sq, meanSq)
		total.Quo(total, w2)
		outputs := new(big.Rat).Sub(sq, condSq)
		outputs.Quo(outputs, w2)
		if v.Total().Cmp(total) != 0 || v.Outputs.Cmp(outputs) != 0 {
			t.Errorf("%+v: Total %v, Outputs %v; brute force %v, %v", x, v.Total(), v.Outputs, total, outputs)
		}
		if sig := new(big.Rat).Quo(meanSq, w2); sig.Cmp(v.Signal) != 0 {
			t.Errorf("%+v: Signal %v, ||E u||^2/(K a)^2 = %v", x, v.Signal, sig)
		}
		if x.balanced {
			continue
		}
		// The uniform design's pair sum in closed form.
		terms, err := newAggregationTerms(x.sc.n, c, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := terms.pairsUniform(f, x.sc.K, c); err != nil {
			t.Fatal(err)
		}
		if u := terms.at(x.N2); u.Draws.Cmp(v.Draws) != 0 || u.Outputs.Cmp(v.Outputs) != 0 {
			t.Errorf("%+v: uniform closed form Draws %v, Outputs %v; enumerated %v, %v", x, u.Draws, u.Outputs, v.Draws, v.Outputs)
		}
		if (x.sc.K > 2 || x.sc.n > 2) && !spiraltest.Long() {
			continue // JointExpectation's enumeration of these: long only
		}
		aggs := make([]*estimator.Categorical, s.Len())
		rewards := make([][]*big.Rat, s.Len())
		for i, si := range s.Values() {
			aggs[i] = policy(t, si, new(big.Rat).Sub(big.NewRat(1, 1), si))
			rewards[i] = []*big.Rat{big.NewRat(1, 1), big.NewRat(0, 1)}
		}
		agg, err := estimator.NewAggregator(2, x.sc.n, aggs, rewards)
		if err != nil {
			t.Fatal(err)
		}
		joint, err := estimator.JointExpectation(c, agg, f, x.sc.K, x.N2, spiral.WithinSet, combin.IndexOrder)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range mean {
			neg := new(big.Rat).Neg(m)
			if joint.Aggregation[2*i].Cmp(m) != 0 || joint.Aggregation[2*i+1].Cmp(neg) != 0 {
				t.Errorf("%+v context %d: brute-force mean %v, JointExpectation %v, %v", x, i, m, joint.Aggregation[2*i], joint.Aggregation[2*i+1])
			}
		}
	}
}

// A selection law whose probability changes and comes back (runs 1/4 1/4,
// 1/8, 1/4, 1/8) gives the coverage law, the noise term's counts and the
// aggregation terms that a sum selection by selection gives.
func TestSelectionRunsUneven(t *testing.T) {
	sets := [][]int{{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 3}, {1, 2}}
	law := []struct {
		sel  []int
		prob *big.Rat
	}{
		{[]int{0, 1}, big.NewRat(1, 4)}, {[]int{2, 3}, big.NewRat(1, 4)}, {[]int{0, 2}, big.NewRat(1, 8)},
		{[]int{4, 5}, big.NewRat(1, 4)}, {[]int{0, 4}, big.NewRat(1, 8)},
	}
	d, err := estimator.NewSetDistribution(4, sets, func(yield func([]int, *big.Rat) bool) {
		for _, x := range law {
			if !yield(x.sel, x.prob) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := new(big.Rat), new(big.Rat)
	for _, x := range law {
		covered := map[int]bool{}
		for _, h := range x.sel {
			for _, i := range sets[h] {
				covered[i] = true
			}
		}
		c := big.NewRat(int64(len(covered)), 1)
		m1.Add(m1, new(big.Rat).Mul(x.prob, c))
		m2.Add(m2, new(big.Rat).Mul(x.prob, new(big.Rat).Mul(c, c)))
	}
	mean, variance, err := coverLaw(d)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := countsTermExact(d, big.NewRat(2, 7), big.NewRat(-1, 5), big.NewRat(3, 11))
	if err != nil {
		t.Fatal(err)
	}
	if fast, err := countsTerm(d, big.NewRat(2, 7), big.NewRat(-1, 5), big.NewRat(3, 11)); err != nil || fast.Cmp(exact) != 0 {
		t.Errorf("noise counts term %v (%v), rational %v", fast, err, exact)
	}
	if want := new(big.Rat).Sub(m2, new(big.Rat).Mul(m1, m1)); mean.Cmp(m1) != 0 || variance.Cmp(want) != 0 {
		t.Errorf("coverage law %v, %v; want %v, %v", mean, variance, m1, want)
	}
	c := policy(t, big.NewRat(1, 3), big.NewRat(2, 3))
	s, err := estimator.NewTable(2, 2, []*big.Rat{big.NewRat(4, 5), big.NewRat(3, 5), big.NewRat(2, 5), big.NewRat(1, 5)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecomposeAggregation(d, c, s, 2)
	if err != nil {
		t.Fatal(err)
	}
	sq, condSq, meanU := bruteAggregation(t, d, c, s, 2)
	meanSq := new(big.Rat)
	for _, m := range meanU {
		meanSq.Add(meanSq, new(big.Rat).Mul(m, m))
	}
	meanSq.Mul(meanSq, big.NewRat(2, 1))
	w2 := new(big.Rat).Mul(v.Weight, v.Weight)
	total := new(big.Rat).Sub(sq, meanSq)
	outputs := new(big.Rat).Sub(sq, condSq)
	if total.Quo(total, w2).Cmp(v.Total()) != 0 || outputs.Quo(outputs, w2).Cmp(v.Outputs) != 0 {
		t.Errorf("Total %v, Outputs %v; brute force %v, %v", v.Total(), v.Outputs, total, outputs)
	}
}

// permutations yields each of the n! orders once.
func TestPermutations(t *testing.T) {
	want := 1
	for n := range 7 {
		if n > 0 {
			want *= n
		}
		seen := map[string]bool{}
		for p := range permutations(n) {
			sorted := slices.Sorted(slices.Values(p))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("n = %d: %v is not a permutation", n, p)
				}
			}
			seen[fmt.Sprint(p)] = true
		}
		if len(seen) != want {
			t.Errorf("n = %d: %d distinct permutations, want %d", n, len(seen), want)
		}
	}
}
