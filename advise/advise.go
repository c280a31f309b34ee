package advise

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"spiral"
	"spiral/budget"
	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/inputerr"
)

// Bounds of the search space Advise explores.
const (
	// MaxTraces bounds N1: the exact engine enumerates 2^N1 outcomes.
	MaxTraces = 8
	// MaxSets bounds K.
	MaxSets = 8
	// MaxAggregations bounds N2.
	MaxAggregations = 16
)

// maxFamilySets bounds the sets T = C(N1, n) of a family Advise evaluates
// (the aggregation term pairs every two of them).
const maxFamilySets = 1024

// Tokens says which tokens of budget.Budget count against Request.Budget.
type Tokens int

const (
	// Generated counts generated tokens only, as the paper matches them.
	Generated Tokens = iota
	// WithPrefill adds the prefill of every call (budget.Budget.Prefill).
	WithPrefill
	// WithCachedPrefill adds the prefill under prefix caching
	// (budget.Budget.CachedPrefill).
	WithCachedPrefill
)

var tokensNames = []string{"generated", "prefill", "cached-prefill"}

// String returns "generated", "prefill" or "cached-prefill".
func (t Tokens) String() string {
	if t < 0 || int(t) >= len(tokensNames) {
		return fmt.Sprintf("Tokens(%d)", int(t))
	}
	return tokensNames[t]
}

// MarshalText returns t.String(); it fails for an undefined value.
func (t Tokens) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(tokensNames) {
		return nil, inputerr.Undefined("advise", FieldCount, int(t), "Tokens")
	}
	return []byte(t.String()), nil
}

// UnmarshalText parses the names String returns.
func (t *Tokens) UnmarshalText(b []byte) error {
	if i := slices.Index(tokensNames, string(b)); i >= 0 {
		*t = Tokens(i)
		return nil
	}
	return inputerr.Name("advise", FieldCount, b, tokensNames...)
}

// PaperProblems is the paper's batch: problems per training step, the
// default Request.Step.
const PaperProblems = 256

// Step is the trainer's budget for one step, in tokens or in problems: at
// most one of the two is nonzero. Under Tokens every configuration gets
// the same tokens per step and so B = Tokens/(its tokens per problem)
// problems, a rational number; under Problems every configuration gets B =
// Problems. The zero Step is the paper's batch at the request's budget:
// PaperProblems times Request.Budget tokens per step (PaperProblems
// problems per step where Budget is 0, in Evaluate).
type Step struct {
	Tokens   int64 `json:"tokens,omitempty"`
	Problems int64 `json:"problems,omitempty"`
}

// problems returns B for a configuration of t tokens per problem, and the
// tokens of its step.
func (s Step) problems(t int64) (B, tokens *big.Rat) {
	switch {
	case s.Tokens > 0:
		return big.NewRat(s.Tokens, t), big.NewRat(s.Tokens, 1)
	}
	P := cmp.Or(s.Problems, PaperProblems)
	return big.NewRat(P, 1), new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(P), big.NewInt(t)))
}

// StepBudget returns the step budget req ranks at: req.Step, or for the
// zero Step the paper's batch at the budget, PaperProblems times Budget
// tokens per step (PaperProblems problems per step if Budget is 0 or that
// many tokens overflow).
func (req Request) StepBudget() Step {
	switch {
	case req.Step != (Step{}):
		return req.Step
	case req.Budget > 0 && req.Budget <= math.MaxInt64/PaperProblems:
		return Step{Tokens: PaperProblems * req.Budget}
	}
	return Step{Problems: PaperProblems}
}

