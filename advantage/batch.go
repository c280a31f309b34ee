package advantage

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"golang.org/x/exp/constraints"

	"spiral/combin"
	"spiral/internal/credit"
	"spiral/internal/inputerr"
)

// MaxAbsReward is the largest reward magnitude accepted. A scored reward r
// with |r| > MaxAbsReward is rejected as bad input, like a NaN: with |r|
// bounded by 1e30 no mean, deviation, variance or advantage can overflow,
// either in the float64 arithmetic used inside or when a result is stored
// as float32, so every output is finite. SPIRAL's rewards lie in [0, 1].
// The bound applies to the value: float32(1e30) is 1.0000000150474662e30,
// and is rejected.
const MaxAbsReward = credit.MaxAbsReward

// Batch is the input of [ComputeBatch]: problems laid out flat, problem
// after problem and, inside a problem, set after set. Sets are numbered
// across the whole batch (global set s), and so are rewards; trace indices
// in Members are local to their problem.
//
// For P problems the lengths must satisfy
//
//	len(Sets) == len(Traces) == P
//	len(SetSizes) == len(RewardCounts) == sum(Sets)
//	len(Members) == sum(SetSizes)
//	len(Rewards) == sum(RewardCounts), and len(Unscorable) too unless nil
//
// The paper's batch (256 problems, N1 = 8, K = 4 sets of n = 4, N2 = 4)
// has len(Traces) = 256, len(SetSizes) = 1024, len(Members) = 4096 and
// len(Rewards) = 4096; [NewUniformBatch] builds that layout.
type Batch[F constraints.Float] struct {
	// Traces[p] is the number of search traces N1 of problem p, at least 1
	// and at most combin.MaxSize; they are numbered 0..Traces[p]-1 in
	// Members. Traces in no set are allowed and get zero search credit.
	// The batch holds at most combin.MaxSize traces in all.
	Traces []int
	// Sets[p] is the number of sets K of problem p, at least 1.
	Sets []int
	// SetSizes[s] is the number of members n of global set s, at least 1.
	SetSizes []int
	// Members holds the trace indices of every set, concatenated in set
	// order: global set s is Members[sum(SetSizes[:s]) : sum(SetSizes[:s+1])].
	// The order inside a set does not change the credit.
	Members []int
	// RewardCounts[s] is the number of aggregation outputs N2 of global set
	// s, at least 1. Counts may differ between sets (a failed generation
	// dropped); each set's score uses its own.
	RewardCounts []int
	// Rewards holds the aggregation rewards of every set, concatenated in
	// set order, in the same layout as Members.
	Rewards []F

	// Unscorable, if not nil, is parallel to Rewards: Unscorable[j] marks
	// an output that could not be scored. Its reward is not read (it may
	// be NaN); it is left out of its set's score and of every baseline,
	// and its aggregation advantage is 0. A set with no scored output has
	// no score: it is left out of its problem's fbar and of its members'
	// search credit, and its set score and advantage are 0. The counts
	// used are reported in BatchCredit.ScoredOutputs and ScoredSets.
	Unscorable []bool

	// Check says when two sets of a problem are identical: as subsets
	// (the zero value) or as tuples.
	Check SetCheck
}

// SetCheck says how [ComputeBatch] compares the sets of a problem.
type SetCheck int

const (
	// Subsets, the zero value: every problem's sets are checked by
	// combin.CheckSets, two sets being identical when they hold the same
	// members in any order.
	Subsets SetCheck = iota
	// Tuples: the same check, two sets being identical when they list the
	// same members in the same order (ordered tuples).
	Tuples
)

// Span locates one problem in a [Batch] and in its [BatchCredit]: the
// problem's traces are Search[Trace : Trace+Traces] (and the same range of
// Appearances), its sets SetSizes[Set : Set+Sets] (and the same range of
// RewardCounts, SetScores, SetAdvantages and ScoredOutputs), its members
// Members[Member : Member+Members] and its rewards Rewards[Reward :
// Reward+Rewards] (and the same range of Unscorable and Aggregation).
type Span struct {
	Trace, Traces   int
	Set, Sets       int
	Member, Members int
	Reward, Rewards int
}

