package spiral

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"spiral/advantage"
	"spiral/lengthgate"
)

// Batch is the input of [Config.CreditBatch]: many problems of one [Config],
// laid out flat, problem after problem, in the trainer's order. With P
// problems, K sets of n candidates and N2 aggregation outputs per set, and
// N1 search traces:
//
//	Groups[(q*K+i)*n + j]              candidate j of group i of problem q
//	Rewards[(q*K+i)*N2 + j]            reward of aggregation output j of set i
//	AggregationLengths[(q*K+i)*N2 + j] its length in generated tokens
//	SearchLengths[q*N1 + y]            length of search trace y of problem q
//
// P is len(Groups)/(K*n); [Planner.PlanTo] writes Groups in this layout.
// Every set has exactly N2 rewards; a problem with a dropped generation
// (fewer rewards in some set) goes through [Config.Credit], which accepts
// ragged sets.
type Batch struct {
	Groups  []int
	Rewards []float64
	// SearchLengths is required when the search gate is enabled; when it is
	// disabled it may be nil, and is checked if it is not.
	SearchLengths []int
	// AggregationLengths is required when the aggregation gate is enabled;
	// when it is disabled it may be nil, and is checked if it is not.
	AggregationLengths []int
}

// BatchCredit is the result of [Config.CreditBatch], in the layout of the
// [Batch], problem q's entries at the same offsets as its inputs. Fields that
// hold one value per problem are indexed by q.
//
// The credit for the search policy and the credit for the aggregation policy
// are kept apart (Search and Aggregation) so that the two-model variant of
// SPIRAL, a search policy theta and an aggregation policy phi, routes each to
// its own model; with one shared policy both go to the same model.
//
// The zero value is ready to use. Reuse one BatchCredit from step to step:
// once its slices have grown to a batch's size, CreditBatch allocates nothing.
// A BatchCredit must not be used by two calls at the same time; different
// BatchCredits may be filled concurrently from one Config.
type BatchCredit struct {
	// Problems is P, the number of problems of the last successful call.
	Problems int
	// SetScores[q*K+i] is f_i of problem q, the mean reward of set i.
	SetScores []float64
	// SetAdvantages[q*K+i] is A_set = f_i - fbar of problem q.
	SetAdvantages []float64
	// Search is the search policy's credit.
	Search BatchSearchCredit
	// Aggregation is the aggregation policy's credit.
	Aggregation BatchAggregationCredit
	// NoSignal[q] reports whether every advantage of problem q, of both
	// roles, is 0 after gating: the problem gives no gradient, and a trainer
	// using the paper's dynamic sampling resamples it.
	NoSignal []bool

	layout advantage.Batch[float64]       // sizes of the last batch; Members and Rewards alias the input during a call
	adv    advantage.BatchCredit[float64] // views of the exported slices
	chk    planChecker
}

// BatchSearchCredit is the search policy's share of a [BatchCredit].
type BatchSearchCredit struct {
	// Advantages[q*N1+y] is A_search of trace y of problem q after the
	// search gate: the scalar that multiplies the trace's whole sequence
	// log-probability gradient. 0 for a trace in no set.
	Advantages []float64
	// Appearances[q*N1+y] is |G(y)|, the number of sets of problem q that
	// hold trace y.
	Appearances []int
	// InNoSet[q] is the number of traces of problem q that are in no set.
	InNoSet []int
	// Gate[q] reports what the search gate did to problem q.
	Gate []lengthgate.Report
	// NoSignal[q] reports whether every search advantage of problem q is 0.
	NoSignal []bool
}

// BatchAggregationCredit is the aggregation policy's share of a
// [BatchCredit].
type BatchAggregationCredit struct {
	// Advantages[(q*K+i)*N2+j] is A_agg = r - f_i of output j of set i of
	// problem q after the aggregation gate.
	Advantages []float64
	// Gate[q] reports what the aggregation gate did to problem q.
	Gate []lengthgate.Report
	// NoSignal[q] reports whether every aggregation advantage of problem q
	// is 0.
	NoSignal []bool
}

