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
// candidates is n independent search traces, and every expectation is
// computed in closed form (setOutcome), once for each distinct problem.
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
// better of the two for the set's strategies is right.
//
// For a single problem with answer a, adopt is right with probability
// 1 - (1-p_a)^n and synthesize never. For a complementary problem with
// subset C, let allWrong = (1-ε)^(traces with a strategy of C), the chance
// that no candidate is correct on its own, and D the number of distinct
// strategies of C among the n traces. Adopt is right with probability
// 1 - E[allWrong], synthesize with P(D >= m), and the better action (1 when
// D >= m, else adopt's 1 - allWrong) with 1 - E[allWrong; D < m]. Both
// expectations are sums over D of M_w(D) = E[w^(traces in C); D], which
// distinctCounts computes without enumerating the V^n tuples.
func (t toy) setOutcome(x problem, p []float64, n int) (adoptP, synthP, bestP float64) {
	if x.kind == single {
		adoptP = 1 - math.Pow(1-p[x.answer], float64(n))
		return adoptP, 0, adoptP
	}
	wrong := distinctCounts(x.subset, p, n, 1-t.luck)
	any := distinctCounts(x.subset, p, n, 1)
	allWrong, wrongShort := 0.0, 0.0
	for d, m := range wrong {
		allWrong += m
		if d < t.need {
			wrongShort += m
		}
	}
	for d, m := range any {
		if d >= t.need {
			synthP += m
		}
	}
	return 1 - allWrong, synthP, 1 - wrongShort
}

// distinctCounts returns M[d] = E[w^(traces in C); d distinct strategies of
// C among the traces] for n independent traces from p, C the strategies of
// the bit mask subset. A tuple with j_0 traces outside C and j_v traces of
// each v in C has probability n!/(j_0! prod j_v!) q^j_0 prod p_v^j_v
// (q = the mass outside C), so M[d] sums, over the ways to give j_v traces
// to each v in C (d of them nonzero, J = sum j_v <= n),
// n!/(n-J)! q^(n-J) prod (w p_v)^j_v / j_v!: a dynamic program over the
// strategies of C in the state (J, d), with only positive terms, in
// O(|C|^2 n^2) steps.
func distinctCounts(subset uint64, p []float64, n int, w float64) []float64 {
	c := bits.OnesCount64(subset)
	q := 0.0
	for v, pv := range p {
		if subset&(1<<v) == 0 {
			q += pv
		}
	}
	// f[J][d]: sum over the strategies of C taken so far.
	f := make([][]float64, n+1)
	g := make([][]float64, n+1)
	for J := range f {
		f[J], g[J] = make([]float64, c+1), make([]float64, c+1)
	}
	f[0][0] = 1
	for v, pv := range p {
		if subset&(1<<v) == 0 {
			continue
		}
		for J := range g {
			copy(g[J], f[J]) // j_v = 0
		}
		for J := range f {
			for d, mass := range f[J][:c] {
				if mass == 0 {
					continue
				}
				term := mass
				for j := 1; J+j <= n; j++ { // j_v = j: (w p_v)^j / j!
					term = float64(term * (w * pv / float64(j)))
					g[J+j][d+1] += term
				}
			}
		}
		f, g = g, f
	}
	M := make([]float64, c+1)
	for J := range f {
		// n!/(n-J)! q^(n-J)
		scale := math.Pow(q, float64(n-J))
		for i := n - J + 1; i <= n; i++ {
			scale *= float64(i)
		}
		for d, mass := range f[J] {
			M[d] += float64(scale * mass)
		}
	}
	return M
}
