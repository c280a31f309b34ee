package main

import (
	"fmt"
	"math/rand/v2"

	"spiral"
	"spiral/advantage"
)

// StepStats is what one training step of an arm did.
type StepStats struct {
	// Problems is the number of problems generated for, Kept the number
	// trained on (the others gave no signal and were resampled).
	Problems, Kept int
	// Generated and Prefill are the generated and the prompt tokens of
	// every call of the step, kept or not.
	Generated, Prefill int
	// SearchReward is the fraction of search traces whose answer is right,
	// AggregationReward that of aggregation outputs (SPIRAL only).
	SearchReward, AggregationReward float64
	// Gated is the number of positive advantages the length gates zeroed.
	Gated int
	Loss  float64
}

// problemStream draws training problems.
type problemStream struct{ r *rand.Rand }

func (s problemStream) next(n int) []Problem { return NewProblems(s.r, n) }

// spiralArm trains the policy with SPIRAL: per problem N1 search traces, K
// sets of n of them planned by the library, N2 aggregation outputs per set,
// credit from Config.CreditBatch with the length gates, dynamic sampling
// on NoSignal, and the search and aggregation losses scaled by the
// configuration's role multipliers.
type spiralArm struct {
	cfg        spiral.Config
	planner    *spiral.Planner
	policy     *Policy
	grammar    Grammar
	problems   int // P, problems per step
	rounds     int // generation rounds per step for dynamic sampling
	searchMult float64
	aggMult    float64
	plans      spiral.Plans // reused: PlanTo draws them every round
	keys       []uint64     // 0, 1, ...: the round's problems
	batch      spiral.Batch // reused: generate fills it
	credit     spiral.BatchCredit
}

func newSpiralArm(cfg spiral.Config, policy *Policy, g Grammar, problems, rounds int, unbiased bool) (*spiralArm, error) {
	planner, err := cfg.NewPlanner()
	if err != nil {
		return nil, err
	}
	a := &spiralArm{cfg: cfg, planner: planner, policy: policy, grammar: g, problems: problems, rounds: rounds, searchMult: 1, aggMult: 1}
	if unbiased {
		// The credit sums over every trace and output (a sum: spiral.LossOptions{}) with
		// the aggregation baseline inside the set (WithinSet), as step does.
		roles, err := cfg.RoleWeights(spiral.LossOptions{})
		if err != nil {
			return nil, err
		}
		a.searchMult, a.aggMult = roles.SearchMultiplier, roles.AggregationMultiplier
	}
	return a, nil
}

// rollout is one round of generation for P problems.
type rollout struct {
	problems  []Problem
	traces    [][]int32 // P*N1 search traces
	aggPrompt [][]int32 // P*K*N2 aggregation prompts
	aggOut    [][]int32 // P*K*N2 aggregation outputs
	rewards   []float64
	searchLen []int
	aggLen    []int
	searchOK  int
}

func (a *spiralArm) generate(r *rand.Rand, problems []Problem) (*rollout, error) {
	c := a.cfg
	n1, k, n, n2 := c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet
	for len(a.keys) < len(problems) {
		a.keys = append(a.keys, uint64(len(a.keys)))
	}
	if err := a.planner.PlanTo(&a.plans, r.Uint64(), 0, a.keys[:len(problems)]); err != nil {
		return nil, err
	}
	a.batch.Plans = &a.plans
	ro := &rollout{problems: problems}
	prompts := make([][]int32, 0, len(problems)*n1)
	for _, p := range problems {
		for range n1 {
			prompts = append(prompts, searchPrompt(p))
		}
	}
	var err error
	ro.traces, _, err = a.policy.Generate(r, prompts, a.grammar.searchRowLen(), a.grammar)
	if err != nil {
		return nil, err
	}
	cands := make([][]int32, n)
	for q, p := range problems {
		for i := range k {
			for j := range n {
				cands[j] = ro.traces[q*n1+a.plans.Member(q, i, j)]
			}
			prompt := aggregatePrompt(p, cands)
			for range n2 {
				ro.aggPrompt = append(ro.aggPrompt, prompt)
			}
		}
	}
	ro.aggOut, _, err = a.policy.Generate(r, ro.aggPrompt, a.grammar.aggregateRowLen(n), a.grammar)
	if err != nil {
		return nil, err
	}
	for i, t := range ro.traces {
		ro.searchLen = append(ro.searchLen, len(t))
		if answerOf(t) == problems[i/n1].Answer() {
			ro.searchOK++
		}
	}
	for o, out := range ro.aggOut {
		ro.aggLen = append(ro.aggLen, len(out))
		rew := 0.0
		if answerOf(out) == problems[o/(k*n2)].Answer() {
			rew = 1
		}
		ro.rewards = append(ro.rewards, rew)
	}
	return ro, nil
}

