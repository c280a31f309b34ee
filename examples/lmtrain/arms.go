package main

import (
	"fmt"
	"math/rand/v2"

	"spiral"
	"spiral/advantage"
	"spiral/loss"
)

// An ArmSpec is one training method. Every arm starts from the same base
// model, spends the same generated-token ceiling per problem and sees the
// same training problems (step s, round r draws the same P problems in
// every arm).
type ArmSpec struct {
	Name string `json:"name"`
	// Kind is "spiral" or "grpo".
	Kind string `json:"kind"`
	// Group is G, GRPO's traces per problem.
	Group int `json:"group,omitempty"`
	// MaxPairs is the search grammar's proposals per trace (1 or 2).
	MaxPairs int `json:"max_pairs"`
	// Unbiased scales SPIRAL's losses by the configuration's unbiased role
	// multipliers (Config.RoleWeights); without it the search and
	// aggregation losses are summed as the paper sums them.
	Unbiased bool `json:"unbiased,omitempty"`
}

// The arms of the study: SPIRAL with the library's unbiased weighting and
// with the paper's summed loss, and GRPO at the same generated-token
// ceiling as SPIRAL's 8 + 16 outputs of one proposal, either as 12 traces
// of twice the length (the paper's control: room to propose, check and
// propose again) or as 24 traces of one proposal (as many traces as SPIRAL
// generates outputs).
var studyArms = []ArmSpec{
	{Name: "spiral", Kind: "spiral", MaxPairs: 1, Unbiased: true},
	{Name: "spiral-paper", Kind: "spiral", MaxPairs: 1},
	{Name: "grpo-2x", Kind: "grpo", Group: 12, MaxPairs: 2},
	{Name: "grpo-24", Kind: "grpo", Group: 24, MaxPairs: 1},
}

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

// problemStream gives every step its training problems: Rounds*P problems
// drawn from (seed, step) alone, so that every arm sees the same problems
// at the same step and round however many rounds it uses, none of them a
// test problem.
type problemStream struct {
	seed    uint64
	perStep int
	exclude map[int64]bool
}

func (s problemStream) step(step int) []Problem {
	return NewProblems(rand.New(rand.NewPCG(s.seed, 1_000_000+uint64(step))), s.perStep, s.exclude)
}

// rightReward is 1 when out's answer is p's pair, else 0.
func rightReward(p Problem, out []int32) float64 {
	if answerOf(out) == p.Answer() {
		return 1
	}
	return 0
}

// spiralArm trains the policy with SPIRAL: per problem N1 search traces, K
// sets of n of them planned by the library, N2 aggregation outputs per set,
// credit from Config.CreditBatch with the length gates, dynamic sampling
// on Skip, and the loss coefficients from Config.LossCoefficients: the
// unbiased joint gradient, or the paper's update.
type spiralArm struct {
	cfg      spiral.Config
	planner  *spiral.Planner
	policy   *Policy
	search   Grammar // the search traces'
	agg      Grammar // the aggregation outputs'
	problems int     // P, problems per step
	rounds   int     // generation rounds per step for dynamic sampling
	loss     spiral.LossOptions
	plans    spiral.Plans // reused: PlanTo draws them every round
	keys     []uint64     // 0, 1, ...: the round's problems
	batch    spiral.Batch // reused: generate fills it
	credit   spiral.BatchCredit
	coef     spiral.LossCoefficients
	diag     CreditDiag // every problem's credit, over the run
}

// CreditDiag is what SPIRAL's credit did over a run, for every problem
// generated (kept or resampled), for comparison with the library's closed
// forms: how many scored sets held each search trace (|G(y)|), the search
// credit by that count, and the success the credit was computed from.
type CreditDiag struct {
	// Traces[a] is the number of search traces in a scored sets, and
	// Credit[a], Squares[a] the sum of their search credit A_search and of
	// its square.
	Traces  []int     `json:"traces"`
	Credit  []float64 `json:"credit"`
	Squares []float64 `json:"squares"`
	// Right is the number of right search traces among all of them.
	Right int `json:"right"`
	// Sets[j] is the number of sets holding j right candidates and
	// Rewards[j] the sum of their aggregation rewards (N2 a set).
	Sets    []int     `json:"sets"`
	Rewards []float64 `json:"rewards"`
	// Problems is the number of problems credited.
	Problems int `json:"problems"`
}

// add records one round's credit.
func (d *CreditDiag) add(cfg spiral.Config, plans *spiral.Plans, ro *rollout, cr *spiral.BatchCredit) {
	n1, k, n, n2 := cfg.SearchTraces, cfg.Sets, cfg.SetSize, cfg.AggregationsPerSet
	if d.Traces == nil {
		d.Traces, d.Credit, d.Squares = make([]int, k+1), make([]float64, k+1), make([]float64, k+1)
		d.Sets, d.Rewards = make([]int, n+1), make([]float64, n+1)
	}
	for q, pr := range ro.problems {
		if cr.Rejected[q] {
			continue
		}
		d.Problems++
		for i := q * n1; i < (q+1)*n1; i++ {
			a := cr.Appearances[i]
			d.Traces[a]++
			d.Credit[a] += cr.Search[i]
			d.Squares[a] += cr.Search[i] * cr.Search[i]
			d.Right += int(rightReward(pr, ro.traces[i]))
		}
		for i := range k {
			j := 0
			for m := range n {
				j += int(rightReward(pr, ro.traces[q*n1+plans.Member(q, i, m)]))
			}
			d.Sets[j]++
			for o := (q*k + i) * n2; o < (q*k+i+1)*n2; o++ {
				d.Rewards[j] += ro.rewards[o]
			}
		}
	}
}

