package spiral

import (
	"fmt"
	"iter"
	"math"
	"slices"

	"spiral/advantage"
	"spiral/internal/credit"
	"spiral/internal/gating"
	"spiral/internal/inputerr"
	"spiral/lengthgate"
)

// Span locates one problem in a [Batch] and its [BatchCredit]: its search
// traces are SearchLengths[Trace : Trace+Traces] (and the same range of
// Search and Appearances), its sets the range [Set, Set+Sets) of
// SetScores, SetAdvantages, ScoredOutputs and RewardCounts, its members
// [Member, Member+Members) of Plans.AppendMembers, and its aggregation
// outputs Rewards[Reward : Reward+Rewards] (and the same range of
// Unscorable, AggregationLengths and Aggregation). It is [advantage.Span].
type Span = advantage.Span

// Batch is the input of [Config.CreditBatch]: the problems of one training
// step, problem after problem, in the order of their [Plans]. With P
// problems of N1 search traces and K sets:
//
//	SearchLengths[q*N1 + y]   length of search trace y of problem q
//	Rewards[o]                reward of aggregation output o
//	AggregationLengths[o]     its length in generated tokens
//	Unscorable[o]             whether it could not be scored
//
// where the outputs o are numbered set after set: N2 per set, or
// RewardCounts[q*K+i] for set i of problem q when RewardCounts is not nil.
// [BatchCredit.Span] gives each problem's ranges.
type Batch struct {
	// Plans are the problems' plans, drawn by a [Planner] or checked by
	// [Config.CheckPlans] for a Config of the same N1, n, K, Ordered and
	// Design.
	Plans *Plans
	// Rewards holds the aggregation rewards, in the order above.
	Rewards []float64
	// RewardCounts, if not nil, holds the number of outputs of every set,
	// P*K entries in [1, N2]: a set whose generation failed has fewer. Nil
	// means N2 outputs for every set.
	RewardCounts []int
	// Unscorable, if not nil, is parallel to Rewards: an output marked true
	// could not be scored. Its reward is not read (it may be NaN); it is
	// left out of its set's score and of every baseline, and gets
	// advantage 0.
	Unscorable []bool
	// SearchLengths (P*N1 entries) and AggregationLengths (parallel to
	// Rewards) are the outputs' lengths in generated tokens, which the
	// length gates and the overlong punishment read. Each is required when
	// something reads it and may be nil otherwise.
	SearchLengths, AggregationLengths []int
}

