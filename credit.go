package spiral

import (
	"fmt"

	"spiral/lengthgate"
)

// Lengths are the output lengths, in generated tokens, that the length gates
// read. A role's lengths are required when its gate is enabled; when it is
// disabled they may be nil, and are checked if they are not.
type Lengths struct {
	// Search[y] is the length of search trace y; len N1.
	Search []int `json:"search_lengths,omitempty"`
	// Aggregation[i][j] is the length of aggregation output j of set i; the
	// same shape as the rewards.
	Aggregation [][]int `json:"aggregation_lengths,omitempty"`
}

// Credit is SPIRAL's credit for one problem (SPIRAL.md section 2), after the
// length gates, with the diagnostics a trainer logs. With K sets G_i and
// rewards r_ij:
//
//	f_i          = (1/N2_i) sum_j r_ij                       SetScores[i]
//	fbar         = (1/K) sum_i f_i
//	A_set(G_i)   = f_i - fbar                                SetAdvantages[i]
//	A_search(y)  = (1/|G(y)|) sum_{G_i ∋ y} A_set(G_i)        Search.Advantages[y]
//	               (0 for a trace in no set)
//	A_agg(i, j)  = r_ij - f_i                                Aggregation.Advantages[i][j]
//
// and then each role's gate of Eq. 8 (see [lengthgate.Gate]) sets to 0 the
// positive advantages of outputs longer than its target. Gates act on the
// advantages after every baseline was computed, so a gated output moves no
// one's baseline.
//
// Search and Aggregation are the credit for the search policy and for the
// aggregation policy; the two-model variant routes each to its own model.
type Credit struct {
	// SetScores[i] is f_i, the mean reward of set i (in plan order).
	SetScores []float64
	// SetAdvantages[i] is A_set(G_i) = f_i - fbar; they sum to 0.
	SetAdvantages []float64
	// Search is the search policy's credit.
	Search SearchCredit
	// Aggregation is the aggregation policy's credit.
	Aggregation AggregationCredit
	// NoSignal reports whether every advantage of both roles is 0 after
	// gating: the problem gives no gradient, and a trainer using the paper's
	// dynamic sampling resamples it. In exact arithmetic gating cannot
	// change it: the gates only zero positive advantages, and each role's
	// advantages sum to 0 with positive weights (sum_j A_agg(i, j) = 0 for
	// every set, and sum_y |G(y)| A_search(y) = n sum_i A_set(G_i) = 0), so
	// a role with a non-zero advantage has a negative one, which no gate
	// removes. NoSignal compares with exactly 0; advantage computes the
	// cases that are 0 by definition (equal rewards in a set, equal set
	// scores, a trace in every set) as exact zeros.
	NoSignal bool
}

// SearchCredit is the search policy's share of a [Credit].
type SearchCredit struct {
	// Advantages[y] is A_search of trace y after the search gate: the scalar
	// that multiplies the trace's whole sequence log-probability gradient.
	Advantages []float64
	// Appearances[y] is |G(y)|, the number of sets that hold trace y, so a
	// caller can tell a trace in no set (0) from one with zero credit.
	Appearances []int
	// InNoSet is the number of traces in no set (Appearances 0); at the
	// paper's setting each trace is in no set with probability 88/1541.
	InNoSet int
	// Gate reports what the search gate did.
	Gate lengthgate.Report
	// NoSignal reports whether every search advantage is 0.
	NoSignal bool
}

// AggregationCredit is the aggregation policy's share of a [Credit].
type AggregationCredit struct {
	// Advantages[i][j] is A_agg(i, j) = r_ij - f_i after the aggregation
	// gate, the same shape as the rewards.
	Advantages [][]float64
	// Gate reports what the aggregation gate did.
	Gate lengthgate.Report
	// NoSignal reports whether every aggregation advantage is 0.
	NoSignal bool
}