// GateTotals returns the gate reports of every problem of b added up, per
// role, for logging.
func (b *BatchCredit) GateTotals() lengthgate.GatesReport {
	var r lengthgate.GatesReport
	for q := range b.Problems {
		r.Search.Add(b.Search.Gate[q])
		r.Aggregation.Add(b.Aggregation.Gate[q])
	}
	return r
}

// NoSignalCount returns the number of problems of b that give no signal.
func (b *BatchCredit) NoSignalCount() int {
	m := 0
	for _, ns := range b.NoSignal[:b.Problems] {
		if ns {
			m++
		}
	}
	return m
}

// CreditBatch computes SPIRAL's credit (see [Config.Credit]) for every
// problem of in and writes it to dst, in input order. It is the one-problem
// computation applied to each problem in turn, with the same results.
//
// CreditBatch checks all of c and in before it writes anything, and on error
// leaves dst untouched. Errors name the field, the problem and the position:
// a length of in that does not fit c (len(Groups) not a multiple of K*n,
// len(Rewards) != P*K*N2, lengths missing for an enabled gate or of the
// wrong length); a plan that does not fit c (see [Config.CheckPlan]); a
// reward that is NaN, infinite or larger in magnitude than
// [advantage.MaxAbsReward]; a negative length.
//
// It allocates only to grow dst's slices (and, for K > 16 or N1 > 64, the
// scratch memory of its plan check, which dst keeps), so a dst reused for
// batches of one size allocates nothing after the first. It holds no state
// outside dst and keeps no reference to in: calls on different dsts may run
// concurrently. It panics if dst is nil.
func (c Config) CreditBatch(dst *BatchCredit, in Batch) error {
	if err := c.Validate(); err != nil {
		return err
	}
	n1, n, k, n2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
	if len(in.Groups)%(k*n) != 0 {
		return fmt.Errorf("spiral: len(Batch.Groups) = %d is not a multiple of K*n = %d*%d", len(in.Groups), k, n)
	}
	p := len(in.Groups) / (k * n)
	if want := p * k * n2; len(in.Rewards) != want {
		return fmt.Errorf("spiral: len(Batch.Rewards) = %d, want P*K*N2 = %d*%d*%d = %d for %d problems", len(in.Rewards), p, k, n2, want, p)
	}
	if err := checkLengthsLen("Batch.SearchLengths", in.SearchLengths, p*n1, c.Gates.Search, "P*N1"); err != nil {
		return err
	}
	if err := checkLengthsLen("Batch.AggregationLengths", in.AggregationLengths, p*k*n2, c.Gates.Aggregation, "P*K*N2"); err != nil {
		return err
	}
	for q := range p {
		if err := dst.chk.check(c, in.Groups[q*k*n:(q+1)*k*n]); err != nil {
			return fmt.Errorf("spiral: Batch.Groups: problem %d: %w", q, err)
		}
	}
	if at, err := checkRewards(in.Rewards); err != nil {
		q, i, j := at/(k*n2), at/n2%k, at%n2
		return fmt.Errorf("spiral: Batch.Rewards[%d] (problem %d, set %d, output %d) = %v: %w", at, q, i, j, in.Rewards[at], err)
	}
	if at := firstNegative(in.SearchLengths); at >= 0 {
		return fmt.Errorf("spiral: Batch.SearchLengths[%d] (problem %d, trace %d) = %d < 0", at, at/n1, at%n1, in.SearchLengths[at])
	}
	if at := firstNegative(in.AggregationLengths); at >= 0 {
		q, i, j := at/(k*n2), at/n2%k, at%n2
		return fmt.Errorf("spiral: Batch.AggregationLengths[%d] (problem %d, set %d, output %d) = %d < 0", at, q, i, j, in.AggregationLengths[at])
	}

	dst.resize(p, n1, k, len(in.Rewards))
	l := &dst.layout
	fill(l.Traces, n1)
	fill(l.Sets, k)
	fill(l.SetSizes, n)
	fill(l.RewardCounts, n2)
	l.Members, l.Rewards = in.Groups, in.Rewards
	c.creditValid(dst, in.SearchLengths, in.AggregationLengths)
	l.Members, l.Rewards = nil, nil
	return nil
}