// BatchCredit is the result of [Config.CreditBatch], in the layout of the
// [Batch]: per search trace, per aggregation output, per set and per
// problem, each problem's ranges given by [BatchCredit.Span]. Search goes
// to the search policy and Aggregation to the aggregation policy, which
// may be two models.
//
// The zero value is ready to use. Reuse one BatchCredit from step to step:
// once its slices have grown to a batch's size, CreditBatch allocates
// nothing. A BatchCredit must not be used by two calls at the same time;
// different BatchCredits may be filled concurrently from one Config.
type BatchCredit struct {
	// Search[t] is A_search of search trace t after the search gate: 0 for
	// a trace in no scored set and for a problem that is skipped (see
	// [BatchCredit.Skip]).
	Search []float64
	// Aggregation[o] is A_agg of aggregation output o after the
	// aggregation gate: 0 for an unscorable output and for a problem that
	// is skipped.
	Aggregation []float64
	// SetScores[s] is f of set s (the mean of its scored, shaped rewards)
	// and SetAdvantages[s] = f - fbar; sets numbered q*K+i.
	SetScores, SetAdvantages []float64
	// ScoredOutputs[s] is the number of scored outputs of set s.
	ScoredOutputs []int
	// Appearances[t] is |G(y)|, the number of scored sets of its problem
	// that hold search trace t.
	Appearances []int
	// ScoredSets[q] is the number of sets of problem q with a scored
	// output, those that fbar averages.
	ScoredSets []int
	// Problems is P, the number of problems of the last call.
	Problems int
	// Rejected[q] reports that problem q's input was bad: it is listed in
	// the returned *BatchError and all its credit is 0.
	Rejected []bool
	// NoSignal[q] reports that problem q's raw rewards give no gradient:
	// every search and aggregation advantage computed from them is 0 (for
	// instance, all its rewards are equal, or a balanced plan's sets score
	// 1, 1, 0, 0). A trainer using dynamic sampling resamples it. Its
	// search and aggregation advantages are 0 even when reward shaping
	// would have moved them (its set scores are still reported).
	NoSignal []bool
	// OutOfRange[q] reports that the mean raw reward of problem q lies
	// outside Config.RewardRange. Its search and aggregation advantages
	// are 0.
	OutOfRange []bool
	// Gates is what the length gates did, added up over the batch.
	Gates lengthgate.GatesReport
	// Overlong is what Config.Overlong did, added up over the batch.
	Overlong lengthgate.PenaltyReport

	spans      []Span
	plainSpans bool                   // spans are those of a batch of shape key without RewardCounts
	kernel     credit.Output[float64] // the credit, whose slices the exported ones are
	in         credit.Input[float64]  // the kernel's view of the last batch
	key        layoutKey              // the shape of the last batch: of in's SetSizes and counts, the spans and the kernel's slices
	counts     []int                  // N2 for every set
	rewards    []float64              // the owned copy of the rewards, shaped by Config.Overlong
	raw        credit.Output[float64] // the credit of one problem's raw rewards (rawZero)
	bad        []*InputError          // the rejected problems' errors
	zero       []bool                 // the kernel found every advantage of problem q 0
	made       creditShape            // the shape of the Config that filled it (Config.LossCoefficients compares)
	valid      validConfig            // the last Config found valid
}

// layoutKey is the shape of the kernel layout kept in a BatchCredit.
type layoutKey struct{ problems, traces, sets, setSize, outputs int }

// Span returns the ranges of problem q in a [Batch] of c without
// RewardCounts (N2 outputs for every set), where a trainer writes the
// problem's rewards and lengths: its search traces [q*N1, (q+1)*N1), sets
// [q*K, (q+1)*K), members [q*K*n, (q+1)*K*n) and outputs [q*K*N2,
// (q+1)*K*N2). With RewardCounts, [BatchCredit.Span] gives the ranges
// after the credit.
func (c Config) Span(q int) Span {
	n1, k, n, n2 := c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet
	return Span{Trace: q * n1, Traces: n1, Set: q * k, Sets: k, Member: q * k * n, Members: k * n, Reward: q * k * n2, Rewards: k * n2}
}

// Span returns the ranges of problem q of the last call. It panics if q
// is not in [0, Problems).
func (b *BatchCredit) Span(q int) Span {
	if q < 0 || q >= b.Problems {
		panic(fmt.Sprintf("spiral: Span(%d) with Problems = %d", q, b.Problems))
	}
	return b.spans[q]
}

// Spans returns each problem of the last call with its ranges, in order.
func (b *BatchCredit) Spans() iter.Seq2[int, Span] {
	return func(yield func(int, Span) bool) {
		for q, sp := range b.spans[:b.Problems] {
			if !yield(q, sp) {
				return
			}
		}
	}
}

// Skip reports whether problem q of the last call gives no update: it was
// rejected (Rejected[q]), its raw rewards give no signal (NoSignal[q]), or
// its mean raw reward is out of range (OutOfRange[q]). Each of these leaves
// its search and aggregation advantages 0; a trainer using dynamic sampling
// resamples such a problem. It panics if q is not in [0, Problems).
func (b *BatchCredit) Skip(q int) bool {
	if q < 0 || q >= b.Problems {
		panic(fmt.Sprintf("spiral: Skip(%d) with Problems = %d", q, b.Problems))
	}
	return b.Rejected[q] || b.NoSignal[q] || b.OutOfRange[q]
}

// NoSignalCount returns the number of problems of b that give no signal.
func (b *BatchCredit) NoSignalCount() int {
	m := 0
	for _, ns := range b.NoSignal {
		if ns {
			m++
		}
	}
	return m
}