// Request is what Advise ranks configurations for.
type Request struct {
	// Budget is the tokens per problem a configuration may use, >= 1.
	Budget int64 `json:"budget"`
	// Count is which tokens count against Budget.
	Count Tokens `json:"count"`
	// Lengths are the expected prompt, search and aggregation lengths in
	// tokens; Search and Aggregation >= 1, Prompt >= 0.
	Lengths budget.Limits `json:"lengths"`
	// Reward is the reward model.
	Reward RewardModel `json:"reward"`
	// Step is the trainer's step budget, at which the candidates are
	// ranked by expected improvement per token (Candidate.Improvement).
	Step Step `json:"step"`
	// DeploySetSize, when not 0, is the set size n* of a deployment
	// objective J*, the reward model's objective for sets of n* in
	// [1, MaxTraces - 1]: the candidates are then ranked by the expected
	// improvement of J* per token (Candidate.DeployImprovementPerToken).
	DeploySetSize int `json:"deploy_set_size,omitempty"`
	// MaxTraces bounds N1 (0: the package's MaxTraces); MaxSets bounds K
	// (0: MaxSets); MaxAggregations bounds N2 (0: MaxAggregations; 1
	// leaves no candidate, since N2 >= 2).
	MaxTraces       int `json:"max_traces,omitempty"`
	MaxSets         int `json:"max_sets,omitempty"`
	MaxAggregations int `json:"max_aggregations,omitempty"`
	// SetSizes, when not empty, restricts n to the listed sizes (each in
	// [2, MaxTraces-1], and >= Reward.Needs under NeedsPieces); else every
	// n with max(2, m) <= n < N1 is explored, m = Reward.Needs under
	// NeedsPieces and 1 otherwise.
	SetSizes []int `json:"set_sizes,omitempty"`
	// Order is how each set's candidates are presented to the aggregator:
	// combin.IndexOrder (the zero value, ascending trace index) or
	// combin.Shuffled (a uniformly random order per set). It changes only
	// the chance that two sets present the same context, and so the
	// aggregation update's Draws term.
	Order combin.Order `json:"order,omitempty"`
}

// Candidate is one ranked configuration.
type Candidate struct {
	// Config is the configuration (subsets, Request.Order, no gates).
	Config spiral.Config
	// Constants are combin's constants of the family and design: M and
	// the miss probability of a trace.
	Constants combin.Constants
	// RoleWeights are Config.RoleWeights(spiral.LossOptions{}) (a sum,
	// under the configuration's aggregation baseline): the multipliers that
	// make the update unbiased.
	RoleWeights spiral.RoleWeights
	// Budget is the token accounting of one problem and Tokens the count
	// that Request.Count selects from it.
	Budget budget.Budget
	Tokens int64
	// Variance is the decomposition of Var(g/M) under the reward model,
	// and Aggregation that of Var(u/(K a)) at this N2.
	Variance    *SearchVariance
	Aggregation *AggregationVariance
	// SNR is the signal-to-noise ratio of one problem's unbiased-scaled
	// update (g/M, u/(K a)), whose two parts act on separate parameters:
	//
	//	SNR = (||grad_search J||^2 + ||grad_agg J||^2)/(Var(g/M) + Var(u/(K a))),
	//
	// and SNRPerToken = SNR/Tokens: the signal-to-noise ratio of a batch of
	// B problems is B SNR, and a token budget buys B proportional to
	// 1/Tokens. SearchSNR is the search part's alone.
	SNR, SearchSNR *big.Rat
	SNRPerToken    float64
	// Signal is ||G||^2 = ||grad_search J||^2 + ||grad_agg J||^2, the
	// squared norm of the update's mean, and Noise its total variance V =
	// Var(g/M) + Var(u/(K a)) per problem: SNR = Signal/Noise.
	Signal, Noise *big.Rat
	// Problems is B, the problems of one step at Request.Step, and
	// StepTokens = B Tokens the step's tokens.
	Problems, StepTokens *big.Rat
	// Rho = B SNR: below 1 the step is limited by its tokens (noise
	// dominates), above 1 by the curvature (large batch). Nil if Noise is
	// 0 (rho infinite).
	Rho *big.Rat
	// Improvement is the expected improvement of J in one step of the mean
	// update over B problems, with the best step size on an L-smooth
	// objective, in units of 1/L (docs/findings.md#choosing-a-configuration):
	//
	//	Improvement = Signal/2 * rho/(1 + rho),
	//
	// and ImprovementPerToken = Improvement/StepTokens, the ranking's key.
	// It lies between its two limits: TokenLimited = Signal SNR/(2 Tokens),
	// which it tends to as rho -> 0 (ImprovementPerToken = TokenLimited/(1
	// + rho); nil if Noise is 0), and LargeBatch = Signal/(2 StepTokens), as
	// rho -> infinity (ImprovementPerToken = LargeBatch rho/(1 + rho)).
	Improvement, ImprovementPerToken *big.Rat
	TokenLimited, LargeBatch         *big.Rat
	// Alignment is G . grad J*, the update's mean along the gradient of
	// the deployment objective J* (Request.DeploySetSize): the search
	// parts' product, plus ||grad_agg J||^2 when n = n* (the aggregator's
	// parameters are those of J*; for another n they are not J*'s, and add
	// nothing). DeployImprovement = Alignment^2/(2 (Signal + Noise/B)), in
	// units of 1/L, is the expected improvement of J* in one step at the
	// step size best for J* (0 if Alignment <= 0), and
	// DeployImprovementPerToken = DeployImprovement/StepTokens, the
	// ranking's key under a deployment objective. All three are nil
	// without one.
	Alignment, DeployImprovement, DeployImprovementPerToken *big.Rat
}

