package main

import (
	"math/rand/v2"
	"slices"

	"spiral/eval"
)

// A namedPolicy is a trained (or the base) policy and the arm it came from.
type namedPolicy struct {
	Spec   ArmSpec
	Policy *Policy
}

// sampleTraces draws k search traces of every problem under g: traces
// [q*k, (q+1)*k) are problem q's.
func sampleTraces(p *Policy, r *rand.Rand, problems []Problem, g Grammar, k int) ([][]int32, error) {
	prompts := make([][]int32, 0, len(problems)*k)
	for _, pr := range problems {
		for range k {
			prompts = append(prompts, searchPrompt(pr))
		}
	}
	traces, _, err := p.Generate(r, prompts, g.searchRowLen(), g)
	return traces, err
}

// answers returns the answer of every trace.
func answers(traces [][]int32) []int32 {
	a := make([]int32, len(traces))
	for i, t := range traces {
		a[i] = answerOf(t)
	}
	return a
}

// aggregate runs the aggregator p once on every set (sets[q] holds the
// sets of problem q, each a list of candidate traces) and returns the
// outputs, problem after problem, set after set.
func aggregate(p *Policy, r *rand.Rand, problems []Problem, sets [][][][]int32, g Grammar, n int) ([][]int32, error) {
	var prompts [][]int32
	for q, pr := range problems {
		for _, set := range sets[q] {
			prompts = append(prompts, aggregatePrompt(pr, set))
		}
	}
	outs, _, err := p.Generate(r, prompts, g.aggregateRowLen(n), g)
	return outs, err
}

// disjointSets splits the first m*n of a problem's k traces into m sets of
// n, in sample order.
func disjointSets(traces [][]int32, problems, k, m, n int) [][][][]int32 {
	sets := make([][][][]int32, problems)
	for q := range problems {
		mine := traces[q*k : (q+1)*k]
		for s := range m {
			sets[q] = append(sets[q], mine[s*n:(s+1)*n])
		}
	}
	return sets
}

// evalOwn evaluates a policy as its arm deploys it: samples traces of
// every test problem under g, pass@1 and answer entropy over them, and its
// own aggregator on the disjoint sets of n of them (samples/n per
// problem), against a majority vote over the same sets and the oracle.
func evalOwn(p *Policy, r *rand.Rand, s setup, g Grammar, samples int) (Point, error) {
	traces, err := sampleTraces(p, r, s.test, g, samples)
	if err != nil {
		return Point{}, err
	}
	ans := answers(traces)
	var pt Point
	for q, pr := range s.test {
		mine := ans[q*samples : (q+1)*samples]
		for _, a := range mine {
			if a == pr.Answer() {
				pt.Pass1++
			}
		}
		h, err := eval.AnswerEntropy(mine)
		if err != nil {
			return pt, err
		}
		pt.Entropy += h
	}
	pt.Pass1 /= float64(len(traces))
	pt.Entropy /= float64(len(s.test))
	n := s.cfg.SetSize
	m := samples / n
	sets := disjointSets(traces, len(s.test), samples, m, n)
	outs, err := aggregate(p, r, s.test, sets, s.one, n)
	total := float64(len(outs))
	if err != nil {
		return pt, err
	}
	for i, out := range outs {
		q := i / m
		right := s.test[q].Answer()
		setAns := answers(sets[q][i%m])
		if answerOf(out) == right {
			pt.Aggregator++
		}
		vote, err := eval.MajorityVote(setAns, eval.TieRandom, r)
		if err != nil {
			return pt, err
		}
		if vote == right {
			pt.Majority++
		}
		if slices.Contains(setAns, right) {
			pt.Oracle++
		}
	}
	pt.Aggregator /= total
	pt.Majority /= total
	pt.Oracle /= total
	return pt, nil
}