// CreditBatch computes SPIRAL's credit for every problem of in, in the
// paper's symbols (docs/method.md#the-credit-signals): with sets G_i, set
// scores f_i (the mean reward of set i), fbar their mean,
//
//	A_set(G_i)  = f_i - fbar
//	A_search(y) = mean of A_set over the sets that hold y (0 in no set)
//	A_agg(i, j) = r_ij - f_i
//
// computed by package advantage. The passes, in this order:
//
//  1. Check c and in's layout; then reject, in one place, every problem
//     whose input is bad (see below). The plans are not checked again:
//     [Plans] are checked by construction.
//  2. Dynamic sampling, on the raw rewards: NoSignal (every advantage of
//     the raw rewards is 0) and OutOfRange (c.RewardRange).
//  3. Reward shaping: c.Overlong adds DAPO's length penalty to every scored
//     reward.
//  4. Credit from the shaped rewards (SetScores are then shaped set
//     scores); a problem with NoSignal or OutOfRange gets zero search and
//     aggregation advantages.
//  5. The length gates of Eq. 8 zero the positive advantages of outputs
//     longer than their target (docs/method.md#the-length-gate).
//
// Errors, all *[InputError] naming the Batch or Config field (errors.As).
// A layout that does not fit c (no Plans, Plans made for another shape, a
// length that is not P*K*N2 or sum(RewardCounts), a count outside [1,
// N2], lengths missing for a gate or the overlong punishment) or an
// invalid c gets an error and leaves dst untouched. Otherwise every bad
// problem (sets that [Config.CheckPlans] rejected, a reward that is NaN,
// infinite or larger in magnitude than advantage.MaxAbsReward and not
// marked Unscorable, a negative length) is listed in a *[BatchError], by
// problem, set and output; it gets zero credit and dst.Rejected[q], and
// every other problem is credited, so a trainer may drop the bad ones and
// keep the rest.
//
// Sizes: CreditBatch has no limit of its own. A batch holds the problems of
// its Plans, which Planner.PlanTo and Config.CheckPlans cap at
// combin.MaxSize = 2^24 members (P*K*n), and Config.Validate caps N1, K*n and
// K*N2 at combin.MaxSize; Config.LossCoefficients then takes at most
// loss.MaxRows = 2^24 outputs of the batch.
//
// It allocates only to grow dst and on error. It panics if dst is nil.
func (c Config) CreditBatch(dst *BatchCredit, in Batch) error {
	if dst == nil {
		panic("spiral: CreditBatch: dst is nil")
	}
	p, err := c.checkBatch(&in, &dst.valid)
	if err != nil {
		return err
	}
	dst.layout(&c, &in, p)
	dst.made = c.creditShape()
	dst.reject(&c, &in)
	dst.rewardRange(&c, &in)
	dst.shape(&c, &in)
	dst.credit(&c, &in)
	dst.noSignal(&c, &in)
	dst.skip()
	c.gate(dst, &in)
	if len(dst.bad) > 0 {
		return inputerr.NewBatch("spiral", dst.bad)
	}
	return nil
}

// checkBatch checks c's shape, unless valid remembers c, and in's plans
// and layout against it, and returns the number of problems of in.
func (c *Config) checkBatch(in *Batch, valid *validConfig) (problems int, err error) {
	if err := valid.validate(c); err != nil {
		return 0, err
	}
	// Plans of c's shape were made for a valid family (K no larger than
	// it): only other plans need the comparison of K with the family.
	if !plansFit(in.Plans, c) {
		if _, err := c.validFamily(); err != nil {
			return 0, err
		}
		return 0, c.plansError(in.Plans)
	}
	p := len(in.Plans.members) / (c.Sets * c.SetSize) // not c.PlanSize(), which copies c
	return p, c.checkLayout(in, p)
}

// plansFit reports whether plans are not nil and of c's shape. It compares
// field by field: == on the shapes calls memequal, about 60 instructions
// more a call.
func plansFit(plans *Plans, c *Config) bool {
	if plans == nil {
		return false
	}
	s := &plans.shape
	return s.traces == c.SearchTraces && s.setSize == c.SetSize && s.sets == c.Sets && s.ordered == c.Ordered && s.design == c.Design
}

