package main

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"spiral/combin"
	"spiral/estimator"
)

// creditDenom is the denominator the closed form rounds the measured
// success rates to: its exact arithmetic holds int64 numerators only for
// small denominators at N1 = 8 (1/20 already overflows).
const creditDenom = 10

// appearanceLaw is the exact distribution of a trace's appearances under
// the configuration's uniform design (combin.Family.AppearanceDist), as
// float64, with its mean and variance.
func appearanceLaw(s *Summary) (dist []float64, mean, variance float64, err error) {
	c := s.Config
	f, err := combin.NewFamily(c.SearchTraces, c.SetSize, c.Ordered)
	if err != nil {
		return nil, 0, 0, err
	}
	d, err := f.AppearanceDist(c.Sets)
	if err != nil {
		return nil, 0, 0, err
	}
	for j, p := range d {
		v, _ := p.Float64()
		dist = append(dist, v)
		mean += float64(j) * v
	}
	for j, v := range dist {
		variance += (float64(j) - mean) * (float64(j) - mean) * v
	}
	return dist, mean, variance, nil
}

// measuredAppearances is the share of traces in j scored sets, with the
// mean and variance of the count.
func measuredAppearances(d *CreditDiag) (share []float64, mean, variance float64) {
	total := 0
	for _, n := range d.Traces {
		total += n
	}
	for j, n := range d.Traces {
		v := float64(n) / float64(total)
		share = append(share, v)
		mean += float64(j) * v
	}
	for j, v := range share {
		variance += (float64(j) - mean) * (float64(j) - mean) * v
	}
	return share, mean, variance
}

// closedFormSquare is E[A_search^2] of a uniformly chosen trace in the
// library's exact closed form (estimator.SetDistribution.Moments,
// SearchSquare) for a problem on which a trace is right with the run's
// measured rate and a set with j right candidates is answered right with
// its measured rate, both rounded to multiples of 1/creditDenom.
func closedFormSquare(s *Summary, d *CreditDiag) (float64, error) {
	c := s.Config
	traces := 0
	for _, n := range d.Traces {
		traces += n
	}
	rat := func(x float64, lo int64) *big.Rat {
		k := min(max(int64(math.Round(x*creditDenom)), lo), creditDenom-lo)
		return big.NewRat(k, creditDenom)
	}
	right := rat(float64(d.Right)/float64(traces), 1)
	pol, err := estimator.NewCategorical([]*big.Rat{new(big.Rat).Sub(big.NewRat(1, 1), right), right})
	if err != nil {
		return 0, err
	}
	n := c.SetSize
	success := make([]*big.Rat, n+1)
	for j := range success {
		v := 0.0
		if d.Sets[j] > 0 {
			v = d.Rewards[j] / float64(d.Sets[j]*c.AggregationsPerSet)
		}
		success[j] = rat(v, 0)
	}
	vals := make([]*big.Rat, 1<<n)
	for idx := range vals {
		j := 0
		for b := range n {
			j += idx >> b & 1
		}
		vals[idx] = success[j]
	}
	tab, err := estimator.NewTable(2, n, vals)
	if err != nil {
		return 0, err
	}
	f, err := combin.NewFamily(c.SearchTraces, n, c.Ordered)
	if err != nil {
		return 0, err
	}
	design, err := estimator.UniformSets(f, c.Sets)
	if err != nil {
		return 0, err
	}
	m, err := design.Moments(pol, tab, combin.Shuffled, c.AggregationsPerSet)
	if err != nil {
		return 0, err
	}
	v, _ := m.SearchSquare.Float64()
	return v, nil
}

// creditText is the appearance and credit section of summary.txt: for each
// SPIRAL arm, over every problem it credited in training.
func (st *Study) creditText() string {
	var b strings.Builder
	r0 := st.Runs[0]
	for ai, a := range r0.Arms {
		if a.Credit == nil {
			continue
		}
		diag := func(s *Summary) *CreditDiag { return s.Arms[ai].Credit }
		fmt.Fprintf(&b, "\nAppearances and search credit of %s's traces over training (every problem credited; mean [per seed])\n", a.Spec.Name)
		law, lawMean, lawVar, err := appearanceLaw(r0)
		if err != nil {
			fmt.Fprintf(&b, "exact appearance law: %v\n", err)
			continue
		}
		fmt.Fprintf(&b, "%-12s %-30s %-10s %-30s %-30s\n", "appearances", "share of traces", "exact", "mean credit", "mean squared credit")
		for j := range law {
			fmt.Fprintf(&b, "%-12d %-30s %-10.4f %-30s %-30s\n", j,
				st.seedsOf(func(s *Summary) float64 { sh, _, _ := measuredAppearances(diag(s)); return sh[j] }), law[j],
				st.seedsOf(func(s *Summary) float64 { d := diag(s); return d.Credit[j] / float64(d.Traces[j]) }),
				st.seedsOf(func(s *Summary) float64 { d := diag(s); return d.Squares[j] / float64(d.Traces[j]) }))
		}
		fmt.Fprintf(&b, "appearances: mean %s (exact %.4f), variance %s (exact %.4f)\n",
			st.seedsOf(func(s *Summary) float64 { _, m, _ := measuredAppearances(diag(s)); return m }), lawMean,
			st.seedsOf(func(s *Summary) float64 { _, _, v := measuredAppearances(diag(s)); return v }), lawVar)
		var cfErr error
		fmt.Fprintf(&b, "search credit: E[A^2] measured %s, closed form %s\n",
			st.seedsOf(func(s *Summary) float64 {
				d := diag(s)
				var sq float64
				var n int
				for j := range d.Traces {
					sq += d.Squares[j]
					n += d.Traces[j]
				}
				return sq / float64(n)
			}),
			st.seedsOf(func(s *Summary) float64 {
				v, err := closedFormSquare(s, diag(s))
				if err != nil {
					cfErr = err
					return math.NaN()
				}
				return v
			}))
		if cfErr != nil {
			fmt.Fprintf(&b, "closed form: %v\n", cfErr)
		}
		b.WriteString("closed form: estimator.SetDistribution.Moments (SearchSquare, the variance of A_search, whose mean is 0) for one problem whose traces are\n")
		fmt.Fprintf(&b, "right with the run's measured rate and whose sets with j right candidates are answered right with the measured rate, both to 1/%d;\n", creditDenom)
		b.WriteString("the measured value mixes problems of different difficulty and a policy that changes over training, which the closed form does not\n")
	}
	return b.String()
}
