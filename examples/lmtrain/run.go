package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"spiral"
	"spiral/advantage"
	"spiral/budget"
	"spiral/lengthgate"
	"spiral/rsa"
)

// Options is one run of both arms.
type Options struct {
	Out                          string
	Steps, Problems, Rounds      int
	Warmup, EvalEvery            int
	Test, Samples                int
	SearchGate, AggregationGate  int
	Arms                         string
	Unbiased                     bool
	GRPOPreset                   string
	LearningRate                 float64
	Seed                         uint64
	Model                        ModelConfig
	WarmupRows, WarmupAggregates int
	WarmupCorrect                float64
	SearchWork                   int // working tokens allowed in a SPIRAL output
	RSASteps                     int // T of the RSA evaluation of the final models (0: none)
}

// DefaultOptions is the documented default run.
func DefaultOptions() Options {
	return Options{
		Out: "lmtrain-out", Steps: 60, Problems: 8, Rounds: 3,
		Warmup: 150, EvalEvery: 15, Test: 64, Samples: 64,
		SearchGate: 0, AggregationGate: 3, Arms: "spiral,grpo", Unbiased: true, GRPOPreset: "dr-grpo",
		LearningRate: 3e-3, Seed: 1,
		Model:      ModelConfig{Dim: 16, Layers: 1, Heads: 2, Hidden: 32, LearningRate: 3e-3},
		WarmupRows: 64, WarmupAggregates: 32, WarmupCorrect: 0.4,
		SearchWork: 2, RSASteps: 4,
	}
}

// Point is one evaluation during training.
type Point struct {
	Step      int        `json:"step"`
	Generated int        `json:"generated_tokens"`
	Prefill   int        `json:"prefill_tokens"`
	Eval      EvalResult `json:"eval"`
}

// ArmResult is one arm's run.
type ArmResult struct {
	Name    string  `json:"name"`
	Grammar Grammar `json:"grammar"`
	// Budget is the library's per-problem token ceiling of the arm.
	Budget  budget.Budget `json:"budget"`
	History []Point       `json:"history"`
	// Problems and Kept count the problems generated for and trained on.
	Problems int     `json:"problems"`
	Kept     int     `json:"kept"`
	Gated    int     `json:"gated"`
	Seconds  float64 `json:"seconds"`
}

// Summary is everything a run writes.
type Summary struct {
	Options       Options       `json:"options"`
	Config        spiral.Config `json:"spiral_config"`
	WarmupSeconds float64       `json:"warmup_seconds"`
	Arms          []ArmResult   `json:"arms"`
	Seconds       float64       `json:"seconds"`
}

