package estimator

import (
	"fmt"
	"math/big"

	"spiral/combin"
)

// Baseline is the reference subtracted from an aggregation output's reward.
type Baseline int

const (
	// WithinSet is the paper's baseline: A_agg(j) = r_j - fhat with fhat the
	// mean of all N2 rewards of the set, the output's own reward included.
	// Its expected credit is (N2 - 1) * grad E[r] per set.
	WithinSet Baseline = iota
	// LeaveOneOut excludes the output's own reward:
	// A_agg(j) = r_j - (1/(N2-1)) sum_{k != j} r_k. It needs N2 >= 2 and
	// its expected credit is N2 * grad E[r] per set.
	LeaveOneOut
)

// String returns the baseline's name.
func (b Baseline) String() string {
	switch b {
	case WithinSet:
		return "WithinSet"
	case LeaveOneOut:
		return "LeaveOneOut"
	}
	return fmt.Sprintf("Baseline(%d)", int(b))
}

// AggregationFactor returns the constant a such that, for one set with N2
// aggregation outputs z_j drawn iid from the aggregation policy and rewards
// r_j,
//
//	E[ sum_j A_agg(j) grad log pi(z_j) ] = a * grad E[r],
//
// with sum-reduced credit: a = N2 - 1 for WithinSet (the own-reward term
// -(1/N2) E[r_j grad log pi(z_j)] is subtracted N2 times; cross terms vanish
// because the outputs are independent and scores have mean zero) and a = N2
// for LeaveOneOut. It returns an error if N2 < 1, if N2 < 2 with
// LeaveOneOut, or if b is unknown. AggregationCredit verifies it by
// enumeration.
func AggregationFactor(N2 int, b Baseline) (*big.Rat, error) {
	if N2 < 1 {
		return nil, fmt.Errorf("estimator: N2 = %d, want >= 1", N2)
	}
	switch b {
	case WithinSet:
		return big.NewRat(int64(N2-1), 1), nil
	case LeaveOneOut:
		if N2 < 2 {
			return nil, fmt.Errorf("estimator: N2 = %d, LeaveOneOut needs N2 >= 2", N2)
		}
		return big.NewRat(int64(N2), 1), nil
	}
	return nil, fmt.Errorf("estimator: unknown baseline %v", b)
}

// aggAdvantages writes into adv the aggregation advantages of rewards r under
// baseline b (b and len(r) already validated).
func aggAdvantages(adv []*big.Rat, r []int, b Baseline) {
	N2 := len(r)
	sum := 0
	for _, x := range r {
		sum += x
	}
	for j, x := range r {
		if b == WithinSet {
			adv[j].SetFrac64(int64(N2*x-sum), int64(N2))
		} else {
			adv[j].SetFrac64(int64((N2-1)*x-(sum-x)), int64(N2-1))
		}
	}
}

// maxLeaves bounds the brute-force enumerations of AggregationCredit and
// JointExpectation.
const maxLeaves = 1 << 22

// RewardGradient returns grad E[r] for one aggregation output z drawn from
// agg with a Bernoulli reward of success probability reward[z]:
//
//	grad E[r] = sum_z pi(z) reward[z] (e_z - pi).
//
// It returns an error if len(reward) != agg.Size() or a reward is nil or
// outside [0, 1].
func RewardGradient(agg *Categorical, reward []*big.Rat) ([]*big.Rat, error) {
	if err := checkRewards(reward, agg.Size()); err != nil {
		return nil, err
	}
	V := agg.Size()
	g := make([]*big.Rat, V)
	for u := range g {
		g[u] = new(big.Rat)
	}
	term := new(big.Rat)
	for z := range V {
		s := agg.Score(z)
		term.Mul(agg.p[z], reward[z])
		for u := range g {
			g[u].Add(g[u], new(big.Rat).Mul(term, s[u]))
		}
	}
	return g, nil
}

func checkRewards(reward []*big.Rat, V int) error {
	if len(reward) != V {
		return fmt.Errorf("estimator: len(reward) = %d, want %d outputs", len(reward), V)
	}
	one := big.NewRat(1, 1)
	for z, r := range reward {
		if r == nil {
			return fmt.Errorf("estimator: reward[%d] is nil", z)
		}
		if r.Sign() < 0 || r.Cmp(one) > 0 {
			return fmt.Errorf("estimator: reward[%d] = %s, want in [0, 1]", z, r.RatString())
		}
	}
	return nil
}

