package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"spiral"
	"spiral/advise"
	"spiral/budget"
	"spiral/combin"
)

// The -advice mode: a check of package advise's ranking by training. The
// toy is stated as the advisor's "find one" reward model, exactly at the
// start of training; advise.Advise ranks the configurations at the
// reference configuration's token budget, and advise.Evaluate gives the
// reference's own figures; the advisor's top configuration
// and the reference are trained side by side at equal tokens per step,
// over several streams each, with the update scaled to be unbiased as the
// advisor assumes; and the outcomes are compared with standard errors.

// adviceFile is the report the mode writes to -out.
const adviceFile = "advice.txt"

// adviceInitProblems is the number of problems each arm's update is sampled
// on at the initial policy, without training, to measure its
// signal-to-noise ratio where the advisor's model is exact.
const adviceInitProblems = 4096

// adviceZ is the number of standard errors from which the verdict calls a
// difference in the predicted or the opposite direction; below it the
// verdict is inconclusive.
const adviceZ = 2

// adviceOptions are what the -advice mode depends on besides the training
// options (seed, steps, batch, lr, replicates, out).
type adviceOptions struct {
	// reference is the configuration the advisor's top is compared with
	// (spiral.Paper() by default); its tokens per problem are the budget.
	reference spiral.Config
	// maxTraces, maxSets and maxAggregations bound the advisor's search
	// (advise.Request; 0 for the package's bounds).
	maxTraces, maxSets, maxAggregations int
	// lengths are the tokens of one search trace and one aggregation
	// output (every output of the toy is counted at its ceiling).
	lengths budget.Limits
	// former is the former top, the configuration ranked first by SNR per
	// token alone at the paper's budget before the ranking held every
	// configuration of its space (7/2/7/2 balanced).
	former spiral.Config
	// early are the early-progress check's settings.
	early earlyOptions
}

func adviceDefaults() adviceOptions {
	former := spiral.Paper()
	former.SearchTraces, former.SetSize, former.Sets, former.AggregationsPerSet, former.Design = 7, 2, 7, 2, combin.Balanced
	return adviceOptions{reference: spiral.Paper(), lengths: budget.PaperLimits(0), former: former, early: earlyDefaults()}
}

// adviceRunDefaults are the training options of the -advice mode where the
// command line does not set them: 7 reference problems per step (the
// paper's 98,304 tokens each; the advisor's top at the paper's budget,
// 86,016 tokens, then gets exactly 8), 60 steps and 16 streams per arm;
// the learning rate (1) and -out are the default mode's.
func adviceRunDefaults(o *options, set map[string]bool) {
	if !set["steps"] {
		o.steps = 60
	}
	if !set["batch"] {
		o.batch = 7
	}
	if !set["replicates"] {
		o.replicates = 16
	}
}

// parseConfig parses the flag name's value "N1,n,K,N2[,design]" into the
// paper's configuration with those sizes (subsets, index order; the
// uniform design unless the fifth field is "balanced").
func parseConfig(name, s string) (spiral.Config, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 && len(parts) != 5 {
		return spiral.Config{}, fmt.Errorf("%s = %q, want N1,n,K,N2 or N1,n,K,N2,design", name, s)
	}
	var v [4]int
	for i, p := range parts[:4] {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 1 || x > combin.MaxSize {
			return spiral.Config{}, fmt.Errorf("%s = %q: field %d = %q, want an integer in [1, %d]", name, s, i+1, p, combin.MaxSize)
		}
		v[i] = x
	}
	c := spiral.Paper()
	c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet = v[0], v[1], v[2], v[3]
	if len(parts) == 5 {
		if err := c.Design.UnmarshalText([]byte(strings.TrimSpace(parts[4]))); err != nil {
			return spiral.Config{}, fmt.Errorf("%s = %q: field 5: %w", name, s, err)
		}
	}
	if err := c.Validate(); err != nil {
		return spiral.Config{}, fmt.Errorf("%s = %q: %w", name, s, err)
	}
	return c, nil
}

// adviceToy is the toy world of the -advice mode: V = 2 strategies, and
// every problem is the same single problem, whose answer is strategy 0. A
// search trace is correct iff its strategy is the answer; an aggregation
// output is an action of a head with its own logits for every presented
// tuple of strategies (V^n contexts): adopt is right iff some candidate is
// correct, synthesize is never right on a single problem (toy.reward).
// This is the advisor's toy problem exactly: a binary symbol per trace, a
// tabular binary aggregator per context, one problem.
var adviceToy = toy{V: 2, single: 1, comp: 1, need: 1, luck: 0}

var adviceProblem = problem{kind: single, answer: 0}

// correctOn reports whether a trace with strategy v is correct on its own
// on x; on the -advice toy's single problem solveProb is 0 or 1.
func correctOn(x problem, v int) bool { return adviceToy.solveProb(x, v) == 1 }

// contextReward returns the reward of action a on a set presenting the
// strategies syms.
func contextReward(syms []int, a int) float64 {
	var correct [advise.MaxTraces]bool // n < MaxTraces
	for k, v := range syms {
		correct[k] = correctOn(adviceProblem, v)
	}
	return adviceToy.reward(adviceProblem, syms, correct[:len(syms)], a)
}

// decodeContext writes the strategies of context index idx (mixed radix V,
// first candidate most significant) into syms.
func decodeContext(syms []int, idx, V int) {
	for k := len(syms) - 1; k >= 0; k-- {
		syms[k] = idx % V
		idx /= V
	}
}

// encodeContext is the inverse of decodeContext.
func encodeContext(syms []int, V int) int {
	idx := 0
	for _, v := range syms {
		idx = idx*V + v
	}
	return idx
}

// advicePolicy is the policy of the -advice toy: search logits over the V
// strategies and aggregation logits over the actions for each of the V^n
// presented contexts. Both start at 0 (uniform).
type advicePolicy struct {
	search []float64
	agg    [][actions]float64
}

