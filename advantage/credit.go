package advantage

import (
	"errors"
	"fmt"
)

// Credit holds SPIRAL's credit for one problem, as returned by [Compute]:
// the fields of a [BatchCredit] for a batch of one problem, with the
// aggregation advantages cut into one row per set.
type Credit struct {
	// SetScores[i] is f_i, the mean of set i's rewards over its own count.
	SetScores []float64
	// SetAdvantages[i] is A_set(G_i) = f_i - fbar. They sum to 0.
	SetAdvantages []float64
	// Search[y] is A_search(y), the mean of A_set over the sets that hold
	// trace y; 0 for a trace in no set.
	Search []float64
	// Appearances[y] is |G(y)|, the number of sets that hold trace y, so a
	// caller can tell "in no set" (0) from "zero credit".
	Appearances []int
	// Aggregation[i][j] is A_agg(i, j) = r_ij - f_i, the same shape as the
	// rewards. Each row sums to 0.
	Aggregation [][]float64
}

// Compute computes SPIRAL's credit for one problem with traces search
// traces (numbered 0..traces-1): sets[i] lists the trace indices of set i
// and rewards[i] the rewards of its aggregation outputs. Sets may have
// different sizes and different numbers of rewards; two sets holding the
// same members in any order are identical, an error.
//
// Compute is [ComputeBatch] on a batch of one problem, and its errors are
// that function's, as an *[InputError] naming the argument ("traces",
// "sets" or "rewards"), problem 0, the set and the position. It also
// returns an error if len(rewards) != len(sets). Compute allocates its
// result; ComputeBatch with a reused [BatchCredit] allocates nothing.
func Compute(traces int, sets [][]int, rewards [][]float64) (Credit, error) {
	if len(rewards) != len(sets) {
		return Credit{}, inputError(InputError{Field: "rewards", Problem: -1, Set: -1, Output: -1, Value: float64(len(rewards)),
			Err: fmt.Errorf("len(rewards) = %d, want len(sets) = %d", len(rewards), len(sets))})
	}
	in := Batch[float64]{
		Traces:       []int{traces},
		Sets:         []int{len(sets)},
		SetSizes:     make([]int, len(sets)),
		RewardCounts: make([]int, len(sets)),
	}
	nm, nr := 0, 0
	for i, g := range sets {
		in.SetSizes[i] = len(g)
		in.RewardCounts[i] = len(rewards[i])
		nm += len(g)
		nr += len(rewards[i])
	}
	in.Members = make([]int, 0, nm)
	in.Rewards = make([]float64, 0, nr)
	for i, g := range sets {
		in.Members = append(in.Members, g...)
		in.Rewards = append(in.Rewards, rewards[i]...)
	}
	var dst BatchCredit[float64]
	if err := ComputeBatch(&dst, in); err != nil {
		var e *InputError
		if errors.As(err, &e) {
			return Credit{}, e.In("advantage", argument[e.Field])
		}
		return Credit{}, err
	}
	agg := make([][]float64, len(rewards))
	o := 0
	for i, c := range in.RewardCounts {
		agg[i] = dst.Aggregation[o : o+c : o+c]
		o += c
	}
	return Credit{
		SetScores:     dst.SetScores,
		SetAdvantages: dst.SetAdvantages,
		Search:        dst.Search,
		Appearances:   dst.Appearances,
		Aggregation:   agg,
	}, nil
}

// argument names the argument of Compute that holds each Batch field.
var argument = map[string]string{
	"Traces": "traces", "Sets": "sets", "SetSizes": "sets", "Members": "sets",
	"RewardCounts": "rewards", "Rewards": "rewards", "Unscorable": "rewards",
}