// rank returns the key Advise ranks c by: DeployImprovementPerToken under a
// deployment objective, else ImprovementPerToken.
func (c Candidate) rank() *big.Rat {
	if c.DeployImprovementPerToken != nil {
		return c.DeployImprovementPerToken
	}
	return c.ImprovementPerToken
}

// Result is Advise's answer.
type Result struct {
	// Candidates are the feasible configurations, best ImprovementPerToken
	// first (ties: fewer Tokens first).
	Candidates []Candidate
	// Refused are the (N1, n, K, design) combinations within the budget
	// that were not evaluated, each with the enumeration limit it exceeds:
	// none under the package's bounds.
	Refused []Refusal
}

// Refusal is an (N1, n, K, design) of the space Advise explores that it
// does not evaluate, and why: its exact evaluation would exceed an
// enumeration limit (estimator.UniformSets' and BalancedClasses'). Under
// the package's bounds no combination is refused: the uniform design is
// in closed form, and the balanced design's classes take at most a few
// thousand selections (docs/findings.md#choosing-a-configuration).
type Refusal struct {
	SearchTraces, SetSize, Sets int
	Design                      combin.Design
	// Reason is the limit exceeded, in the words of the code that refused.
	Reason string
}

// Advise ranks every configuration within the request's budget and the
// bounds (subsets of size 2 <= n < N1 with n >= Reward.Needs, 3 <= N1 <=
// MaxTraces, 2 <= K <= min(C(N1, n), MaxSets), 2 <= N2 <= MaxAggregations,
// uniform and balanced designs; N2 = 1 is left out because its within-set
// aggregation advantage is identically 0, so it trains no aggregator) by
// the expected improvement per token of one step of the unbiased-scaled
// update (g/M, u/(K a)) at req.StepBudget() (Candidate.Improvement) on the
// reward model's toy problem. Each (N1, n, K, design) is evaluated once,
// exactly (DecomposeSearch, and DecomposeAggregation's terms; the uniform
// design through closed forms, the balanced design through its law's
// classes up to relabelling, estimator.BalancedClasses), and every N2
// follows from them; what an exact enumeration cannot reach would be
// listed in Result.Refused (nothing within the package's bounds). The cost
// is that of a few hundred evaluations: a few seconds for the whole space
// at a budget of 24 calls, under one for the paper's N1 = 8, n = 4, K <=
// 4. It
// returns an error naming the field of req that is out of
// range (Reward.Needs outside [1, N1 - 1] for the largest N1 explored, a
// listed set size below it, or a nonzero Needs under another rule among
// them), or if the reward model gives no signal (Found = Missed, or Correct
// 0 or 1).
func Advise(req Request) (Result, error) {
	if err := req.check(); err != nil {
		return Result{}, err
	}
	maxN1 := cmp.Or(req.MaxTraces, MaxTraces)
	maxK := cmp.Or(req.MaxSets, MaxSets)
	maxN2 := cmp.Or(req.MaxAggregations, MaxAggregations)
	c, err := req.Reward.policy()
	if err != nil {
		return Result{}, err
	}
	var res Result
	shared := map[int]*sizeTerms{} // by set size n, for every (N1, K, design) of this call
	for N1 := 3; N1 <= maxN1; N1++ {
		for n := max(2, req.Reward.Needs); n < N1; n++ {
			if len(req.SetSizes) > 0 && !slices.Contains(req.SetSizes, n) {
				continue
			}
			f, err := combin.Subsets(N1, n)
			if err != nil {
				return Result{}, err
			}
			T, _ := f.Count64()
			for K := 2; K <= maxK && uint64(K) <= T; K++ {
				for _, design := range []combin.Design{combin.Uniform, combin.Balanced} {
					cands := req.feasible(N1, n, K, design, maxN2)
					if len(cands) == 0 {
						continue
					}
					if err := req.complete(cands, c, shared); err != nil {
						if errors.Is(err, inputerr.ErrTooCostly) {
							res.Refused = append(res.Refused, Refusal{N1, n, K, design, err.Error()})
							continue
						}
						return Result{}, err
					}
					res.Candidates = append(res.Candidates, cands...)
				}
			}
		}
	}
	sortCandidates(res.Candidates)
	return res, nil
}

