package spiral

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"spiral/advantage"
	"spiral/combin"
	"spiral/lengthgate"
)

// Batch is the input of [Config.CreditBatch]: the problems of one training
// step, laid out flat, problem after problem, in the trainer's order. With
// P problems of N1 search traces and K sets of n candidates:
//
//	Sets[(q*K+i)*n + j]       candidate j of set i of problem q
//	SearchLengths[q*N1 + y]   length of search trace y of problem q
//	Rewards[o]                reward of aggregation output o
//	AggregationLengths[o]     its length in generated tokens
//	Unscorable[o]             whether it could not be scored
//
// where the outputs o are numbered set after set: N2 per set
// (Rewards[(q*K+i)*N2 + j]), or RewardCounts[q*K+i] for set i of problem q
// when RewardCounts is not nil. [Planner.PlanTo] writes Sets.
type Batch struct {
	// Sets holds the P*K*n trace indices of every problem's plan.
	Sets []int
	// Rewards holds the aggregation rewards, in the order above.
	Rewards []float64
	// RewardCounts, if not nil, holds the number of outputs of every set,
	// P*K entries in [1, N2]: a set whose generation failed has fewer. Nil
	// means N2 outputs for every set.
	RewardCounts []int
	// Unscorable, if not nil, is parallel to Rewards: an output marked true
	// could not be scored. Its reward is not read (it may be NaN); it is
	// left out of its set's score and of every baseline, and gets
	// advantage 0 (see advantage.Batch).
	Unscorable []bool
	// SearchLengths (P*N1 entries) and AggregationLengths (parallel to
	// Rewards) are the outputs' lengths in generated tokens, which the
	// length gates and the overlong punishment read. Each is required when
	// something reads it and may be nil otherwise.
	SearchLengths, AggregationLengths []int

	drawn drawn // the sets a Planner drew into Sets
}

// BatchCredit is the result of [Config.CreditBatch]. The embedded
// advantage.BatchCredit holds the credit in the layout of the [Batch]:
// SetScores and SetAdvantages per set (q*K+i), Search and Appearances per
// search trace (q*N1+y), Aggregation per output, Rejected per problem.
// Search goes to the search policy and Aggregation to the aggregation
// policy, which may be two models.
//
// The zero value is ready to use. Reuse one BatchCredit from step to step:
// once its slices have grown to a batch's size, CreditBatch allocates
// nothing. A BatchCredit must not be used by two calls at the same time;
// different BatchCredits may be filled concurrently from one Config.
type BatchCredit struct {
	advantage.BatchCredit[float64]
	// Problems is P, the number of problems of the last call.
	Problems int
	// NoSignal[q] reports that problem q's raw rewards give no gradient:
	// every search and aggregation advantage computed from them is 0 (for
	// instance, all its rewards are equal). A trainer using dynamic
	// sampling resamples it. Its search and aggregation advantages are 0
	// even when reward shaping would have moved them (its set scores and
	// set advantages are still reported).
	NoSignal []bool
	// OutOfRange[q] reports that the mean raw reward of problem q lies
	// outside Config.RewardRange. Its search and aggregation advantages
	// are 0.
	OutOfRange []bool
	// Gates is what the length gates did, added up over the batch.
	Gates lengthgate.GatesReport
	// Overlong is what Config.Overlong did, added up over the batch.
	Overlong lengthgate.PenaltyReport

	in      advantage.Batch[float64] // the kernel's layout of the last batch
	key     layoutKey                // what in.Traces, Sets, SetSizes and counts hold
	counts  []int                    // N2 for every set
	offsets []int                    // of each problem's outputs, when ragged
	ragged  bool                     // the last batch had RewardCounts
	shaped  []float64                // rewards after Config.Overlong
	sets    setScratch
	bad     []*advantage.InputError // the problems the root rejects
}

