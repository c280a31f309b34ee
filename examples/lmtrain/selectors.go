package main

import (
	"math"
)

// The selectors that need no training pick one of a set's candidates, or a
// pair, from what the set shows: each candidate's pair and its check.
//
//   - majority: the most frequent pair (ties at random);
//   - best-of-k by check: a candidate whose check says hit, uniformly among
//     them, else any candidate uniformly;
//   - rule: the Bayes rule over the checks shown, the best hand-written rule
//     the task admits when the proposals carry no information: the pair a
//     maximising the likelihood of the checks, prod over candidates i of
//     (1-e) when check i agrees with "pair_i = a" and e when it does not
//     (e the tool's noise). At e = 0 it takes a hit when one is shown, else
//     a pair no candidate missed; ties at random;
//   - bayes: the Bayes-optimal selector of the task's generative model when
//     the search policy proposes the right pair with probability p (its
//     pass@1) and a uniformly chosen wrong one otherwise, each candidate
//     contributing p or (1-p)/5 besides its check's likelihood. It is the
//     ceiling of any selector reading only the candidates, for a policy of
//     that form; with p = 1/6 it is the rule.
//
// Every accuracy is the exact expectation over the selector's tie-breaking.
const (
	selMajority = iota
	selCheck
	selRule
	selBayes
	numSelectors
)

// selectorNames are the selectors' names in tables and summary.json.
var selectorNames = [numSelectors]string{"majority", "best-of-k by check", "rule", "bayes"}

// A shown candidate is what an aggregation prompt shows of a trace.
type shown struct {
	pair int32
	hit  bool
}

func shownOf(traces [][]int32) []shown {
	c := make([]shown, len(traces))
	for i, t := range traces {
		last := lastProposal(t)
		c[i] = shown{pair: last[0] - TokPair0, hit: last[1] == TokHit}
	}
	return c
}

// bayesPick returns the pairs of greatest posterior given the shown
// candidates, under tool noise e and proposal accuracy p, and their number.
// With e = 0 a pair some check contradicts has posterior 0.
func bayesPick(cands []shown, e, p float64) (best [ProblemPairs]bool, n int) {
	logRight, logWrong := math.Log(p), math.Log((1-p)/(ProblemPairs-1))
	logAgree, logDisagree := math.Log1p(-e), math.Log(e)
	bestBad, bestScore := math.MaxInt, math.Inf(-1)
	var bad [ProblemPairs]int
	var score [ProblemPairs]float64
	for a := range int32(ProblemPairs) {
		agree, disagree, own := 0, 0, 0
		for _, c := range cands {
			if c.pair == a {
				own++
			}
			if (c.pair == a) == c.hit {
				agree++
			} else {
				disagree++
			}
		}
		s := float64(own)*logRight + float64(len(cands)-own)*logWrong + float64(agree)*logAgree
		if e > 0 {
			s += float64(disagree) * logDisagree
		} else {
			bad[a] = disagree
		}
		score[a] = s
		if bad[a] < bestBad || bad[a] == bestBad && s > bestScore {
			bestBad, bestScore = bad[a], s
		}
	}
	for a := range ProblemPairs {
		if bad[a] == bestBad && score[a] >= bestScore-1e-9*math.Abs(bestScore)-1e-12 {
			best[a] = true
			n++
		}
	}
	return best, n
}

// selectorAccuracy is the expected accuracy of selector sel on one set of
// candidates whose right pair is right; majority is counted with ties at
// random.
func selectorAccuracy(sel int, cands []shown, right int32, e, p float64) float64 {
	switch sel {
	case selMajority:
		var count [ProblemPairs]int
		top := 0
		for _, c := range cands {
			count[c.pair]++
			top = max(top, count[c.pair])
		}
		ties := 0
		for _, n := range count {
			if n == top {
				ties++
			}
		}
		if count[right] == top {
			return 1 / float64(ties)
		}
		return 0
	case selCheck:
		hits, rightHits, rightAll := 0, 0, 0
		for _, c := range cands {
			if c.hit {
				hits++
				if c.pair == right {
					rightHits++
				}
			}
			if c.pair == right {
				rightAll++
			}
		}
		if hits > 0 {
			return float64(rightHits) / float64(hits)
		}
		return float64(rightAll) / float64(len(cands))
	case selRule:
		p = 1.0 / ProblemPairs
	}
	best, n := bayesPick(cands, e, p)
	if best[right] {
		return 1 / float64(n)
	}
	return 0
}

// modelCeiling is the exact accuracy of the bayes selector on sets of n
// candidates drawn from the model it assumes (each right with probability
// p, else a uniform wrong pair; each check wrong with probability e), by
// enumerating every set: the ceiling of any selector reading only the
// candidates, for a search policy of that form.
func modelCeiling(n int, e, p float64) float64 {
	// By symmetry the right pair is 0.
	cands := make([]shown, n)
	total := 0.0
	var walk func(i int, prob float64)
	walk = func(i int, prob float64) {
		if prob == 0 {
			return
		}
		if i == n {
			best, k := bayesPick(cands, e, p)
			if best[0] {
				total += prob / float64(k)
			}
			return
		}
		for pair := range int32(ProblemPairs) {
			pp := (1 - p) / (ProblemPairs - 1)
			if pair == 0 {
				pp = p
			}
			for _, hit := range []bool{false, true} {
				pc := e
				if hit == (pair == 0) {
					pc = 1 - e
				}
				cands[i] = shown{pair: pair, hit: hit}
				walk(i+1, prob*pp*pc)
			}
		}
	}
	walk(0, 1)
	return total
}