// creditValid computes the credit of the checked input described by
// dst.layout (each problem with N1 traces and K sets of n members, each set
// with its own reward count) into dst, already resized. The lengths are nil
// or checked, in the layouts of the traces and of the rewards.
//
// The credit itself is computed by advantage.ComputeBatch, with the sets
// vouched for: the caller has checked them (each plan by the plan check),
// and everything else, with errors in this package's terms.
func (c Config) creditValid(dst *BatchCredit, searchLengths, aggLengths []int) {
	dst.layout.SetsChecked = true
	if err := advantage.ComputeBatch(&dst.adv, dst.layout); err != nil {
		panic("spiral: checked input rejected: " + err.Error())
	}
	n1, k := c.SearchTraces, c.Sets
	r := 0 // offset of problem q's rewards
	for q := range dst.Problems {
		nr := 0
		for _, cnt := range dst.layout.RewardCounts[q*k : (q+1)*k] {
			nr += cnt
		}
		searchZero := gate(c.Gates.Search, dst.Search.Advantages[q*n1:(q+1)*n1], sub(searchLengths, q*n1, (q+1)*n1), &dst.Search.Gate[q])
		aggZero := gate(c.Gates.Aggregation, dst.Aggregation.Advantages[r:r+nr], sub(aggLengths, r, r+nr), &dst.Aggregation.Gate[q])
		inNoSet := 0
		for _, a := range dst.Search.Appearances[q*n1 : (q+1)*n1] {
			inNoSet += b2i(a == 0)
		}
		dst.Search.InNoSet[q] = inNoSet
		dst.Search.NoSignal[q] = searchZero
		dst.Aggregation.NoSignal[q] = aggZero
		dst.NoSignal[q] = searchZero && aggZero
		r += nr
	}
}