// layoutKey is the shape of the kernel layout kept in a BatchCredit.
type layoutKey struct{ problems, traces, sets, setSize, outputs int }

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
//  1. Check c and in. Sets that a [Planner] drew into in are not checked
//     again; any other sets are, by advantage (combin.CheckSets) and, for
//     the Balanced design, for their balance.
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
// Errors. A layout that does not fit c (a length that is not a multiple of
// K*n, or not P*K*N2 or sum(RewardCounts), a count outside [1, N2], lengths
// missing for a gate or the overlong punishment) gets an error and leaves
// dst untouched. Otherwise every bad problem (a bad set, a reward that is
// NaN, infinite or larger in magnitude than advantage.MaxAbsReward and not
// marked Unscorable, a negative length, an unbalanced Balanced plan) is
// reported in a *[advantage.BatchError], each as an *[advantage.InputError]
// naming the field, problem, set and output; errors.As recovers both. The
// bad problems get zero credit and dst.Rejected[q]; every other problem is
// credited, so a trainer may drop the bad ones and keep the rest.
//
// It allocates only to grow dst, on error, and in combin.CheckSets for
// outside sets of large problems. It panics if dst is nil.
func (c Config) CreditBatch(dst *BatchCredit, in Batch) error {
	if err := c.validateShape(); err != nil {
		return err
	}
	p, outputs, err := c.checkLayout(&in)
	if err != nil {
		return err
	}
	trusted := in.drawn.trusted(&c, in.Sets)
	dst.bad = dst.bad[:0]
	if !trusted && c.Design == combin.Balanced {
		c.checkBalance(dst, in.Sets)
	}
	c.checkLengths(dst, &in, p)

	kin := dst.layout(&c, &in, p, outputs)
	kin.SetsChecked = trusted
	err = advantage.ComputeBatch(&dst.BatchCredit, *kin)
	kernelBad, ok := errors.AsType[*advantage.BatchError](err)
	if err != nil && !ok {
		kin.Members, kin.Rewards, kin.Unscorable = nil, nil, nil
		return err
	}
	dst.Problems = p
	dst.NoSignal = grow(dst.NoSignal, p)
	dst.OutOfRange = grow(dst.OutOfRange, p)
	dst.Gates, dst.Overlong = lengthgate.GatesReport{}, lengthgate.PenaltyReport{}
	for _, e := range dst.bad {
		dst.reject(&c, e.Problem)
	}

	// Dynamic sampling on the raw rewards, before the gates: NoSignal is
	// read from the credit of the raw rewards.
	shaping := c.Overlong != nil
	for q := range p {
		dst.NoSignal[q] = !dst.Rejected[q] && dst.zero(&c, q)
	}
	if c.RewardRange.Enabled() {
		r := 0
		for q := range p {
			_, nr := dst.outputs(&c, q)
			dst.OutOfRange[q] = false
			if !dst.Rejected[q] {
				in, _ := advantage.InRewardRange(c.RewardRange, in.Rewards[r:r+nr], sub(in.Unscorable, r, r+nr))
				dst.OutOfRange[q] = !in
			}
			r += nr
		}
	} else {
		clear(dst.OutOfRange)
	}
	if shaping {
		dst.shaped = grow(dst.shaped, len(in.Rewards))
		r := 0
		for q := range p {
			_, nr := dst.outputs(&c, q)
			rs, sh := in.Rewards[r:r+nr], dst.shaped[r:r+nr]
			copy(sh, rs)
			if !dst.Rejected[q] {
				if un := sub(in.Unscorable, r, r+nr); un != nil {
					for j, u := range un {
						if u {
							sh[j] = 0 // not read by the kernel; keeps the penalty finite
						}
					}
				}
				rep, err := lengthgate.ApplySoftOverlong(*c.Overlong, sh, sh, in.AggregationLengths[r:r+nr])
				if err != nil {
					panic(fmt.Sprintf("spiral: overlong punishment of checked input: %v", err)) // unreachable
				}
				dst.Overlong.Add(rep)
			}
			r += nr
		}
		kin.Rewards = dst.shaped
		err := advantage.ComputeBatch(&dst.BatchCredit, *kin)
		shapedBad, ok := errors.AsType[*advantage.BatchError](err)
		if err != nil && !ok {
			panic(fmt.Sprintf("spiral: credit of shaped rewards: %v", err)) // unreachable: the layout was accepted
		}
		if shapedBad != nil {
			// A shaped reward beyond advantage.MaxAbsReward (a huge
			// Factor): the problem is rejected with that error.
			for _, e := range shapedBad.Problems {
				dst.addBad(e)
			}
		}
		for _, e := range dst.bad {
			dst.reject(&c, e.Problem)
		}
	}
	kin.Members, kin.Rewards, kin.Unscorable = nil, nil, nil

	if shaping || c.RewardRange.Enabled() {
		for q := range p {
			if !dst.Rejected[q] && (dst.NoSignal[q] || dst.OutOfRange[q]) {
				dst.clearCredit(&c, q)
			}
		}
	}
	c.gate(dst, &in)
	if kernelBad != nil || len(dst.bad) > 0 {
		return mergeBad(dst.bad, kernelBad)
	}
	return nil
}

