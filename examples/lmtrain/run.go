package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"spiral"
	"spiral/advantage"
	"spiral/budget"
	"spiral/lengthgate"
)

// Options is one run: a base model and every arm trained from it, with one
// seed.
type Options struct {
	Out                         string
	Steps, Problems, Rounds     int
	Warmup, EvalEvery           int
	Test, Samples               int
	SearchGate, AggregationGate int
	Arms                        string
	GRPOPreset                  string
	LearningRate                float64
	Seed                        uint64
	Model                       ModelConfig
	WarmupRows, WarmupAggs      int
	WarmupCorrect, WarmupAgain  float64
	WarmupCheck                 float64
	// Noise is the probability that the tool's check is wrong (Grammar's
	// Noise) in training and evaluation; the warm-up's demonstrations
	// carry true checks, so every setting starts from the same base model.
	Noise float64
	// TrainOnly skips the analysis: the run writes the weights and a
	// summary with the training history, for Reanalyze.
	TrainOnly bool `json:"-"`
}

// DefaultOptions is the documented default run.
func DefaultOptions() Options {
	return Options{
		Out: "../../out/lmtrain", Steps: 60, Problems: 8, Rounds: 3,
		Warmup: 200, EvalEvery: 25, Test: 128, Samples: 32,
		SearchGate: 0, AggregationGate: 0, Arms: "spiral,spiral-paper,grpo-2x,grpo-24", GRPOPreset: "dr-grpo",
		LearningRate: 3e-3, Seed: 1,
		Model:      ModelConfig{Dim: 16, Layers: 2, Heads: 2, Hidden: 32, LearningRate: 3e-3},
		WarmupRows: 32, WarmupAggs: 16, WarmupCorrect: 0.3, WarmupAgain: 0.5, WarmupCheck: 0.3,
	}
}

// Point is one evaluation during training, of the arm's own search and
// aggregator on the test problems.
type Point struct {
	Step      int `json:"step"`
	Generated int `json:"generated_tokens"`
	Prefill   int `json:"prefill_tokens"`
	// Pass1 is the fraction of right search traces, Aggregator that of
	// right aggregation outputs over sets of the arm's own traces,
	// Majority and Oracle a majority vote over the same sets and the
	// fraction of sets holding a right candidate, Entropy the mean answer
	// entropy of a problem's traces in bits.
	Pass1      float64 `json:"pass1"`
	Aggregator float64 `json:"aggregator"`
	Majority   float64 `json:"majority"`
	Oracle     float64 `json:"oracle"`
	Entropy    float64 `json:"entropy_bits"`
}

// ArmResult is one arm's training run.
type ArmResult struct {
	Spec ArmSpec `json:"spec"`
	// Budget is the library's per-problem token ceiling of the arm.
	Budget  budget.Budget `json:"budget"`
	History []Point       `json:"history"`
	// Problems and Kept count the problems generated for and trained on.
	Problems int `json:"problems"`
	Kept     int `json:"kept"`
	Gated    int `json:"gated"`
	// Credit is SPIRAL's credit over the run (nil for GRPO).
	Credit *CreditDiag `json:"credit,omitempty"`
}

// Summary is everything a run of one seed writes.
type Summary struct {
	Options  Options       `json:"options"`
	Config   spiral.Config `json:"spiral_config"`
	Arms     []ArmResult   `json:"arms"`
	Analysis Analysis      `json:"analysis"`
}

// setup is what every part of a run shares: the SPIRAL configuration, the
// grammars and the test problems.
type setup struct {
	cfg     spiral.Config
	one     Grammar // one proposal: SPIRAL's search and every aggregation output
	test    []Problem
	exclude map[int64]bool
	maxLen  int
}