// sortCandidates orders cs as Advise ranks them: best rank key first, ties
// by fewer tokens, else in their order.
func sortCandidates(cs []Candidate) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		return cmp.Or(b.rank().Cmp(a.rank()), cmp.Compare(a.Tokens, b.Tokens))
	})
}

// At returns r ranked at the step budget s instead of the one it was
// ranked at: every candidate's Candidate.At(s), in Advise's order (the
// refusals unchanged). Nothing is evaluated again.
func (r Result) At(s Step) Result {
	out := Result{Candidates: make([]Candidate, len(r.Candidates)), Refused: r.Refused}
	for i, c := range r.Candidates {
		out.Candidates[i] = c.At(s)
	}
	sortCandidates(out.Candidates)
	return out
}

// Evaluate returns the Candidate that Advise reports for the configuration
// c under req's token count, lengths, reward model and order, computed by
// the same code as Advise's candidates: M and the miss probability, the role
// weights, the tokens, every variance term, the SNR and SNR/token, and the
// step figures at req.StepBudget(). It costs one evaluation of c's (N1, n,
// K, design), where Advise makes one for each of the few hundred in its
// space. Evaluate ignores the fields that only bound Advise's search:
// Budget (c's tokens may exceed it; it sets only the zero Step's tokens per
// step), MaxTraces, MaxSets, MaxAggregations and SetSizes. It returns an error naming the field and value of c that
// Advise does not evaluate (c may have either aggregation baseline: its
// row differs only in RoleWeights): an invalid c (Config.Validate), tuples
// (Ordered), a length gate, overlong punishment or reward range, an Order
// other than req.Order, N1 not in [3, MaxTraces], n not in [2, N1 - 1], K
// not in [2, MaxSets], N2 not in [2, MaxAggregations], n below
// Reward.Needs under NeedsPieces, or an evaluation beyond an exact
// enumeration's limit (what Advise lists in Result.Refused); and Advise's
// errors for req's count, order, step, lengths and reward model.
func Evaluate(c spiral.Config, req Request) (Candidate, error) {
	if err := req.checkModel(); err != nil {
		return Candidate{}, err
	}
	if err := req.checkConfig(c); err != nil {
		return Candidate{}, err
	}
	pol, err := req.Reward.policy()
	if err != nil {
		return Candidate{}, err
	}
	cand, err := req.candidate(c)
	if err != nil {
		return Candidate{}, fmt.Errorf("advise: config %s: %w", sizes(c), err)
	}
	cands := []Candidate{cand}
	if err := req.complete(cands, pol, map[int]*sizeTerms{}); err != nil {
		if errors.Is(err, inputerr.ErrTooCostly) {
			return Candidate{}, inputerr.New("advise", "", InputError{Field: FieldConfig, Problem: -1, Set: -1, Output: -1,
				Err: fmt.Errorf("%s: %w, which Advise lists in Result.Refused", sizes(c), err)})
		}
		return Candidate{}, err
	}
	return cands[0], nil
}

// sizes names c's sizes and design in the JSON names of spiral.Config.
func sizes(c spiral.Config) string {
	return fmt.Sprintf("search_traces = %d, set_size = %d, sets = %d, aggregations_per_set = %d, design = %v",
		c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, c.Design)
}