func newSpiralArm(cfg spiral.Config, policy *Policy, search, agg Grammar, problems, rounds int, unbiased bool) (*spiralArm, error) {
	planner, err := cfg.NewPlanner()
	if err != nil {
		return nil, err
	}
	// The loss sums each output's log-probability times its coefficient
	// (loss.Sum); the aggregation baseline is the Config's (inside the set),
	// as CreditBatch computed the credit with.
	opt := spiral.LossOptions{Update: spiral.PaperUpdate, Reduction: loss.Sum}
	if unbiased {
		opt.Update = spiral.JointGradient
	}
	return &spiralArm{cfg: cfg, planner: planner, policy: policy, search: search, agg: agg, problems: problems, rounds: rounds, loss: opt}, nil
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
	ro.traces, _, err = a.policy.Generate(r, prompts, a.search.searchRowLen(), a.search)
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
	ro.aggOut, _, err = a.policy.Generate(r, ro.aggPrompt, a.agg.aggregateRowLen(n), a.agg)
	if err != nil {
		return nil, err
	}
	for i, t := range ro.traces {
		ro.searchLen = append(ro.searchLen, len(t))
		ro.searchOK += int(rightReward(problems[i/n1], t))
	}
	for o, out := range ro.aggOut {
		ro.aggLen = append(ro.aggLen, len(out))
		ro.rewards = append(ro.rewards, rightReward(problems[o/(k*n2)], out))
	}
	return ro, nil
}

// step generates for the step's problems P at a time, credits them,
// resamples the problems that give no update (up to a.rounds rounds) and
// takes one Adam step on the kept ones, each problem's loss
//
//	-(sum_y c_search(y) log pi(y) + sum_o c_agg(o) log pi(o))
//
// averaged over the P problems of the step, c the loss coefficients: the
// advantages times 1/M and 1/(K (N2-1)) for the joint gradient, times 1
// for the paper's update.
func (a *spiralArm) step(r *rand.Rand, pool []Problem) (StepStats, error) {
	c := a.cfg
	n1, k, n2 := c.SearchTraces, c.Sets, c.AggregationsPerSet
	search := Part{SeqLen: a.search.searchRowLen(), Grammar: a.search}
	agg := Part{SeqLen: a.agg.aggregateRowLen(c.SetSize), Grammar: a.agg}
	var st StepStats
	var aggOK, aggAll int
	for round := 0; round < a.rounds && st.Kept < a.problems; round++ {
		ro, err := a.generate(r, pool[round*a.problems:(round+1)*a.problems])
		if err != nil {
			return st, err
		}
		st.Problems += a.problems
		for i, t := range ro.traces {
			st.Generated += len(t)
			st.Prefill += len(searchPrompt(ro.problems[i/n1]))
		}
		for o, out := range ro.aggOut {
			st.Generated += len(out)
			st.Prefill += len(ro.aggPrompt[o])
			aggOK += int(ro.rewards[o])
			aggAll++
		}
		st.SearchReward += float64(ro.searchOK)
		a.batch.Rewards, a.batch.SearchLengths, a.batch.AggregationLengths = ro.rewards, ro.searchLen, ro.aggLen
		if err := c.CreditBatch(&a.credit, a.batch); err != nil {
			return st, fmt.Errorf("credit: %w", err)
		}
		if err := c.LossCoefficients(&a.coef, &a.credit, a.batch, a.loss); err != nil {
			return st, fmt.Errorf("loss coefficients: %w", err)
		}
		a.diag.add(c, &a.plans, ro, &a.credit)
		st.Gated += a.credit.Gates.Search.Gated + a.credit.Gates.Aggregation.Gated
		for q, sp := range a.credit.Spans() {
			if a.credit.Skip(q) || st.Kept == a.problems {
				continue
			}
			st.Kept++
			for i := sp.Trace; i < sp.Trace+sp.Traces; i++ {
				search.Rows = append(search.Rows, Row{Prompt: searchPrompt(ro.problems[q]), Output: ro.traces[i]})
				search.Coef = append(search.Coef, float32(a.coef.Search[i]/float64(a.problems)))
			}
			for o := sp.Reward; o < sp.Reward+sp.Rewards; o++ {
				agg.Rows = append(agg.Rows, Row{Prompt: ro.aggPrompt[o], Output: ro.aggOut[o]})
				agg.Coef = append(agg.Coef, float32(a.coef.Aggregation[o]/float64(a.problems)))
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
// (or of a one-proposal row), so that every step has the same shapes and
// the model is compiled once per shape.
func padPart(p *Part, rows int) {
	if len(p.Rows) == 0 {
		pr := Problem{Target: 1}
		p.Rows = append(p.Rows, Row{Prompt: searchPrompt(pr), Output: append(proposal(pr, 0), TokStop)})
		p.Coef = append(p.Coef, 0)
	}
	for len(p.Rows) < rows {
		p.Rows = append(p.Rows, p.Rows[0])
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

func (a *grpoArm) step(r *rand.Rand, pool []Problem) (StepStats, error) {
	g := a.grammar
	search := Part{SeqLen: g.searchRowLen(), Grammar: g}
	var st StepStats
	var ok int
	for round := 0; round < a.rounds && st.Kept < a.problems; round++ {
		problems := pool[round*a.problems : (round+1)*a.problems]
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
			rewards[i] = rightReward(problems[ids[i]], o)
			ok += int(rewards[i])
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
