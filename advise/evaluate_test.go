package advise

import (
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"spiral"
	"spiral/combin"
	"spiral/lengthgate"
)

// sameCandidate reports the difference between two candidates, every
// rational compared by value.
func sameCandidate(t *testing.T, got, want Candidate) {
	t.Helper()
	if d := cmp.Diff(want, got,
		cmp.Comparer(func(a, b *big.Rat) bool { return a == nil && b == nil || a != nil && b != nil && a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b spiral.Config) bool { return a == b }),
	); d != "" {
		t.Errorf("%s: Evaluate differs from Advise's row (-Advise +Evaluate):\n%s", sizes(want.Config), d)
	}
}

// Every candidate of a small ranking is what Evaluate gives for its
// configuration, under each reward rule, both orders and each token count,
// with the search's bounds of the request set so that they would exclude it:
// Evaluate reads none of them.
func TestEvaluateEqualsAdvise(t *testing.T) {
	for _, x := range []struct {
		rule  Rule
		needs int
		order combin.Order
		count Tokens
	}{
		{FindOne, 0, combin.IndexOrder, Generated},
		{Majority, 0, combin.Shuffled, WithPrefill},
		{NeedsPieces, 2, combin.IndexOrder, WithCachedPrefill},
	} {
		req := paperRequest()
		req.Budget = 11 * 4096
		req.Lengths.Prompt = 512
		req.Reward.Rule, req.Reward.Needs, req.Order, req.Count = x.rule, x.needs, x.order, x.count
		if x.count != Generated {
			req.Budget = 24 * 4096
		}
		req.MaxTraces, req.MaxSets, req.MaxAggregations = 5, 3, 3
		res, err := Advise(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v %v %v: %d candidates", x.rule, x.order, x.count, len(res.Candidates))
		if len(res.Candidates) < 10 {
			t.Fatalf("%v %v %v: only %d candidates", x.rule, x.order, x.count, len(res.Candidates))
		}
		// Evaluate reads the budget only for the zero Step's tokens per
		// step, given here.
		one := req
		one.Budget, one.MaxTraces, one.MaxSets, one.MaxAggregations, one.SetSizes = 0, 3, 2, 2, []int{2}
		one.Step = req.StepBudget()
		for _, c := range res.Candidates {
			got, err := Evaluate(c.Config, one)
			if err != nil {
				t.Fatalf("%s: %v", sizes(c.Config), err)
			}
			sameCandidate(t, got, c)
		}
	}
}

// Evaluate's errors name the field of the configuration or the request
// and its value.
func TestEvaluateRejects(t *testing.T) {
	small := spiral.Paper()
	small.SearchTraces, small.SetSize, small.Sets, small.AggregationsPerSet = 4, 2, 2, 2
	for name, x := range map[string]struct {
		cfg  func(*spiral.Config)
		req  func(*Request)
		want string
	}{
		"invalid":       {func(c *spiral.Config) { c.SetSize = 5 }, nil, "advise: config.set_size: 5 > N1 = 4"},
		"tuples":        {func(c *spiral.Config) { c.Ordered = true }, nil, "advise: config.ordered: true: the advisor evaluates subsets, not tuples"},
		"order":         {func(c *spiral.Config) { c.Order = combin.Shuffled }, nil, "advise: config.order: shuffled, the request's order is index"},
		"N1 below":      {func(c *spiral.Config) { c.SearchTraces, c.SetSize = 2, 1 }, nil, "advise: config.search_traces: 2 outside [3, 8]"},
		"N1 above":      {func(c *spiral.Config) { c.SearchTraces = 9 }, nil, "advise: config.search_traces: 9 outside [3, 8]"},
		"n = 1":         {func(c *spiral.Config) { c.SetSize = 1 }, nil, "advise: config.set_size: 1 outside [2, 3], N1 - 1"},
		"n = N1":        {func(c *spiral.Config) { c.SetSize, c.Sets = 4, 1 }, nil, "advise: config.set_size: 4 outside [2, 3], N1 - 1"},
		"K = 1":         {func(c *spiral.Config) { c.Sets = 1 }, nil, "advise: config.sets: 1 outside [2, 8]"},
		"K = 9":         {func(c *spiral.Config) { c.SearchTraces, c.Sets = 8, 9 }, nil, "advise: config.sets: 9 outside [2, 8]"},
		"N2 = 1":        {func(c *spiral.Config) { c.AggregationsPerSet = 1 }, nil, "advise: config.aggregations_per_set: 1 outside [2, 16]"},
		"N2 = 17":       {func(c *spiral.Config) { c.AggregationsPerSet = 17 }, nil, "advise: config.aggregations_per_set: 17 outside [2, 16]"},
		"gates":         {func(c *spiral.Config) { c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 100}) }, nil, "advise: config.gates: "},
		"overlong":      {func(c *spiral.Config) { c.Overlong = &lengthgate.SoftOverlong{MaxLength: 100, Buffer: 10, Factor: 1} }, nil, "advise: config.overlong: "},
		"reward range":  {func(c *spiral.Config) { c.RewardRange.High = 1 }, nil, "advise: config.reward_range: "},
		"below needs":   {nil, func(r *Request) { r.Reward.Rule, r.Reward.Needs = NeedsPieces, 3 }, "advise: config.set_size: 2 below the 3 correct candidates the reward needs"},
		"needs 0":       {nil, func(r *Request) { r.Reward.Rule = NeedsPieces }, "advise: reward.needs: 0 outside [1, n = 2]"},
		"count":         {nil, func(r *Request) { r.Count = 7 }, "advise: count: 7 is not a defined Tokens"},
		"request order": {nil, func(r *Request) { r.Order = 5 }, "advise: order: 5 is not a defined Order"},
		"lengths":       {nil, func(r *Request) { r.Lengths.Aggregation = 0 }, "lengths"},
		"correct":       {nil, func(r *Request) { r.Reward.Correct = nil }, "advise: reward.correct: missing, want a probability in [0, 1]"},
		"no signal":     {nil, func(r *Request) { r.Reward.Found = r.Reward.Missed }, "no search signal"},
		"needs rule":    {nil, func(r *Request) { r.Reward.Needs = 2 }, "advise: reward.needs: 2 under rule find-one, want 0"},
	} {
		c, req := small, paperRequest()
		if x.cfg != nil {
			x.cfg(&c)
		}
		if x.req != nil {
			x.req(&req)
		}
		_, err := Evaluate(c, req)
		if err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, x.want)
		}
	}
	// The unchanged configuration is evaluated, under either aggregation
	// baseline with the same figures but the role weights.
	within, err := Evaluate(small, paperRequest())
	if err != nil {
		t.Errorf("4/2/2/2: %v", err)
	}
	loo := small
	loo.AggregationBaseline = spiral.LeaveOneOut
	got, err := Evaluate(loo, paperRequest())
	if err != nil {
		t.Fatalf("4/2/2/2 leave-one-out: %v", err)
	}
	want, err := loo.RoleWeights(spiral.LossOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RoleWeights.Aggregation.Cmp(want.Aggregation) != 0 || got.RoleWeights.Search.Cmp(want.Search) != 0 || got.RoleWeights.AggregationMultiplier != want.AggregationMultiplier {
		t.Errorf("leave-one-out role weights %+v, want %+v", got.RoleWeights, want)
	}
	got.Config, got.RoleWeights = within.Config, within.RoleWeights
	sameCandidate(t, got, within)
}