// Spans returns the Span of each problem of b, in order, with its index.
// On a batch whose layout [ComputeBatch] would reject it stops at the
// first problem whose slices run past the end of b's.
func (b Batch[F]) Spans() iter.Seq2[int, Span] {
	return func(yield func(int, Span) bool) {
		var sp Span
		for p := range min(len(b.Traces), len(b.Sets)) {
			sp.Trace += sp.Traces
			sp.Set += sp.Sets
			sp.Member += sp.Members
			sp.Reward += sp.Rewards
			sp.Traces, sp.Sets = b.Traces[p], b.Sets[p]
			if sp.Sets < 0 || sp.Sets > len(b.SetSizes)-sp.Set || sp.Sets > len(b.RewardCounts)-sp.Set {
				return
			}
			var ok1, ok2 bool
			sp.Members, ok1 = sumTo(b.SetSizes[sp.Set:sp.Set+sp.Sets], len(b.Members)-sp.Member)
			sp.Rewards, ok2 = sumTo(b.RewardCounts[sp.Set:sp.Set+sp.Sets], len(b.Rewards)-sp.Reward)
			if !ok1 || !ok2 {
				return
			}
			if !yield(p, sp) {
				return
			}
		}
	}
}

// sumTo returns the sum of xs and whether every x and the sum are in
// [0, limit], adding nothing that could overflow.
func sumTo(xs []int, limit int) (s int, ok bool) {
	for _, x := range xs {
		if x < 0 || x > limit-s {
			return s, false
		}
		s += x
	}
	return s, true
}

// BatchCredit receives the results of [ComputeBatch], in the layout of the
// Batch that produced them. The zero value is ready to use: ComputeBatch
// sets every slice to the length the batch needs, reusing its array when
// it is large enough, so a BatchCredit reused for batches of one size
// allocates nothing after the first. A BatchCredit must not be used by two
// calls at the same time.
type BatchCredit[F constraints.Float] struct {
	// SetScores[s] is f of global set s: the mean of its scored rewards.
	SetScores []F
	// SetAdvantages[s] is A_set = f - fbar, fbar the mean of f over the
	// scored sets of the same problem.
	SetAdvantages []F
	// Search[t] is A_search of trace t, traces numbered across the batch
	// (problem p's traces start at sum(Traces[:p]); see [Batch.Spans]).
	// 0 for a trace in no scored set.
	Search []F
	// Appearances[t] is |G(y)|, the number of scored sets of its problem
	// that hold trace t.
	Appearances []int
	// Aggregation is A_agg = r - f for every output, in the layout of
	// Batch.Rewards; 0 for an unscorable output.
	Aggregation []F
	// ScoredOutputs[s] is the number of scored outputs of global set s
	// (N2 less those marked unscorable); 0 for a set left out.
	ScoredOutputs []int
	// ScoredSets[p] is the number of sets of problem p with a scored
	// output, those that fbar averages.
	ScoredSets []int
	// Rejected[p] reports that problem p was bad and got zero credit.
	Rejected []bool

	out credit.Output[F] // the kernel's view of the slices above, and its scratch
}

// NewUniformBatch returns the layout of a batch of problems that all have
// the same shape: traces search traces, sets sets of setSize members each,
// and rewards aggregation rewards per set. Traces, Sets, SetSizes and
// RewardCounts are filled in; Members and Rewards have the right lengths
// and are zero, for the caller to fill. NewUniformBatch[float64](256, 8,
// 4, 4, 4) is the paper's batch.
//
// It returns an *[InputError] naming the argument if one is less than 1,
// if setSize > traces, or if the batch would have more than combin.MaxSize
// traces, members or rewards (about problems).
func NewUniformBatch[F constraints.Float](problems, traces, sets, setSize, rewards int) (Batch[F], error) {
	for _, a := range []struct {
		name string
		v    int
	}{{"problems", problems}, {"traces", traces}, {"sets", sets}, {"setSize", setSize}, {"rewards", rewards}} {
		if a.v < 1 {
			return Batch[F]{}, argError(a.name, a.v, "%d, want >= 1", a.v)
		}
	}
	if setSize > traces {
		return Batch[F]{}, argError("setSize", setSize, "%d > traces = %d", setSize, traces)
	}
	const limit = combin.MaxSize
	if problems > limit/traces || problems > limit/sets || problems*sets > limit/setSize || problems*sets > limit/rewards {
		return Batch[F]{}, argError("problems", problems, "%d problems of %d traces and %d sets of %d members and %d rewards: more than %d traces, members or rewards, the most a batch holds",
			problems, traces, sets, setSize, rewards, limit)
	}
	nSets := problems * sets
	return Batch[F]{
		Traces:       slices.Repeat([]int{traces}, problems),
		Sets:         slices.Repeat([]int{sets}, problems),
		SetSizes:     slices.Repeat([]int{setSize}, nSets),
		Members:      make([]int, nSets*setSize),
		RewardCounts: slices.Repeat([]int{rewards}, nSets),
		Rewards:      make([]F, nSets*rewards),
	}, nil
}