// check checks req for Advise: the search's bounds, then the fields
// checkModel checks, then Reward.Needs against the set sizes explored.
func (req Request) check() error {
	if req.Budget < 1 {
		return argError(FieldBudget, -1, int(req.Budget), "%d < 1", req.Budget)
	}
	for _, b := range []struct {
		name      string
		val, most int
	}{{FieldMaxTraces, req.MaxTraces, MaxTraces}, {FieldMaxSets, req.MaxSets, MaxSets}, {FieldMaxAggregations, req.MaxAggregations, MaxAggregations}} {
		if b.val < 0 || b.val > b.most {
			return argError(b.name, -1, b.val, "%d outside [0, %d]", b.val, b.most)
		}
	}
	if len(req.SetSizes) > MaxTraces {
		return argError(FieldSetSizes, -1, len(req.SetSizes), "len = %d > %d", len(req.SetSizes), MaxTraces)
	}
	for i, n := range req.SetSizes {
		if n < 2 || n >= MaxTraces {
			return argError(FieldSetSizes, i, n, "outside [2, %d]", MaxTraces-1)
		}
	}
	if err := req.checkModel(); err != nil {
		return err
	}
	if r := req.Reward; r.Rule == NeedsPieces {
		// The largest set size explored is N1 - 1.
		if most := cmp.Or(req.MaxTraces, MaxTraces) - 1; r.Needs < 1 || r.Needs > most {
			return argError(FieldNeeds, -1, r.Needs, "%d outside [1, %d], the largest set size n = N1 - 1", r.Needs, most)
		}
		for i, n := range req.SetSizes {
			if n < r.Needs {
				return argError(FieldSetSizes, i, n, "below the %d correct candidates the reward needs", r.Needs)
			}
		}
	}
	return nil
}

// checkModel checks the fields of req that Evaluate reads: the count, the
// order, the lengths and the reward model (but for the range of
// Reward.Needs, which depends on the set size).
func (req Request) checkModel() error {
	if req.Count < Generated || req.Count > WithCachedPrefill {
		return inputerr.Undefined("advise", FieldCount, int(req.Count), "Tokens")
	}
	if req.Order != combin.IndexOrder && req.Order != combin.Shuffled {
		return inputerr.Undefined("advise", FieldOrder, int(req.Order), "Order")
	}
	switch st := req.Step; {
	case st.Tokens < 0 || st.Problems < 0:
		return fieldError(FieldStep, "tokens = %d, problems = %d: want >= 0", st.Tokens, st.Problems)
	case st.Tokens > 0 && st.Problems > 0:
		return fieldError(FieldStep, "tokens = %d and problems = %d: give one of the two", st.Tokens, st.Problems)
	}
	if n := req.DeploySetSize; n != 0 {
		if n < 1 || n >= MaxTraces {
			return argError(FieldDeploySetSize, -1, n, "%d outside [1, %d]", n, MaxTraces-1)
		}
		if r := req.Reward; r.Rule == NeedsPieces && n < r.Needs {
			return argError(FieldDeploySetSize, -1, n, "%d below the %d correct candidates the reward needs", n, r.Needs)
		}
		if _, err := req.Reward.Needed(n); err != nil {
			return err
		}
	}
	if req.Lengths.Search < 1 || req.Lengths.Aggregation < 1 || req.Lengths.Prompt < 0 {
		return fieldError(FieldLengths, "%+v: search and aggregation must be >= 1, prompt >= 0", req.Lengths)
	}
	r := req.Reward
	switch {
	case r.Rule < FindOne || r.Rule > Majority:
		return inputerr.Undefined("advise", FieldRule, int(r.Rule), "Rule")
	case r.Rule != NeedsPieces && r.Needs != 0:
		return argError(FieldNeeds, -1, r.Needs, "%d under rule %v, want 0 (needs applies to rule needs)", r.Needs, r.Rule)
	}
	for _, x := range []struct {
		name string
		val  *big.Rat
	}{{FieldCorrect, r.Correct}, {FieldFound, r.Found}, {FieldMissed, r.Missed}} {
		if x.val == nil {
			return fieldError(x.name, "missing, want a probability in [0, 1]")
		}
		if x.val.Sign() < 0 || x.val.Cmp(big.NewRat(1, 1)) > 0 {
			return fieldError(x.name, "%v outside [0, 1]", x.val)
		}
	}
	if r.Correct.Sign() == 0 || r.Correct.Cmp(big.NewRat(1, 1)) == 0 || r.Found.Cmp(r.Missed) == 0 {
		return fieldError(FieldReward, "correct = %v, found = %v, missed = %v gives no search signal", r.Correct, r.Found, r.Missed)
	}
	return nil
}

