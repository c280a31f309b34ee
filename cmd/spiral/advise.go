package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"text/tabwriter"

	"spiral"
	"spiral/advise"
	"spiral/budget"
	"spiral/combin"
)

const adviseHelp = `usage: spiral advise [-table] [-top R] [-step-tokens S | -step-problems B] < request.json

advise reads one JSON object, a token budget and a reward model, and ranks
every configuration (N1, n, K, N2, design) that fits the budget by the
expected improvement per token of one training step at the trainer's step
budget (advise.Advise; docs/findings.md#choosing-a-configuration): with B
problems a step, mean update G and total variance V per problem, and the
best step size on an L-smooth objective, one step improves the objective by
(||G||^2/2L) rho/(1 + rho), rho = B ||G||^2/V, reported in units of 1/L and
divided by the step's tokens. It tends to ||G||^2 SNR/(2L tokens per
problem) when rho is small (tokens limit the step) and to ||G||^2/(2L step
tokens) when rho is large (large batch); both limits, rho, ||G||^2 and the
SNR per token are columns. With "config" it answers that configuration's
row alone, as the ranking would give it, without ranking the space
(advise.Evaluate). In the reward model a search trace is correct with
probability "correct"; an aggregation output is correct with probability
"found" when enough of its n candidates are correct for the rule, else
"missed". The rules: "find-one" (at least one correct, the default), "needs"
(at least "needs" = m correct; set sizes n < m are not explored) and
"majority" (more than n/2 correct; a tie at even n is "missed"). Every
figure is exact on the model's toy problem.

Input (one object, at most 1 MiB):
  {"budget": B,                  tokens per problem, >= 1 (required)
   "count": "generated",         the tokens counted against the budget:
                                 "generated", "prefill" (generated + every
                                 call's prefill) or "cached-prefill"
                                 (generated + prefill with prefix caching)
   "prompt": P,                  prompt tokens per call, >= 0 (default 0)
   "search_length": Ls,          tokens per search trace, >= 1 (required)
   "aggregation_length": La,     tokens per aggregation output, >= 1 (required)
   "correct": "p/q",             chance a search trace is correct (required)
   "found": "p/q",               aggregator success with a correct candidate
   "missed": "p/q",              aggregator success without one (both required)
   "rule": "find-one",           "find-one", "needs" or "majority"
   "order": "index",             the candidates' order in a prompt: "index"
                                 (ascending trace index) or "shuffled"
                                 (uniformly random per set)
   "needs": m,                   with rule "needs": correct candidates needed,
                                 1 <= m <= max_traces - 1 (7 by default);
                                 0 or absent under the other rules
   "max_traces": N1,             bounds, 0 or absent for the defaults: N1 <= 8,
   "max_sets": K,                K <= 8, N2 <= 16; set_sizes restricts n
   "max_aggregations": N2,
   "set_sizes": [n, ...],
   "deploy_set_size": n*,        a deployment objective J*, the rule's for
                                 sets of n* (1 <= n* <= 7): rank by the
                                 improvement of J* instead (0 or absent: none)
   "config": {"search_traces": N1,  one configuration to evaluate instead of
     "set_size": n, "sets": K,      the ranking: 3 <= N1 <= 8, 2 <= n < N1,
     "aggregations_per_set": N2,    2 <= K <= 8, 2 <= N2 <= 16 (all required)
     "design": "uniform"}}          "uniform" (the default) or "balanced";
                                    presented in "order"; budget is then
                                    optional, and the bounds unused
  Probabilities are JSON strings, fractions "p/q" or decimals "0.25" (read
  exactly).

Output (one line, or with -table a table of the same rows):
  {"rule", "needs", "order",          the rule and order read (needs 0 unless
                                      the rule is "needs")
   "step_tokens", "step_problems",    the step budget ranked at (one is 0)
   "candidates": [{"search_traces", "set_size", "sets",
     "aggregations_per_set", "design",
     "needed",                        correct candidates the rule needs at n
     "m", "miss_prob": "p/q",         combin's exact constants
     "m_float", "miss_prob_float",
     "tokens",                        the count against the budget
     "generated", "prefill", "cached_prefill",
     "search_weight", "aggregation_weight",   Config.RoleWeights (within-set
                                      baseline, sum reduction)
     "var_sets", "var_traces", "var_noise",   the terms of Var(g/M)
     "agg_var_outputs", "agg_var_draws",      the terms of Var(u/(K a))
     "search_snr",                    the search part's signal-to-noise
     "snr", "snr_per_token",          the whole update's
     "signal", "variance",            ||G||^2 and V of one problem's update
     "problems", "rho",               B at the step budget, rho = B SNR
     "improvement",                   (||G||^2/2) rho/(1 + rho), units of 1/L
     "improvement_per_token",         over the step's tokens: the ranking
     "token_limited", "large_batch",  its limits as rho -> 0 and
                                      rho -> infinity
     "alignment",                     G . grad J* (null without deploy_set_size)
     "deploy_improvement",            alignment^2/(2 (||G||^2 + V/B)), 1/L units
     "deploy_improvement_per_token"}, ...],   the ranking under J*; best first
   "refused": [{"search_traces", "set_size", "sets", "design",
     "reason"}, ...]}                 combinations beyond an exact
                                      enumeration's limit, not ranked
  With "config" the candidates are its row alone, "refused" is empty and
  the table's rank is "-". A figure that is infinite (rho and
  token_limited when V = 0) or absent (the deploy_ figures without
  deploy_set_size) is written as null, "-" in the table.

Flags:
  -table             write a readable table instead of JSON
  -top R             at most R rows (0: all)
  -step-tokens S     rank at S tokens per step: B = S/tokens per problem
  -step-problems B   rank at B problems per step
  Without either the step is the paper's 256 problems at the budget,
  -step-tokens 256*budget (with "config" and no budget, 256 problems).

At the paper's budget ({"budget": 98304, "search_length": 4096,
"aggregation_length": 4096, ...}) the paper's configuration N1 = 8, n = 4,
K = 4, N2 = 4 has m "1365/1541", miss_prob "88/1541" and 98304 tokens. The
whole space takes seconds; set_sizes and max_sets narrow it, and
"config": {"search_traces": 8, "set_size": 4, "sets": 4,
"aggregations_per_set": 4} answers the paper's row in under a second.

Exit status: 0 on success, 2 for bad flags, a bad request or a read or write
error (the error on stderr).
`

