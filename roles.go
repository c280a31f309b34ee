package spiral

import (
	"fmt"
	"math/big"

	"spiral/loss"
)

// AggregationBaseline is the reference subtracted from an aggregation
// output's reward in the aggregation advantage.
type AggregationBaseline int

const (
	// WithinSet is the paper's baseline: A_agg(j) = r_j - f with f the mean
	// of all N2 rewards of the set, the output's own included. Its expected
	// update is (N2 - 1) grad E[r] per set.
	WithinSet AggregationBaseline = iota
	// LeaveOneOut leaves the output's own reward out of the mean:
	// A_agg(j) = r_j - (1/(N2-1)) sum_{k != j} r_k = N2/(N2-1) (r_j - f).
	// It needs N2 >= 2; its expected update is N2 grad E[r] per set.
	LeaveOneOut
)

// String returns "WithinSet", "LeaveOneOut" or "AggregationBaseline(v)".
func (b AggregationBaseline) String() string {
	switch b {
	case WithinSet:
		return "WithinSet"
	case LeaveOneOut:
		return "LeaveOneOut"
	}
	return fmt.Sprintf("AggregationBaseline(%d)", int(b))
}

// RoleWeights are the weights the expected SPIRAL update puts on the two
// parts of the joint gradient grad J = grad_search J + grad_agg J
// (docs/findings.md#aggregation-factor-and-role-weights):
//
//	E[update] = Search grad_search J + Aggregation grad_agg J.
//
// The update follows grad J (up to one positive scale) only when the two
// weights are equal; scaling the search terms by SearchMultiplier and the
// aggregation terms by AggregationMultiplier makes it exactly grad J.
type RoleWeights struct {
	// Search and Aggregation are the exact weights; Search is nil when
	// M is beyond combin's exact cost bound (see [Config.M]).
	Search, Aggregation *big.Rat
	// SearchFloat and AggregationFloat are the weights as float64.
	SearchFloat, AggregationFloat float64
	// SearchMultiplier = 1/SearchFloat and AggregationMultiplier =
	// 1/AggregationFloat. A zero weight (K = 1 for search, N2 = 1 with
	// WithinSet for aggregation) belongs to a role whose advantages are
	// identically 0, in every draw: its multiplier is 0.
	SearchMultiplier, AggregationMultiplier float64
}

// RoleWeights returns the role weights of c's update with the advantages
// as they are (the paper's update) under c's AggregationBaseline and the
// trainer's loss opt.Reduction, reduced over one
// problem's outputs (opt.Update is not read), for c's family and design (M
// is [Config.M]: the balanced design's when Design is combin.Balanced):
//
//	sum, seq-mean-token-sum-norm:   Search = M,              Aggregation = K a
//	seq-mean-token-sum, trl-rloo,
//	trl-dr-grpo, pooled:            Search = M/(N1 + K N2),  Aggregation = K a/(N1 + K N2)
//	the same with SplitRoles:       Search = M/N1,           Aggregation = a/N2
//
// with a = N2 - 1 for WithinSet and a = N2 for LeaveOneOut, every output
// having at least one token; the trainers' constants (S, and for a batch
// of P problems the further 1/P of the means) are left out. The token means
// and the per-sequence token means weight outputs by their lengths, so
// their weights are not constants: [Config.LossCoefficients] makes their
// update exact per batch instead. At the paper's configuration (WithinSet,
// sum) the weights are 1365/1541 ~ 0.886 and 12.
//
// With opt.MissingRate = delta > 0 (each aggregation output missing with
// probability delta, independently of its content) the weights are the
// expected counts (docs/findings.md#missing-outputs): Search = E[M(K')]
// over the K' ~ Binomial(K, 1 - delta^N2) sets with a scored output, and
// Aggregation = K E[(S-1)+] within the set or K E[S; S >= 2] leave one
// out, S ~ Binomial(N2, 1 - delta) (81/32 and 135/32 for N1 = 2, n = 1,
// K = 2, N2 = 3, delta = 1/4, against 4 and 6); exact for K <= 64 and
// K N2 <= 1024, floats up to K = 1024, and only for the uniform design and
// the sum reductions.
//
// It returns an error if c is not valid (LeaveOneOut with N2 = 1
// included), the reduction is undefined or weights outputs by their
// lengths, or MissingRate is outside [0, 1) or not supported as above.
func (c Config) RoleWeights(opt LossOptions) (RoleWeights, error) {
	consts, err := c.Constants()
	if err != nil {
		return RoleWeights{}, err
	}
	if err := checkMissingRate(opt.MissingRate); err != nil {
		return RoleWeights{}, err
	}
	n1, k, n2 := int64(c.SearchTraces), int64(c.Sets), int64(c.AggregationsPerSet)
	a := n2 - 1 // Constants validated c: LeaveOneOut has N2 >= 2
	if c.AggregationBaseline == LeaveOneOut {
		a = n2
	}
	// The weights are M/sd and k a/ad: the divisors of the reduction.
	var sd, ad int64
	switch opt.Reduction {
	case loss.Sum, loss.SeqMeanTokenSumNorm:
		sd, ad = 1, 1
	case loss.SeqMeanTokenSum, loss.TRLRLOO, loss.TRLDrGRPO:
		sd, ad = n1+k*n2, n1+k*n2
		if opt.SplitRoles {
			sd, ad = n1, k*n2
		}
	default:
		if !opt.Reduction.LengthWeighted() {
			return RoleWeights{}, argumentError(FieldReduction, float64(opt.Reduction), "%d is not a defined Reduction", int(opt.Reduction))
		}
		return RoleWeights{}, argumentError(FieldReduction, float64(opt.Reduction), "%v weights each output by its length (or the batch's tokens): its role weights are not constants; the loss coefficients of each batch give its exact update", opt.Reduction)
	}
	if opt.MissingRate != 0 {
		return c.missingRoleWeights(opt, sd, ad)
	}
	w := RoleWeights{Aggregation: big.NewRat(k*a, ad)}
	if consts.M != nil {
		w.Search = new(big.Rat).Quo(consts.M, big.NewRat(sd, 1))
		w.SearchFloat, _ = w.Search.Float64()
	} else {
		w.SearchFloat = consts.MFloat / float64(sd)
	}
	w.AggregationFloat, _ = w.Aggregation.Float64()
	w.SearchMultiplier = inverse(w.Search, w.SearchFloat)
	w.AggregationMultiplier = inverse(w.Aggregation, w.AggregationFloat)
	return w, nil
}

// inverse returns the float64 nearest 1/x for the exact x (when not nil)
// or 1/xf, and 0 for x = 0.
func inverse(x *big.Rat, xf float64) float64 {
	if x != nil {
		if x.Sign() == 0 {
			return 0
		}
		f, _ := new(big.Rat).Inv(x).Float64()
		return f
	}
	if xf == 0 {
		return 0
	}
	return 1 / xf
}