func newSetup(opt Options) (setup, error) {
	cfg := spiral.Paper()
	cfg.Gates = lengthgate.Gates{
		Search:      lengthgate.Gate{Target: opt.SearchGate, Boundary: lengthgate.KeepAtTarget},
		Aggregation: lengthgate.Gate{Target: opt.AggregationGate, Boundary: lengthgate.KeepAtTarget},
	}
	if err := cfg.Validate(); err != nil {
		return setup{}, err
	}
	if opt.Noise < 0 || opt.Noise >= 0.5 || opt.Noise != opt.Noise {
		return setup{}, fmt.Errorf("-noise %v: want 0 <= e < 0.5", opt.Noise)
	}
	s := setup{cfg: cfg, one: Grammar{MaxPairs: 1, Noise: opt.Noise}, exclude: map[int64]bool{}}
	s.test = NewProblems(rand.New(rand.NewPCG(opt.Seed, 2)), opt.Test, nil)
	for _, p := range s.test {
		s.exclude[p.key()] = true
	}
	s.maxLen = max(s.one.aggregateRowLen(cfg.SetSize), Grammar{MaxPairs: 2}.searchRowLen())
	return s, nil
}

// grammar is the grammar of outputs of up to maxPairs proposals, with the
// run's tool noise.
func (s setup) grammar(maxPairs int) Grammar { return Grammar{MaxPairs: maxPairs, Noise: s.one.Noise} }