type adviseInput struct {
	Budget            int64         `json:"budget"`
	Count             advise.Tokens `json:"count"`
	Prompt            int           `json:"prompt"`
	SearchLength      int           `json:"search_length"`
	AggregationLength int           `json:"aggregation_length"`
	Correct           *big.Rat      `json:"correct"`
	Found             *big.Rat      `json:"found"`
	Missed            *big.Rat      `json:"missed"`
	Rule              advise.Rule   `json:"rule"`
	Needs             int           `json:"needs"`
	Order             combin.Order  `json:"order"`
	MaxTraces         int           `json:"max_traces"`
	MaxSets           int           `json:"max_sets"`
	MaxAggregations   int           `json:"max_aggregations"`
	SetSizes          []int         `json:"set_sizes"`
	DeploySetSize     int           `json:"deploy_set_size"`
	Config            *adviseConfig `json:"config"`
}

// adviseConfig is the configuration of a request to evaluate alone.
type adviseConfig struct {
	SearchTraces       int           `json:"search_traces"`
	SetSize            int           `json:"set_size"`
	Sets               int           `json:"sets"`
	AggregationsPerSet int           `json:"aggregations_per_set"`
	Design             combin.Design `json:"design"`
}

type adviseRow struct {
	SearchTraces            int      `json:"search_traces"`
	SetSize                 int      `json:"set_size"`
	Sets                    int      `json:"sets"`
	AggregationsPerSet      int      `json:"aggregations_per_set"`
	Design                  string   `json:"design"`
	Needed                  int      `json:"needed"`
	M                       *string  `json:"m"`
	MissProb                *string  `json:"miss_prob"`
	MFloat                  float64  `json:"m_float"`
	MissProbFloat           float64  `json:"miss_prob_float"`
	Tokens                  int64    `json:"tokens"`
	Generated               int64    `json:"generated"`
	Prefill                 int64    `json:"prefill"`
	CachedPrefill           int64    `json:"cached_prefill"`
	SearchWeight            float64  `json:"search_weight"`
	AggregationWeight       float64  `json:"aggregation_weight"`
	VarSets                 float64  `json:"var_sets"`
	VarTraces               float64  `json:"var_traces"`
	VarNoise                float64  `json:"var_noise"`
	AggVarOutputs           float64  `json:"agg_var_outputs"`
	AggVarDraws             float64  `json:"agg_var_draws"`
	SearchSNR               float64  `json:"search_snr"`
	SNR                     float64  `json:"snr"`
	SNRPerToken             float64  `json:"snr_per_token"`
	Signal                  float64  `json:"signal"`
	Variance                float64  `json:"variance"`
	Problems                float64  `json:"problems"`
	Rho                     *float64 `json:"rho"`
	Improvement             float64  `json:"improvement"`
	ImprovementPerTok       float64  `json:"improvement_per_token"`
	TokenLimited            *float64 `json:"token_limited"`
	LargeBatch              float64  `json:"large_batch"`
	Alignment               *float64 `json:"alignment"`
	DeployImprovement       *float64 `json:"deploy_improvement"`
	DeployImprovementPerTok *float64 `json:"deploy_improvement_per_token"`
}

