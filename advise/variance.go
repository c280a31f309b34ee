package advise

import (
	"errors"
	"fmt"
	"math/big"

	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/inputerr"
)

// maxSelections bounds the selections SearchVariance enumerates to find the
// coverage law of a design.
const maxSelections = 1 << 21

// SearchVariance is the variance of the M-normalised search update g/M of one
// problem, split by its sources. g = sum_i (e_{y_i} - p) A_search(y_i) is the
// toy update of package estimator (N1 iid symbols, K sets from a design, each
// set scored by the mean of N2 Bernoulli rewards); conditioning first on the
// selection S, then on the traces y,
//
//	Var(g/M) = Sets + Traces + Noise(N2),
//	Sets     = Var_S(E[g | S])/M^2,
//	Traces   = E_S[Var_y(E[g | S, y])]/M^2,
//	Noise    = E[Var(g | S, y)]/M^2 = Noise1/N2.
//
// Noise is the reward noise of the set scores: given the traces a set score
// is the mean of N2 Bernoulli(f_H) rewards, of variance f_H (1 - f_H)/N2,
// independent across sets, and g is linear in the scores, so the term is
// Noise1/N2 exactly. When every selection's conditional mean is
// proportional to grad J (a symmetric objective, or combin.Shuffled), E[g | S]
// = (C_S/n - 1) grad J with C_S the number of traces in at least one set, so
//
//	Sets = Var(C_S)/(n M)^2 ||grad J||^2,
//
// which depends on the configuration only through the law of the coverage
// count (see CoverMoments).
type SearchVariance struct {
	// M is the design's multiplier, E[g] = M grad J.
	M *big.Rat
	// Signal is ||E[g/M]||^2 = ||grad J||^2.
	Signal *big.Rat
	// Sets, Traces and Noise1 are the terms above (Noise1 at N2 = 1).
	Sets, Traces, Noise1 *big.Rat
	// CoverMean and CoverVariance are E[C_S] and Var(C_S).
	CoverMean, CoverVariance *big.Rat
}

// Noise returns Noise1/N2, the reward-noise term with N2 outputs per set.
// It panics if N2 < 1.
func (v *SearchVariance) Noise(N2 int) *big.Rat {
	if N2 < 1 {
		panic(fmt.Sprintf("advise: Noise with N2 = %d < 1", N2))
	}
	return new(big.Rat).Quo(v.Noise1, new(big.Rat).SetInt64(int64(N2)))
}

// Total returns Var(g/M) with N2 outputs per set: Sets + Traces + Noise(N2).
func (v *SearchVariance) Total(N2 int) *big.Rat {
	t := new(big.Rat).Add(v.Sets, v.Traces)
	return t.Add(t, v.Noise(N2))
}

// SNR returns Signal/Total(N2), the signal-to-noise ratio of one problem's
// unbiased-scaled search update, or nil if the variance is 0.
func (v *SearchVariance) SNR(N2 int) *big.Rat {
	t := v.Total(N2)
	if t.Sign() == 0 {
		return nil
	}
	return new(big.Rat).Quo(v.Signal, t)
}

// DecomposeSearch returns the variance decomposition of the M-normalised
// search update for policy c, objective t presented under rule p, and the
// design d. The total comes from an exact evaluation of estimator's
// SetDistribution.Moments with scores f_H; the noise from NoiseClosedForm
// when t is symmetric, else from a second one with scores from one reward;
// Sets is the closed form above when t is symmetric or p is
// combin.Shuffled, else the exact average over d's selections of
// ||E[g | S] - E[g]||^2 (each selection evaluated as estimator.FixedSets).
// It returns the errors of Moments, an error if M = 0 (g/M is undefined),
// and an error if d has more than 2,097,152 selections.
func DecomposeSearch(d *estimator.SetDistribution, c *estimator.Categorical, t *estimator.Table, p combin.Order) (*SearchVariance, error) {
	return decomposeSearch(d, c, t, p, nil)
}

// uniformDesign says that a design is estimator.UniformSets(f, K) of
// subsets: its coverage law (CoverMoments) and noise term (noiseUniform)
// then have closed forms, and no selection is enumerated.
type uniformDesign struct {
	f     combin.Family
	K     int
	noise *noiseMoments // the objective's, when already computed
}