// checkLayout checks the lengths of in's slices against c and returns the
// number of problems P and of outputs.
func (c *Config) checkLayout(in *Batch) (p, outputs int, err error) {
	n1, k, n2 := c.SearchTraces, c.Sets, c.AggregationsPerSet
	size := c.PlanSize()
	layout := func(field, format string, args ...any) error {
		return &advantage.InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}
	}
	if len(in.Sets)%size != 0 {
		return 0, 0, layout("Sets", "len(Sets) = %d is not a multiple of K*n = %d*%d", len(in.Sets), k, c.SetSize)
	}
	p = len(in.Sets) / size
	if in.RewardCounts == nil {
		outputs = p * k * n2
		if len(in.Rewards) != outputs {
			return 0, 0, layout("Rewards", "len(Rewards) = %d, want P*K*N2 = %d*%d*%d = %d", len(in.Rewards), p, k, n2, outputs)
		}
	} else {
		if len(in.RewardCounts) != p*k {
			return 0, 0, layout("RewardCounts", "len(RewardCounts) = %d, want P*K = %d*%d", len(in.RewardCounts), p, k)
		}
		for s, m := range in.RewardCounts {
			if m < 1 || m > n2 {
				return 0, 0, &advantage.InputError{Field: "RewardCounts", Problem: s / k, Set: s % k, Output: -1, Value: float64(m),
					Err: fmt.Errorf("count %d outside [1, AggregationsPerSet (N2) = %d] (mark an output that could not be scored in Unscorable)", m, n2)}
			}
			outputs += m
		}
		if len(in.Rewards) != outputs {
			return 0, 0, layout("Rewards", "len(Rewards) = %d, want sum(RewardCounts) = %d", len(in.Rewards), outputs)
		}
	}
	if in.Unscorable != nil && len(in.Unscorable) != outputs {
		return 0, 0, layout("Unscorable", "len(Unscorable) = %d, want len(Rewards) = %d", len(in.Unscorable), outputs)
	}
	if err := lengthsLen("SearchLengths", in.SearchLengths, p*n1, c.Gates.Search.Enabled(), "the search gate", "P*N1"); err != nil {
		return 0, 0, err
	}
	needAgg, why := c.Gates.Aggregation.Enabled(), "the aggregation gate"
	if c.Overlong != nil {
		needAgg, why = true, "Config.Overlong"
	}
	if err := lengthsLen("AggregationLengths", in.AggregationLengths, outputs, needAgg, why, "len(Rewards)"); err != nil {
		return 0, 0, err
	}
	return p, outputs, nil
}

// lengthsLen checks the length of a lengths slice that must hold want
// entries (the expression wantExpr) when needed, and be nil or hold want
// entries otherwise.
func lengthsLen(field string, lengths []int, want int, needed bool, why, wantExpr string) error {
	switch {
	case lengths == nil && needed:
		return &advantage.InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf("%s is nil, but %s reads it", field, why)}
	case lengths != nil && len(lengths) != want:
		return &advantage.InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf("len(%s) = %d, want %s = %d", field, len(lengths), wantExpr, want)}
	}
	return nil
}

var errNegativeLength = errors.New("length < 0")