// adviseRefusal is a combination the ranking refused.
type adviseRefusal struct {
	SearchTraces int    `json:"search_traces"`
	SetSize      int    `json:"set_size"`
	Sets         int    `json:"sets"`
	Design       string `json:"design"`
	Reason       string `json:"reason"`
}

type adviseOutput struct {
	Rule         advise.Rule     `json:"rule"`
	Needs        int             `json:"needs"`
	Order        combin.Order    `json:"order"`
	StepTokens   int64           `json:"step_tokens"`
	StepProblems int64           `json:"step_problems"`
	Candidates   []adviseRow     `json:"candidates"`
	Refused      []adviseRefusal `json:"refused"`
}

// adviseRequest decodes the request strictly; the configuration is nil
// unless the request has "config".
func adviseRequest(data []byte) (advise.Request, *spiral.Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var in adviseInput
	if err := dec.Decode(&in); err != nil {
		return advise.Request{}, nil, err
	}
	if dec.More() {
		return advise.Request{}, nil, fmt.Errorf("more than one JSON value")
	}
	type field struct {
		name string
		ok   bool
	}
	required := []field{{"search_length", in.SearchLength != 0}, {"aggregation_length", in.AggregationLength != 0},
		{"correct", in.Correct != nil}, {"found", in.Found != nil}, {"missed", in.Missed != nil}}
	var cfg *spiral.Config
	if c := in.Config; c != nil {
		required = append(required, field{"config.search_traces", c.SearchTraces != 0}, field{"config.set_size", c.SetSize != 0},
			field{"config.sets", c.Sets != 0}, field{"config.aggregations_per_set", c.AggregationsPerSet != 0})
		p := spiral.Paper()
		p.SearchTraces, p.SetSize, p.Sets, p.AggregationsPerSet, p.Design, p.Order = c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, c.Design, in.Order
		cfg = &p
	} else {
		required = append(required, field{"budget", in.Budget != 0})
	}
	for _, f := range required {
		if !f.ok {
			return advise.Request{}, nil, fmt.Errorf("field %q is required", f.name)
		}
	}
	return advise.Request{
		Budget:          in.Budget,
		Count:           in.Count,
		Lengths:         budget.Limits{Prompt: in.Prompt, Search: in.SearchLength, Aggregation: in.AggregationLength},
		Reward:          advise.RewardModel{Correct: in.Correct, Found: in.Found, Missed: in.Missed, Rule: in.Rule, Needs: in.Needs},
		MaxTraces:       in.MaxTraces,
		MaxSets:         in.MaxSets,
		MaxAggregations: in.MaxAggregations,
		SetSizes:        in.SetSizes,
		Order:           in.Order,
		DeploySetSize:   in.DeploySetSize,
	}, cfg, nil
}