// step generates for P problems, credits them, resamples the problems with
// no signal (up to a.rounds rounds) and takes one Adam step on the kept
// ones, each problem's loss
//
//	-(searchMult sum_y A_search(y) log pi(y) + aggMult sum_o A_agg(o) log pi(o))
//
// averaged over the P problems of the step.
func (a *spiralArm) step(r *rand.Rand, draw problemStream) (StepStats, error) {
	c := a.cfg
	n1, k, n2 := c.SearchTraces, c.Sets, c.AggregationsPerSet
	g := a.grammar
	search := Part{SeqLen: g.searchRowLen(), Grammar: g}
	agg := Part{SeqLen: g.aggregateRowLen(c.SetSize), Grammar: g}
	var st StepStats
	var aggOK, aggAll int
	for round := 0; round < a.rounds && st.Kept < a.problems; round++ {
		ro, err := a.generate(r, draw.next(a.problems))
		if err != nil {
			return st, err
		}
		st.Problems += a.problems
		for _, t := range ro.traces {
			st.Generated += len(t)
			st.Prefill += ProblemDigits + 2
		}
		for o, out := range ro.aggOut {
			st.Generated += len(out)
			st.Prefill += len(ro.aggPrompt[o])
			aggOK += int(ro.rewards[o])
			aggAll++
		}
		st.SearchReward += float64(ro.searchOK)
		a.batch.Rewards, a.batch.SearchLengths, a.batch.AggregationLengths = ro.rewards, ro.searchLen, ro.aggLen
		err = c.CreditBatch(&a.credit, a.batch)
		if err != nil {
			return st, fmt.Errorf("credit: %w", err)
		}
		st.Gated += a.credit.Gates.Search.Gated + a.credit.Gates.Aggregation.Gated
		for q := range ro.problems {
			if a.credit.NoSignal[q] || st.Kept == a.problems {
				continue
			}
			st.Kept++
			for y := range n1 {
				i := q*n1 + y
				search.Rows = append(search.Rows, Row{Prompt: searchPrompt(ro.problems[q]), Output: ro.traces[i]})
				search.Coef = append(search.Coef, float32(a.searchMult*a.credit.Search[i]/float64(a.problems)))
			}
			for o := q * k * n2; o < (q+1)*k*n2; o++ {
				agg.Rows = append(agg.Rows, Row{Prompt: ro.aggPrompt[o], Output: ro.aggOut[o]})
				agg.Coef = append(agg.Coef, float32(a.aggMult*a.credit.Aggregation[o]/float64(a.problems)))
			}
		}
	}
	st.SearchReward /= float64(st.Problems * n1)
	st.AggregationReward = float64(aggOK) / float64(aggAll)
	padPart(&search, a.problems*n1)
	padPart(&agg, a.problems*k*n2)
	loss, err := a.policy.Step(search, agg)
	st.Loss = loss
	return st, err
}

// padPart fills p up to rows rows with zero-weight copies of its first row
// (or an all-padding row), so that every step has the same shapes and the
// model is compiled once per shape.
func padPart(p *Part, rows int) {
	filler := Row{Prompt: []int32{TokSearch}, Output: []int32{TokEq, 0, TokStop}}
	if len(p.Rows) > 0 {
		filler = p.Rows[0]
	}
	for len(p.Rows) < rows {
		p.Rows = append(p.Rows, filler)
		p.Coef = append(p.Coef, 0)
	}
}

// grpoArm trains the policy with GRPO: G search traces per problem, reward
// 1 for a right answer, advantages from advantage.GroupRelative, dynamic
// sampling on groups with no signal, each problem's loss -sum_i A_i log
// pi(y_i) averaged over the P problems of the step.
type grpoArm struct {
	policy   *Policy
	grammar  Grammar
	group    int
	problems int
	rounds   int
	opts     advantage.GroupOptions
}

func (a *grpoArm) step(r *rand.Rand, draw problemStream) (StepStats, error) {
	g := a.grammar
	search := Part{SeqLen: g.searchRowLen(), Grammar: g}
	var st StepStats
	var ok int
	for round := 0; round < a.rounds && st.Kept < a.problems; round++ {
		problems := draw.next(a.problems)
		st.Problems += len(problems)
		prompts := make([][]int32, 0, len(problems)*a.group)
		ids := make([]int, 0, len(problems)*a.group)
		for q, p := range problems {
			for range a.group {
				prompts = append(prompts, searchPrompt(p))
				ids = append(ids, q)
			}
		}
		outs, _, err := a.policy.Generate(r, prompts, g.searchRowLen(), g)
		if err != nil {
			return st, err
		}
		rewards := make([]float64, len(outs))
		for i, o := range outs {
			st.Generated += len(o)
			st.Prefill += len(prompts[i])
			if answerOf(o) == problems[ids[i]].Answer() {
				rewards[i] = 1
				ok++
			}
		}
		adv := make([]float64, len(outs))
		if _, err := advantage.GroupRelative(adv, rewards, ids, a.opts); err != nil {
			return st, fmt.Errorf("group advantages: %w", err)
		}
		for q := range problems {
			if st.Kept == a.problems {
				break
			}
			signal := false
			for i := q * a.group; i < (q+1)*a.group; i++ {
				signal = signal || adv[i] != 0
			}
			if !signal {
				continue
			}
			st.Kept++
			for i := q * a.group; i < (q+1)*a.group; i++ {
				search.Rows = append(search.Rows, Row{Prompt: prompts[i], Output: outs[i]})
				search.Coef = append(search.Coef, float32(adv[i]/float64(a.problems)))
			}
		}
	}
	st.SearchReward = float64(ok) / float64(st.Problems*a.group)
	padPart(&search, a.problems*a.group)
	loss, err := a.policy.Step(search)
	st.Loss = loss
	return st, err
}