// armsOf returns the specs named in opt.Arms, in the study's order.
func armsOf(opt Options) ([]ArmSpec, error) {
	names := strings.Split(opt.Arms, ",")
	var arms []ArmSpec
	for _, a := range studyArms {
		if slices.Contains(names, a.Name) {
			arms = append(arms, a)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(studyArms, func(a ArmSpec) bool { return a.Name == n }) {
			return nil, fmt.Errorf("-arms: no arm %q", n)
		}
	}
	return arms, nil
}

// budgetOf is the library's per-problem token ceiling of an arm: SPIRAL's
// 8 search traces and 16 aggregation outputs of one proposal each, or
// GRPO's G traces of MaxPairs proposals.
func budgetOf(s setup, a ArmSpec) (budget.Budget, error) {
	prompt := len(searchPrompt(Problem{}))
	if a.Kind == "spiral" {
		return budget.SPIRAL(s.cfg, budget.Limits{Prompt: prompt, Search: s.one.MaxOutput(), Aggregation: s.one.MaxOutput()})
	}
	// The ceiling counts whole units of SPIRAL's output length: 2x is 8
	// tokens, of which two proposals and the stop token use 7.
	return budget.GRPO{Group: a.Group, MaxLength: a.MaxPairs * s.one.MaxOutput()}.Budget(prompt)
}

// Run warms up the base model, trains every arm from it, analyses the
// trained policies and writes the summary, the plots and the weights
// (base.weights, <arm>.weights) to opt.Out (nothing is written when Out is
// empty). Progress goes to log.
func Run(opt Options, log io.Writer) (*Summary, error) {
	s, err := newSetup(opt)
	if err != nil {
		return nil, err
	}
	specs, err := armsOf(opt)
	if err != nil {
		return nil, err
	}
	var preset advantage.Preset
	if err := preset.UnmarshalText([]byte(opt.GRPOPreset)); err != nil {
		return nil, err
	}
	groupOpts, err := preset.Options()
	if err != nil {
		return nil, err
	}
	if opt.Out != "" {
		if err := os.MkdirAll(opt.Out, 0o755); err != nil {
			return nil, err
		}
	}
	modelCfg := opt.Model
	modelCfg.Seed = int64(opt.Seed)
	base, err := NewPolicy(modelCfg, s.maxLen)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	err = Warmup(base, rand.New(rand.NewPCG(opt.Seed, 1)), WarmupConfig{
		Steps: opt.Warmup, SearchRows: opt.WarmupRows, AggregateRows: opt.WarmupAggs,
		Correct: opt.WarmupCorrect, Again: opt.WarmupAgain, Check: opt.WarmupCheck, SetSize: s.cfg.SetSize,
		Search: Grammar{MaxPairs: 2}, Aggregation: Grammar{MaxPairs: 1},
	}, s.exclude, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "warm-up: %.0f s\n", time.Since(t0).Seconds())
	sum := &Summary{Options: opt, Config: s.cfg}
	policies := []namedPolicy{{Spec: ArmSpec{Name: "base", MaxPairs: 1}, Policy: base}}
	stream := problemStream{seed: opt.Seed, perStep: opt.Problems * opt.Rounds, exclude: s.exclude}
	for _, spec := range specs {
		t0 := time.Now()
		policy, err := base.Clone(opt.LearningRate)
		if err != nil {
			return nil, err
		}
		res, err := train(s, opt, spec, policy, stream, groupOpts, log)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "%s: %.0f s\n", spec.Name, time.Since(t0).Seconds())
		sum.Arms = append(sum.Arms, res)
		policies = append(policies, namedPolicy{Spec: spec, Policy: policy})
	}
	if opt.Out != "" {
		for _, p := range policies {
			if err := p.Policy.Save(filepath.Join(opt.Out, p.Spec.Name+".weights")); err != nil {
				return nil, err
			}
		}
	}
	if opt.TrainOnly {
		if opt.Out != "" {
			if err := writeReport(opt.Out, sum); err != nil {
				return nil, err
			}
		}
		return sum, nil
	}
	t0 = time.Now()
	sum.Analysis, err = Analyze(s, opt, policies)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "analysis: %.0f s\n", time.Since(t0).Seconds())
	if opt.Out != "" {
		if err := writeReport(opt.Out, sum); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// train runs one arm from policy for opt.Steps steps, evaluating it every
// opt.EvalEvery steps.
func train(s setup, opt Options, spec ArmSpec, policy *Policy, stream problemStream, groupOpts advantage.GroupOptions, log io.Writer) (ArmResult, error) {
	type stepper interface {
		step(*rand.Rand, []Problem) (StepStats, error)
	}
	search := s.grammar(spec.MaxPairs)
	var arm stepper
	var err error
	switch spec.Kind {
	case "spiral":
		arm, err = newSpiralArm(s.cfg, policy, search, s.one, opt.Problems, opt.Rounds, spec.Unbiased)
	case "grpo":
		arm = &grpoArm{policy: policy, grammar: search, group: spec.Group, problems: opt.Problems, rounds: opt.Rounds, opts: groupOpts}
	default:
		err = fmt.Errorf("arm %s: kind %q", spec.Name, spec.Kind)
	}
	if err != nil {
		return ArmResult{}, err
	}
	res := ArmResult{Spec: spec}
	if res.Budget, err = budgetOf(s, spec); err != nil {
		return res, err
	}
	// Every arm draws its samples from the same streams.
	armRng := rand.New(rand.NewPCG(opt.Seed, 10))
	evalRng := func(step int) *rand.Rand { return rand.New(rand.NewPCG(opt.Seed, 100+uint64(step))) }
	ev, err := evalOwn(policy, evalRng(0), s, search, opt.Samples)
	if err != nil {
		return res, err
	}
	res.History = append(res.History, ev)
	fmt.Fprintf(log, "%-12s base model: pass@1 %.3f  aggregator %.3f  majority %.3f  oracle %.3f  entropy %.2f bits\n",
		spec.Name, ev.Pass1, ev.Aggregator, ev.Majority, ev.Oracle, ev.Entropy)
	var gen, pre int
	for step := 1; step <= opt.Steps; step++ {
		st, err := arm.step(armRng, stream.step(step))
		if err != nil {
			return res, fmt.Errorf("%s step %d: %w", spec.Name, step, err)
		}
		gen += st.Generated
		pre += st.Prefill
		res.Problems += st.Problems
		res.Kept += st.Kept
		res.Gated += st.Gated
		fmt.Fprintf(log, "%-12s step %3d/%d  tokens %7d  search %.2f  agg %.2f  kept %d/%d\n",
			spec.Name, step, opt.Steps, gen, st.SearchReward, st.AggregationReward, st.Kept, st.Problems)
		if step%opt.EvalEvery == 0 || step == opt.Steps {
			ev, err := evalOwn(policy, evalRng(step), s, search, opt.Samples)
			if err != nil {
				return res, err
			}
			ev.Step, ev.Generated, ev.Prefill = step, gen, pre
			res.History = append(res.History, ev)
			fmt.Fprintf(log, "%-12s eval at step %d: pass@1 %.3f  aggregator %.3f  majority %.3f  oracle %.3f  entropy %.2f bits\n",
				spec.Name, step, ev.Pass1, ev.Aggregator, ev.Majority, ev.Oracle, ev.Entropy)
		}
	}
	if sa, ok := arm.(*spiralArm); ok {
		res.Credit = &sa.diag
	}
	return res, nil
}