// Credit computes the credit of one problem planned by p (see [Credit] for
// the formulas): rewards[i][j] is the reward of aggregation output j of set
// i, and l the lengths the enabled gates need. A set may have fewer than N2
// rewards (a failed generation dropped), but at least 1; its score uses its
// own count.
//
// Everything is checked first. Errors name the field and position: c
// invalid; p not fitting c (see [Config.CheckPlan]); len(rewards) != K; a
// set with no rewards or more than N2; a reward that is NaN, infinite or
// larger in magnitude than [advantage.MaxAbsReward]; lengths missing for an
// enabled gate, of the wrong shape, or negative.
//
// Credit allocates its result. It computes exactly what [Config.CreditBatch]
// computes for the same problem.
func (c Config) Credit(p Plan, rewards [][]float64, l Lengths) (Credit, error) {
	if err := c.CheckPlan(p); err != nil {
		return Credit{}, err
	}
	k, n2 := c.Sets, c.AggregationsPerSet
	if len(rewards) != k {
		return Credit{}, fmt.Errorf("spiral: len(rewards) = %d, want Sets (K) = %d", len(rewards), k)
	}
	nr := 0
	for i, rs := range rewards {
		if len(rs) < 1 || len(rs) > n2 {
			return Credit{}, fmt.Errorf("spiral: len(rewards[%d]) = %d, want 1 to AggregationsPerSet (N2) = %d", i, len(rs), n2)
		}
		if j, err := checkRewards(rs); err != nil {
			return Credit{}, fmt.Errorf("spiral: rewards[%d][%d] = %v: %w", i, j, rs[j], err)
		}
		nr += len(rs)
	}
	if err := checkLengthsLen("lengths.Search", l.Search, c.SearchTraces, c.Gates.Search, "SearchTraces (N1)"); err != nil {
		return Credit{}, err
	}
	if at := firstNegative(l.Search); at >= 0 {
		return Credit{}, fmt.Errorf("spiral: lengths.Search[%d] = %d < 0", at, l.Search[at])
	}
	var aggLengths []int
	if l.Aggregation == nil {
		if g := c.Gates.Aggregation; g.Enabled() {
			return Credit{}, fmt.Errorf("spiral: lengths.Aggregation is nil, but its gate is enabled (Target = %d)", g.Target)
		}
	} else {
		if len(l.Aggregation) != k {
			return Credit{}, fmt.Errorf("spiral: len(lengths.Aggregation) = %d, want Sets (K) = %d", len(l.Aggregation), k)
		}
		aggLengths = make([]int, 0, nr)
		for i, ls := range l.Aggregation {
			if len(ls) != len(rewards[i]) {
				return Credit{}, fmt.Errorf("spiral: len(lengths.Aggregation[%d]) = %d, want len(rewards[%d]) = %d", i, len(ls), i, len(rewards[i]))
			}
			if j := firstNegative(ls); j >= 0 {
				return Credit{}, fmt.Errorf("spiral: lengths.Aggregation[%d][%d] = %d < 0", i, j, ls[j])
			}
			aggLengths = append(aggLengths, ls...)
		}
	}

	var b BatchCredit
	b.resize(1, c.SearchTraces, k, nr)
	lay := &b.layout
	fill(lay.Traces, c.SearchTraces)
	fill(lay.Sets, k)
	fill(lay.SetSizes, c.SetSize)
	lay.Members = p.AppendFlat(make([]int, 0, c.PlanSize()))
	lay.Rewards = make([]float64, 0, nr)
	for i, rs := range rewards {
		lay.RewardCounts[i] = len(rs)
		lay.Rewards = append(lay.Rewards, rs...)
	}
	c.creditValid(&b, l.Search, aggLengths)

	agg := make([][]float64, k)
	o := 0
	for i, rs := range rewards {
		agg[i] = b.Aggregation.Advantages[o : o+len(rs) : o+len(rs)]
		o += len(rs)
	}
	return Credit{
		SetScores:     b.SetScores,
		SetAdvantages: b.SetAdvantages,
		Search: SearchCredit{
			Advantages:  b.Search.Advantages,
			Appearances: b.Search.Appearances,
			InNoSet:     b.Search.InNoSet[0],
			Gate:        b.Search.Gate[0],
			NoSignal:    b.Search.NoSignal[0],
		},
		Aggregation: AggregationCredit{
			Advantages: agg,
			Gate:       b.Aggregation.Gate[0],
			NoSignal:   b.Aggregation.NoSignal[0],
		},
		NoSignal: b.NoSignal[0],
	}, nil
}