// checkConfig returns an error naming the field of c that is outside what
// Advise evaluates under req (see Evaluate).
func (req Request) checkConfig(c spiral.Config) error {
	if err := c.Validate(); err != nil {
		return configError(err)
	}
	N1, n, K, N2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
	want := req.config(N1, n, K, N2, c.Design)
	// Either aggregation baseline: the scaled update, and so every figure
	// but the role weights, is the same under both (AggregationVariance).
	want.AggregationBaseline = c.AggregationBaseline
	switch {
	case c.Ordered:
		return fieldError(FieldConfigOrdered, "true: the advisor evaluates subsets, not tuples")
	case c.Order != req.Order:
		return argError(FieldConfigOrder, -1, int(c.Order), "%v, the request's order is %v: the configuration is evaluated in the request's order", c.Order, req.Order)
	case N1 < 3 || N1 > MaxTraces:
		return argError(FieldConfigTraces, -1, N1, "%d outside [3, %d]", N1, MaxTraces)
	case n < 2 || n >= N1:
		return argError(FieldConfigSetSize, -1, n, "%d outside [2, %d], N1 - 1", n, N1-1)
	case K < 2 || K > MaxSets:
		return argError(FieldConfigSets, -1, K, "%d outside [2, %d]", K, MaxSets)
	case N2 < 2 || N2 > MaxAggregations:
		return argError(FieldConfigN2, -1, N2, "%d outside [2, %d] (at N2 = 1 the within-set aggregation advantage is 0)", N2, MaxAggregations)
	case c.Gates != want.Gates:
		return fieldError(FieldConfigGates, "%+v, want none: the advisor's update has no length gate", c.Gates)
	case c.Overlong != want.Overlong:
		return fieldError(FieldConfigOverlong, "%+v, want none: the advisor's rewards have no overlong punishment", *c.Overlong)
	case c.RewardRange != want.RewardRange:
		return fieldError(FieldConfigRange, "%+v, want none: the advisor keeps every problem", c.RewardRange)
	case c != want:
		return fieldError(FieldConfig, "%+v is not the advisor's %+v", c, want)
	}
	if r := req.Reward; r.Rule == NeedsPieces && n < r.Needs {
		return argError(FieldConfigSetSize, -1, n, "%d below the %d correct candidates the reward needs", n, r.Needs)
	}
	_, err := req.Reward.Needed(n)
	return err
}

// config returns the configuration Advise evaluates for these sizes and
// design: the paper's, with req.Order (subsets, no gate).
func (req Request) config(N1, n, K, N2 int, design combin.Design) spiral.Config {
	cfg := spiral.Paper()
	cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design, cfg.Order = N1, n, K, N2, design, req.Order
	return cfg
}

// feasible returns the candidates of (N1, n, K, design) within the budget,
// one per N2, with their configuration and tokens.
func (req Request) feasible(N1, n, K int, design combin.Design, maxN2 int) []Candidate {
	var out []Candidate
	for N2 := 2; N2 <= maxN2; N2++ {
		cand, err := req.candidate(req.config(N1, n, K, N2, design))
		if err != nil {
			continue // an invalid design for these sizes, or an overflowing count
		}
		if cand.Tokens > req.Budget {
			break // tokens grow with N2
		}
		out = append(out, cand)
	}
	return out
}

// candidate returns the candidate of cfg with its token accounting
// (budget.SPIRAL) and the count req.Count selects from it.
func (req Request) candidate(cfg spiral.Config) (Candidate, error) {
	b, err := budget.SPIRAL(cfg, req.Lengths)
	if err != nil {
		return Candidate{}, err
	}
	tokens := b.Generated()
	switch req.Count {
	case WithPrefill:
		tokens += b.Prefill()
	case WithCachedPrefill:
		tokens += b.CachedPrefill
	}
	return Candidate{Config: cfg, Budget: b, Tokens: tokens}, nil
}

// complete evaluates the (N1, n, K, design) that cands share, once, and
// fills their constants, role weights, variances and SNR: the one path of
// both Advise and Evaluate. What depends on n alone it takes from shared,
// or computes and adds there. The error is inputerr.ErrTooCostly when the
// evaluation is beyond the exact cost bound.
func (req Request) complete(cands []Candidate, c *estimator.Categorical, shared map[int]*sizeTerms) error {
	cfg := cands[0].Config
	st := shared[cfg.SetSize]
	if st == nil {
		var err error
		if st, err = req.sizeTerms(cfg.SetSize, c); err != nil {
			return err
		}
		shared[cfg.SetSize] = st
	}
	f, err := combin.Subsets(cfg.SearchTraces, cfg.SetSize)
	if err != nil {
		return err
	}
	v, agg, err := evaluate(f, cfg.Sets, cfg.Design, req.Order, c, st.tab, st)
	if err != nil {
		return err
	}
	for i := range cands {
		if err := cands[i].fill(v, agg, req.StepBudget()); err != nil {
			return err
		}
		if st.searchDot != nil {
			a := new(big.Rat).Set(st.searchDot)
			if cfg.SetSize == req.DeploySetSize {
				a.Add(a, cands[i].Aggregation.Signal)
			}
			cands[i].Alignment = a
			cands[i].improvement(req.StepBudget())
		}
	}
	return nil
}