// plansError returns the error about plans that are not of c's shape.
func (c *Config) plansError(plans *Plans) error {
	var err error
	switch {
	case plans == nil:
		err = fmt.Errorf("nil: plans come from Planner.PlanTo or Config.CheckPlans")
	case plans.shape == planShape{}:
		err = fmt.Errorf("holds no plans: fill it with Planner.PlanTo or Config.CheckPlans (a refused call leaves it empty)")
	default:
		s := plans.shape
		err = fmt.Errorf("made for N1 = %d, n = %d, K = %d, Ordered = %v, Design = %v; the Config has N1 = %d, n = %d, K = %d, Ordered = %v, Design = %v",
			s.traces, s.setSize, s.sets, s.ordered, s.design, c.SearchTraces, c.SetSize, c.Sets, c.Ordered, c.Design)
	}
	return (&InputError{Field: FieldPlans, Problem: -1, Set: -1, Output: -1, Err: err}).In("spiral", FieldPlans)
}

// reject marks in b.Rejected and lists in b.bad every problem whose input
// is bad: sets that CheckPlans rejected, a bad scored reward, a negative
// length. It also records whether every plain sum of the rewards is exact
// (credit.Scan), which the kernel then need not compensate.
func (b *BatchCredit) reject(c *Config, in *Batch) {
	b.bad = b.bad[:0]
	clear(b.Rejected)
	valid, exact := credit.Scan(in.Rewards, in.Unscorable, true)
	b.in.ExactSums = exact && c.Overlong == nil // shaped rewards may be off the grid
	if valid && len(in.Plans.bad) == 0 && firstNegative(in.SearchLengths) < 0 && firstNegative(in.AggregationLengths) < 0 {
		return
	}
	plansBad := in.Plans.bad
	for q, sp := range b.spans[:b.Problems] {
		var e *InputError
		if len(plansBad) > 0 && plansBad[0].Problem == q {
			e, plansBad = plansBad[0].In("spiral", FieldPlans), plansBad[1:]
		} else {
			e = c.problemError(in, q, sp)
		}
		if e != nil {
			b.Rejected[q] = true
			b.bad = append(b.bad, e)
		}
	}
}

// rewardRange sets b.OutOfRange from the raw rewards (dynamic sampling).
func (b *BatchCredit) rewardRange(c *Config, in *Batch) {
	clear(b.OutOfRange)
	if !c.RewardRange.Enabled() {
		return
	}
	for q, sp := range b.spans[:b.Problems] {
		if !b.Rejected[q] {
			rs, un := in.Rewards[sp.Reward:sp.Reward+sp.Rewards], sub(in.Unscorable, sp.Reward, sp.Reward+sp.Rewards)
			kept, _ := advantage.InRewardRange(c.RewardRange, rs, un)
			b.OutOfRange[q] = !kept
		}
	}
}

// shape copies the rewards into b.rewards, which the credit reads, and
// adds c.Overlong's length penalty to every scored reward of a problem
// that is not rejected.
func (b *BatchCredit) shape(c *Config, in *Batch) {
	b.rewards = append(b.rewards[:0], in.Rewards...)
	b.in.Rewards, b.in.Unscorable = b.rewards, in.Unscorable
	b.Overlong = lengthgate.PenaltyReport{}
	if c.Overlong == nil {
		return
	}
	for q, sp := range b.spans[:b.Problems] {
		if b.Rejected[q] {
			continue
		}
		sh := b.rewards[sp.Reward : sp.Reward+sp.Rewards]
		for j, u := range sub(in.Unscorable, sp.Reward, sp.Reward+sp.Rewards) {
			if u {
				sh[j] = 0 // not read by the kernel; keeps the penalty finite
			}
		}
		rep, err := c.Overlong.Apply(sh, in.AggregationLengths[sp.Reward:sp.Reward+sp.Rewards])
		if err != nil {
			panic(fmt.Sprintf("spiral: overlong punishment of checked input: %v", err)) // unreachable
		}
		b.Overlong.Add(rep)
	}
}