// checkLengths adds to dst.bad the first negative length of each problem
// of in.
func (c *Config) checkLengths(dst *BatchCredit, in *Batch, p int) {
	if firstNegative(in.SearchLengths) < 0 && firstNegative(in.AggregationLengths) < 0 {
		return
	}
	n1, k := c.SearchTraces, c.Sets
	r := 0
	for q := range p {
		nr := c.AggregationOutputs()
		if in.RewardCounts != nil {
			nr = 0
			for _, m := range in.RewardCounts[q*k : (q+1)*k] {
				nr += m
			}
		}
		if ls := sub(in.SearchLengths, q*n1, (q+1)*n1); firstNegative(ls) >= 0 {
			y := firstNegative(ls)
			dst.addBad(&advantage.InputError{Field: "SearchLengths", Problem: q, Set: -1, Output: y, Value: float64(ls[y]), Err: errNegativeLength})
		} else if ls := sub(in.AggregationLengths, r, r+nr); firstNegative(ls) >= 0 {
			o := firstNegative(ls)
			set, j := 0, o
			for ; set < k; set++ {
				m := c.AggregationsPerSet
				if in.RewardCounts != nil {
					m = in.RewardCounts[q*k+set]
				}
				if j < m {
					break
				}
				j -= m
			}
			dst.addBad(&advantage.InputError{Field: "AggregationLengths", Problem: q, Set: set, Output: j, Value: float64(ls[o]), Err: errNegativeLength})
		}
		r += nr
	}
}

// checkBalance adds to dst.bad each problem of the Balanced config c whose
// sets are not balanced (see balanceError).
func (c *Config) checkBalance(dst *BatchCredit, sets []int) {
	size := c.PlanSize()
	for q := 0; q*size < len(sets); q++ {
		if err := balanceError(c.SearchTraces, sets[q*size:(q+1)*size], &dst.sets); err != nil {
			dst.addBad(&advantage.InputError{Field: "Sets", Problem: q, Set: -1, Output: -1, Err: err})
		}
	}
}

// addBad records e, keeping the first error of each problem.
func (b *BatchCredit) addBad(e *advantage.InputError) {
	for _, o := range b.bad {
		if o.Problem == e.Problem {
			return
		}
	}
	b.bad = append(b.bad, e)
}

// mergeBad returns a *advantage.BatchError of the root's bad problems and
// the kernel's, one error per problem (the kernel's first), in problem
// order.
func mergeBad(root []*advantage.InputError, kernel *advantage.BatchError) error {
	var all []*advantage.InputError
	if kernel != nil {
		all = append(all, kernel.Problems...)
	}
	for _, e := range root {
		if !slices.ContainsFunc(all, func(o *advantage.InputError) bool { return o.Problem == e.Problem }) {
			all = append(all, e)
		}
	}
	slices.SortStableFunc(all, func(a, b *advantage.InputError) int { return a.Problem - b.Problem })
	return &advantage.BatchError{Problems: all}
}

// layout returns the kernel's view of in, reusing the layout slices kept
// in dst while the batch's shape stays the same.
func (b *BatchCredit) layout(c *Config, in *Batch, p, outputs int) *advantage.Batch[float64] {
	key := layoutKey{p, c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet}
	kin := &b.in
	if b.key != key {
		kin.Traces = filled(kin.Traces, p, c.SearchTraces)
		kin.Sets = filled(kin.Sets, p, c.Sets)
		kin.SetSizes = filled(kin.SetSizes, p*c.Sets, c.SetSize)
		b.counts = filled(b.counts, p*c.Sets, c.AggregationsPerSet)
		b.key = key
	}
	kin.RewardCounts = b.counts
	b.ragged = in.RewardCounts != nil
	if b.ragged {
		kin.RewardCounts = in.RewardCounts
		b.offsets = grow(b.offsets, p+1)
		r, k := 0, c.Sets
		for q := range p {
			b.offsets[q] = r
			for _, m := range in.RewardCounts[q*k : (q+1)*k] {
				r += m
			}
		}
		b.offsets[p] = r
	}
	kin.Members, kin.Rewards, kin.Unscorable = in.Sets, in.Rewards, in.Unscorable
	kin.Ordered = c.Ordered
	kin.SkipBad = true
	return kin
}