// decomposeSearch is DecomposeSearch, through the uniform design's closed
// forms when u is not nil.
func decomposeSearch(d *estimator.SetDistribution, c *estimator.Categorical, t *estimator.Table, p combin.Order, u *uniformDesign) (*SearchVariance, error) {
	m0, err := d.Moments(c, t, p, 0)
	if err != nil {
		return nil, err
	}
	if m0.M.Sign() == 0 {
		return nil, errors.New("advise: the design's M is 0: every search advantage is 0")
	}
	var mean, variance *big.Rat
	if u != nil {
		mean, variance, err = CoverMoments(u.f, u.K)
	} else {
		mean, variance, err = coverLaw(d)
	}
	if err != nil {
		return nil, err
	}
	m2 := new(big.Rat).Mul(m0.M, m0.M)
	v := &SearchVariance{M: m0.M, CoverMean: mean, CoverVariance: variance}
	grad, err := estimator.Gradient(c, t, p)
	if err != nil {
		return nil, err
	}
	v.Signal = sqNorm(grad)
	var sets *big.Rat
	if p == combin.Shuffled || symmetric(t) {
		n := new(big.Rat).SetInt64(int64(d.SetSize()))
		sets = new(big.Rat).Quo(variance, new(big.Rat).Mul(n, n))
		sets.Mul(sets, v.Signal)
		sets.Quo(sets, m2)
	} else {
		sets, err = selectionTerm(d, c, t, p, m0.Mean)
		if err != nil {
			return nil, err
		}
		sets.Quo(sets, m2)
	}
	v.Sets = sets
	total0 := new(big.Rat).Quo(m0.Variance, m2)
	v.Traces = new(big.Rat).Sub(total0, sets)
	if symmetric(t) {
		if u != nil {
			nm := u.noise
			if nm == nil {
				var fresh noiseMoments
				fresh, err = newNoiseMoments(c, t)
				nm = &fresh
			}
			if err == nil {
				v.Noise1, err = noiseUniform(u.f, u.K, *nm)
			}
		} else {
			v.Noise1, err = NoiseClosedForm(d, c, t)
		}
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	m1, err := d.Moments(c, t, p, 1)
	if err != nil {
		return nil, err
	}
	v.Noise1 = new(big.Rat).Sub(m1.Variance, m0.Variance)
	v.Noise1.Quo(v.Noise1, m2)
	return v, nil
}

// SelectionTerm returns Var_S(E[g | S]) (not normalised by M) by evaluating
// every selection of d as a fixed design: the exact set-sampling term for
// any objective and order. Its cost is one SetDistribution.Moments of K sets
// per selection; it returns an error if d has more than 4,096 selections.
func SelectionTerm(d *estimator.SetDistribution, c *estimator.Categorical, t *estimator.Table, p combin.Order) (*big.Rat, error) {
	m0, err := d.Moments(c, t, p, 0)
	if err != nil {
		return nil, err
	}
	return selectionTerm(d, c, t, p, m0.Mean)
}

func selectionTerm(d *estimator.SetDistribution, c *estimator.Categorical, t *estimator.Table, p combin.Order, mean []*big.Rat) (*big.Rat, error) {
	const limit = 4096
	sum := new(big.Rat)
	count := 0
	var err error
	for sel, prob := range d.Selections() {
		if count++; count > limit {
			return nil, fmt.Errorf("advise: more than %d selections to evaluate one by one", limit)
		}
		sets := make([][]int, len(sel))
		for k, h := range sel {
			sets[k] = d.Set(h)
		}
		var fixed *estimator.SetDistribution
		if fixed, err = estimator.FixedSets(d.Traces(), sets); err != nil {
			return nil, err
		}
		var m *estimator.Moments
		if m, err = fixed.Moments(c, t, p, 0); err != nil {
			return nil, err
		}
		diff := make([]*big.Rat, len(mean))
		for v := range mean {
			diff[v] = new(big.Rat).Sub(m.Mean[v], mean[v])
		}
		sum.Add(sum, new(big.Rat).Mul(prob, sqNorm(diff)))
	}
	return sum, nil
}

// coverLaw returns E[C_S] and Var(C_S) over d's selections.
func coverLaw(d *estimator.SetDistribution) (mean, variance *big.Rat, err error) {
	N := d.Traces()
	sets := make([][]int, d.NumSets())
	for h := range sets {
		sets[h] = d.Set(h)
	}
	seen := make([]int, N)
	stamp := 0
	counts := make([]int64, N+1) // selections of each cover count in the run
	m1, m2 := new(big.Rat), new(big.Rat)
	err = selectionRuns(d, func(sel []int) {
		stamp++
		cover := 0
		for _, h := range sel {
			for _, i := range sets[h] {
				if seen[i] != stamp {
					seen[i] = stamp
					cover++
				}
			}
		}
		counts[cover]++
	}, func(prob *big.Rat) {
		for cover, k := range counts {
			if k == 0 {
				continue
			}
			term := new(big.Rat).Mul(prob, big.NewRat(k*int64(cover), 1))
			m1.Add(m1, term)
			m2.Add(m2, term.Mul(term, big.NewRat(int64(cover), 1)))
		}
		clear(counts)
	})
	if err != nil {
		return nil, nil, err
	}
	return m1, m2.Sub(m2, new(big.Rat).Mul(m1, m1)), nil
}

// selectionRuns calls add for each of d's selections, in order, and after
// every maximal run of selections of one probability, run with that
// probability, so that a sum over selections costs integer work per
// selection and rational work per run (one run for the uniform design). It
// returns an error, after no call, if d has more than maxSelections
// selections.
func selectionRuns(d *estimator.SetDistribution, add func(sel []int), run func(prob *big.Rat)) error {
	count := 0
	for range d.Selections() {
		if count++; count > maxSelections {
			return inputerr.TooCostly(fmt.Sprintf("the design has more than %d selections", maxSelections))
		}
	}
	var last *big.Rat // a copy: the yielded probability may be reused
	for sel, prob := range d.Selections() {
		if last == nil || prob.Num().Cmp(last.Num()) != 0 || prob.Denom().Cmp(last.Denom()) != 0 {
			if last != nil {
				run(last)
			}
			last = new(big.Rat).Set(prob)
		}
		add(sel)
	}
	if last != nil {
		run(last)
	}
	return nil
}

// CoverMoments returns E[C] and Var(C) for the number C of traces in at
// least one of K sets drawn uniformly without replacement from f, in closed
// form: with T sets, T1 = the sets avoiding one given trace and T2 those
// avoiding two,
//
//	P(i missed) = C(T1, K)/C(T, K),  P(i and j missed) = C(T2, K)/C(T, K),
//	E[C] = N1 (1 - P(i missed)),
//	E[C^2] = E[C] + N1 (N1 - 1) (1 - 2 P(i missed) + P(i and j missed)).
//
// T1 = C(N1-1, n) and T2 = C(N1-2, n) for subsets, (N1-1)_n and (N1-2)_n for
// tuples. It returns an error if K is not in [1, T] or T exceeds 2^20.
func CoverMoments(f combin.Family, K int) (mean, variance *big.Rat, err error) {
	N1, n := f.Traces(), f.SetSize()
	T, ok := f.Count64()
	if !ok || T > 1<<20 {
		return nil, nil, fieldError(FieldFamily, "%v has more than %d sets", f, 1<<20)
	}
	if K < 1 || uint64(K) > T {
		return nil, nil, argError(FieldK, -1, K, "%d outside [1, T = %d]", K, T)
	}
	count := func(traces int) int64 {
		if traces < n {
			return 0
		}
		g, err := combin.NewFamily(traces, n, f.Ordered())
		if err != nil {
			return 0
		}
		c, _ := g.Count64()
		return int64(c)
	}
	choose := func(a int64) *big.Int { return new(big.Int).Binomial(a, int64(K)) }
	all := choose(int64(T))
	miss1 := new(big.Rat).SetFrac(choose(count(N1-1)), all)
	miss2 := new(big.Rat).SetFrac(choose(count(N1-2)), all)
	nr := new(big.Rat).SetInt64(int64(N1))
	mean = new(big.Rat).Sub(big.NewRat(1, 1), miss1)
	mean.Mul(mean, nr)
	both := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Mul(big.NewRat(2, 1), miss1))
	both.Add(both, miss2)
	both.Mul(both, new(big.Rat).SetInt64(int64(N1)*int64(N1-1)))
	second := new(big.Rat).Add(mean, both)
	return mean, second.Sub(second, new(big.Rat).Mul(mean, mean)), nil
}

// symmetric reports whether t's value is invariant under permutations of its
// arguments, checked on adjacent transpositions.
func symmetric(t *estimator.Table) bool {
	V, n := t.V(), t.Arity()
	y := make([]int, n)
	z := make([]int, n)
	for idx := range t.Len() {
		r := idx
		for k := n - 1; k >= 0; k-- {
			y[k] = r % V
			r /= V
		}
		for k := 0; k+1 < n; k++ {
			copy(z, y)
			z[k], z[k+1] = z[k+1], z[k]
			if t.At(y).Cmp(t.At(z)) != 0 {
				return false
			}
		}
	}
	return true
}

func sqNorm(x []*big.Rat) *big.Rat {
	s := new(big.Rat)
	for _, v := range x {
		s.Add(s, new(big.Rat).Mul(v, v))
	}
	return s
}