func adviseRows(req advise.Request, res advise.Result, top int) (adviseOutput, error) {
	model := req.Reward
	out := adviseOutput{Rule: model.Rule, Needs: model.Needs, Order: req.Order, StepTokens: req.Step.Tokens, StepProblems: req.Step.Problems,
		Candidates: []adviseRow{}, Refused: []adviseRefusal{}}
	for _, r := range res.Refused {
		out.Refused = append(out.Refused, adviseRefusal{r.SearchTraces, r.SetSize, r.Sets, r.Design.String(), r.Reason})
	}
	for i, c := range res.Candidates {
		if top > 0 && i >= top {
			break
		}
		cfg := c.Config
		N2 := cfg.AggregationsPerSet
		f := func(x *big.Rat) float64 { v, _ := x.Float64(); return v }
		orNull := func(x *big.Rat) *float64 {
			if x == nil {
				return nil
			}
			v := f(x)
			return &v
		}
		var snr, searchSNR float64
		if c.SNR != nil {
			snr = f(c.SNR)
		}
		if c.SearchSNR != nil {
			searchSNR = f(c.SearchSNR)
		}
		needed, err := model.Needed(cfg.SetSize)
		if err != nil {
			return adviseOutput{}, err
		}
		out.Candidates = append(out.Candidates, adviseRow{
			SearchTraces: cfg.SearchTraces, SetSize: cfg.SetSize, Sets: cfg.Sets, AggregationsPerSet: N2,
			Design: cfg.Design.String(), Needed: needed, M: ratString(c.Constants.M), MissProb: ratString(c.Constants.MissProb),
			MFloat: c.Constants.MFloat, MissProbFloat: c.Constants.MissProbFloat,
			Tokens: c.Tokens, Generated: c.Budget.Generated(), Prefill: c.Budget.Prefill(), CachedPrefill: c.Budget.CachedPrefill,
			SearchWeight: c.RoleWeights.SearchFloat, AggregationWeight: c.RoleWeights.AggregationFloat,
			VarSets: f(c.Variance.Sets), VarTraces: f(c.Variance.Traces), VarNoise: f(c.Variance.Noise(N2)),
			AggVarOutputs: f(c.Aggregation.Outputs), AggVarDraws: f(c.Aggregation.Draws),
			SearchSNR: searchSNR, SNR: snr, SNRPerToken: c.SNRPerToken,
			Signal: f(c.Signal), Variance: f(c.Noise), Problems: f(c.Problems), Rho: orNull(c.Rho),
			Improvement: f(c.Improvement), ImprovementPerTok: f(c.ImprovementPerToken),
			TokenLimited: orNull(c.TokenLimited), LargeBatch: f(c.LargeBatch),
			Alignment: orNull(c.Alignment), DeployImprovement: orNull(c.DeployImprovement), DeployImprovementPerTok: orNull(c.DeployImprovementPerToken),
		})
	}
	return out, nil
}