// credit runs the kernel on every problem that is not rejected (a
// rejected one gets zero credit) and, under LeaveOneOut, rescales the
// aggregation advantages.
func (b *BatchCredit) credit(c *Config, in *Batch) {
	k := &b.kernel
	if len(b.bad) == 0 && in.RewardCounts == nil && in.Unscorable == nil && b.in.ExactSums {
		// The common batch (rewards on the grid of exact sums such as 0/1,
		// every output scored, none rejected) in passes over the batch:
		// Problem's bits, with fewer instructions (credit.Uniform).
		sh := credit.Shape{Traces: c.SearchTraces, Sets: c.Sets, SetSize: c.SetSize, Outputs: c.AggregationsPerSet}
		credit.Uniform(k, &b.in, b.zero[:b.Problems], sh)
	} else {
		for q, sp := range b.spans[:b.Problems] {
			if b.Rejected[q] {
				k.Clear(q, credit.Span(sp))
			} else {
				b.zero[q] = credit.Problem(k, &b.in, q, credit.Span(sp))
			}
		}
	}
	b.Search, b.Aggregation, b.SetScores, b.SetAdvantages = k.Search, k.Aggregation, k.SetScores, k.SetAdvantages
	b.ScoredOutputs, b.Appearances, b.ScoredSets = k.ScoredOutputs, k.Appearances, k.ScoredSets
	if c.AggregationBaseline == LeaveOneOut {
		c.leaveOneOut(b, in, b.Problems)
	}
}

// noSignal sets b.NoSignal: a problem that is not rejected and whose raw
// rewards give every search and aggregation advantage 0. Without shaping
// the credit is that of the raw rewards, and the kernel said so (b.zero);
// with it, rawZero decides from the raw rewards.
func (b *BatchCredit) noSignal(c *Config, in *Batch) {
	if c.Overlong == nil && len(b.bad) == 0 {
		// No problem is rejected: each is the kernel's (a copy, not a loop
		// over the spans: about 30 instructions a problem).
		copy(b.NoSignal, b.zero)
		return
	}
	for q, sp := range b.spans[:b.Problems] {
		switch {
		case b.Rejected[q]:
			b.NoSignal[q] = false
		case c.Overlong == nil:
			b.NoSignal[q] = b.zero[q] // the credit is the raw rewards'
		default:
			b.NoSignal[q] = b.rawZero(in, sp)
		}
	}
}

// skip zeroes the search and aggregation advantages of every problem with
// NoSignal or OutOfRange (a rejected one's credit is already 0).
func (b *BatchCredit) skip() {
	noSignal := b.NoSignal[:b.Problems]
	outOfRange := b.OutOfRange[:len(noSignal)] // no bounds check in the loop
	for q, ns := range noSignal {
		if ns || outOfRange[q] {
			sp := &b.spans[q] // not copied for the problems kept
			clear(b.Search[sp.Trace : sp.Trace+sp.Traces])
			clear(b.Aggregation[sp.Reward : sp.Reward+sp.Rewards])
		}
	}
}

// leaveOneOut turns the within-set aggregation advantages r - f of the
// first p problems into the leave-one-out ones: r minus the mean of the
// set's other scored rewards, S/(S-1) (r - f) for a set of S scored
// outputs (r - f is 0 for an unscorable output and for a set of one).
func (c *Config) leaveOneOut(dst *BatchCredit, in *Batch, p int) {
	for _, sp := range dst.spans[:p] {
		o := sp.Reward
		for s := sp.Set; s < sp.Set+sp.Sets; s++ {
			count := c.AggregationsPerSet
			if in.RewardCounts != nil {
				count = in.RewardCounts[s]
			}
			if scored := dst.ScoredOutputs[s]; scored >= 2 {
				f := float64(scored) / float64(scored-1)
				for j := o; j < o+count; j++ {
					dst.Aggregation[j] *= f
				}
			}
			o += count
		}
	}
}

