package spiral

import (
	"errors"
	"fmt"

	"spiral/lengthgate"
)

// Lengths are the output lengths, in generated tokens, of one problem, for
// [Config.Credit]. A role's lengths are required when its gate (or, for
// aggregation, Config.Overlong) reads them; otherwise they may be nil, and
// are checked if they are not.
type Lengths struct {
	// Search[y] is the length of search trace y; len N1.
	Search []int `json:"search_lengths,omitempty"`
	// Aggregation[i][j] is the length of aggregation output j of set i; the
	// same shape as the rewards.
	Aggregation [][]int `json:"aggregation_lengths,omitempty"`
}

// Credit is SPIRAL's credit for one problem, computed by [Config.Credit]:
// the fields of [BatchCredit] for a batch of one problem, with the
// aggregation advantages in the shape of the rewards.
type Credit struct {
	// SetScores[i] is f_i, the mean reward of set i (in plan order), and
	// SetAdvantages[i] = f_i - fbar.
	SetScores, SetAdvantages []float64
	// Search[y] is A_search of trace y after the search gate, for the
	// search policy; 0 for a trace in no set.
	Search []float64
	// Appearances[y] is |G(y)|, the number of sets that hold trace y.
	Appearances []int
	// Aggregation[i][j] is A_agg(i, j) after the aggregation gate, for the
	// aggregation policy.
	Aggregation [][]float64
	// NoSignal and OutOfRange are BatchCredit's for this problem.
	NoSignal, OutOfRange bool
	// Gates is what the length gates did.
	Gates lengthgate.GatesReport
	// Overlong is what Config.Overlong did.
	Overlong lengthgate.PenaltyReport
}

// Credit computes the credit of one problem planned by p, with
// rewards[i][j] the reward of aggregation output j of set i and l the
// lengths that c's gates and overlong punishment read. A set may have fewer
// than N2 rewards (a failed generation dropped), but at least 1. Credit
// is [Config.CreditBatch] on a batch of one problem, with the same passes
// and the same results; p is always checked. An error about the problem is
// an *[InputError] naming Credit's argument ("plan.Sets", "rewards",
// "lengths.Search", "lengths.Aggregation"), the set and the position, with
// Problem -1.
func (c Config) Credit(p Plan, rewards [][]float64, l Lengths) (Credit, error) {
	if err := c.Validate(); err != nil {
		return Credit{}, err
	}
	k := c.Sets
	argErr := func(field string, set int, format string, args ...any) error {
		return (&InputError{Field: field, Problem: -1, Set: set, Output: -1, Err: fmt.Errorf(format, args...)}).In("spiral", field)
	}
	flat, err := c.flatten(p, "plan.Sets")
	if err != nil {
		return Credit{}, err
	}
	if len(rewards) != k {
		return Credit{}, argErr("rewards", -1, "len(rewards) = %d, want K = %d", len(rewards), k)
	}
	if l.Aggregation != nil && len(l.Aggregation) != k {
		return Credit{}, argErr("lengths.Aggregation", -1, "len(lengths.Aggregation) = %d, want K = %d", len(l.Aggregation), k)
	}
	var plans Plans
	in := Batch{Plans: &plans, RewardCounts: make([]int, k), SearchLengths: l.Search}
	if err := c.CheckPlans(&plans, flat); err != nil {
		if e, ok := errors.AsType[*InputError](err); ok && e.Problem == 0 {
			e = e.In("spiral", "plan.Sets")
			e.Problem = -1
			return Credit{}, e
		}
		return Credit{}, err
	}
	outputs := 0
	for i, rs := range rewards {
		if len(rs) < 1 || len(rs) > c.AggregationsPerSet {
			return Credit{}, argErr("rewards", i, "len(rewards[%d]) = %d outside [1, N2 = %d]", i, len(rs), c.AggregationsPerSet)
		}
		if l.Aggregation != nil && len(l.Aggregation[i]) != len(rs) {
			return Credit{}, argErr("lengths.Aggregation", i, "len(lengths.Aggregation[%d]) = %d, want len(rewards[%d]) = %d", i, len(l.Aggregation[i]), i, len(rs))
		}
		in.RewardCounts[i] = len(rs)
		outputs += len(rs)
	}
	in.Rewards = make([]float64, 0, outputs)
	for _, rs := range rewards {
		in.Rewards = append(in.Rewards, rs...)
	}
	if l.Aggregation != nil {
		in.AggregationLengths = make([]int, 0, outputs)
		for _, ls := range l.Aggregation {
			in.AggregationLengths = append(in.AggregationLengths, ls...)
		}
	}
	var b BatchCredit
	if err := c.CreditBatch(&b, in); err != nil {
		if e, ok := errors.AsType[*InputError](err); ok {
			e = e.In("spiral", creditArgument[e.Field])
			e.Problem = -1
			return Credit{}, e
		}
		return Credit{}, err
	}
	agg := make([][]float64, k)
	o := 0
	for i, rs := range rewards {
		agg[i] = b.Aggregation[o : o+len(rs) : o+len(rs)]
		o += len(rs)
	}
	return Credit{
		SetScores:     b.SetScores,
		SetAdvantages: b.SetAdvantages,
		Search:        b.Search,
		Appearances:   b.Appearances,
		Aggregation:   agg,
		NoSignal:      b.NoSignal[0],
		OutOfRange:    b.OutOfRange[0],
		Gates:         b.Gates,
		Overlong:      b.Overlong,
	}, nil
}

// creditArgument names the argument of Config.Credit that holds each Batch
// field.
var creditArgument = map[string]string{
	FieldPlans: "plan.Sets", FieldRewards: "rewards", FieldRewardCounts: "rewards", FieldUnscorable: "rewards",
	FieldSearchLengths: "lengths.Search", FieldAggregationLengths: "lengths.Aggregation",
}