// outputs returns the offset and number of the outputs of problem q of the
// last batch.
func (b *BatchCredit) outputs(c *Config, q int) (r, nr int) {
	if !b.ragged {
		m := c.AggregationOutputs()
		return q * m, m
	}
	return b.offsets[q], b.offsets[q+1] - b.offsets[q]
}

// reject marks problem q rejected, with zero credit.
func (b *BatchCredit) reject(c *Config, q int) {
	b.Rejected[q] = true
	b.NoSignal[q], b.OutOfRange[q] = false, false
	k := c.Sets
	clear(b.SetScores[q*k : (q+1)*k])
	clear(b.ScoredOutputs[q*k : (q+1)*k])
	b.ScoredSets[q] = 0
	clear(b.SetAdvantages[q*k : (q+1)*k])
	clear(b.Appearances[q*c.SearchTraces : (q+1)*c.SearchTraces])
	b.clearCredit(c, q)
}

// clearCredit sets every search and aggregation advantage of problem q to
// 0.
func (b *BatchCredit) clearCredit(c *Config, q int) {
	n1 := c.SearchTraces
	clear(b.Search[q*n1 : (q+1)*n1])
	r, nr := b.outputs(c, q)
	clear(b.Aggregation[r : r+nr])
}

// zero reports whether every search and aggregation advantage of problem q
// is 0.
func (b *BatchCredit) zero(c *Config, q int) bool {
	n1 := c.SearchTraces
	r, nr := b.outputs(c, q)
	return allZero(b.Search[q*n1:(q+1)*n1]) && allZero(b.Aggregation[r:r+nr])
}

// allZero reports whether every x is ±0, without a branch on the data.
func allZero(xs []float64) bool {
	var bits uint64
	for _, x := range xs {
		bits |= math.Float64bits(x)
	}
	return bits&^(1<<63) == 0
}

// gate applies c's length gates to every problem of dst that is not
// rejected, adding their reports to dst.Gates. The gates, lengths and
// advantages of those problems were checked (Config.validateShape,
// checkLengths, and advantage's finite credit), so it applies them with
// Gate.ApplyChecked.
func (c *Config) gate(dst *BatchCredit, in *Batch) {
	g := c.Gates
	if !g.Search.Enabled() && !g.Aggregation.Enabled() {
		return
	}
	// One call per role for the whole batch, unless a rejected problem's
	// lengths may be bad.
	if len(dst.bad) == 0 {
		if g.Search.Enabled() {
			dst.Gates.Search = g.Search.ApplyChecked(dst.Search, in.SearchLengths)
		}
		if g.Aggregation.Enabled() {
			dst.Gates.Aggregation = g.Aggregation.ApplyChecked(dst.Aggregation, in.AggregationLengths)
		}
		return
	}
	n1 := c.SearchTraces
	for q := range dst.Problems {
		if dst.Rejected[q] {
			continue
		}
		r, nr := dst.outputs(c, q)
		if g.Search.Enabled() {
			dst.Gates.Search.Add(g.Search.ApplyChecked(dst.Search[q*n1:(q+1)*n1], in.SearchLengths[q*n1:(q+1)*n1]))
		}
		if g.Aggregation.Enabled() {
			dst.Gates.Aggregation.Add(g.Aggregation.ApplyChecked(dst.Aggregation[r:r+nr], in.AggregationLengths[r:r+nr]))
		}
	}
}

// filled returns s with length n, every entry v.
func filled(s []int, n, v int) []int {
	s = grow(s, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// sub returns s[lo:hi], or nil when s is nil.
func sub[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// firstNegative returns the index of the first negative length, or -1. It
// first ORs all of them, four at a time: the result is negative exactly
// when one of them is.
func firstNegative(ls []int) int {
	var o0, o1, o2, o3 int
	i := 0
	for ; i < len(ls)-3; i += 4 {
		o0 |= ls[i]
		o1 |= ls[i+1]
		o2 |= ls[i+2]
		o3 |= ls[i+3]
	}
	for _, l := range ls[i:] {
		o0 |= l
	}
	if o0|o1|o2|o3 >= 0 {
		return -1
	}
	return slices.IndexFunc(ls, func(l int) bool { return l < 0 })
}
