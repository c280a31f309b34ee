package advise

import (
	"math"
	"math/big"
	"testing"

	"spiral"
	"spiral/budget"
	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/spiraltest"
)

func paperRequest() Request {
	return Request{
		Budget:  98_304,
		Lengths: budget.PaperLimits(0),
		Reward:  RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)},
	}
}

func findPaper(t *testing.T, res Result) (int, Candidate) {
	t.Helper()
	for i, c := range res.Candidates {
		if c.Config == spiral.Paper() {
			return i, c
		}
	}
	t.Fatalf("the paper's configuration is not among %d candidates (%d refused)", len(res.Candidates), len(res.Refused))
	return 0, Candidate{}
}

// At the paper's budget the paper's configuration is ranked, with its
// constants, tokens and role weights, and the ranking is ordered and within
// the budget.
func TestAdvisePaper(t *testing.T) {
	req := paperRequest()
	req.SetSizes, req.MaxSets = []int{4}, 4
	if !spiraltest.Long() {
		// The exact engine takes seconds a configuration at N1 = 8: the
		// default run checks the ranking on N1 <= 6 and N2 <= 4, the long
		// run the paper's own row as well.
		req.MaxTraces, req.SetSizes, req.MaxAggregations = 6, []int{3}, 4
		res, err := Advise(req)
		if err != nil {
			t.Fatal(err)
		}
		checkRanking(t, req, res)
		return
	}
	res, err := Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	_, paper := findPaper(t, res)
	if paper.Constants.M.Cmp(big.NewRat(1365, 1541)) != 0 || paper.Constants.MissProb.Cmp(big.NewRat(88, 1541)) != 0 {
		t.Errorf("paper: M = %v, miss = %v; want 1365/1541, 88/1541", paper.Constants.M, paper.Constants.MissProb)
	}
	if paper.Tokens != 98_304 || paper.Budget.Generated() != 98_304 {
		t.Errorf("paper: %d tokens, want 98304", paper.Tokens)
	}
	if paper.RoleWeights.Search.Cmp(big.NewRat(1365, 1541)) != 0 || paper.RoleWeights.Aggregation.Cmp(big.NewRat(12, 1)) != 0 {
		t.Errorf("paper: role weights %v, %v; want 1365/1541, 12", paper.RoleWeights.Search, paper.RoleWeights.Aggregation)
	}
	// The whole update's SNR adds the two parts' signals and variances.
	joint := new(big.Rat).Add(paper.Variance.Signal, paper.Aggregation.Signal)
	joint.Quo(joint, new(big.Rat).Add(paper.Variance.Total(4), paper.Aggregation.Total()))
	if paper.SNR.Cmp(joint) != 0 {
		t.Errorf("paper SNR = %v, want %v", paper.SNR, joint)
	}
	checkRanking(t, req, res)
}

// checkRanking checks that res ranks distinct configurations within the
// budget by improvement per token, each with an aggregation signal.
func checkRanking(t *testing.T, req Request, res Result) {
	t.Helper()
	if len(res.Candidates) == 0 {
		t.Fatal("no candidate")
	}
	seen := map[spiral.Config]bool{}
	for i, c := range res.Candidates {
		if c.Tokens > req.Budget {
			t.Errorf("%+v: %d tokens over the budget", c.Config, c.Tokens)
		}
		if i > 0 && c.ImprovementPerToken.Cmp(res.Candidates[i-1].ImprovementPerToken) > 0 {
			t.Errorf("rank %d: %v per token after %v", i, c.ImprovementPerToken, res.Candidates[i-1].ImprovementPerToken)
		}
		if c.RoleWeights.AggregationFloat <= 0 {
			t.Errorf("%+v: aggregation weight %v: no aggregation signal", c.Config, c.RoleWeights.AggregationFloat)
		}
		if seen[c.Config] {
			t.Errorf("%+v listed twice", c.Config)
		}
		seen[c.Config] = true
	}
}