// ComputeBatch computes SPIRAL's credit (the formulas of the package
// documentation) for every problem of in and writes it to dst, in the
// layout of in; dst's slices are resized to fit. Work and memory are
// linear in the size of in: O(N1 + K n + sum N2) per problem.
//
// It checks in first. A layout that does not hold together (lengths that
// do not match, a negative count, more than combin.MaxSize traces) gives
// an *[InputError] naming the field and, where there is one, the problem.
// Otherwise every problem is checked, and a *[BatchError] lists each bad
// one with its first *InputError: no traces, no sets, an empty set, a
// member out of range [0, Traces[p]) or repeated inside a set, two
// identical sets (see Batch.Check), a
// set with no outputs, a scored reward that is NaN, infinite or larger in
// magnitude than [MaxAbsReward]. On a layout error dst is left untouched;
// with a *BatchError the good problems are credited and the bad ones get
// zero credit and are marked in dst.Rejected.
//
// ComputeBatch allocates only to grow dst, on error, and for the set check
// of a problem of more than about 100 members (combin.CheckSets' bounded
// scratch). It panics if dst is nil.
func ComputeBatch[F constraints.Float](dst *BatchCredit[F], in Batch[F]) error {
	if dst == nil {
		panic("advantage: ComputeBatch: dst is nil")
	}
	v, err := in.check()
	if _, ok := err.(*BatchError); err != nil && !ok {
		return err
	}
	out := dst.resize(len(in.Traces), v.traces, len(in.SetSizes), len(in.Rewards), v.maxTraces, v.maxSets)
	var bad []*InputError
	if err != nil {
		bad = err.(*BatchError).Problems
	}
	kin := credit.Input[F]{SetSizes: in.SetSizes, RewardCounts: in.RewardCounts, Members: in.Members,
		Rewards: in.Rewards, Unscorable: in.Unscorable, ExactSums: v.exactSums}
	var sp credit.Span // problem q's ranges
	for q, nt := range in.Traces {
		k := in.Sets[q]
		sp.Trace, sp.Set, sp.Member, sp.Reward = sp.Trace+sp.Traces, sp.Set+sp.Sets, sp.Member+sp.Members, sp.Reward+sp.Rewards
		sp.Traces, sp.Sets, sp.Members, sp.Rewards = nt, k, k*v.size, k*v.count
		if v.size == 0 {
			sp.Members, _ = sumTo(in.SetSizes[sp.Set:sp.Set+k], len(in.Members))
		}
		if v.count == 0 {
			sp.Rewards, _ = sumTo(in.RewardCounts[sp.Set:sp.Set+k], len(in.Rewards))
		}
		dst.Rejected[q] = len(bad) > 0 && bad[0].Problem == q
		if dst.Rejected[q] {
			bad = bad[1:]
			out.Clear(q, sp)
			continue
		}
		credit.Problem(out, &kin, q, sp)
	}
	return err
}

// resize sets the length of every slice of c for p problems with traces
// traces, sets sets and rewards rewards in all, and at most maxTraces
// traces and maxSets sets in one problem, and returns the kernel's view of
// them.
func (c *BatchCredit[F]) resize(p, traces, sets, rewards, maxTraces, maxSets int) *credit.Output[F] {
	o := &c.out
	o.SetScores, o.SetAdvantages, o.Search, o.Appearances = c.SetScores, c.SetAdvantages, c.Search, c.Appearances
	o.Aggregation, o.ScoredOutputs, o.ScoredSets = c.Aggregation, c.ScoredOutputs, c.ScoredSets
	o.Resize(p, traces, sets, rewards, maxTraces, maxSets)
	c.SetScores, c.SetAdvantages, c.Search, c.Appearances = o.SetScores, o.SetAdvantages, o.Search, o.Appearances
	c.Aggregation, c.ScoredOutputs, c.ScoredSets = o.Aggregation, o.ScoredOutputs, o.ScoredSets
	c.Rejected = slices.Grow(c.Rejected[:0], p)[:p]
	return o
}

