package spiral

import (
	"fmt"
	"math"
	"math/big"

	"spiral/combin"
)

// Missing outputs (docs/findings.md#missing-outputs). An aggregation output
// is missing when it was dropped (its generation failed: a set with fewer
// than N2 rewards) or marked Unscorable. When each of a set's N2 planned
// outputs is missing with probability delta, independently of its content and
// of every other output, a set keeps S ~ Binomial(N2, 1 - delta) scored
// outputs, is empty with probability e = delta^N2, and a problem keeps
// K' ~ Binomial(K, 1 - e) sets. Given the counts, the credit's expectation
// is (S - 1) grad E[r] for a set with the within-set baseline, S grad E[r]
// (S >= 2) leave one out, and M(K') grad_search J for the search part of a
// uniform design, whose remaining sets are again a uniform draw of K'.

// maxMissingSets is the largest K for which RoleWeights sums the expected
// search weight E[M(K')] over K' = 0..K.
const maxMissingSets = 1024

// maxExactMissing bounds the exact form of the expected-count weights: K
// at most 64 sets and K*N2 at most 1024 outputs, so that the powers of delta
// stay below about 54,000 bits.
const (
	maxExactMissingSets    = 64
	maxExactMissingOutputs = 1024
)

// checkMissingRate checks LossOptions.MissingRate: delta in [0, 1).
func checkMissingRate(delta float64) error {
	if !(delta >= 0 && delta < 1) {
		return argumentError(FieldMissingRate, delta, "%v outside [0, 1): the probability that an aggregation output is missing", delta)
	}
	return nil
}

// missingRoleWeights returns the expected-count role weights of the paper's
// update (the advantages as they are) when every aggregation output is
// missing with probability delta independently of its content:
//
//	Search      = E[M(K')] / sd,  K' ~ Binomial(K, 1 - delta^N2), M(0) = M(1) = 0
//	Aggregation = K E[(S - 1)+] / ad   (within the set)
//	            = K E[S; S >= 2] / ad  (leave one out),  S ~ Binomial(N2, 1 - delta)
//
// with E[(S-1)+] = N2 (1 - delta) - 1 + delta^N2 and E[S; S >= 2] =
// N2 (1 - delta) (1 - delta^(N2-1)). The uniform design only: the remaining
// sets of a balanced design are not a balanced design, and their M is not
// computed.
func (c Config) missingRoleWeights(opt LossOptions, sd, ad int64) (RoleWeights, error) {
	delta, k, n2 := opt.MissingRate, c.Sets, c.AggregationsPerSet
	if sd != 1 || ad != 1 {
		return RoleWeights{}, argumentError(FieldReduction, float64(opt.Reduction), "%v with MissingRate = %v: a mean's divisor counts the outputs, which dropped outputs make random; use the reduction sum or seq-mean-token-sum-norm, or the loss coefficients of each batch for its exact update", opt.Reduction, delta)
	}
	fam, err := c.validFamily()
	if err != nil {
		return RoleWeights{}, err
	}
	if c.Design != combin.Uniform {
		return RoleWeights{}, configError("Design", float64(c.Design), fmt.Errorf("balanced design with LossOptions.MissingRate = %v: the M of a balanced design's remaining sets is not computed (ScoredGradient keeps it unbiased)", delta))
	}
	if k > maxMissingSets {
		return RoleWeights{}, configError("Sets", float64(k), symbolic("%d > %d with LossOptions.MissingRate = %v: the expected search weight sums M(K') over K' = 0..K", k, maxMissingSets, delta))
	}
	var w RoleWeights
	exact := k <= maxExactMissingSets && k*n2 <= maxExactMissingOutputs
	if exact {
		r := new(big.Rat).SetFloat64(delta)
		one := big.NewRat(1, 1)
		keep := new(big.Rat).Sub(one, r) // 1 - delta
		// Aggregation.
		n2r := big.NewRat(int64(n2), 1)
		agg := new(big.Rat).Mul(n2r, keep)
		if c.AggregationBaseline == LeaveOneOut {
			agg.Mul(agg, new(big.Rat).Sub(one, ratPow(r, n2-1)))
		} else {
			agg.Sub(agg, one)
			agg.Add(agg, ratPow(r, n2))
		}
		agg.Mul(agg, big.NewRat(int64(k), ad))
		w.Aggregation = agg
		w.AggregationFloat, _ = agg.Float64()
		// Search: sum over K' of Binomial(K, 1 - e) times M(K').
		e := ratPow(r, n2)
		kept := new(big.Rat).Sub(one, e)
		sum := new(big.Rat)
		for kk := 2; kk <= k; kk++ {
			cs, err := fam.Constants(combin.Uniform, kk)
			if err != nil {
				return RoleWeights{}, err
			}
			if cs.M == nil {
				exact = false
				break
			}
			term := new(big.Rat).SetInt(new(big.Int).Binomial(int64(k), int64(kk)))
			term.Mul(term, ratPow(kept, kk))
			term.Mul(term, ratPow(e, k-kk))
			sum.Add(sum, term.Mul(term, cs.M))
		}
		if exact {
			w.Search = sum.Quo(sum, big.NewRat(sd, 1))
			w.SearchFloat, _ = w.Search.Float64()
		}
	}
	if !exact {
		var agg float64
		if c.AggregationBaseline == LeaveOneOut {
			agg = float64(n2) * (1 - delta) * -math.Expm1(float64(n2-1)*math.Log(delta))
		} else {
			agg = float64(float64(n2)*(1-delta)) - 1 + math.Pow(delta, float64(n2))
		}
		if w.Aggregation == nil {
			w.AggregationFloat = float64(k) * agg / float64(ad)
		}
		logE := float64(n2) * math.Log(delta) // -Inf for delta = 0
		sum := 0.0
		for kk := 2; kk <= k; kk++ {
			cs, err := fam.Constants(combin.Uniform, kk)
			if err != nil {
				return RoleWeights{}, err
			}
			sum += float64(binomialPMF(k, kk, logE) * cs.MFloat)
		}
		w.SearchFloat = sum / float64(sd)
	}
	w.SearchMultiplier = inverse(w.Search, w.SearchFloat)
	w.AggregationMultiplier = inverse(w.Aggregation, w.AggregationFloat)
	return w, nil
}