// checkLayout checks the lengths of in's slices against c and the p
// problems of in's plans, which are of c's shape.
func (c *Config) checkLayout(in *Batch, p int) error {
	n1, k, n2 := c.SearchTraces, c.Sets, c.AggregationsPerSet
	layout := func(field, format string, args ...any) error {
		return (&InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}).In("spiral", field)
	}
	outputs := p * k * n2
	if in.RewardCounts != nil {
		if len(in.RewardCounts) != p*k {
			return layout(FieldRewardCounts, "len(RewardCounts) = %d, want P*K = %d*%d", len(in.RewardCounts), p, k)
		}
		outputs = 0
		for s, m := range in.RewardCounts {
			if m < 1 || m > n2 {
				return inputerr.Int("spiral", "", InputError{Field: FieldRewardCounts, Problem: s / k, Set: s % k, Output: -1,
					Err: fmt.Errorf("count %d outside [1, N2 = %d] (an output that could not be scored is kept and marked unscorable)", m, n2)}, m)
			}
			outputs += m
		}
	}
	if len(in.Rewards) != outputs {
		want := fmt.Sprintf("P*K*N2 = %d*%d*%d", p, k, n2)
		if in.RewardCounts != nil {
			want = "sum(RewardCounts)"
		}
		return layout(FieldRewards, "len(Rewards) = %d, want %s = %d", len(in.Rewards), want, outputs)
	}
	if in.Unscorable != nil && len(in.Unscorable) != outputs {
		return layout(FieldUnscorable, "len(Unscorable) = %d, want len(Rewards) = %d", len(in.Unscorable), outputs)
	}
	if !lengthsFit(in.SearchLengths, p*n1, c.Gates.Search.Enabled()) {
		return lengthsError(FieldSearchLengths, in.SearchLengths, p*n1, "the search gate", "P*N1")
	}
	needAgg := c.Gates.Aggregation.Enabled() || c.Overlong != nil
	if !lengthsFit(in.AggregationLengths, outputs, needAgg) {
		why := "the aggregation gate"
		if c.Overlong != nil {
			why = "the overlong punishment"
		}
		return lengthsError(FieldAggregationLengths, in.AggregationLengths, outputs, why, "len(Rewards)")
	}
	return nil
}

// lengthsFit reports whether a lengths slice holds want entries, or is nil
// and not needed.
func lengthsFit(lengths []int, want int, needed bool) bool {
	if lengths == nil {
		return !needed
	}
	return len(lengths) == want
}

// lengthsError returns the error about a lengths slice that does not fit
// (lengthsFit): nil although why reads it, or not of want entries (the
// expression wantExpr).
func lengthsError(field string, lengths []int, want int, why, wantExpr string) error {
	err := fmt.Errorf("len = %d, want %s = %d", len(lengths), wantExpr, want)
	if lengths == nil {
		err = fmt.Errorf("nil, but %s reads it", why)
	}
	return (&InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: err}).In("spiral", field)
}

// layout records the spans of in's p problems and the kernel's view of
// in, and sizes dst's slices.
func (b *BatchCredit) layout(c *Config, in *Batch, p int) {
	n1, k, n, n2 := c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet
	// Compared field by field: == on the keys calls memequal, and a method
	// copies both (about 50 and 20 instructions more).
	last := &b.key
	same := last.problems == p && last.traces == n1 && last.sets == k && last.setSize == n && last.outputs == n2
	kin := &b.in
	if !same {
		kin.SetSizes = slices.Repeat([]int{n}, p*k)
		b.counts = slices.Repeat([]int{n2}, p*k)
		*last = layoutKey{p, n1, k, n, n2}
	}
	kin.RewardCounts = b.counts
	if in.RewardCounts != nil {
		kin.RewardCounts = in.RewardCounts
	}
	kin.Members = in.Plans.members
	b.Problems = p
	// The spans of the last batch still hold for one of the same shape
	// without RewardCounts.
	if !same || in.RewardCounts != nil || !b.plainSpans {
		b.layoutSpans(c, in, p)
		b.plainSpans = in.RewardCounts == nil
	}
	// The kernel's slices, which only layout resizes, keep their lengths
	// from a batch of the same shape and outputs (about 200 instructions
	// of a call of one problem).
	if !same || len(b.kernel.Aggregation) != len(in.Rewards) {
		b.kernel.Resize(p, p*n1, p*k, len(in.Rewards), n1, k)
	}
	// The flags per problem, which a caller may have changed: tested
	// together, then resized (about 25 instructions fewer than resizing).
	if len(b.Rejected) != p || len(b.NoSignal) != p || len(b.zero) != p || len(b.OutOfRange) != p {
		b.Rejected = slices.Grow(b.Rejected[:0], p)[:p]
		b.NoSignal = slices.Grow(b.NoSignal[:0], p)[:p]
		b.zero = slices.Grow(b.zero[:0], p)[:p]
		b.OutOfRange = slices.Grow(b.OutOfRange[:0], p)[:p]
	}
}