func newAdvicePolicy(n int) *advicePolicy {
	return &advicePolicy{search: make([]float64, adviceToy.V), agg: make([][actions]float64, pow(adviceToy.V, n))}
}

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// rewardModel derives the advisor's "find one" model from the toy at the
// initial (uniform) policy: Correct is the search distribution's
// probability of a correct strategy; Found and Missed are the aggregation
// head's success, sum_a q(a) reward(ctx, a), over every context that
// presents a correct candidate and over every context that does not, for
// every set size 1..maxN. It returns an error if the success is not the
// same across the contexts of either kind (the model would not be exact).
func rewardModel(maxN int) (advise.RewardModel, error) {
	pol := newAdvicePolicy(0)
	p := make([]float64, adviceToy.V)
	softmax(p, pol.search)
	correct := 0.0
	for v, pv := range p {
		if correctOn(adviceProblem, v) {
			correct += pv
		}
	}
	var q [actions]float64
	softmax(q[:], make([]float64, actions)) // every context's head at the start
	found, missed := math.NaN(), math.NaN()
	for n := 1; n <= maxN; n++ {
		syms := make([]int, n)
		for idx := range pow(adviceToy.V, n) {
			decodeContext(syms, idx, adviceToy.V)
			s := 0.0
			for a := range actions {
				s += q[a] * contextReward(syms, a)
			}
			has := slices.ContainsFunc(syms, func(v int) bool { return correctOn(adviceProblem, v) })
			dst := &missed
			if has {
				dst = &found
			}
			if math.IsNaN(*dst) {
				*dst = s
			} else if *dst != s {
				return advise.RewardModel{}, fmt.Errorf("the toy's aggregation success %v in context %v differs from %v: not a find-one model", s, syms, *dst)
			}
		}
	}
	rat := func(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
	return advise.RewardModel{Correct: rat(correct), Found: rat(found), Missed: rat(missed)}, nil
}

// adviceArm is one trained configuration of the -advice mode.
type adviceArm struct {
	name     string
	cand     advise.Candidate
	rank     int // 1-based rank in the advisor's list
	problems int // problems per step
	streams  []adviceStream
	init     adviceInit
	// exact is the run that steps by lr grad J itself: the path without
	// noise, at the checkpoints.
	exact []adviceState
}

// stepTokens returns the arm's tokens per step.
func (a *adviceArm) stepTokens() int64 { return int64(a.problems) * a.cand.Tokens }

// adviceStream is one training stream of an arm.
type adviceStream struct {
	// checkpoints[c] is the state after checkpointSteps[c] steps.
	checkpoints []adviceState
	// signal and noise1 are sums over steps of ||grad J||^2 and of the
	// mean over the step's problems of ||ĝ_q - grad J||^2 (ĝ_q one
	// problem's unbiased-scaled update, grad J exact): their ratio is the
	// per-problem signal-to-noise ratio over training. batchNoise sums
	// ||ĝ - grad J||^2 for the step's mean update ĝ.
	signal, noise1, batchNoise float64
}

// adviceState is what the -advice mode reads off a policy, exactly.
type adviceState struct {
	// Search is the search distribution's probability of the answer
	// (single-trace success, pass@1).
	Search float64
	// Objective is J, the chance that one aggregation output of a set of
	// n traces is right: the arm's own objective, and the success of its
	// own pipeline.
	Objective float64
	// Found is the aggregation head's success on the sets that present a
	// correct candidate, weighted by their probability.
	Found float64
	// Partial is the head's success on the sets that present a correct and
	// a wrong candidate, weighted by their probability (NaN for n = 1).
	Partial float64
	// GradSearch and GradAgg are ||grad_search J|| and ||grad_agg J||.
	GradSearch, GradAgg float64
	// Noise is the mean over the step's problems of ||ĝ_q - grad J||^2,
	// the measured per-problem variance of the unbiased-scaled update
	// (ĝ_q one problem's update); 0 where no step was sampled.
	Noise float64
}

// adviceInit is the signal-to-noise ratio of an arm's update measured at
// the initial policy from adviceInitProblems problems.
type adviceInit struct {
	signal    float64  // ||grad J||^2, exact
	noise     estimate // mean of ||ĝ_q - grad J||^2 over the problems
	predicted float64  // the advisor's Var(g/M) + Var(u/(K a))
}

// adviceResult is a whole -advice run.
type adviceResult struct {
	opt             options
	aopt            adviceOptions
	model           advise.RewardModel
	candidates      int
	skipped         int
	budget          int64 // tokens per problem, the reference's
	stepBudget      int64 // tokens per step, batch * budget
	checkpointSteps []int
	arms            [2]adviceArm // advised, reference
	// eopt and early are the early-progress check's settings and results.
	eopt  earlyOptions
	early []earlyBudget
}

// gradJ computes J and its exact gradient at pol for sets of n: J =
// sum_ctx P(ctx) s(ctx) with P(ctx) = prod_k p(ctx_k) and s(ctx) = sum_a
// q_ctx(a) r(ctx, a); grad_search J = sum_ctx P(ctx) s(ctx) sum_k (e_{ctx_k}
// - p), grad_{agg ctx} J = P(ctx) sum_a q_ctx(a) r(ctx, a) (e_a - q_ctx).
// It returns the state too.
func gradJ(pol *advicePolicy, n int, gs []float64, ga [][actions]float64) adviceState {
	V := adviceToy.V
	p := make([]float64, V)
	softmax(p, pol.search)
	clear(gs)
	syms := make([]int, n)
	var st adviceState
	foundMass, partialMass := 0.0, 0.0
	for idx := range pol.agg {
		decodeContext(syms, idx, V)
		P := 1.0
		for _, v := range syms {
			P *= p[v]
		}
		var q [actions]float64
		softmax(q[:], pol.agg[idx][:])
		s := 0.0
		var r [actions]float64
		for a := range actions {
			r[a] = contextReward(syms, a)
			s += q[a] * r[a]
		}
		st.Objective += P * s
		k := 0
		for _, v := range syms {
			if correctOn(adviceProblem, v) {
				k++
			}
		}
		if k > 0 {
			st.Found += P * s
			foundMass += P
		}
		if k > 0 && k < n {
			st.Partial += P * s
			partialMass += P
		}
		for _, v := range syms {
			addScore(gs, p, v, P*s)
		}
		ga[idx] = [actions]float64{}
		for a := range actions {
			addScore(ga[idx][:], q[:], a, P*q[a]*r[a])
		}
	}
	for v, pv := range p {
		if correctOn(adviceProblem, v) {
			st.Search += pv
		}
	}
	for _, g := range gs {
		st.GradSearch += g * g
	}
	for _, g := range ga {
		for _, x := range g {
			st.GradAgg += x * x
		}
	}
	st.GradSearch, st.GradAgg = math.Sqrt(st.GradSearch), math.Sqrt(st.GradAgg)
	st.Found /= foundMass
	st.Partial /= partialMass
	return st
}

// adviceTrainer samples one arm's rollouts and computes its unbiased-scaled
// updates with the library: Planner.PlanTo for the sets,
// Config.CreditBatch for the credit, Config.RoleWeights for the scaling.
type adviceTrainer struct {
	cfg                  spiral.Config
	planner              *spiral.Planner
	searchMul, aggMul    float64 // RoleWeights(LossOptions{}) multipliers
	plans                spiral.Plans
	keys                 []uint64
	batch                spiral.Batch
	credit               spiral.BatchCredit
	syms, actions, ctxOf []int
	setSyms              []int
	p                    []float64
	q                    [][actions]float64
	// one problem's update: search part and aggregation part (dense over
	// contexts, cleared where touched).
	oneS []float64
	oneA [][actions]float64
	// the mean update over the step's problems, and the exact gradient.
	sumS []float64
	sumA [][actions]float64
	gs   []float64
	ga   [][actions]float64
}

func newAdviceTrainer(cfg spiral.Config) (*adviceTrainer, error) {
	planner, err := cfg.NewPlanner()
	if err != nil {
		return nil, err
	}
	w, err := cfg.RoleWeights(spiral.LossOptions{})
	if err != nil {
		return nil, err
	}
	V, C := adviceToy.V, pow(adviceToy.V, cfg.SetSize)
	return &adviceTrainer{
		cfg: cfg, planner: planner, searchMul: w.SearchMultiplier, aggMul: w.AggregationMultiplier,
		setSyms: make([]int, cfg.SetSize), p: make([]float64, V), q: make([][actions]float64, C),
		oneS: make([]float64, V), oneA: make([][actions]float64, C),
		sumS: make([]float64, V), sumA: make([][actions]float64, C),
		gs: make([]float64, V), ga: make([][actions]float64, C),
	}, nil
}

// sample draws the rollouts of P problems at pol, computes their credit,
// and returns the exact state at pol, ||grad J||^2, and the sum over the
// problems of ||ĝ_q - grad J||^2; the mean update is left in sumS, sumA.
func (tr *adviceTrainer) sample(pol *advicePolicy, P int, rnd *rand.Rand) (st adviceState, signal, sqErr float64, err error) {
	cfg := tr.cfg
	N1, K, n, N2 := cfg.SearchTraces, cfg.Sets, cfg.SetSize, cfg.AggregationsPerSet
	V := adviceToy.V
	st = gradJ(pol, n, tr.gs, tr.ga)
	signal = st.GradSearch*st.GradSearch + st.GradAgg*st.GradAgg
	softmax(tr.p, pol.search)
	for c := range tr.q {
		softmax(tr.q[c][:], pol.agg[c][:])
	}
	tr.syms = slices.Grow(tr.syms[:0], P*N1)[:P*N1]
	tr.actions = slices.Grow(tr.actions[:0], P*K*N2)[:P*K*N2]
	tr.ctxOf = slices.Grow(tr.ctxOf[:0], P*K)[:P*K]
	tr.batch.Rewards = slices.Grow(tr.batch.Rewards[:0], P*K*N2)[:P*K*N2]
	for len(tr.keys) < P {
		tr.keys = append(tr.keys, uint64(len(tr.keys)))
	}
	if err := tr.planner.PlanTo(&tr.plans, rnd.Uint64(), 0, tr.keys[:P]); err != nil {
		return st, 0, 0, err
	}
	tr.batch.Plans = &tr.plans
	for q := range P {
		sp := cfg.Span(q)
		syms := tr.syms[sp.Trace : sp.Trace+sp.Traces]
		for y := range syms {
			syms[y] = draw(rnd, tr.p)
		}
		for i := range K {
			for j := range n {
				tr.setSyms[j] = syms[tr.plans.Member(q, i, j)]
			}
			c := encodeContext(tr.setSyms, V)
			tr.ctxOf[sp.Set+i] = c
			for j := range N2 {
				o := sp.Reward + i*N2 + j
				a := draw(rnd, tr.q[c][:])
				tr.actions[o] = a
				tr.batch.Rewards[o] = contextReward(tr.setSyms, a)
			}
		}
	}
	if err := cfg.CreditBatch(&tr.credit, tr.batch); err != nil {
		return st, 0, 0, err
	}
	clear(tr.sumS)
	clear(tr.sumA)
	for _, sp := range tr.credit.Spans() {
		clear(tr.oneS)
		for y, a := range tr.credit.Search[sp.Trace : sp.Trace+sp.Traces] {
			addScore(tr.oneS, tr.p, tr.syms[sp.Trace+y], a*tr.searchMul)
		}
		ctx := tr.ctxOf[sp.Set : sp.Set+sp.Sets]
		for _, c := range ctx {
			tr.oneA[c] = [actions]float64{}
		}
		for i, c := range ctx {
			for o := sp.Reward + i*N2; o < sp.Reward+(i+1)*N2; o++ {
				addScore(tr.oneA[c][:], tr.q[c][:], tr.actions[o], tr.credit.Aggregation[o]*tr.aggMul)
			}
		}
		// ||ĝ_q - grad J||^2 = ||grad J||^2 + sum over touched entries of
		// (ĝ - g)^2 - g^2.
		e := signal
		for v, x := range tr.oneS {
			d := x - tr.gs[v]
			e += d*d - tr.gs[v]*tr.gs[v]
			tr.sumS[v] += x
		}
		for i, c := range ctx {
			if slices.Contains(ctx[:i], c) {
				continue // a context shown by two sets of the problem
			}
			for a, x := range tr.oneA[c] {
				g := tr.ga[c][a]
				d := x - g
				e += d*d - g*g
				tr.sumA[c][a] += x
			}
		}
		sqErr += e
	}
	b := float64(P)
	st.Noise = sqErr / b
	for v := range tr.sumS {
		tr.sumS[v] /= b
	}
	for c := range tr.sumA {
		for a := range actions {
			tr.sumA[c][a] /= b
		}
	}
	return st, signal, sqErr, nil
}

// batchError returns ||ĝ - grad J||^2 of the step's mean update.
func (tr *adviceTrainer) batchError() float64 {
	e := 0.0
	for v, x := range tr.sumS {
		e += (x - tr.gs[v]) * (x - tr.gs[v])
	}
	for c := range tr.sumA {
		for a, x := range tr.sumA[c] {
			e += (x - tr.ga[c][a]) * (x - tr.ga[c][a])
		}
	}
	return e
}

// runAdvice runs the -advice mode.
func runAdvice(opt options, aopt adviceOptions) (*adviceResult, error) {
	switch {
	case opt.steps < 1 || opt.steps > 1<<20:
		return nil, fmt.Errorf("steps = %d, want 1..%d", opt.steps, 1<<20)
	case opt.batch < 1 || opt.batch > 512:
		return nil, fmt.Errorf("batch = %d, want 1..512 (the reference's problems per step)", opt.batch)
	case !(opt.lr > 0 && opt.lr < 1e6):
		return nil, fmt.Errorf("lr = %v, want a positive number", opt.lr)
	case opt.replicates < 2 || opt.replicates > 1024:
		return nil, fmt.Errorf("replicates = %d, want 2..1024 (standard errors need two streams per arm)", opt.replicates)
	case opt.out == "":
		return nil, errors.New("out: empty")
	case aopt.early.steps < 1 || aopt.early.steps > 1000:
		return nil, fmt.Errorf("advice-early-steps = %d, want 1..1000", aopt.early.steps)
	case aopt.early.streams < 2 || aopt.early.streams > 4096:
		return nil, fmt.Errorf("advice-early-streams = %d, want 2..4096 (standard errors need two streams)", aopt.early.streams)
	case len(aopt.early.budgets) == 0 || len(aopt.early.lrs) == 0 || len(aopt.early.curvatures) == 0:
		return nil, errors.New("advice-budgets, advice-lrs and advice-curvatures: want at least one each")
	}
	for _, lambda := range aopt.early.curvatures {
		if lambda*slices.Min(aopt.early.lrs) >= 2 {
			return nil, fmt.Errorf("advice-lrs: no learning rate below 2/lambda = %g for advice-curvatures' %g", 2/lambda, lambda)
		}
	}
	ref := aopt.reference
	b, err := budget.SPIRAL(ref, aopt.lengths)
	if err != nil {
		return nil, fmt.Errorf("advice-reference: %w", err)
	}
	model, err := rewardModel(advise.MaxTraces - 1)
	if err != nil {
		return nil, err
	}
	res := &adviceResult{opt: opt, aopt: aopt, eopt: aopt.early, model: model, budget: b.Generated()}
	res.stepBudget = int64(opt.batch) * res.budget
	req := advise.Request{
		Budget: res.budget, Count: advise.Generated, Lengths: aopt.lengths, Reward: model,
		Step:      advise.Step{Tokens: res.stepBudget},
		MaxTraces: aopt.maxTraces, MaxSets: aopt.maxSets, MaxAggregations: aopt.maxAggregations,
	}
	// The reference's and the former top's predicted rows are
	// advise.Evaluate's, computed beside the ranking, which gives the top
	// configuration and the reference's rank.
	type evaluated struct {
		cand advise.Candidate
		err  error
	}
	refRow, formerRow := make(chan evaluated, 1), make(chan evaluated, 1)
	go func() {
		c, err := advise.Evaluate(ref, req)
		refRow <- evaluated{c, err}
		c, err = advise.Evaluate(aopt.former, req)
		formerRow <- evaluated{c, err}
	}()
	adv, err := advise.Advise(req)
	refEval, formerEval := <-refRow, <-formerRow
	if refEval.err != nil {
		return nil, fmt.Errorf("advice-reference: %w", refEval.err)
	}
	if formerEval.err != nil {
		return nil, fmt.Errorf("advice-former: %w", formerEval.err)
	}
	if err != nil {
		return nil, err
	}
	res.candidates, res.skipped = len(adv.Candidates), len(adv.Refused)
	refRank := slices.IndexFunc(adv.Candidates, func(c advise.Candidate) bool {
		g := c.Config
		return g.SearchTraces == ref.SearchTraces && g.SetSize == ref.SetSize && g.Sets == ref.Sets &&
			g.AggregationsPerSet == ref.AggregationsPerSet && g.Design == ref.Design
	})
	switch {
	case refRank < 0:
		return nil, fmt.Errorf("advice-reference %d,%d,%d,%d is not among the advisor's %d candidates (%d skipped): raise the advisor's bounds",
			ref.SearchTraces, ref.SetSize, ref.Sets, ref.AggregationsPerSet, len(adv.Candidates), len(adv.Refused))
	case refRank == 0:
		return nil, errors.New("the advisor ranks the reference first: nothing to compare")
	}
	res.arms[0] = adviceArm{name: "advised", cand: adv.Candidates[0], rank: 1}
	res.arms[1] = adviceArm{name: "reference", cand: refEval.cand, rank: refRank + 1}
	for i := range res.arms {
		a := &res.arms[i]
		// The step's tokens divided by the arm's tokens per problem,
		// rounded to the nearest (halves up), at least 1.
		a.problems = int(max(1, (res.stepBudget+a.cand.Tokens/2)/a.cand.Tokens))
		a.streams = make([]adviceStream, opt.replicates)
		pv := new(big.Rat).Add(a.cand.Variance.Total(a.cand.Config.AggregationsPerSet), a.cand.Aggregation.Total())
		a.init.predicted, _ = pv.Float64()
	}
	for s := 0; s <= opt.steps; s += max(1, opt.steps/10) {
		res.checkpointSteps = append(res.checkpointSteps, s)
	}
	if res.checkpointSteps[len(res.checkpointSteps)-1] != opt.steps {
		res.checkpointSteps = append(res.checkpointSteps, opt.steps)
	}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range res.arms {
		a := &res.arms[i]
		a.exact = res.exactPath(a.cand.Config.SetSize)
		wg.Go(func() {
			if err := a.measureInit(stream(opt.seed, "advice/init/"+a.name)); err != nil {
				fail(fmt.Errorf("%s, initial policy: %w", a.name, err))
			}
		})
		for r := range a.streams {
			wg.Go(func() {
				name := fmt.Sprintf("%s#%d", a.name, r)
				if err := res.train(a, &a.streams[r], stream(opt.seed, "advice/train/"+name)); err != nil {
					fail(fmt.Errorf("%s: %w", name, err))
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := res.runEarly(adv, refEval.cand, formerEval.cand); err != nil {
		return nil, err
	}
	return res, nil
}

// measureInit samples the arm's update on adviceInitProblems problems at
// the initial policy, in batches of 256, without training.
func (a *adviceArm) measureInit(rnd *rand.Rand) error {
	tr, err := newAdviceTrainer(a.cand.Config)
	if err != nil {
		return err
	}
	pol := newAdvicePolicy(a.cand.Config.SetSize)
	const chunk = 256
	xs := make([]float64, 0, adviceInitProblems/chunk)
	for range adviceInitProblems / chunk {
		_, signal, sq, err := tr.sample(pol, chunk, rnd)
		if err != nil {
			return err
		}
		a.init.signal = signal
		xs = append(xs, sq/chunk)
	}
	a.init.noise = meanSE(xs)
	return nil
}

// exactPath returns the states at the checkpoints of the run that steps
// by lr grad J for sets of n, from the uniform policy: training without
// noise.
func (res *adviceResult) exactPath(n int) []adviceState {
	pol := newAdvicePolicy(n)
	gs := make([]float64, adviceToy.V)
	ga := make([][actions]float64, len(pol.agg))
	var out []adviceState
	for s := 0; ; s++ {
		st := gradJ(pol, n, gs, ga)
		if slices.Contains(res.checkpointSteps, s) {
			out = append(out, st)
		}
		if s == res.opt.steps {
			return out
		}
		for v, g := range gs {
			pol.search[v] += res.opt.lr * g
		}
		for c := range ga {
			for k, g := range ga[c] {
				pol.agg[c][k] += res.opt.lr * g
			}
		}
	}
}

// train trains one stream of arm a from the uniform policy.
func (res *adviceResult) train(a *adviceArm, sr *adviceStream, rnd *rand.Rand) error {
	tr, err := newAdviceTrainer(a.cand.Config)
	if err != nil {
		return err
	}
	n := a.cand.Config.SetSize
	pol := newAdvicePolicy(n)
	lr := res.opt.lr
	for s := 0; ; s++ {
		// At the last checkpoint the step's rollouts are sampled and
		// measured but not trained on.
		st, signal, sq, err := tr.sample(pol, a.problems, rnd)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
		if slices.Contains(res.checkpointSteps, s) {
			sr.checkpoints = append(sr.checkpoints, st)
		}
		if s == res.opt.steps {
			return nil
		}
		sr.signal += signal
		sr.noise1 += sq / float64(a.problems)
		sr.batchNoise += tr.batchError()
		for v, x := range tr.sumS {
			pol.search[v] += lr * x
		}
		for c := range tr.sumA {
			for k, x := range tr.sumA[c] {
				pol.agg[c][k] += lr * x
			}
		}
	}
}

// over returns the mean and standard error over an arm's streams of get.
func (a *adviceArm) over(get func(adviceStream) float64) estimate {
	xs := make([]float64, len(a.streams))
	for i, s := range a.streams {
		xs[i] = get(s)
	}
	return meanSE(xs)
}

func configString(c spiral.Config) string {
	return fmt.Sprintf("N1 = %d, n = %d, K = %d, N2 = %d, %s", c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, c.Design)
}

// adviceOutcome is an outcome the report compares between the arms.
type adviceOutcome struct {
	key, about string
	get        func(*adviceArm, adviceStream) float64
}

func last(s adviceStream) adviceState { return s.checkpoints[len(s.checkpoints)-1] }

// outcomes lists the compared outcomes; the first is the one the verdict
// is on.
func (res *adviceResult) outcomes() []adviceOutcome {
	return []adviceOutcome{
		{"success", "J, the chance that one aggregation output of the arm's own configuration is right: the trained pipeline's success and the objective both the SNR and training are of", func(_ *adviceArm, s adviceStream) float64 { return last(s).Objective }},
		{"search_success", "the search's single-trace success (pass@1)", func(_ *adviceArm, s adviceStream) float64 { return last(s).Search }},
		{"aggregator_found_success", "the aggregation head's success on the sets that present a correct candidate", func(_ *adviceArm, s adviceStream) float64 { return last(s).Found }},
		{"success_gap_closed", "(J_T - J_0)/(1 - J_0), the share of the objective's shortfall removed", func(_ *adviceArm, s adviceStream) float64 {
			j0 := s.checkpoints[0].Objective
			return (last(s).Objective - j0) / (1 - j0)
		}},
		{"noise_cost", "J of the noiseless run (steps of lr grad J) minus J, averaged over the checkpoints after the start: what the update's noise cost along the run; predicted smaller for advised, so the difference is predicted negative", func(a *adviceArm, s adviceStream) float64 {
			c := 0.0
			for i := 1; i < len(a.exact); i++ {
				c += a.exact[i].Objective - s.checkpoints[i].Objective
			}
			return c / float64(len(a.exact)-1)
		}},
		{"measured_snr_per_mtoken", "sum over steps of ||grad J||^2 over the sum of the per-problem variance of the unbiased-scaled update, per million tokens of one problem", func(a *adviceArm, s adviceStream) float64 { return a.snrPerToken(s) * 1e6 }},
	}
}

// outcome returns the outcome named key.
func (res *adviceResult) outcome(key string) adviceOutcome {
	i := slices.IndexFunc(res.outcomes(), func(o adviceOutcome) bool { return o.key == key })
	return res.outcomes()[i]
}

// snrPerToken is an arm's measured per-problem SNR over training, per
// token of one problem.
func (a *adviceArm) snrPerToken(s adviceStream) float64 {
	return s.signal / s.noise1 / float64(a.cand.Tokens)
}

// snrAt returns each arm's per-problem SNR at checkpoint c measured on the
// step's problems, the mean over the streams of ||grad J||^2 over the mean
// of the measured variance (a ratio of means, not a mean of ratios, which
// few problems per step would bias upwards).
func (res *adviceResult) snrAt(c int) (adv, ref float64) {
	var out [2]float64
	for i := range res.arms {
		a := &res.arms[i]
		sig := a.over(func(s adviceStream) float64 {
			g := s.checkpoints[c]
			return g.GradSearch*g.GradSearch + g.GradAgg*g.GradAgg
		})
		out[i] = sig.mean / a.over(func(s adviceStream) float64 { return s.checkpoints[c].Noise }).mean
	}
	return out[0], out[1]
}

// noiseShare is the share of a stream's squared steps that is noise.
func noiseShare(_ *adviceArm, s adviceStream) float64 {
	return s.batchNoise / (s.batchNoise + s.signal)
}

// verdictOf names the verdict for a difference d (predicted positive).
func verdictOf(d estimate) string {
	z := d.mean / d.se
	switch {
	case z >= adviceZ:
		return "holds"
	case z <= -adviceZ:
		return "does not hold"
	}
	return "inconclusive"
}

// compare returns both arms' estimates of get and their difference,
// advised minus reference.
func (res *adviceResult) compare(get func(*adviceArm, adviceStream) float64) (adv, ref, d estimate) {
	a, r := &res.arms[0], &res.arms[1]
	adv = a.over(func(s adviceStream) float64 { return get(a, s) })
	ref = r.over(func(s adviceStream) float64 { return get(r, s) })
	d, _ = difference(adv, ref)
	return adv, ref, d
}

// at returns a getter of the state at checkpoint c.
func at(c int, f func(adviceState) float64) func(*adviceArm, adviceStream) float64 {
	return func(_ *adviceArm, s adviceStream) float64 { return f(s.checkpoints[c]) }
}

// report is the -advice mode's report: "key: value" lines, then the
// verdict and why lines. It holds nothing that depends on the machine or
// the clock.
func (res *adviceResult) report() string {
	var b strings.Builder
	kv := func(k, f string, args ...any) { fmt.Fprintf(&b, "%s: %s\n", k, fmt.Sprintf(f, args...)) }
	o, ao := res.opt, res.aopt
	adv, ref := &res.arms[0], &res.arms[1]
	b.WriteString("# toytrain -advice: the advisor's top configuration against a reference, trained side by side (see go doc ./examples/toytrain)\n")
	kv("seed", "%d", o.seed)
	kv("toy", "V = %d strategies, every problem the same single problem (answer strategy %d); search logits and, per presented tuple of strategies, aggregation logits over adopt and synthesize, all starting at 0", adviceToy.V, adviceProblem.answer)
	kv("reward_model", "correct = %s, found = %s, missed = %s (derived from the toy at the uniform start: the answer's search probability; the head's success sum_a q(a) reward(ctx, a) over every context with and without a correct candidate, n = 1..%d)",
		res.model.Correct.RatString(), res.model.Found.RatString(), res.model.Missed.RatString(), advise.MaxTraces-1)
	kv("lengths", "%d tokens per search trace, %d per aggregation output, generated tokens counted", ao.lengths.Search, ao.lengths.Aggregation)
	kv("budget_per_problem", "%d tokens (the reference's, budget.SPIRAL)", res.budget)
	kv("advisor", "advise.Advise over N1 <= %d, K <= %d, N2 <= %d at %d tokens per step: %d candidates, %d (N1, n, K, design) refused beyond an exact enumeration's limit",
		cmp.Or(ao.maxTraces, advise.MaxTraces), cmp.Or(ao.maxSets, advise.MaxSets), cmp.Or(ao.maxAggregations, advise.MaxAggregations), res.stepBudget, res.candidates, res.skipped)
	for _, a := range res.arms {
		c := a.cand
		kv(a.name+".config", "%s (rank %d of %d)", configString(c.Config), a.rank, res.candidates)
		at := c.At(advise.Step{Problems: int64(a.problems)})
		kv(a.name+".predicted", "M = %.4f, %d tokens, search SNR %.4f, SNR %.4f, SNR/token %.4g, ||G||^2 %.4f; at %d problems per step rho %.3g, improvement %.4g/L per step (advise.Candidate)",
			c.Constants.MFloat, c.Tokens, ratFloat(c.SearchSNR), ratFloat(c.SNR), c.SNRPerToken, ratFloat(c.Signal), a.problems, ratFloat(at.Rho), ratFloat(at.Improvement))
		kv(a.name+".scaling", "search x %.4f, aggregation x %.4f (Config.RoleWeights(LossOptions{}) multipliers: the update (g/M, u/(K a)) the advisor's SNR is of)",
			c.RoleWeights.SearchMultiplier, c.RoleWeights.AggregationMultiplier)
		kv(a.name+".step", "%d problems, %d tokens", a.problems, a.stepTokens())
	}
	kv("predicted_ratio", "%.4f (advised's improvement per step over the reference's at the problems each trains per step; SNR per token alone predicts %.4f)",
		ratFloat(adv.cand.At(advise.Step{Problems: int64(adv.problems)}).Improvement)/ratFloat(ref.cand.At(advise.Step{Problems: int64(ref.problems)}).Improvement),
		adv.cand.SNRPerToken/ref.cand.SNRPerToken)
	kv("step_tokens", "%d for the step (batch %d x %d); each arm's problems per step are the step's tokens over its tokens per problem, rounded to the nearest; advised uses %+d tokens against the reference",
		res.stepBudget, o.batch, res.budget, adv.stepTokens()-ref.stepTokens())
	kv("training", "%d steps, learning rate %v, %d streams per arm; update: logits += lr * mean over the step's problems of the scaled update", o.steps, o.lr, o.replicates)
	for _, a := range res.arms {
		d := a.init.noise.mean - a.init.predicted
		kv(a.name+".init_variance", "%.5f ± %.5f measured (%d problems at the uniform start), %.5f predicted (z = %.2f); SNR %.4f measured, %.4f predicted",
			a.init.noise.mean, a.init.noise.se, adviceInitProblems, a.init.predicted, d/a.init.noise.se, a.init.signal/a.init.noise.mean, ratFloat(a.cand.SNR))
	}
	var curve []string
	for c, s := range res.checkpointSteps {
		sa, sr, sd := res.compare(at(c, func(x adviceState) float64 { return x.Objective }))
		pa, pr, _ := res.compare(at(c, func(x adviceState) float64 { return x.Search }))
		snrA, snrR := res.snrAt(c)
		z := "n/a"
		if sd.se > 0 {
			z = fmt.Sprintf("%.1f", sd.mean/sd.se)
		}
		kv(fmt.Sprintf("curve.step_%d", s), "%d tokens: success %s vs %s (z = %s; noiseless %.4f vs %.4f), search %s vs %s, measured SNR per problem %.4f vs %.4f (advised vs reference)",
			int64(s)*ref.stepTokens(), fmtEstimate(sa), fmtEstimate(sr), z, adv.exact[c].Objective, ref.exact[c].Objective, fmtEstimate(pa), fmtEstimate(pr), snrA, snrR)
		if s > 0 {
			curve = append(curve, fmt.Sprintf("%d: %s", s, verdictOf(sd)))
		}
	}
	for _, out := range res.outcomes() {
		ea, er, d := res.compare(out.get)
		kv("outcome."+out.key, "advised %s vs reference %s (difference %+.4f ± %.4f, z = %.1f; %s)", fmtEstimate(ea), fmtEstimate(er), d.mean, d.se, d.mean/d.se, out.about)
	}
	na, nr, _ := res.compare(noiseShare)
	kv("noise_share", "advised %s vs reference %s (sum over steps of ||ĝ - grad J||^2 over that plus sum ||grad J||^2: the share of the squared step that is noise)", fmtEstimate(na), fmtEstimate(nr))
	_, _, d := res.compare(res.outcomes()[0].get)
	kv("verdict", "the predicted ordering (advised above reference) %s for success after %d steps of %d tokens (%d in all): difference %+.4f ± %.4f (z = %.1f, %d streams per arm; inconclusive below %d standard errors)",
		verdictOf(d), o.steps, ref.stepTokens(), int64(o.steps)*ref.stepTokens(), d.mean, d.se, d.mean/d.se, o.replicates, adviceZ)
	kv("verdict.curve", "after steps %s", strings.Join(curve, ", "))
	_, _, dn := res.compare(res.outcome("noise_cost").get)
	neg := estimate{-dn.mean, dn.se}
	kv("verdict.noise_cost", "the predicted ordering %s for what the noise cost (less for advised): the reference's noise cost minus advised's %+.4f ± %.4f (z = %.1f)",
		verdictOf(neg), neg.mean, neg.se, neg.mean/neg.se)
	for i, w := range res.why() {
		kv(fmt.Sprintf("why.%d", i+1), "%s", w)
	}
	res.earlyReport(kv)
	return b.String()
}

func ratFloat(x *big.Rat) float64 {
	if x == nil {
		return math.NaN()
	}
	f, _ := x.Float64()
	return f
}

// why explains the outcomes from the numbers.
func (res *adviceResult) why() []string {
	adv, ref := &res.arms[0], &res.arms[1]
	final := len(res.checkpointSteps) - 1
	var why []string
	var initZ []string
	for _, a := range res.arms {
		initZ = append(initZ, fmt.Sprintf("%s z = %.1f", a.name, (a.init.noise.mean-a.init.predicted)/a.init.noise.se))
	}
	why = append(why, fmt.Sprintf("at the start the advisor's variances are what the training code measures (%s): the toy is its model there, and the predicted ratio of improvement per step is %.2f (SNR per token alone: %.2f); at learning rate %v the step is far below the best one, so early progress goes as lr ||grad J||^2, whose ratio is %.2f (the prediction's large-batch limit), and noise costs little",
		strings.Join(initZ, ", "), ratFloat(adv.cand.At(advise.Step{Problems: int64(adv.problems)}).Improvement)/ratFloat(ref.cand.At(advise.Step{Problems: int64(ref.problems)}).Improvement),
		adv.cand.SNRPerToken/ref.cand.SNRPerToken, res.opt.lr, ratFloat(adv.cand.Signal)/ratFloat(ref.cand.Signal)))
	ma, mr, _ := res.compare(func(a *adviceArm, s adviceStream) float64 { return a.snrPerToken(s) })
	fa, fr := res.snrAt(final)
	why = append(why, fmt.Sprintf("the SNR moves with the policy: over training the measured SNR/token ratio is %.2f, and at the end the per-problem SNR is %.4f for advised against %.4f for the reference (ratio per token %.2f)",
		ma.mean/mr.mean, fa, fr, fa/fr*float64(ref.cand.Tokens)/float64(adv.cand.Tokens)))
	gsa, gsr, _ := res.compare(at(final, func(x adviceState) float64 { return x.GradSearch }))
	gaa, gar, _ := res.compare(at(final, func(x adviceState) float64 { return x.GradAgg }))
	s0a, s0r := adv.streams[0].checkpoints[0], ref.streams[0].checkpoints[0]
	why = append(why, fmt.Sprintf("the SNR does not measure the step's size, which at one learning rate is lr ||grad J||: at the start ||grad_search J|| = %.4f and ||grad_agg J|| = %.4f for advised, %.4f and %.4f for the reference; at the end %s and %s against %s and %s",
		s0a.GradSearch, s0a.GradAgg, s0r.GradSearch, s0r.GradAgg, fmtEstimate(gsa), fmtEstimate(gaa), fmtEstimate(gsr), fmtEstimate(gar)))
	na, nr, _ := res.compare(noiseShare)
	why = append(why, fmt.Sprintf("noise is %.2f of the squared step for advised and %.2f for the reference over the run", na.mean, nr.mean))
	ea, er := adv.exact[final].Objective, ref.exact[final].Objective
	_, _, d := res.compare(res.outcomes()[0].get)
	why = append(why, fmt.Sprintf("without noise (steps of lr grad J) advised ends at %.4f against %.4f, a difference of %+.4f; with noise the difference is %+.4f ± %.4f: the gap between the two is the part of the outcome the SNR speaks to",
		ea, er, ea-er, d.mean, d.se))
	var spread [2]float64
	for i := range res.arms {
		a := &res.arms[i]
		for c := 1; c < len(res.checkpointSteps); c++ {
			e := a.over(func(s adviceStream) float64 { return s.checkpoints[c].Objective })
			spread[i] += e.se * e.se * float64(len(a.streams))
		}
		spread[i] = math.Sqrt(spread[i] / float64(len(res.checkpointSteps)-1))
	}
	why = append(why, fmt.Sprintf("the noise shows as spread between the streams more than as a lower mean: the standard deviation of J over the streams (root mean square over the checkpoints after the start) is %.4f for advised and %.4f for the reference, %.1f times more",
		spread[0], spread[1], spread[1]/spread[0]))
	pa, pr, dp := res.compare(res.outcome("search_success").get)
	if dp.mean <= -adviceZ*dp.se {
		qa, qr, _ := res.compare(at(final, func(x adviceState) float64 { return x.Partial }))
		fa, fr, _ := res.compare(at(final, func(x adviceState) float64 { return x.Found }))
		why = append(why, fmt.Sprintf("the search's single-trace success ends lower for advised (%s against %s), which neither objective rewards as such: in this toy d J/d(search logit of the answer) is the covariance, over the presented sets, of the head's success and the number of correct candidates; at the end the reference's head is right %s of the time on sets that mix correct and wrong candidates against %s on all sets with a correct one (advised: %s against %s), so the reference's objective still pays for sets with more correct candidates, and its search gradient stays larger",
			fmtEstimate(pa), fmtEstimate(pr), fmtEstimate(qr), fmtEstimate(fr), fmtEstimate(qa), fmtEstimate(fa)))
	}
	return why
}

// writeAdvice writes the report to opt.out.
func writeAdvice(res *adviceResult) (string, error) {
	if err := os.MkdirAll(res.opt.out, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(res.opt.out, adviceFile)
	return path, os.WriteFile(path, []byte(res.report()), 0o644)
}

// adviceFlags are the -advice mode's flags given as text.
type adviceFlags struct {
	reference, former, budgets, lrs, curvatures string
}

// cliAdvice runs the -advice mode, prints its report and writes it to
// opt.out; it returns the exit status.
func cliAdvice(stdout, stderr io.Writer, opt options, aopt adviceOptions, fl adviceFlags) int {
	ref, err := parseConfig("advice-reference", fl.reference)
	if err == nil {
		aopt.former, err = parseConfig("advice-former", fl.former)
	}
	if err == nil {
		aopt.early.budgets, err = parseInts("advice-budgets", fl.budgets)
	}
	if err == nil {
		aopt.early.lrs, err = parseFloats("advice-lrs", fl.lrs, false)
	}
	if err == nil {
		aopt.early.curvatures, err = parseFloats("advice-curvatures", fl.curvatures, true)
	}
	if err == nil {
		aopt.reference = ref
		var res *adviceResult
		if res, err = runAdvice(opt, aopt); err == nil {
			var path string
			if path, err = writeAdvice(res); err == nil {
				fmt.Fprint(stdout, res.report())
				fmt.Fprintf(stdout, "wrote %s\n", path)
				return 0
			}
		}
	}
	fmt.Fprintln(stderr, "toytrain:", err)
	return 1
}