// binomialPMF returns P(X = j) for X ~ Binomial(k, 1 - e), log e = logE.
func binomialPMF(k, j int, logE float64) float64 {
	if math.IsInf(logE, -1) {
		if j == k {
			return 1
		}
		return 0
	}
	lk, _ := math.Lgamma(float64(k + 1))
	lj, _ := math.Lgamma(float64(j + 1))
	lkj, _ := math.Lgamma(float64(k - j + 1))
	log1mE := math.Log1p(-math.Exp(logE))
	return math.Exp(lk - lj - lkj + float64(float64(j)*log1mE) + float64(float64(k-j)*logE))
}

// ratPow returns x^n for n >= 0.
func ratPow(x *big.Rat, n int) *big.Rat {
	num := new(big.Int).Exp(x.Num(), big.NewInt(int64(n)), nil)
	den := new(big.Int).Exp(x.Denom(), big.NewInt(int64(n)), nil)
	return new(big.Rat).SetFrac(num, den)
}

// ScoredConstants are the probabilities by which [ScoredGradient] divides
// its multipliers so that its expected update is grad J when every
// aggregation output is missing with probability delta (see
// [Config.ScoredConstants]).
type ScoredConstants struct {
	// Search is the probability that a problem's search credit is kept:
	// P(K' >= 2) = 1 - e^K - K (1 - e) e^(K-1) for the uniform design,
	// P(K' = K) = (1 - e)^K for the balanced design, e = delta^N2.
	Search float64
	// Aggregation is P(S >= 2) = 1 - delta^N2 - N2 (1 - delta) delta^(N2-1), the
	// probability that a set's aggregation credit is not identically 0.
	Aggregation float64
}

// ScoredConstants returns the constants of [ScoredGradient] for c and the
// missing rate delta in [0, 1). Search is 0 when K = 1 and Aggregation is 0
// when N2 = 1: the role has no credit. It returns an error if c is not
// valid or delta is outside [0, 1).
func (c Config) ScoredConstants(delta float64) (ScoredConstants, error) {
	if err := c.Validate(); err != nil {
		return ScoredConstants{}, err
	}
	if err := checkMissingRate(delta); err != nil {
		return ScoredConstants{}, err
	}
	return c.scoredConstants(delta), nil
}

func (c Config) scoredConstants(delta float64) ScoredConstants {
	k, n2 := float64(c.Sets), float64(c.AggregationsPerSet)
	var sc ScoredConstants
	if c.AggregationsPerSet >= 2 {
		sc.Aggregation = 1 - float64(math.Pow(delta, n2-1)*float64(delta+float64(n2*(1-delta))))
	}
	if c.Sets >= 2 {
		e := math.Pow(delta, n2)
		if c.Design == combin.Balanced {
			sc.Search = math.Exp(k * math.Log1p(-e))
		} else {
			sc.Search = 1 - float64(math.Pow(e, k-1)*float64(e+float64(k*(1-e))))
		}
	}
	return sc
}

// scoredTable caches M(K') of one Config's family and design for
// [ScoredGradient], for the counts K' that batches hold.
type scoredTable struct {
	shape  creditShape
	delta  float64
	consts ScoredConstants
	fam    combin.Family
	ks     []int
	ms     []float64
}