// writeAdviseTable writes out as a table: the rows ranked, or with ranked
// false the row of one configuration.
func writeAdviseTable(w io.Writer, out adviseOutput, ranked bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "rule %v", out.Rule)
	if out.Rule == advise.NeedsPieces {
		fmt.Fprintf(tw, " %d", out.Needs)
	}
	fmt.Fprintf(tw, ", order %v, ", out.Order)
	if out.StepProblems > 0 {
		fmt.Fprintf(tw, "step %d problems\n", out.StepProblems)
	} else {
		fmt.Fprintf(tw, "step %d tokens\n", out.StepTokens)
	}
	fmt.Fprintln(tw, "rank\tN1\tn\tK\tN2\tdesign\tneed\tM\tmiss\ttokens\tsearch w\tagg w\tvar sets\tvar traces\tvar noise\tagg var out\tagg var draws\tSNR\tSNR/token\t||G||^2\tB\trho\tgain/token\ttoken limit\tbatch limit\tJ* gain/token\t")
	str := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	num := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.4g", *x)
	}
	for i, r := range out.Candidates {
		rank := "-"
		if ranked {
			rank = strconv.Itoa(i + 1)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%s\t%.4g\t%s\t%.4g\t%s\t\n", rank,
			r.SearchTraces, r.SetSize, r.Sets, r.AggregationsPerSet, r.Design, r.Needed, str(r.M), str(r.MissProb), r.Tokens,
			r.SearchWeight, r.AggregationWeight, r.VarSets, r.VarTraces, r.VarNoise, r.AggVarOutputs, r.AggVarDraws, r.SNR, r.SNRPerToken,
			r.Signal, r.Problems, num(r.Rho), r.ImprovementPerTok, num(r.TokenLimited), r.LargeBatch, num(r.DeployImprovementPerTok))
	}
	if ranked {
		fmt.Fprintf(tw, "%d refused (beyond an exact enumeration's limit)\n", len(out.Refused))
	}
	return tw.Flush()
}

func runAdvise(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("advise", stderr)
	table := fs.Bool("table", false, "")
	top := fs.Int("top", 0, "")
	stepTokens := fs.Int64("step-tokens", 0, "")
	stepProblems := fs.Int64("step-problems", 0, "")
	if code, done := parseFlags(fs, adviseHelp, args, stdout, stderr); done {
		return code
	}
	if *top < 0 {
		return usageError(stderr, "advise", fmt.Sprintf("-top = %d < 0", *top))
	}
	switch {
	case *stepTokens < 0:
		return usageError(stderr, "advise", fmt.Sprintf("-step-tokens = %d < 0", *stepTokens))
	case *stepProblems < 0:
		return usageError(stderr, "advise", fmt.Sprintf("-step-problems = %d < 0", *stepProblems))
	case *stepTokens > 0 && *stepProblems > 0:
		return usageError(stderr, "advise", "-step-tokens and -step-problems: give one of the two")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, MaxLine+1))
	if err != nil {
		fmt.Fprintf(stderr, "spiral advise: reading standard input: %v\n", err)
		return exitUsage
	}
	if len(data) > MaxLine {
		return usageError(stderr, "advise", fmt.Sprintf("the request is longer than %d bytes", MaxLine))
	}
	req, cfg, err := adviseRequest(data)
	if err != nil {
		return usageError(stderr, "advise", "request: "+err.Error())
	}
	req.Step = advise.Step{Tokens: *stepTokens, Problems: *stepProblems}
	req.Step = req.StepBudget()
	var res advise.Result
	if cfg != nil {
		var c advise.Candidate
		c, err = advise.Evaluate(*cfg, req)
		res.Candidates = []advise.Candidate{c}
	} else {
		res, err = advise.Advise(req)
	}
	if err != nil {
		return usageError(stderr, "advise", err.Error())
	}
	out, err := adviseRows(req, res, *top)
	if err != nil {
		return usageError(stderr, "advise", err.Error())
	}
	if *table {
		err = writeAdviseTable(stdout, out, cfg == nil)
	} else {
		var o jsonOut
		_, err = fmt.Fprintf(stdout, "%s\n", o.encode(out))
	}
	if err != nil {
		fmt.Fprintf(stderr, "spiral advise: writing standard output: %v\n", err)
		return exitUsage
	}
	return exitOK
}
