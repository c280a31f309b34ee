package main

import (
	"math"
	"math/rand/v2"
	"slices"

	"spiral/eval"
	"spiral/rsa"
)

// EvalConfig is what an evaluation draws: Samples search traces per test
// problem (pass@k for k up to Samples), and Sets disjoint sets of SetSize
// of those traces per problem shown to the aggregator, one output each.
type EvalConfig struct {
	Samples, Sets, SetSize int
	// RSA, when its Steps > 0, also runs recursive self-aggregation from
	// the first RSA.Population samples of every problem.
	RSA rsa.Config
}

// EvalResult is one evaluation of a policy on the test problems.
type EvalResult struct {
	// Coverage[k-1] is pass@k over the test problems (eval.CoverageCurve);
	// Coverage[0] is pass@1.
	Coverage []float64 `json:"coverage"`
	// DistinctAnswers is the mean number of distinct answers among a
	// problem's first SetSize*Sets samples, AnswerEntropy the mean entropy in
	// bits of a problem's answer distribution over all its samples, and
	// DistinctTraces the mean fraction of a problem's samples that differ
	// from every other one (as token sequences).
	DistinctAnswers float64 `json:"distinct_answers"`
	AnswerEntropy   float64 `json:"answer_entropy_bits"`
	DistinctTraces  float64 `json:"distinct_traces"`
	// MeanLength is the mean length of a search trace in generated tokens.
	MeanLength float64 `json:"mean_length"`
	// Aggregator is the accuracy of the aggregation outputs, Majority that
	// of a majority vote (eval.MajorityVote, ties at random) over the same
	// candidates, and Oracle the fraction of sets holding a right candidate.
	Aggregator float64 `json:"aggregator"`
	Majority   float64 `json:"majority"`
	Oracle     float64 `json:"oracle"`
	// AggregatorLength is the mean length of an aggregation output.
	AggregatorLength float64 `json:"aggregator_length"`
	// RSA[t] is the accuracy of the RSA population after t aggregation
	// steps (RSA[0]: the initial samples), when RSA ran.
	RSA []float64 `json:"rsa,omitempty"`
}

// Evaluate samples cfg.Samples search traces of every test problem under
// the grammar g, and one aggregation output for each of cfg.Sets sets of
// cfg.SetSize of them (the first samples, in sample order).
func Evaluate(p *Policy, r *rand.Rand, problems []Problem, g Grammar, cfg EvalConfig) (EvalResult, error) {
	var prompts [][]int32
	for _, pr := range problems {
		for range cfg.Samples {
			prompts = append(prompts, searchPrompt(pr))
		}
	}
	traces, _, err := p.Generate(r, prompts, g.searchRowLen(), g)
	if err != nil {
		return EvalResult{}, err
	}
	var res EvalResult
	counts := make([]eval.PassCount, len(problems))
	var aggPrompts [][]int32
	var setAnswers [][]int32
	longest := 0
	for q, pr := range problems {
		mine := traces[q*cfg.Samples : (q+1)*cfg.Samples]
		answers := make([]int32, len(mine))
		hist := map[int32]int{}
		seen := map[string]int{}
		for i, t := range mine {
			answers[i] = answerOf(t)
			hist[answers[i]]++
			seen[string(tokensKey(t))]++
			res.MeanLength += float64(len(t))
			if answers[i] == pr.Answer() {
				counts[q].C++
			}
		}
		counts[q].N = len(mine)
		for _, c := range hist {
			f := float64(c) / float64(len(mine))
			res.AnswerEntropy -= f * math.Log2(f)
		}
		unique := 0
		for _, c := range seen {
			if c == 1 {
				unique++
			}
		}
		res.DistinctTraces += float64(unique) / float64(len(mine))
		firsts := slices.Clone(answers[:cfg.Sets*cfg.SetSize])
		slices.Sort(firsts)
		res.DistinctAnswers += float64(len(slices.Compact(firsts)))
		for s := range cfg.Sets {
			set := mine[s*cfg.SetSize : (s+1)*cfg.SetSize]
			prompt := aggregatePrompt(pr, set)
			longest = max(longest, len(prompt))
			aggPrompts = append(aggPrompts, prompt)
			setAnswers = append(setAnswers, answers[s*cfg.SetSize:(s+1)*cfg.SetSize])
		}
	}
	P := float64(len(problems))
	res.MeanLength /= float64(len(traces))
	res.AnswerEntropy /= P
	res.DistinctTraces /= P
	res.DistinctAnswers /= P
	if res.Coverage, err = eval.CoverageCurve(counts, cfg.Samples); err != nil {
		return res, err
	}
	outs, _, err := p.Generate(r, aggPrompts, longest+g.MaxOutput(), g)
	if err != nil {
		return res, err
	}
	for i, out := range outs {
		right := problems[i/cfg.Sets].Answer()
		res.AggregatorLength += float64(len(out))
		if answerOf(out) == right {
			res.Aggregator++
		}
		vote, err := eval.MajorityVote(setAnswers[i], eval.TieRandom, r)
		if err != nil {
			return res, err
		}
		if vote == right {
			res.Majority++
		}
		if slices.Contains(setAnswers[i], right) {
			res.Oracle++
		}
	}
	m := float64(len(outs))
	res.Aggregator /= m
	res.Majority /= m
	res.Oracle /= m
	res.AggregatorLength /= m
	if cfg.RSA.Steps > 0 {
		res.RSA, err = runRSA(p, r, problems, traces, cfg.Samples, g, cfg.RSA)
	}
	return res, err
}

// runRSA runs recursive self-aggregation on every problem, its initial
// population the first rc.Population of the problem's samples (traces,
// perProblem per problem), each step's sets from rc.Schedule, and returns
// the population's accuracy after every step.
func runRSA(p *Policy, r *rand.Rand, problems []Problem, traces [][]int32, perProblem int, g Grammar, rc rsa.Config) ([]float64, error) {
	pop := make([][][]int32, len(problems))
	schedules := make([][][][]int, len(problems))
	for q := range problems {
		pop[q] = traces[q*perProblem : q*perProblem+rc.Population]
		var err error
		if schedules[q], err = rc.Schedule(r); err != nil {
			return nil, err
		}
	}
	accuracy := func() float64 {
		right := 0
		for q, pr := range problems {
			for _, c := range pop[q] {
				if answerOf(c) == pr.Answer() {
					right++
				}
			}
		}
		return float64(right) / float64(len(problems)*rc.Population)
	}
	acc := []float64{accuracy()}
	cands := make([][]int32, rc.SetSize)
	for t := range rc.Steps {
		var prompts [][]int32
		longest := 0
		for q, pr := range problems {
			for _, set := range schedules[q][t] {
				for j, c := range set {
					cands[j] = pop[q][c]
				}
				prompt := aggregatePrompt(pr, cands)
				longest = max(longest, len(prompt))
				prompts = append(prompts, prompt)
			}
		}
		outs, _, err := p.Generate(r, prompts, longest+g.MaxOutput(), g)
		if err != nil {
			return nil, err
		}
		for q := range problems {
			pop[q] = outs[q*rc.Population : (q+1)*rc.Population]
		}
		acc = append(acc, accuracy())
	}
	return acc, nil
}

func tokensKey(t []int32) []byte {
	b := make([]byte, len(t))
	for i, v := range t {
		b[i] = byte(v)
	}
	return b
}