// m returns M(k) for k scored sets of c's design (a balanced design's
// remaining sets only for k = K).
func (t *scoredTable) m(c *Config, k int) (float64, error) {
	for i, kk := range t.ks {
		if kk == k {
			return t.ms[i], nil
		}
	}
	consts, err := t.fam.Constants(c.Design, k)
	if err != nil {
		return 0, err
	}
	t.ks = append(t.ks, k)
	t.ms = append(t.ms, consts.MFloat)
	return consts.MFloat, nil
}

// scoredMultipliers writes to mult (the ns = P*N1 search traces, then the
// outputs) ScoredGradient's multipliers: for a search trace of a problem of
// K' scored sets, 1/(M(K') Search) when K' >= 2 (for a balanced design
// only when K' = K) and 0 otherwise; for an aggregation output of a set of
// S scored outputs, 1/(K (S - 1) Aggregation) within the set or
// 1/(K S Aggregation) leave one out when S >= 2, and 0 otherwise. A set's
// outputs are N2 or in.RewardCounts'; its scored outputs are credit's
// ScoredOutputs, or without a credit those not marked in in.Unscorable.
func (c *Config) scoredMultipliers(mult []float64, t *scoredTable, credit *BatchCredit, in *Batch, ns int, delta float64) error {
	if err := checkMissingRate(delta); err != nil {
		return err
	}
	if t.shape != c.creditShape() || t.delta != delta || t.ks == nil {
		fam, err := c.validFamily()
		if err != nil {
			return err
		}
		*t = scoredTable{shape: c.creditShape(), delta: delta, consts: c.scoredConstants(delta), fam: fam, ks: t.ks[:0], ms: t.ms[:0]}
	}
	n1, k := c.SearchTraces, c.Sets
	p, na := ns/n1, len(mult)-ns
	if in.RewardCounts != nil && len(in.RewardCounts) != p*k {
		return argumentError("Batch.RewardCounts", float64(len(in.RewardCounts)), "len(RewardCounts) = %d, want P*K = %d*%d", len(in.RewardCounts), p, k)
	}
	if credit == nil && in.Unscorable != nil && len(in.Unscorable) != na {
		return argumentError("Batch.Unscorable", float64(len(in.Unscorable)), "len(Unscorable) = %d, want the %d aggregation outputs", len(in.Unscorable), na)
	}
	agg := 1 / (float64(k) * t.consts.Aggregation)
	o := 0
	for q := range p {
		// The scored outputs of the problem's sets, and its scored sets.
		sets := 0
		for s := q * k; s < (q+1)*k; s++ {
			count := c.outputsOf(in, s)
			if count < 1 || count > c.AggregationsPerSet {
				return argumentError("Batch.RewardCounts", float64(count), "count %d of set %d outside [1, N2 = %d]", count, s, c.AggregationsPerSet)
			}
			if c.scoredOutputs(credit, in, s, o, na) > 0 {
				sets++
			}
			o += count
		}
		ms := 0.0
		if sets >= 2 && (c.Design == combin.Uniform || sets == k) && t.consts.Search > 0 {
			m, err := t.m(c, sets)
			if err != nil {
				return err
			}
			if m > 0 {
				ms = 1 / (m * t.consts.Search)
			}
		}
		fill(mult[q*n1:(q+1)*n1], ms)
	}
	if o != na {
		return argumentError("Batch.RewardCounts", float64(o), "the counts hold %d outputs, want the %d aggregation advantages", o, na)
	}
	o = 0
	for s := range p * k {
		count, ma := c.outputsOf(in, s), 0.0
		if scored := c.scoredOutputs(credit, in, s, o, na); scored >= 2 && t.consts.Aggregation > 0 {
			a := scored - 1
			if c.AggregationBaseline == LeaveOneOut {
				a = scored
			}
			ma = agg / float64(a)
		}
		fill(mult[ns+o:ns+o+count], ma)
		o += count
	}
	return nil
}

// outputsOf returns the number of outputs of set s of in.
func (c *Config) outputsOf(in *Batch, s int) int {
	if in.RewardCounts != nil {
		return in.RewardCounts[s]
	}
	return c.AggregationsPerSet
}

// scoredOutputs returns the scored outputs of set s, whose outputs start
// at o: credit's count, or the outputs of in not marked Unscorable (none
// past na, the outputs there are).
func (c *Config) scoredOutputs(credit *BatchCredit, in *Batch, s, o, na int) int {
	if credit != nil {
		return credit.ScoredOutputs[s]
	}
	end := min(o+c.outputsOf(in, s), na)
	if in.Unscorable == nil {
		return max(end-o, 0)
	}
	scored := 0
	for j := o; j < end; j++ {
		if !in.Unscorable[j] {
			scored++
		}
	}
	return scored
}