// The whole space at the paper's budget under each reward rule (about 4
// seconds a rule), the numbers of docs/findings.md#choosing-a-configuration:
// each ranking is ordered and within the budget, and the paper's search
// SNR is the exact engine's at its N2 = 4, Signal over the variance of g/M
// that SetDistribution.Moments gives directly; Evaluate gives the paper's
// row and that of its balanced design as the ranking does.
func TestAdvisePaperBudgetFull(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	f, _ := combin.Subsets(8, 4)
	d, err := estimator.UniformSets(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(1, 4), big.NewRat(3, 4)})
	for _, rule := range []struct {
		rule  Rule
		needs int
	}{{FindOne, 0}, {NeedsPieces, 2}, {NeedsPieces, 3}, {NeedsPieces, 4}, {Majority, 0}} {
		req := paperRequest()
		req.Reward.Rule, req.Reward.Needs = rule.rule, rule.needs
		res, err := Advise(req)
		if err != nil {
			t.Fatal(err)
		}
		checkRanking(t, req, res)
		rank, paper := findPaper(t, res)
		tab, err := setObjective(4, req.Reward)
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.Moments(c, tab, combin.IndexOrder, 4)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Rat).Quo(paper.Variance.Signal, m.NormalisedVariance())
		if paper.SearchSNR.Cmp(want) != 0 {
			t.Errorf("%v %d: paper search SNR = %v, the engine's %v", rule.rule, rule.needs, paper.SearchSNR, want)
		}
		balanced := -1
		for i, c := range res.Candidates {
			if cfg := c.Config; cfg.SearchTraces == 8 && cfg.SetSize == 4 && cfg.Sets == 4 && cfg.AggregationsPerSet == 4 && cfg.Design == combin.Balanced {
				balanced = i
			}
		}
		// Evaluate gives both rows alone.
		for _, i := range []int{rank, balanced} {
			if i < 0 {
				t.Fatalf("%v %d: balanced 8/4/4/4 not ranked", rule.rule, rule.needs)
			}
			got, err := Evaluate(res.Candidates[i].Config, req)
			if err != nil {
				t.Fatal(err)
			}
			sameCandidate(t, got, res.Candidates[i])
		}
		top := res.Candidates[0].Config
		t.Logf("%v %d: %d candidates, %d refused; first %d/%d/%d/%d %v at %.4g per token (%d tokens, rho %.3g); paper %d/%d at %.4g (rho %.3g); balanced 8/4/4/4 %d",
			rule.rule, rule.needs, len(res.Candidates), len(res.Refused), top.SearchTraces, top.SetSize, top.Sets, top.AggregationsPerSet, top.Design,
			ratFloat(res.Candidates[0].ImprovementPerToken), res.Candidates[0].Tokens, ratFloat(res.Candidates[0].Rho), rank+1, len(res.Candidates), ratFloat(paper.ImprovementPerToken), ratFloat(paper.Rho), balanced+1)
	}
}

func TestAdviseRejects(t *testing.T) {
	ok := paperRequest()
	for name, mutate := range map[string]func(*Request){
		"budget":      func(r *Request) { r.Budget = 0 },
		"count":       func(r *Request) { r.Count = 7 },
		"search":      func(r *Request) { r.Lengths.Search = 0 },
		"prompt":      func(r *Request) { r.Lengths.Prompt = -1 },
		"max_traces":  func(r *Request) { r.MaxTraces = 9 },
		"max_sets":    func(r *Request) { r.MaxSets = -1 },
		"max_agg":     func(r *Request) { r.MaxAggregations = math.MaxInt },
		"set_sizes":   func(r *Request) { r.SetSizes = []int{1} },
		"correct nil": func(r *Request) { r.Reward.Correct = nil },
		"correct 1":   func(r *Request) { r.Reward.Correct = big.NewRat(1, 1) },
		"found > 1":   func(r *Request) { r.Reward.Found = big.NewRat(3, 2) },
		"no signal":   func(r *Request) { r.Reward.Found = r.Reward.Missed },
		"rule":        func(r *Request) { r.Reward.Rule = 3 },
		"order":       func(r *Request) { r.Order = 5 },
		"step < 0":    func(r *Request) { r.Step.Tokens = -1 },
		"step both":   func(r *Request) { r.Step = Step{Tokens: 1, Problems: 1} },
		"needs 0":     func(r *Request) { r.Reward.Rule = NeedsPieces },
		"needs 8":     func(r *Request) { r.Reward.Rule, r.Reward.Needs = NeedsPieces, 8 },
		"needs 5 of max_traces 5": func(r *Request) {
			r.Reward.Rule, r.Reward.Needs, r.MaxTraces = NeedsPieces, 5, 5
		},
		"needs under majority": func(r *Request) { r.Reward.Rule, r.Reward.Needs = Majority, 2 },
		"set size below needs": func(r *Request) {
			r.Reward.Rule, r.Reward.Needs, r.SetSizes = NeedsPieces, 3, []int{4, 2}
		},
	} {
		r := ok
		r.SetSizes = nil
		mutate(&r)
		if _, err := Advise(r); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A budget below every configuration gives an empty ranking, at no cost.
func TestAdviseTinyBudget(t *testing.T) {
	req := paperRequest()
	req.Budget = 4096 * 4
	res, err := Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 0 || len(res.Refused) != 0 {
		t.Errorf("%d candidates, %d refused under 4 calls' tokens", len(res.Candidates), len(res.Refused))
	}
}

func ratFloat(x *big.Rat) float64 {
	if x == nil {
		return math.Inf(1)
	}
	f, _ := x.Float64()
	return f
}