// sizeTerms is what the evaluations of one set size n share, whatever
// N1, K and the design: the set objective, the aggregation terms before
// their pairs, with the pairs' values by where two sets' traces meet
// (presentedMemo), the uniform design's noise moments, and the alignment
// with the deployment objective.
type sizeTerms struct {
	tab       *estimator.Table
	agg       *aggregationTerms // pairs and K unset: evaluate fills a copy
	noise     *noiseMoments     // nil for an objective that is not symmetric
	searchDot *big.Rat          // grad_search J . grad_search J*, nil without DeploySetSize
}

// sizeTerms computes the sizeTerms of set size n for req and policy c.
func (req Request) sizeTerms(n int, c *estimator.Categorical) (*sizeTerms, error) {
	tab, err := setObjective(n, req.Reward)
	if err != nil {
		return nil, err
	}
	st := &sizeTerms{tab: tab}
	if st.agg, err = newAggregationTerms(n, c, tab); err != nil {
		return nil, err
	}
	st.agg.shuffled = req.Order == combin.Shuffled
	st.agg.same = newPresentedMemo(c, st.agg.m, st.agg.shuffled)
	if symmetric(tab) {
		nm, err := newNoiseMoments(c, tab)
		if err != nil {
			return nil, err
		}
		st.noise = &nm
	}
	if nStar := req.DeploySetSize; nStar > 0 {
		if st.searchDot, err = alignment(c, tab, nStar, req.Reward); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// alignment returns grad J . grad J* for the search logits: J the set
// objective tab, J* the reward model's for sets of nStar.
func alignment(c *estimator.Categorical, tab *estimator.Table, nStar int, r RewardModel) (*big.Rat, error) {
	star, err := setObjective(nStar, r)
	if err != nil {
		return nil, err
	}
	g, err := estimator.Gradient(c, tab, combin.IndexOrder)
	if err != nil {
		return nil, err
	}
	gStar, err := estimator.Gradient(c, star, combin.IndexOrder)
	if err != nil {
		return nil, err
	}
	dot := new(big.Rat)
	for i := range g {
		dot.Add(dot, new(big.Rat).Mul(g[i], gStar[i]))
	}
	return dot, nil
}

// fill fills the constants, role weights and SNR of a candidate from its
// group's evaluation.
func (c *Candidate) fill(v *SearchVariance, agg *aggregationTerms, step Step) error {
	cfg := c.Config
	k, err := cfg.Constants()
	if err != nil {
		return err
	}
	w, err := cfg.RoleWeights(spiral.LossOptions{})
	if err != nil {
		return err
	}
	if k.M == nil || k.M.Cmp(v.M) != 0 {
		return fmt.Errorf("advise: %+v: combin's M = %v, the engine's %v", cfg, k.M, v.M)
	}
	N2 := cfg.AggregationsPerSet
	c.Constants, c.RoleWeights, c.Variance, c.Aggregation = k, w, v, agg.at(N2)
	weight := c.Aggregation.Weight // K (N2 - 1); K N2 under leave-one-out
	if cfg.AggregationBaseline == spiral.LeaveOneOut {
		weight = new(big.Rat).Add(weight, big.NewRat(int64(cfg.Sets), 1))
	}
	if weight.Cmp(w.Aggregation) != 0 {
		return fmt.Errorf("advise: %+v: aggregation weight %v, RoleWeights %v", cfg, weight, w.Aggregation)
	}
	c.SearchSNR = v.SNR(N2)
	c.Signal = new(big.Rat).Add(v.Signal, c.Aggregation.Signal)
	c.Noise = new(big.Rat).Add(v.Total(N2), c.Aggregation.Total())
	if c.Noise.Sign() != 0 {
		c.SNR = new(big.Rat).Quo(c.Signal, c.Noise)
		f, _ := c.SNR.Float64()
		c.SNRPerToken = f / float64(c.Tokens)
	}
	c.improvement(step)
	return nil
}

// At returns c with its step figures (Problems, StepTokens, Rho,
// Improvement, ImprovementPerToken and the two limits) at the step budget
// s instead of the one it was evaluated at; the zero Step is PaperProblems
// problems per step. Nothing else is evaluated again.
func (c Candidate) At(s Step) Candidate {
	c.improvement(s)
	return c
}

// improvement fills the candidate's step figures at step from its Signal,
// Noise and Tokens: B, rho = B Signal/Noise, the expected improvement
// Signal/2 rho/(1 + rho) = Signal B Signal/(2 (B Signal + Noise)), per
// token, and its two limits.
func (c *Candidate) improvement(step Step) {
	half := new(big.Rat).Quo(c.Signal, big.NewRat(2, 1))
	c.Problems, c.StepTokens = step.problems(c.Tokens)
	c.LargeBatch = new(big.Rat).Quo(half, c.StepTokens)
	if c.Noise.Sign() == 0 {
		c.Rho, c.TokenLimited = nil, nil
		c.Improvement = half
	} else {
		c.Rho = new(big.Rat).Mul(c.Problems, c.SNR)
		c.TokenLimited = new(big.Rat).Mul(half, c.SNR)
		c.TokenLimited.Quo(c.TokenLimited, big.NewRat(c.Tokens, 1))
		onePlus := new(big.Rat).Add(c.Rho, big.NewRat(1, 1))
		c.Improvement = new(big.Rat).Mul(half, c.Rho)
		c.Improvement.Quo(c.Improvement, onePlus)
	}
	c.ImprovementPerToken = new(big.Rat).Quo(c.Improvement, c.StepTokens)
	if c.Alignment != nil {
		c.DeployImprovement = new(big.Rat)
		if c.Alignment.Sign() > 0 {
			// Alignment^2/(2 E||mean||^2), E||mean||^2 = Signal + Noise/B.
			second := new(big.Rat).Quo(c.Noise, c.Problems)
			second.Add(second, c.Signal)
			c.DeployImprovement.Mul(c.Alignment, c.Alignment)
			c.DeployImprovement.Quo(c.DeployImprovement, second.Mul(second, big.NewRat(2, 1)))
		}
		c.DeployImprovementPerToken = new(big.Rat).Quo(c.DeployImprovement, c.StepTokens)
	}
}

// evaluate decomposes the search and aggregation variances of one family,
// K and design, after checking its cost.
func evaluate(f combin.Family, K int, design combin.Design, order combin.Order, c *estimator.Categorical, tab *estimator.Table, shared *sizeTerms) (*SearchVariance, *aggregationTerms, error) {
	T, _ := f.Count64()
	if T > maxFamilySets {
		return nil, nil, inputerr.TooCostly(fmt.Sprintf("C(%d, %d) = %d sets, more than %d", f.Traces(), f.SetSize(), T, maxFamilySets))
	}
	// Neither design lists its selections one by one: the uniform design's
	// terms are in closed form (UniformSets lists none), and the balanced
	// design is evaluated through its classes up to relabelling
	// (BalancedClasses: a few thousand selections in the space), which give
	// every term but the pairs presented alike, averaged over relabellings
	// instead (pairsOf).
	if !symmetric(tab) {
		return nil, nil, errors.New("advise: the advisor's objective must be symmetric")
	}
	var d *estimator.SetDistribution
	var uni *uniformDesign
	var err error
	if design == combin.Uniform {
		d, err = estimator.UniformSets(f, K)
		uni = &uniformDesign{f: f, K: K}
		if shared != nil {
			uni.noise = shared.noise
		}
	} else {
		d, err = estimator.BalancedClasses(f, K)
	}
	if err != nil {
		return nil, nil, inputerr.TooCostly(err.Error())
	}
	// The objective is symmetric, so a shuffled presentation scores every
	// set as index order does: the search update is the same.
	v, err := decomposeSearch(d, c, tab, combin.IndexOrder, uni)
	if err != nil {
		return nil, nil, err
	}
	// The reward model's set objective is the aggregator's success
	// probability.
	var agg *aggregationTerms
	if shared != nil {
		a := *shared.agg // its slices and sums are read only; pairs and K are this design's
		agg = &a
	} else {
		if agg, err = newAggregationTerms(f.SetSize(), c, tab); err != nil {
			return nil, nil, err
		}
		agg.shuffled = order == combin.Shuffled
	}
	if design == combin.Uniform {
		err = agg.pairsUniform(f, K, c)
	} else {
		err = agg.pairsOf(d, c, true)
	}
	if err != nil {
		return nil, nil, err
	}
	return v, agg, nil
}