// layoutSpans records the spans of in's p problems.
func (b *BatchCredit) layoutSpans(c *Config, in *Batch, p int) {
	b.spans = slices.Grow(b.spans[:0], p)[:p]
	r := 0
	for q := range p {
		sp := c.Span(q)
		if in.RewardCounts != nil {
			sp.Reward, sp.Rewards = r, 0
			for _, m := range in.RewardCounts[sp.Set : sp.Set+sp.Sets] {
				sp.Rewards += m
			}
		}
		b.spans[q] = sp
		r += sp.Rewards
	}
}

// problemError returns the first error of the rewards and lengths of
// problem q, at sp, or nil.
func (c *Config) problemError(in *Batch, q int, sp Span) *InputError {
	rs, un := in.Rewards[sp.Reward:sp.Reward+sp.Rewards], sub(in.Unscorable, sp.Reward, sp.Reward+sp.Rewards)
	if o, err := advantage.CheckRewards(rs, un); o >= 0 {
		i, j := c.setOf(in, q, o)
		return inputerr.New("spiral", "output", InputError{Field: FieldRewards, Problem: q, Set: i, Output: j, Value: rs[o], Err: err})
	}
	if ls := sub(in.SearchLengths, sp.Trace, sp.Trace+sp.Traces); firstNegative(ls) >= 0 {
		y := firstNegative(ls)
		return inputerr.Int("spiral", "", InputError{Field: FieldSearchLengths, Problem: q, Set: -1, Output: y, Err: errNegativeLength}, ls[y])
	}
	if ls := sub(in.AggregationLengths, sp.Reward, sp.Reward+sp.Rewards); firstNegative(ls) >= 0 {
		o := firstNegative(ls)
		i, j := c.setOf(in, q, o)
		return inputerr.Int("spiral", "", InputError{Field: FieldAggregationLengths, Problem: q, Set: i, Output: j, Err: errNegativeLength}, ls[o])
	}
	return nil
}

// setOf returns the set i and the position j within it of output o of
// problem q.
func (c *Config) setOf(in *Batch, q, o int) (i, j int) {
	k := c.Sets
	for i = range k {
		m := c.AggregationsPerSet
		if in.RewardCounts != nil {
			m = in.RewardCounts[q*k+i]
		}
		if o < m {
			return i, o
		}
		o -= m
	}
	return -1, -1 // unreachable: o is within the problem's outputs
}

var errNegativeLength = fmt.Errorf("length < 0")