// checked summarizes a batch that passed check.
type checked struct {
	traces, maxTraces, maxSets int
	// size and count are the common size and reward count of every set
	// (see common), or 0.
	size, count int
	exactSums   bool // see credit.Scan
}

// check checks in: its layout (an *InputError, which comes first), and each
// problem (a *BatchError listing every bad one).
func (in Batch[F]) check() (v checked, err error) {
	if len(in.Sets) != len(in.Traces) {
		return v, layoutError("Sets", "len = %d, want len(Traces) = %d", len(in.Sets), len(in.Traces))
	}
	if len(in.RewardCounts) != len(in.SetSizes) {
		return v, layoutError("RewardCounts", "len = %d, want len(SetSizes) = %d", len(in.RewardCounts), len(in.SetSizes))
	}
	if in.Unscorable != nil && len(in.Unscorable) != len(in.Rewards) {
		return v, layoutError("Unscorable", "len = %d, want len(Rewards) = %d", len(in.Unscorable), len(in.Rewards))
	}
	rewardsOK, exactSums := credit.Scan(in.Rewards, in.Unscorable, true)
	v.exactSums = exactSums
	// When every set has the same size and count and the sets fill
	// Members and Rewards exactly, a problem of K sets has K*size members
	// and K*count rewards, within the slices: no sums are needed.
	size, sameSize := common(in.SetSizes, len(in.Members))
	count, sameCount := common(in.RewardCounts, len(in.Rewards))
	if sameSize {
		v.size = size
	}
	if sameCount {
		v.count = count
	}
	var bad []*InputError
	s, m, r := 0, 0, 0 // offsets of problem p's first set, member and reward
	for p, nt := range in.Traces {
		if nt < 0 || nt > combin.MaxSize-v.traces {
			if nt < 0 {
				return v, inputError(InputError{Field: "Traces", Problem: p, Set: -1, Output: -1, Value: float64(nt), Err: fmt.Errorf("%d < 0", nt)})
			}
			return v, inputError(InputError{Field: "Traces", Problem: p, Set: -1, Output: -1, Value: float64(nt),
				Err: fmt.Errorf("%d: the batch would hold more than %d traces, the most it holds", nt, combin.MaxSize)})
		}
		k := in.Sets[p]
		if k < 0 || k > len(in.SetSizes)-s {
			return v, inputError(InputError{Field: "Sets", Problem: p, Set: -1, Output: -1, Value: float64(k),
				Err: fmt.Errorf("%d, but len(SetSizes) = %d leaves %d", k, len(in.SetSizes), len(in.SetSizes)-s)})
		}
		var nm, nr int
		var ok bool
		if sameSize {
			nm, ok = k*size, true
		} else {
			nm, ok = sumTo(in.SetSizes[s:s+k], len(in.Members)-m)
		}
		if !ok {
			return v, sumError("SetSizes", "size", p, in.SetSizes[s:s+k], "Members", len(in.Members), m)
		}
		if sameCount {
			nr, ok = k*count, true
		} else {
			nr, ok = sumTo(in.RewardCounts[s:s+k], len(in.Rewards)-r)
		}
		if !ok {
			return v, sumError("RewardCounts", "count", p, in.RewardCounts[s:s+k], "Rewards", len(in.Rewards), r)
		}
		// A problem of sound layout is good when it has traces and sets,
		// every set has outputs, and its sets and rewards pass.
		if e := in.checkProblem(p, nt, in.SetSizes[s:s+k], in.RewardCounts[s:s+k], in.Members[m:m+nm], r, nr, rewardsOK); e != nil {
			bad = append(bad, e)
		}
		v.traces += nt
		v.maxTraces = max(v.maxTraces, nt)
		v.maxSets = max(v.maxSets, k)
		s, m, r = s+k, m+nm, r+nr
	}
	switch {
	case s != len(in.SetSizes):
		return v, layoutError("Sets", "sum to %d, want len(SetSizes) = %d", s, len(in.SetSizes))
	case m != len(in.Members):
		return v, layoutError("SetSizes", "sum to %d, want len(Members) = %d", m, len(in.Members))
	case r != len(in.Rewards):
		return v, layoutError("RewardCounts", "sum to %d, want len(Rewards) = %d", r, len(in.Rewards))
	}
	if bad != nil {
		return v, inputerr.NewBatch("advantage", bad)
	}
	return v, nil
}