// Run warms up the base model, trains both arms from it, evaluates them and
// writes the summary and plots to opt.Out (nothing is written when Out is
// empty). Progress goes to log.
func Run(opt Options, log io.Writer) (*Summary, error) {
	start := time.Now()
	cfg := spiral.Paper()
	cfg.Gates = lengthgate.Gates{
		Search:      lengthgate.Gate{Target: opt.SearchGate, Boundary: lengthgate.KeepAtTarget},
		Aggregation: lengthgate.Gate{Target: opt.AggregationGate, Boundary: lengthgate.KeepAtTarget},
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	spiralGrammar := Grammar{MaxWork: opt.SearchWork}
	prompt := ProblemDigits + 2
	limits := budget.Limits{Prompt: prompt, Search: spiralGrammar.MaxOutput(), Aggregation: spiralGrammar.MaxOutput()}
	spiralBudget, err := budget.SPIRAL(cfg, limits)
	if err != nil {
		return nil, err
	}
	// GRPO: 12 traces per problem at the same generated-token ceiling.
	grpo := budget.GRPO{Group: 12, MaxLength: int(spiralBudget.Generated() / 12)}
	grpoBudget, err := grpo.Budget(prompt)
	if err != nil {
		return nil, err
	}
	grpoGrammar := Grammar{MaxWork: grpo.MaxLength - 3}
	var preset advantage.Preset
	if err := preset.UnmarshalText([]byte(opt.GRPOPreset)); err != nil {
		return nil, err
	}
	groupOpts, err := preset.Options()
	if err != nil {
		return nil, err
	}

	rng := rand.New(rand.NewPCG(opt.Seed, 1))
	test := NewProblems(rand.New(rand.NewPCG(opt.Seed, 2)), opt.Test)
	modelCfg := opt.Model
	modelCfg.Seed = int64(opt.Seed)
	maxLen := ProblemDigits + 2 + cfg.SetSize*grpoGrammar.MaxOutput() + grpoGrammar.MaxOutput()
	base, err := NewPolicy(modelCfg, maxLen)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Options: opt, Config: cfg}
	t0 := time.Now()
	err = Warmup(base, rng, WarmupConfig{
		Steps: opt.Warmup, SearchRows: opt.WarmupRows, AggregateRows: opt.WarmupAggregates,
		Correct: opt.WarmupCorrect, SetSize: cfg.SetSize, Grammar: spiralGrammar,
	}, log)
	if err != nil {
		return nil, err
	}
	sum.WarmupSeconds = time.Since(t0).Seconds()
	evalCfg := EvalConfig{Samples: opt.Samples, Sets: 4, SetSize: cfg.SetSize}
	// RSA (P = 8, n = 4 as the paper's evaluation, T = opt.RSASteps) on the
	// base model and on each arm's final model.
	finalCfg := evalCfg
	finalCfg.RSA = rsa.Paper()
	finalCfg.RSA.Steps = opt.RSASteps

	type stepper interface {
		step(*rand.Rand, problemStream) (StepStats, error)
	}
	arms := []struct {
		name    string
		grammar Grammar
		budget  budget.Budget
		make    func(*Policy) (stepper, error)
	}{
		{"spiral", spiralGrammar, spiralBudget, func(p *Policy) (stepper, error) {
			return newSpiralArm(cfg, p, spiralGrammar, opt.Problems, opt.Rounds, opt.Unbiased)
		}},
		{"grpo", grpoGrammar, grpoBudget, func(p *Policy) (stepper, error) {
			return &grpoArm{policy: p, grammar: grpoGrammar, group: grpo.Group, problems: opt.Problems, rounds: opt.Rounds, opts: groupOpts}, nil
		}},
	}
	for _, a := range arms {
		if !slices.Contains(strings.Split(opt.Arms, ","), a.name) {
			continue
		}
		t0 := time.Now()
		policy, err := base.Clone(opt.LearningRate)
		if err != nil {
			return nil, err
		}
		arm, err := a.make(policy)
		if err != nil {
			return nil, err
		}
		// Both arms see the same training problems and evaluation draws.
		armRng := rand.New(rand.NewPCG(opt.Seed, 10))
		stream := problemStream{r: rand.New(rand.NewPCG(opt.Seed, 11))}
		evalRng := func(step int) *rand.Rand { return rand.New(rand.NewPCG(opt.Seed, 100+uint64(step))) }
		res := ArmResult{Name: a.name, Grammar: a.grammar, Budget: a.budget}
		ev, err := Evaluate(policy, evalRng(0), test, a.grammar, finalCfg)
		if err != nil {
			return nil, err
		}
		res.History = append(res.History, Point{Eval: ev})
		var gen, pre int
		for s := 1; s <= opt.Steps; s++ {
			ts := time.Now()
			st, err := arm.step(armRng, stream)
			if err != nil {
				return nil, fmt.Errorf("%s step %d: %w", a.name, s, err)
			}
			gen += st.Generated
			pre += st.Prefill
			res.Problems += st.Problems
			res.Kept += st.Kept
			res.Gated += st.Gated
			fmt.Fprintf(log, "%-6s step %3d/%d  tokens %7d  search %.2f  agg %.2f  kept %d/%d  gated %2d  %.1fs\n",
				a.name, s, opt.Steps, gen, st.SearchReward, st.AggregationReward, st.Kept, st.Problems, st.Gated, time.Since(ts).Seconds())
			if s%opt.EvalEvery == 0 || s == opt.Steps {
				ec := evalCfg
				if s == opt.Steps {
					ec = finalCfg
				}
				ev, err := Evaluate(policy, evalRng(s), test, a.grammar, ec)
				if err != nil {
					return nil, err
				}
				res.History = append(res.History, Point{Step: s, Generated: gen, Prefill: pre, Eval: ev})
				fmt.Fprintf(log, "%-6s eval at step %d: pass@1 %.3f  pass@%d %.3f  aggregator %.3f  majority %.3f  entropy %.2f bits\n",
					a.name, s, ev.Coverage[0], len(ev.Coverage), ev.Coverage[len(ev.Coverage)-1], ev.Aggregator, ev.Majority, ev.AnswerEntropy)
			}
		}
		res.Seconds = time.Since(t0).Seconds()
		sum.Arms = append(sum.Arms, res)
	}
	sum.Seconds = time.Since(start).Seconds()
	if opt.Out != "" {
		if err := os.MkdirAll(opt.Out, 0o755); err != nil {
			return nil, err
		}
		if err := writeReport(opt.Out, sum); err != nil {
			return nil, err
		}
	}
	return sum, nil
}
