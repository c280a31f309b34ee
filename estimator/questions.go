package estimator

import (
	"fmt"
	"math/big"
	"spiral"
)

// checkBaseline returns an error if b is not spiral.WithinSet or
// spiral.LeaveOneOut, N2 < 1, or b is spiral.LeaveOneOut with N2 < 2.
func checkBaseline(N2 int, b spiral.AggregationBaseline) error {
	if N2 < 1 {
		return argError(FieldN2, -1, N2, "%d < 1", N2)
	}
	switch b {
	case spiral.WithinSet:
	case spiral.LeaveOneOut:
		if N2 < 2 {
			return argError(FieldN2, -1, N2, "%d < 2, which the leave-one-out baseline needs", N2)
		}
	default:
		return undefinedError(FieldBaseline, int(b), "AggregationBaseline")
	}
	return nil
}

// aggAdvantages writes into adv the aggregation advantages of rewards r under
// baseline b (b and len(r) already validated).
func aggAdvantages(adv []*big.Rat, r []int, b spiral.AggregationBaseline) {
	N2 := len(r)
	sum := 0
	for _, x := range r {
		sum += x
	}
	for j, x := range r {
		if b == spiral.WithinSet {
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
	if agg == nil {
		return nil, elementError(FieldAgg, -1, "nil, want a *Categorical")
	}
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
		return argError(FieldReward, -1, len(reward), "len = %d, want V = %d, one per output", len(reward), V)
	}
	one := big.NewRat(1, 1)
	for z, r := range reward {
		if r == nil {
			return elementError(FieldReward, z, "nil")
		}
		if r.Sign() < 0 || r.Cmp(one) > 0 {
			return elementError(FieldReward, z, "%s outside [0, 1]", r.RatString())
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
// baseline b. It equals a * RewardGradient(agg, reward) with a = N2 - 1
// for spiral.WithinSet and a = N2 for spiral.LeaveOneOut
// (docs/findings.md#aggregation-factor-and-role-weights). It returns an
// error for invalid arguments, or when the enumeration would take more than
// [MaxExactSteps] big-number operations: (2 V2)^N2 outcomes of N2 (V2+4)
// operations each (N2 up to 8 for V2 = 2, 6 for V2 = 3, 4 for V2 = 8).
func AggregationCredit(agg *Categorical, reward []*big.Rat, N2 int, b spiral.AggregationBaseline) ([]*big.Rat, error) {
	if err := checkBaseline(N2, b); err != nil {
		return nil, err
	}
	if agg == nil {
		return nil, elementError(FieldAgg, -1, "nil, want a *Categorical")
	}
	if err := checkRewards(reward, agg.Size()); err != nil {
		return nil, err
	}
	V := agg.Size()
	leaves, err := exactSteps(FieldN2, N2, "AggregationCredit", fmt.Sprintf("(2V)^N2 = %d^%d outcomes of N2 = %d outputs over agg's V = %d outputs and their rewards", 2*V, N2, N2, V),
		2*V, N2, N2*(V+4))
	if err != nil {
		return nil, err
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
	coef, term := new(big.Rat), new(big.Rat)
	for o := range outputOutcomes(agg.p, reward, N2, leaves) {
		aggAdvantages(adv, o.R, b)
		for j := range N2 {
			coef.Mul(o.Prob, adv[j])
			for u := range out {
				out[u].Add(out[u], term.Mul(coef, scores[o.Z[j]][u]))
			}
		}
	}
	return out, nil
}