// CheckRewards returns the position of the first scored reward of rewards
// (those not marked in unscorable, which is nil or parallel to rewards)
// that is NaN, infinite or larger in magnitude than [MaxAbsReward], with
// its reason, ErrNotFinite or ErrTooLarge; or -1 and nil when every scored
// reward is good. It is the check ComputeBatch makes; a caller that
// reports bad rewards in its own terms calls it.
func CheckRewards[F constraints.Float](rewards []F, unscorable []bool) (int, error) {
	if unscorable != nil && len(unscorable) != len(rewards) {
		panic(fmt.Sprintf("advantage: CheckRewards: len(unscorable) = %d, want len(rewards) = %d", len(unscorable), len(rewards)))
	}
	if valid, _ := credit.Scan(rewards, unscorable, false); valid {
		return -1, nil
	}
	for j, x := range rewards {
		if unscorable != nil && unscorable[j] {
			continue
		}
		if err := checkReward(float64(x)); err != nil {
			return j, err
		}
	}
	return -1, nil // unreachable: Scan found a bad reward
}

// sumError returns the error of the first of problem p's sizes (or
// counts) xs, which start at offset o of a slice of length total, that is
// negative or runs past the end of that slice: it names the set and the
// value.
func sumError(field, noun string, p int, xs []int, slice string, total, o int) *InputError {
	for i, x := range xs {
		switch {
		case x < 0:
			return problemError(field, p, i, float64(x), "%d < 0", x)
		case x > total-o:
			return problemError(field, p, i, float64(x), "%d runs past len(%s) = %d (the set starts at %d)", x, slice, total, o)
		}
		o += x
	}
	return problemError(field, p, -1, 0, "the %ss run past len(%s) = %d", noun, slice, total) // unreachable: sumTo found one
}

// checkProblem returns the first error of problem p, whose rewards are
// in.Rewards[r:r+nr], or nil. rewardsOK reports that every scored reward
// of the batch is good.
func (in Batch[F]) checkProblem(p, nt int, sizes, counts, members []int, r, nr int, rewardsOK bool) *InputError {
	if nt < 1 {
		return problemError("Traces", p, -1, float64(nt), "%d, want >= 1", nt)
	}
	if len(sizes) < 1 {
		return problemError("Sets", p, -1, 0, "0, want >= 1")
	}
	for i, c := range counts {
		if c < 1 {
			return problemError("RewardCounts", p, i, 0, "no outputs (count 0)")
		}
	}
	if err := combin.CheckSets(nt, in.Check == Tuples, sizes, members); err != nil {
		// The layout passed, so err is about a set: rename combin's
		// argument to the Batch's field, in problem p.
		ce, _ := errors.AsType[*InputError](err)
		e := ce.In("advantage", "Members")
		if ce.Field == combin.FieldSizes {
			e.Field = "SetSizes"
		}
		e.Problem = p
		return e
	}
	if rewardsOK {
		return nil
	}
	rs := in.Rewards[r : r+nr]
	var un []bool
	if in.Unscorable != nil {
		un = in.Unscorable[r : r+nr]
	}
	if valid, _ := credit.Scan(rs, un, false); valid {
		return nil
	}
	o := 0
	for i, c := range counts {
		for j, x := range rs[o : o+c] {
			if un != nil && un[o+j] {
				continue
			}
			if err := checkReward(float64(x)); err != nil {
				return inputError(InputError{Field: "Rewards", Problem: p, Set: i, Output: j, Value: float64(x), Err: err})
			}
		}
		o += c
	}
	return nil // unreachable: Scan found a bad reward
}

// checkReward returns ErrNotFinite or ErrTooLarge if x is not a valid
// reward, or nil.
func checkReward(x float64) error {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return ErrNotFinite
	case math.Abs(x) > MaxAbsReward:
		return ErrTooLarge
	}
	return nil
}

// common returns v and true when every x of xs equals v >= 1 and
// len(xs)*v == total, and false otherwise.
func common(xs []int, total int) (v int, ok bool) {
	if len(xs) == 0 || xs[0] < 1 {
		return 0, false
	}
	v = xs[0]
	if total%v != 0 || total/v != len(xs) {
		return 0, false
	}
	diff := 0 // the bits of every x ^ v, ORed
	for _, x := range xs {
		diff |= x ^ v
	}
	return v, diff == 0
}