// AggregationCredit returns, by exact enumeration of every output vector
// z in [V2]^N2 and every reward vector r in {0,1}^N2, the expected
// sum-reduced aggregation credit of one set,
//
//	E[ sum_{j=1..N2} A_agg(j) (e_{z_j} - pi) ],
//
// for N2 outputs drawn iid from agg, each rewarded 1 with probability
// reward[z_j] (a deterministic 0/1 reward is reward[z] in {0, 1}), under
// baseline b. It equals AggregationFactor(N2, b) * RewardGradient(agg,
// reward). It returns an error for invalid arguments or if (2*V2)^N2 exceeds
// 4,194,304.
func AggregationCredit(agg *Categorical, reward []*big.Rat, N2 int, b Baseline) ([]*big.Rat, error) {
	if _, err := AggregationFactor(N2, b); err != nil {
		return nil, err
	}
	if err := checkRewards(reward, agg.Size()); err != nil {
		return nil, err
	}
	V := agg.Size()
	leaves, err := tableSize(2*V, N2)
	if err != nil {
		return nil, fmt.Errorf("estimator: AggregationCredit outcomes: %w", err)
	}
	scores := make([][]*big.Rat, V)
	for z := range scores {
		scores[z] = agg.Score(z)
	}
	out := make([]*big.Rat, V)
	for u := range out {
		out[u] = new(big.Rat)
	}
	adv := make([]*big.Rat, N2)
	for j := range adv {
		adv[j] = new(big.Rat)
	}
	z, r := make([]int, N2), make([]int, N2)
	one := big.NewRat(1, 1)
	prob, coef, term := new(big.Rat), new(big.Rat), new(big.Rat)
	for leaf := range leaves {
		// Decode leaf in base 2V: digit j = 2*z_j + r_j.
		x := leaf
		prob.SetInt64(1)
		for j := range N2 {
			d := x % (2 * V)
			x /= 2 * V
			z[j], r[j] = d/2, d%2
			prob.Mul(prob, agg.p[z[j]])
			if r[j] == 1 {
				prob.Mul(prob, reward[z[j]])
			} else {
				prob.Mul(prob, term.Sub(one, reward[z[j]]))
			}
		}
		if prob.Sign() == 0 {
			continue
		}
		aggAdvantages(adv, r, b)
		for j := range N2 {
			coef.Mul(prob, adv[j])
			for u := range out {
				out[u].Add(out[u], term.Mul(coef, scores[z[j]][u]))
			}
		}
	}
	return out, nil
}

// Reduction says how the per-rollout policy-gradient terms of one problem
// are combined into the loss. Only sequence-level reductions are covered: a
// token-level mean weights each rollout by its length, which the toy model
// does not have.
type Reduction int

const (
	// SumReduction sums A * grad log pi over the N search traces and the
	// K*N2 aggregation outputs.
	SumReduction Reduction = iota
	// MeanPerRole averages each role separately: the search sum is divided
	// by N and the aggregation sum by K*N2.
	MeanPerRole
	// MeanPooled divides the sum over all N + K*N2 rollouts by N + K*N2.
	MeanPooled
)

// String returns the reduction's name.
func (r Reduction) String() string {
	switch r {
	case SumReduction:
		return "SumReduction"
	case MeanPerRole:
		return "MeanPerRole"
	case MeanPooled:
		return "MeanPooled"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// Roles are the weights the expected SPIRAL update puts on the two parts of
// the joint gradient grad J = grad_search J + grad_agg J (SPIRAL.md section
// 4):
//
//	E[update] = Search * grad_search J + Aggregation * grad_agg J.
//
// The update follows grad J (up to one positive scale) only when the two
// weights are equal.
type Roles struct {
	Search      *big.Rat
	Aggregation *big.Rat
}

// RoleWeights returns the role weights of the SPIRAL update for K groups
// drawn uniformly from f, N2 aggregation outputs per group, aggregation
// baseline b and loss reduction r:
//
//	SumReduction: Search = M(f, K),        Aggregation = K * a
//	MeanPerRole:  Search = M(f, K) / N,    Aggregation = a / N2
//	MeanPooled:   both sum weights divided by N + K*N2
//
// with a = AggregationFactor(N2, b) (N2 - 1 within the set, N2 leave one
// out). At the paper's configuration (subsets, N = 8, n = 4, K = 4, N2 = 4,
// WithinSet, SumReduction) they are 1365/1541 ~ 0.886 and 12: the
// aggregation part is weighted 6164/455 ~ 13.55 times more than the search
// part. The search weight is the same for noisy set scores (means of N2
// rewards) as for exact ones. Errors are those of M and AggregationFactor, or
// an unknown reduction.
func RoleWeights(f combin.Family, K, N2 int, b Baseline, r Reduction) (Roles, error) {
	m, err := M(f, K)
	if err != nil {
		return Roles{}, err
	}
	a, err := AggregationFactor(N2, b)
	if err != nil {
		return Roles{}, err
	}
	agg := new(big.Rat).Mul(a, big.NewRat(int64(K), 1))
	switch r {
	case SumReduction:
	case MeanPerRole:
		m.Quo(m, big.NewRat(int64(f.Traces()), 1))
		agg.Quo(agg, big.NewRat(int64(K*N2), 1))
	case MeanPooled:
		total := big.NewRat(int64(f.Traces()+K*N2), 1)
		m.Quo(m, total)
		agg.Quo(agg, total)
	default:
		return Roles{}, fmt.Errorf("estimator: unknown reduction %v", r)
	}
	return Roles{Search: m, Aggregation: agg}, nil
}

// Multipliers returns the factors 1/Search and 1/Aggregation: scaling the
// search advantages by the first and the aggregation advantages by the second
// makes the expected update exactly grad J. It returns an error if a weight
// is zero (K = 1, or N2 = 1 with the within-set baseline): no rescaling
// recovers a term whose expectation vanishes.
func (w Roles) Multipliers() (search, aggregation *big.Rat, err error) {
	if w.Search == nil || w.Search.Sign() == 0 {
		return nil, nil, fmt.Errorf("estimator: search weight is zero (K = 1?): no multiplier makes it unbiased")
	}
	if w.Aggregation == nil || w.Aggregation.Sign() == 0 {
		return nil, nil, fmt.Errorf("estimator: aggregation weight is zero (N2 = 1 with the within-set baseline?): no multiplier makes it unbiased")
	}
	return new(big.Rat).Inv(w.Search), new(big.Rat).Inv(w.Aggregation), nil
}

// Float64s returns the two weights as float64 values.
func (w Roles) Float64s() (search, aggregation float64) {
	search, _ = w.Search.Float64()
	aggregation, _ = w.Aggregation.Float64()
	return search, aggregation
}
