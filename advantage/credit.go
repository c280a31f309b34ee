package advantage

import "fmt"

// Credit holds SPIRAL's three credit signals for one problem (SPIRAL.md
// section 2), as returned by [Compute].
type Credit struct {
	// SetScores[i] is f_i = (1/N2_i) sum_j r_ij, the mean of set i's
	// rewards over its own count N2_i.
	SetScores []float64
	// SetAdvantages[i] is A_set(G_i) = f_i - fbar, with fbar = (1/K) sum_i f_i.
	// They sum to 0.
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

// Compute computes SPIRAL's credit for one problem with traces search traces
// (numbered 0..traces-1): groups[i] lists the trace indices of set i, as
// drawn (in whatever order the aggregator reads them: the credit does not
// depend on it, but two sets are compared as passed), and rewards[i] the
// rewards of set i's aggregation outputs. Sets may have different sizes
// and different numbers of rewards.
//
// Compute is [ComputeBatch] on a batch of one problem: the formulas, the
// numerics, the meaning of identical sets and the errors are documented
// there (errors name the problem as problem 0). It also returns an error if
// len(rewards) != len(groups). Compute allocates its result; use
// ComputeBatch with a reused [BatchCredit] to allocate nothing.
func Compute(traces int, groups [][]int, rewards [][]float64) (Credit, error) {
	if len(rewards) != len(groups) {
		return Credit{}, fmt.Errorf("advantage: len(rewards) = %d, want len(groups) = %d", len(rewards), len(groups))
	}
	in := Batch[float64]{
		Traces:       []int{traces},
		Sets:         []int{len(groups)},
		SetSizes:     make([]int, len(groups)),
		RewardCounts: make([]int, len(groups)),
	}
	for i, g := range groups {
		in.SetSizes[i] = len(g)
		in.RewardCounts[i] = len(rewards[i])
	}
	in.Members = make([]int, 0, sum(in.SetSizes))
	in.Rewards = make([]float64, 0, sum(in.RewardCounts))
	for i, g := range groups {
		in.Members = append(in.Members, g...)
		in.Rewards = append(in.Rewards, rewards[i]...)
	}
	dst, err := NewBatchCredit(in)
	if err != nil {
		return Credit{}, err
	}
	computeValid(&dst, in)

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