// rawZero reports whether every search and aggregation advantage of the
// raw rewards of the problem at sp is 0, for a batch whose credit is
// computed from shaped rewards. Every A_agg is 0 exactly when every set's
// scored rewards are equal; then every A_search is 0 if the set scores are
// all equal, and otherwise (as in a balanced plan whose sets score
// 1, 1, 0, 0) the kernel says, run on this problem alone.
func (b *BatchCredit) rawZero(in *Batch, sp Span) bool {
	counts := b.in.RewardCounts[sp.Set : sp.Set+sp.Sets]
	var first float64
	seen, equalScores := false, true
	o := sp.Reward
	for _, m := range counts {
		rs, un := in.Rewards[o:o+m], sub(in.Unscorable, o, o+m)
		o += m
		x0, ok := allEqual(rs, un)
		if !ok {
			return false
		}
		if x0 == nil {
			continue // no scored output: the set is left out
		}
		if seen && *x0 != first {
			equalScores = false
		}
		first, seen = *x0, true
	}
	if equalScores {
		return true
	}
	one := credit.Input[float64]{
		SetSizes: b.in.SetSizes[sp.Set : sp.Set+sp.Sets], RewardCounts: counts,
		Members: b.in.Members[sp.Member : sp.Member+sp.Members],
		Rewards: in.Rewards[sp.Reward : sp.Reward+sp.Rewards], Unscorable: sub(in.Unscorable, sp.Reward, sp.Reward+sp.Rewards),
	}
	b.raw.Resize(1, sp.Traces, sp.Sets, sp.Rewards, sp.Traces, sp.Sets)
	return credit.Problem(&b.raw, &one, 0, credit.Span{Traces: sp.Traces, Sets: sp.Sets, Members: sp.Members, Rewards: sp.Rewards})
}

// allEqual reports whether every scored x (those not marked in
// unscorable, nil or parallel to xs) equals the first scored one, which it
// returns (nil if there is none): for finite values, x - x0 is ±0 exactly
// when x == x0.
func allEqual(xs []float64, unscorable []bool) (*float64, bool) {
	var x0 *float64
	var diff uint64
	for j := range xs {
		if unscorable != nil && unscorable[j] {
			continue
		}
		if x0 == nil {
			x0 = &xs[j]
		}
		diff |= math.Float64bits(xs[j] - *x0)
	}
	return x0, diff&^(1<<63) == 0
}

// gate applies c's length gates to every problem of dst that is not
// rejected and sets dst.Gates to their reports: one call of the gates'
// loop (internal/gating) for the whole batch, unless a rejected problem's
// lengths may be bad. A disabled gate reads nothing and reports zero. The
// loop runs without lengthgate's checks of its input, which hold already:
// c's gates passed Config.Validate (dst.valid holds them in the loop's
// form), reject refused every problem with a negative length, and the
// kernel's credit is finite.
func (c *Config) gate(dst *BatchCredit, in *Batch) {
	g, v := &c.Gates, &dst.valid
	if !g.Search.Enabled() && !g.Aggregation.Enabled() {
		dst.Gates = lengthgate.GatesReport{}
		return
	}
	if len(dst.bad) == 0 {
		gating.Pair(&dst.Gates, v.search, dst.Search, in.SearchLengths, v.agg, dst.Aggregation, in.AggregationLengths)
		return
	}
	dst.Gates = lengthgate.GatesReport{}
	for q, sp := range dst.spans[:dst.Problems] {
		if !dst.Rejected[q] {
			t, r := sp.Trace, sp.Reward
			var rep lengthgate.GatesReport
			gating.Pair(&rep, v.search, dst.Search[t:t+sp.Traces], sub(in.SearchLengths, t, t+sp.Traces),
				v.agg, dst.Aggregation[r:r+sp.Rewards], sub(in.AggregationLengths, r, r+sp.Rewards))
			dst.Gates.Add(rep)
		}
	}
}

// sub returns s[lo:hi], or nil when s is nil.
func sub[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// firstNegative returns the index of the first negative length, or -1. It
// first ORs all of them: the result is negative exactly when one of them
// is. Eight at a time, with one loop step for eight lengths: about 60
// instructions a problem of the paper's shape fewer than one at a time
// (BenchmarkStepParts/problems=256/credit, cachegrind); indexed through an
// array pointer rather than resliced, 15 fewer again (13 instructions for
// eight lengths, against 18).
func firstNegative(ls []int) int {
	o, i := 0, 0
	for ; i <= len(ls)-8; i += 8 {
		q := (*[8]int)(ls[i:])
		o |= q[0] | q[1] | q[2] | q[3] | q[4] | q[5] | q[6] | q[7]
	}
	for _, l := range ls[i:] {
		o |= l
	}
	if o >= 0 {
		return -1
	}
	return slices.IndexFunc(ls, func(l int) bool { return l < 0 })
}
