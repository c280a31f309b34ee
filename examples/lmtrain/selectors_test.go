package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// posterior is P(answer = a | shown) under the model, by the definition:
// prior 1/6, each candidate's pair and check independent given a.
func posterior(cands []shown, e, p float64) [ProblemPairs]float64 {
	var post [ProblemPairs]float64
	total := 0.0
	for a := range int32(ProblemPairs) {
		l := 1.0 / ProblemPairs
		for _, c := range cands {
			if c.pair == a {
				l *= p
				if c.hit {
					l *= 1 - e
				} else {
					l *= e
				}
			} else {
				l *= (1 - p) / (ProblemPairs - 1)
				if c.hit {
					l *= e
				} else {
					l *= 1 - e
				}
			}
		}
		post[a] = l
		total += l
	}
	for a := range post {
		post[a] /= total
	}
	return post
}

// bayesPick picks exactly the pairs of greatest posterior.
func TestBayesPickIsTheArgmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for trial := range 20000 {
		n := 1 + r.IntN(6)
		e := []float64{0, 0.1, 0.25, 0.4}[trial%4]
		p := []float64{1.0 / 6, 0.3, 0.05, 0.7}[trial/4%4]
		cands := make([]shown, n)
		for i := range cands {
			cands[i] = shown{pair: int32(r.IntN(ProblemPairs)), hit: r.IntN(2) == 0}
		}
		if e == 0 { // true checks are consistent: at most one pair is a hit
			right := int32(r.IntN(ProblemPairs))
			for i := range cands {
				cands[i].hit = cands[i].pair == right
			}
		}
		post := posterior(cands, e, p)
		top := 0.0
		for _, v := range post {
			top = math.Max(top, v)
		}
		best, nb := bayesPick(cands, e, p)
		count := 0
		for a, v := range post {
			want := v >= top*(1-1e-9)
			if best[a] != want {
				t.Fatalf("e = %v, p = %v, %v: picks %v, posterior %v", e, p, cands, best, post)
			}
			if want {
				count++
			}
		}
		if nb != count {
			t.Fatalf("%d picks counted, %d marked", nb, count)
		}
	}
}

// At e = 0 the rule takes a hit when one is shown, else a pair no
// candidate missed.
func TestRuleWithTrueChecks(t *testing.T) {
	c := []shown{{pair: 2, hit: false}, {pair: 4, hit: true}, {pair: 2, hit: false}}
	if acc := selectorAccuracy(selRule, c, 4, 0, 0); acc != 1 {
		t.Errorf("hit shown: rule accuracy %v, want 1", acc)
	}
	c = []shown{{pair: 2}, {pair: 4}, {pair: 2}, {pair: 0}}
	if acc := selectorAccuracy(selRule, c, 5, 0, 0); acc != 1.0/3 {
		t.Errorf("three pairs missed: rule accuracy %v, want 1/3", acc)
	}
	if acc := selectorAccuracy(selRule, c, 2, 0, 0); acc != 0 {
		t.Errorf("right pair missed: rule accuracy %v", acc)
	}
	if acc := selectorAccuracy(selCheck, c, 2, 0, 0); acc != 0.5 {
		t.Errorf("no hit: best-of-k by check %v, want the share of right candidates 1/2", acc)
	}
	c = []shown{{pair: 1, hit: true}, {pair: 3, hit: true}, {pair: 3}, {pair: 1, hit: true}}
	if acc := selectorAccuracy(selCheck, c, 1, 0.2, 0); acc != 2.0/3 {
		t.Errorf("hits 1, 3, 1: best-of-k by check %v, want 2/3", acc)
	}
	if acc := selectorAccuracy(selMajority, c, 3, 0, 0); acc != 0.5 {
		t.Errorf("pairs 1, 3 twice each: majority %v, want 1/2", acc)
	}
}

// modelCeiling is the exact accuracy of the bayes selector under its
// model: closed forms at n = 1, a Monte Carlo draw from the model, and no
// other selector above it.
func TestModelCeiling(t *testing.T) {
	for _, p := range []float64{1.0 / 6, 0.3, 0.6} {
		// One candidate, true checks: right when it is, else one of the 5
		// unmissed pairs.
		if got, want := modelCeiling(1, 0, p), p+(1-p)/5; math.Abs(got-want) > 1e-12 {
			t.Errorf("n = 1, e = 0, p = %v: %v, want %v", p, got, want)
		}
	}
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		n    int
		e, p float64
	}{{4, 0, 0.3}, {4, 0.1, 0.3}, {4, 0.25, 1.0 / 6}, {3, 0.25, 0.5}} {
		exact := modelCeiling(tc.n, tc.e, tc.p)
		const draws = 40000
		var sum [numSelectors]float64
		for range draws {
			cands := make([]shown, tc.n)
			for i := range cands {
				pair := int32(0)
				if r.Float64() >= tc.p {
					pair = 1 + int32(r.IntN(ProblemPairs-1))
				}
				hit := pair == 0
				if r.Float64() < tc.e {
					hit = !hit
				}
				cands[i] = shown{pair: pair, hit: hit}
			}
			for sel := range numSelectors {
				sum[sel] += selectorAccuracy(sel, cands, 0, tc.e, tc.p)
			}
		}
		mc := sum[selBayes] / draws
		se := math.Sqrt(mc * (1 - mc) / draws)
		if math.Abs(mc-exact) > 4*se {
			t.Errorf("%+v: exact %v, Monte Carlo %v ± %v", tc, exact, mc, se)
		}
		for sel := range numSelectors {
			if m := sum[sel] / draws; m > exact+4*se {
				t.Errorf("%+v: %s %v above the ceiling %v", tc, selectorNames[sel], m, exact)
			}
		}
	}
}
