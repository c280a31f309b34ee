package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Problem kinds.
const (
	single        = 0 // one strategy solves it alone
	complementary = 1 // solved by combining strategies
	kinds         = 2
)

// Aggregation actions.
const (
	adopt      = 0 // answer with a candidate that is correct on its own
	synthesize = 1 // combine the candidates' strategies
	actions    = 2
)

// toy holds the parameters of the toy world.
type toy struct {
	V      int     // strategies, the symbols a search trace can take
	single float64 // fraction of problems solved by a single strategy
	comp   int     // c, the size of a complementary problem's strategy subset
	need   int     // m, distinct strategies of the subset a synthesis needs
	luck   float64 // ε, the chance that one trace of the subset solves a complementary problem alone
}

func (t toy) validate() error {
	switch {
	case t.V < 2 || t.V > 64:
		return fmt.Errorf("strategies = %d, want 2..64", t.V)
	case !(t.single >= 0 && t.single <= 1):
		return fmt.Errorf("single = %v, want a fraction in [0, 1]", t.single)
	case t.comp < 1 || t.comp > t.V:
		return fmt.Errorf("comp = %d, want 1..strategies (%d)", t.comp, t.V)
	case t.need < 1 || t.need > t.comp:
		return fmt.Errorf("need = %d, want 1..comp (%d)", t.need, t.comp)
	case !(t.luck >= 0 && t.luck <= 1):
		return fmt.Errorf("luck = %v, want a probability in [0, 1]", t.luck)
	}
	return nil
}

// problem is one problem of the toy world.
type problem struct {
	kind   int
	answer int    // single: the strategy that solves it
	subset uint64 // complementary: the bit mask of its strategy subset C_x
}

// newProblem draws a problem: single with probability t.single, its answer
// strategy v with probability proportional to 1/(v+1) (a few strategies
// solve most single problems); otherwise complementary, its subset uniform
// among the c-subsets of the strategies.
func (t toy) newProblem(rnd *rand.Rand) problem {
	if rnd.Float64() < t.single {
		h := 0.0
		for v := range t.V {
			h += 1 / float64(v+1)
		}
		u := rnd.Float64() * h
		for v := range t.V {
			if u -= 1 / float64(v+1); u < 0 || v == t.V-1 {
				return problem{kind: single, answer: v}
			}
		}
	}
	var mask uint64
	for _, v := range rnd.Perm(t.V)[:t.comp] {
		mask |= 1 << v
	}
	return problem{kind: complementary, subset: mask}
}

// solveProb returns the probability that one search trace with strategy v
// answers problem x correctly on its own: 1 for the answer strategy of a
// single problem, ε for a strategy of a complementary problem's subset,
// 0 otherwise.
func (t toy) solveProb(x problem, v int) float64 {
	if x.kind == single {
		if v == x.answer {
			return 1
		}
		return 0
	}
	if x.subset&(1<<v) != 0 {
		return t.luck
	}
	return 0
}

// reward is the reward of one aggregation output: action a on a set whose
// candidates have strategies syms and on-their-own correctness correct.
// adopt is right when some candidate is correct on its own; synthesize is
// right when the problem is complementary and the set holds at least m
// distinct strategies of its subset.
func (t toy) reward(x problem, syms []int, correct []bool, a int) float64 {
	switch a {
	case adopt:
		for _, c := range correct {
			if c {
				return 1
			}
		}
	case synthesize:
		if x.kind == complementary && t.sufficient(x, syms) {
			return 1
		}
	}
	return 0
}

// sufficient reports whether a set with strategies syms holds at least m
// distinct strategies of x's subset.
func (t toy) sufficient(x problem, syms []int) bool {
	var mask uint64
	for _, v := range syms {
		mask |= 1 << v
	}
	return bits.OnesCount64(mask&x.subset) >= t.need
}

// policy is the one policy of both roles: search logits over the strategies
// and, for each problem kind, aggregation logits over the actions (the
// aggregator reads the problem, so it can tell the kinds apart).
type policy struct {
	search []float64
	agg    [kinds][actions]float64
}

func newPolicy(V int) *policy { return &policy{search: make([]float64, V)} }

// softmax writes the softmax of logits into dst.
func softmax(dst, logits []float64) {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, l)
	}
	s := 0.0
	for i, l := range logits {
		dst[i] = math.Exp(l - m)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
}

// draw returns an index drawn from the probabilities p.
func draw(rnd *rand.Rand, p []float64) int {
	u := rnd.Float64()
	for i, q := range p {
		if u -= q; u < 0 {
			return i
		}
	}
	return len(p) - 1
}

// entropyBits returns the entropy of p in bits.
func entropyBits(p []float64) float64 {
	h := 0.0
	for _, q := range p {
		if q > 0 {
			h -= q * math.Log2(q)
		}
	}
	return h
}

// metrics are the exact expectations, over problems and over everything
// random, of one policy's behaviour.
type metrics struct {
	Entropy    float64        // of the search distribution, in bits
	Single     float64        // P(one search trace is correct on its own)
	Aggregated float64        // P(one aggregation output is correct), with the policy's own aggregation head
	BestAction float64        // the same with the best action for each set's contents: the search distribution's worth to a perfect aggregator
	Adopt      [kinds]float64 // the aggregation head's probability of adopt, for each problem kind
}

// evaluate computes the metrics of pol on the problems exactly: a set of n
// candidates is n independent search traces, and every expectation is a sum
// over the V^n strategy tuples (each distinct problem once).
func (t toy) evaluate(pol *policy, problems []problem, n int) metrics {
	p := make([]float64, t.V)
	softmax(p, pol.search)
	var q [kinds][actions]float64
	for k := range kinds {
		softmax(q[k][:], pol.agg[k][:])
	}
	m := metrics{Entropy: entropyBits(p)}
	for k := range kinds {
		m.Adopt[k] = q[k][adopt]
	}
	type outcome struct{ single, adopt, synth, best float64 }
	cache := map[problem]outcome{}
	for _, x := range problems {
		o, ok := cache[x]
		if !ok {
			for v := range t.V {
				o.single += p[v] * t.solveProb(x, v)
			}
			o.adopt, o.synth, o.best = t.setOutcome(x, p, n)
			cache[x] = o
		}
		m.Single += o.single
		m.Aggregated += q[x.kind][adopt]*o.adopt + q[x.kind][synthesize]*o.synth
		m.BestAction += o.best
	}
	np := float64(len(problems))
	m.Single /= np
	m.Aggregated /= np
	m.BestAction /= np
	return m
}

// setOutcome returns, for a set of n independent traces from p on problem x,
// the probability that adopt is right, that synthesize is right, and that the
// better of the two for the set's strategies is right, by enumeration of the
// V^n strategy tuples.
func (t toy) setOutcome(x problem, p []float64, n int) (adoptP, synthP, bestP float64) {
	var rec func(pos int, w, allWrong float64, mask uint64)
	rec = func(pos int, w, allWrong float64, mask uint64) {
		if pos == n {
			a := 1 - allWrong
			s := 0.0
			if x.kind == complementary && bits.OnesCount64(mask&x.subset) >= t.need {
				s = 1
			}
			adoptP += w * a
			synthP += w * s
			bestP += w * math.Max(a, s)
			return
		}
		for v := range t.V {
			if p[v] == 0 {
				continue
			}
			rec(pos+1, w*p[v], allWrong*(1-t.solveProb(x, v)), mask|1<<v)
		}
	}
	rec(0, 1, 1, 0)
	return adoptP, synthP, bestP
}