// gate applies the valid gate g of Eq. 8 to adv in place, with the checked
// lengths (nil only when g is disabled), writes to rep what
// [lengthgate.Gate.Apply] would report, and returns whether every advantage
// is 0 afterwards. It only skips the checks that Apply would repeat on
// every call (the inputs were checked once for the whole batch), and
// branches on the data only for a positive advantage of an output that
// reaches the target length, which is rare in training, not on the sign of
// every advantage, which a random reward makes unpredictable. It zeroes a
// positive advantage whose length is above a limit, the largest length
// that g.KeepsPositive keeps (Target, or Target-1 when the gate takes the
// boundary). TestGateMatchesLengthgate holds it equal to Apply, bit for
// bit.
func gate(g lengthgate.Gate, adv []float64, lengths []int, rep *lengthgate.Report) (zero bool) {
	var positive, atTarget, gated int
	mass := 0.0        // the positive advantages zeroed, in order
	var nonzero uint64 // the bits of every advantage after gating, ORed
	if !g.Enabled() {
		for _, a := range adv {
			positive += b2i(a > 0)
			nonzero |= math.Float64bits(a)
		}
	} else {
		limit := g.Target
		if !g.KeepsPositive(limit) {
			limit--
		}
		lengths = lengths[:len(adv)]
		for i, a := range adv {
			pos := b2i(a > 0)
			positive += pos
			// Rare in training: few outputs reach the target length.
			if l := lengths[i]; pos&b2i(l >= g.Target) != 0 {
				atTarget += b2i(l == g.Target)
				if l > limit {
					gated++
					mass += a
					adv[i] = 0
					continue
				}
			}
			nonzero |= math.Float64bits(a)
		}
	}
	rep.Outputs, rep.Positive, rep.AtTarget, rep.Gated, rep.MassRemoved = len(adv), positive, atTarget, gated, mass
	return nonzero&^(1<<63) == 0 // -0 is 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// resize sets the lengths of every slice of b for p problems of n1 traces
// and k sets with nr rewards in all, growing only slices that are too
// short, and points b.adv at the exported slices.
func (b *BatchCredit) resize(p, n1, k, nr int) {
	b.Problems = p
	b.SetScores = grow(b.SetScores, p*k)
	b.SetAdvantages = grow(b.SetAdvantages, p*k)
	b.NoSignal = grow(b.NoSignal, p)
	s := &b.Search
	s.Advantages = grow(s.Advantages, p*n1)
	s.Appearances = grow(s.Appearances, p*n1)
	s.InNoSet = grow(s.InNoSet, p)
	s.Gate = grow(s.Gate, p)
	s.NoSignal = grow(s.NoSignal, p)
	a := &b.Aggregation
	a.Advantages = grow(a.Advantages, nr)
	a.Gate = grow(a.Gate, p)
	a.NoSignal = grow(a.NoSignal, p)
	l := &b.layout
	l.Traces = grow(l.Traces, p)
	l.Sets = grow(l.Sets, p)
	l.SetSizes = grow(l.SetSizes, p*k)
	l.RewardCounts = grow(l.RewardCounts, p*k)
	b.adv.SetScores = b.SetScores
	b.adv.SetAdvantages = b.SetAdvantages
	b.adv.Search = s.Advantages
	b.adv.Appearances = s.Appearances
	b.adv.Aggregation = a.Advantages
}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

func fill(s []int, v int) {
	for i := range s {
		s[i] = v
	}
}

// sub returns s[lo:hi], or nil when s is nil.
func sub(s []int, lo, hi int) []int {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// checkLengthsLen checks the length of a lengths slice named name that must
// hold want entries (the expression wantExpr) when the gate g is enabled,
// and be nil or hold want entries otherwise.
func checkLengthsLen(name string, lengths []int, want int, g lengthgate.Gate, wantExpr string) error {
	switch {
	case lengths == nil && g.Enabled():
		return fmt.Errorf("spiral: %s is nil, but its gate is enabled (Target = %d)", name, g.Target)
	case lengths != nil && len(lengths) != want:
		return fmt.Errorf("spiral: len(%s) = %d, want %s = %d", name, len(lengths), wantExpr, want)
	}
	return nil
}

// Errors for bad rewards, wrapped with the position.
var (
	errNotFinite = errors.New("reward is not finite")
	errTooLarge  = fmt.Errorf("reward magnitude exceeds advantage.MaxAbsReward = %g", advantage.MaxAbsReward)
)

// checkRewards returns the index of the first reward that advantage would
// reject (NaN, infinite, or |r| > advantage.MaxAbsReward) and why, or -1 and
// nil.
func checkRewards(rs []float64) (int, error) {
	for i, x := range rs {
		if !(math.Abs(x) <= advantage.MaxAbsReward) { // true for NaN
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return i, errNotFinite
			}
			return i, errTooLarge
		}
	}
	return -1, nil // unreachable
}

// firstNegative returns the index of the first negative length, or -1. It
// first ORs all of them, four at a time: the result is negative exactly
// when one of them is.
func firstNegative(ls []int) int {
	var o0, o1, o2, o3 int
	for rest := ls; len(rest) >= 4; rest = rest[4:] {
		o0 |= rest[0]
		o1 |= rest[1]
		o2 |= rest[2]
		o3 |= rest[3]
	}
	for _, l := range ls[len(ls)&^3:] {
		o0 |= l
	}
	if o0|o1|o2|o3 >= 0 {
		return -1
	}
	return slices.IndexFunc(ls, func(l int) bool { return l < 0 })
}
