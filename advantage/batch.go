package advantage

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"golang.org/x/exp/constraints"

	"spiral/internal/credit"
)

// MaxAbsReward is the largest reward magnitude accepted. A reward r with
// |r| > MaxAbsReward is rejected as bad input, like a NaN: with |r| bounded
// by 1e30 no mean, deviation, variance or advantage can overflow, either in
// the float64 arithmetic used inside or when a result is stored as float32,
// so every output is finite. SPIRAL's rewards lie in [0, 1]. The bound
// applies to the value: float32(1e30) is 1.0000000150474662e30, and is
// rejected.
const MaxAbsReward = credit.MaxAbsReward

// MaxTraces is the largest number of traces (N1) accepted for one problem.
// It bounds the memory a caller's sizes can make this package allocate.
const MaxTraces = 1 << 20

// Batch describes the inputs of [ComputeBatch] for many problems, laid out
// flat: problem after problem and, inside a problem, set after set. Sets are
// numbered across the whole batch (global set s), and so are rewards; trace
// indices inside Members are local to their problem.
//
// For P problems the lengths must satisfy
//
//	len(Sets) == len(Traces) == P
//	len(SetSizes) == len(RewardCounts) == sum(Sets)
//	len(Members) == sum(SetSizes)
//	len(Rewards) == sum(RewardCounts)
//
// The paper's batch (256 problems, N1 = 8, K = 4 sets of n = 4, N2 = 4) has
// len(Traces) = 256, len(SetSizes) = 1024, len(Members) = 4096 and
// len(Rewards) = 4096; [NewUniformBatch] builds that layout.
type Batch[F constraints.Float] struct {
	// Traces[p] is the number of search traces N1 of problem p; they are
	// numbered 0..Traces[p]-1 in Members. Traces that are in no set are
	// allowed and get zero search credit.
	Traces []int
	// Sets[p] is the number of sampled sets K of problem p, at least 1.
	Sets []int
	// SetSizes[s] is the number of members n of global set s, at least 1.
	SetSizes []int
	// Members holds the trace indices of every set, concatenated in set
	// order: global set s is Members[sum(SetSizes[:s]) : sum(SetSizes[:s+1])].
	// Each set is listed as drawn (see [ComputeBatch] on identical sets);
	// the order inside a set does not change the credit.
	Members []int
	// RewardCounts[s] is the number of aggregation rewards N2 of global set
	// s, at least 1. Counts may differ between sets (ragged N2, for example
	// when a failed generation was dropped); each set's score uses its own.
	RewardCounts []int
	// Rewards holds the aggregation rewards of every set, concatenated in set
	// order, in the same layout as Members.
	Rewards []F
}

// Span locates one problem in a [Batch] and in its [BatchCredit]: the
// problem's traces are Search[Trace : Trace+Traces] (and the same range of
// Appearances), its sets SetSizes[Set : Set+Sets] (and the same range of
// RewardCounts, SetScores and SetAdvantages), its members
// Members[Member : Member+Members] and its rewards Rewards[Reward :
// Reward+Rewards] (and the same range of Aggregation).
type Span struct {
	Trace, Traces   int
	Set, Sets       int
	Member, Members int
	Reward, Rewards int
}

// Spans returns the Span of each problem of b, in order, with its index.
// On a batch that [ComputeBatch] would reject it stops at the first problem
// whose slices run past the end of b's.
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
			sp.Members = sum(b.SetSizes[sp.Set : sp.Set+sp.Sets])
			sp.Rewards = sum(b.RewardCounts[sp.Set : sp.Set+sp.Sets])
			if sp.Members < 0 || sp.Members > len(b.Members)-sp.Member || sp.Rewards < 0 || sp.Rewards > len(b.Rewards)-sp.Reward {
				return
			}
			if !yield(p, sp) {
				return
			}
		}
	}
}

// BatchCredit receives the results of [ComputeBatch], in the order of the
// Batch that produced them. Use [NewBatchCredit] to allocate one, and reuse
// it for later batches of the same shape: ComputeBatch then allocates
// nothing.
type BatchCredit[F constraints.Float] struct {
	// SetScores[s] is f_s, the mean of global set s's rewards.
	SetScores []F
	// SetAdvantages[s] is A_set = f_s - fbar, fbar the mean of f over the
	// sets of the same problem.
	SetAdvantages []F
	// Search[t] is A_search of trace t, traces numbered across the batch
	// (problem p's traces start at sum(Traces[:p]); see [Batch.Spans]).
	// 0 for a trace in no set.
	Search []F
	// Appearances[t] is the number of sets of its problem that hold trace t.
	Appearances []int
	// Aggregation is A_agg = r - f_s for every reward, in the layout of
	// Batch.Rewards.
	Aggregation []F
}

// NewBatchCredit returns a BatchCredit with slices of the lengths
// [ComputeBatch] needs for in: sum(Traces) for Search and Appearances,
// len(SetSizes) for SetScores and SetAdvantages, len(Rewards) for
// Aggregation. It validates in as ComputeBatch does and returns the same
// error if in is not valid.
func NewBatchCredit[F constraints.Float](in Batch[F]) (BatchCredit[F], error) {
	traces, err := in.validate()
	if err != nil {
		return BatchCredit[F]{}, err
	}
	return BatchCredit[F]{
		SetScores:     make([]F, len(in.SetSizes)),
		SetAdvantages: make([]F, len(in.SetSizes)),
		Search:        make([]F, traces),
		Appearances:   make([]int, traces),
		Aggregation:   make([]F, len(in.Rewards)),
	}, nil
}

// NewUniformBatch returns the layout of a batch of problems that all have
// the same shape: traces search traces, sets sampled sets of setSize members
// each, and rewards aggregation rewards per set. Traces, Sets, SetSizes and
// RewardCounts are filled in; Members and Rewards have the right lengths and
// are zero, for the caller to fill. NewUniformBatch[float64](256, 8, 4, 4, 4)
// is the paper's batch.
//
// It returns an error if an argument is less than 1, if setSize > traces, if
// traces > [MaxTraces], or if the batch would have more than 1<<31 traces,
// members or rewards.
func NewUniformBatch[F constraints.Float](problems, traces, sets, setSize, rewards int) (Batch[F], error) {
	for _, a := range []struct {
		name string
		v    int
	}{{"problems", problems}, {"traces", traces}, {"sets", sets}, {"setSize", setSize}, {"rewards", rewards}} {
		if a.v < 1 {
			return Batch[F]{}, fmt.Errorf("advantage: %s = %d, want >= 1", a.name, a.v)
		}
	}
	if setSize > traces {
		return Batch[F]{}, fmt.Errorf("advantage: setSize = %d > traces = %d", setSize, traces)
	}
	if traces > MaxTraces {
		return Batch[F]{}, fmt.Errorf("advantage: traces = %d > MaxTraces = %d", traces, MaxTraces)
	}
	const limit = 1 << 31
	nSets := problems * sets
	if problems > limit/traces || problems > limit/sets || nSets > limit/setSize || nSets > limit/rewards {
		return Batch[F]{}, fmt.Errorf("advantage: %d problems of %d traces and %d sets of %d members and %d rewards: more than %d entries",
			problems, traces, sets, setSize, rewards, limit)
	}
	return Batch[F]{
		Traces:       filled(problems, traces),
		Sets:         filled(problems, sets),
		SetSizes:     filled(nSets, setSize),
		Members:      make([]int, nSets*setSize),
		RewardCounts: filled(nSets, rewards),
		Rewards:      make([]F, nSets*rewards),
	}, nil
}

func filled(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// ComputeBatch computes SPIRAL's three credit signals (SPIRAL.md section 2)
// for every problem of in and writes them to dst, in input order. For each
// problem, with sets G_1..G_K and rewards r_ij of set i:
//
//	f_i          = (1/N2_i) sum_j r_ij             dst.SetScores
//	fbar         = (1/K) sum_i f_i
//	A_set(G_i)   = f_i - fbar                      dst.SetAdvantages
//	A_search(y)  = (1/|G(y)|) sum_{G_i ∋ y} A_set(G_i), 0 if G(y) is empty
//	                                               dst.Search
//	|G(y)|                                         dst.Appearances
//	A_agg(i, j)  = r_ij - f_i                      dst.Aggregation
//
// Rewards are converted to float64, every sum is taken in float64, and
// results are rounded to F only when stored. The arithmetic is done on
// deviations from the problem's mean reward (a two-pass scheme), so a
// common offset in the rewards, however large, costs no accuracy in the
// advantages. Advantages that are 0 by definition are exactly 0, not a
// rounding residue: the aggregation advantages of a set whose rewards are
// all equal; every set and search advantage of a problem whose set scores
// all come out equal (as when every set has the same rewards); the search
// advantage of a trace that is in every set of its problem; and a search
// advantage within rounding error of 0 (see the package documentation).
// Work is O(K*n + sum_i N2_i + N1) per problem, plus O(K^2) cheap
// comparisons to reject identical sets.
//
// ComputeBatch validates all of in before it writes anything, and on error
// leaves dst untouched. Errors, each naming the problem, set and position:
// a length of in inconsistent with the others (see [Batch]); a problem with
// fewer than 1 or more than [MaxTraces] traces, or no sets; an empty set; a
// member out of range [0, Traces[p]); a trace repeated inside a set; two
// identical sets in one problem; a set with no rewards; a reward that is NaN,
// infinite or larger in magnitude than [MaxAbsReward].
//
// Two sets are identical when they hold the same trace indices in the same
// order: sets are compared as passed, so {0, 1, 2, 3} and {1, 0, 2, 3}
// are different sets (as ordered tuples are). The check is meant to catch
// a sampler that drew the same group twice, so pass each set as it was
// drawn: the credit depends only on which traces a set holds, never on
// their order, so the order in which the aggregator reads the candidates
// does not matter here. A caller that reorders candidates for the prompt
// (a shuffle, or an order that depends on the traces' content, such as
// their length) and passes the reordered sets can make two distinct drawn
// tuples identical, {0, 1, 2, 3} and {1, 0, 2, 3} both sorted to
// {0, 1, 2, 3}, and gets an "identical" error that it would not get with
// the sets as drawn (TestSetsAsDrawn). A caller that samples unordered
// sets and wants a repeated subset rejected should pass every set sorted.
//
// ComputeBatch allocates nothing. It panics if dst is nil or if, once in is
// known to be valid, a slice of dst does not have the length
// [NewBatchCredit] gives it: that is a programmer's error.
func ComputeBatch[F constraints.Float](dst *BatchCredit[F], in Batch[F]) error {
	traces, err := in.validate()
	if err != nil {
		return err
	}
	dst.mustFit(traces, len(in.SetSizes), len(in.Rewards))
	computeValid(dst, in)
	return nil
}

func (c *BatchCredit[F]) mustFit(traces, sets, rewards int) {
	mustLen("SetScores", len(c.SetScores), sets)
	mustLen("SetAdvantages", len(c.SetAdvantages), sets)
	mustLen("Search", len(c.Search), traces)
	mustLen("Appearances", len(c.Appearances), traces)
	mustLen("Aggregation", len(c.Aggregation), rewards)
}

func mustLen(name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("advantage: len(dst.%s) = %d, want %d", name, got, want))
	}
}

// validate checks every length and value of in, and returns the total
// number of traces. A valid batch of small problems is accepted by
// quickValid alone; anything else goes through checkAll, which finds the
// first error in input order.
func (in Batch[F]) validate() (traces int, err error) {
	if traces, ok := in.quickValid(); ok {
		return traces, nil
	}
	return in.checkAll()
}

// quickSets is the largest number of sets, and quickTraces the largest
// number of traces, of a problem that quickValid checks.
const (
	quickSets   = 64
	quickTraces = 64
)

// quickValid reports whether in is valid, with the total number of traces,
// for a batch whose problems have at most quickTraces traces and quickSets
// sets each (the paper's problems have 8 and 4); for any other batch it
// reports false. It accepts exactly the batches of such problems that
// checkAll accepts (TestQuickValid), in one pass over the members and one
// over the rewards with few branches: each set's members are gathered into
// a bit mask, which has as many bits as the set has members exactly when
// none repeats, and two identical sets have equal masks, so only sets with
// equal masks are compared member by member.
func (in Batch[F]) quickValid() (traces int, ok bool) {
	sizes, counts, members := in.SetSizes, in.RewardCounts, in.Members
	if len(in.Sets) != len(in.Traces) || len(counts) != len(sizes) {
		return 0, false
	}
	var masks [quickSets]uint64 // masks[i]: the members of set i of the current problem
	s, m, r := 0, 0, 0          // offsets of the current set, member and reward
	for p, nt := range in.Traces {
		k := in.Sets[p]
		if uint(nt-1) >= quickTraces || uint(k-1) >= quickSets || k > len(sizes)-s {
			return 0, false
		}
		first := m // offset of the problem's first member
		cs := counts[s : s+k]
		for i, size := range sizes[s : s+k] {
			// 1 <= size <= len(members)-m and 1 <= count <= len(Rewards)-r.
			if uint(size-1) >= uint(len(members)-m) || uint(cs[i]-1) >= uint(len(in.Rewards)-r) {
				return 0, false
			}
			mask, ok := memberMask(members[m:m+size], nt)
			if !ok {
				return 0, false
			}
			for i0, mask0 := range masks[:i] {
				if mask0 == mask && in.sameMembers(s, first, i0, i) {
					return 0, false
				}
			}
			masks[i] = mask
			m += size
			r += cs[i]
		}
		s += k
		traces += nt
	}
	if s != len(sizes) || m != len(members) || r != len(in.Rewards) || !credit.RewardsValid(in.Rewards) {
		return 0, false
	}
	return traces, true
}

// memberMask returns the bit mask of the members of g, and whether they are
// all in [0, nt) with none repeated, for nt <= 64. Their bitwise OR is
// below 64 exactly when every member is in [0, 64) (a negative one has the
// high bits set); then they are below nt when the mask has no bit at nt or
// above, and distinct when it has one bit for each. It is not inlined:
// inside quickValid, the compiler kept mask and or on the stack, storing
// and reloading them for every member.
//
//go:noinline
func memberMask(g []int, nt int) (mask uint64, ok bool) {
	var or uint64
	for _, y := range g {
		or |= uint64(y)
		mask |= 1 << (uint64(y) & 63)
	}
	return mask, or < 64 && mask>>uint(nt) == 0 && bits.OnesCount64(mask) == len(g)
}

// sameMembers reports whether sets i0 and i of the problem whose first set
// is global set s and whose members start at Members[first] list the same
// members in the same order.
func (in Batch[F]) sameMembers(s, first, i0, i int) bool {
	m0 := first + sum(in.SetSizes[s:s+i0])
	m := m0 + sum(in.SetSizes[s+i0:s+i])
	return slices.Equal(in.Members[m0:m0+in.SetSizes[s+i0]], in.Members[m:m+in.SetSizes[s+i]])
}

// checkAll checks every length and value of in, in input order, and
// returns the total number of traces or the first error.
func (in Batch[F]) checkAll() (traces int, err error) {
	if len(in.Sets) != len(in.Traces) {
		return 0, fmt.Errorf("advantage: len(Sets) = %d, want len(Traces) = %d", len(in.Sets), len(in.Traces))
	}
	if len(in.RewardCounts) != len(in.SetSizes) {
		return 0, fmt.Errorf("advantage: len(RewardCounts) = %d, want len(SetSizes) = %d", len(in.RewardCounts), len(in.SetSizes))
	}
	s, m, r := 0, 0, 0 // offsets of the current set, member and reward
	for p, nt := range in.Traces {
		if nt < 1 || nt > MaxTraces {
			return 0, fmt.Errorf("advantage: problem %d: traces = %d, want 1 <= traces <= %d", p, nt, MaxTraces)
		}
		k := in.Sets[p]
		if k < 1 {
			return 0, fmt.Errorf("advantage: problem %d: sets = %d, want >= 1", p, k)
		}
		if k > len(in.SetSizes)-s {
			return 0, fmt.Errorf("advantage: problem %d: sets = %d, but len(SetSizes) = %d leaves %d",
				p, k, len(in.SetSizes), len(in.SetSizes)-s)
		}
		firstMember := m
		for i := range k {
			size, count := in.SetSizes[s+i], in.RewardCounts[s+i]
			if size < 1 {
				return 0, fmt.Errorf("advantage: problem %d, set %d: empty (size %d)", p, i, size)
			}
			if size > len(in.Members)-m {
				return 0, fmt.Errorf("advantage: problem %d, set %d: size %d, but len(Members) = %d leaves %d",
					p, i, size, len(in.Members), len(in.Members)-m)
			}
			g := in.Members[m : m+size]
			var seen uint64 // bit y set: trace y < 64 is in g[:j]
			for j, y := range g {
				if y < 0 || y >= nt {
					return 0, fmt.Errorf("advantage: problem %d, set %d, member %d = %d out of range [0, %d)", p, i, j, y, nt)
				}
				repeated := false
				if y < 64 {
					repeated = seen&(1<<y) != 0
					seen |= 1 << y
				} else {
					repeated = slices.Contains(g[:j], y)
				}
				if repeated {
					j0 := slices.Index(g[:j], y)
					return 0, fmt.Errorf("advantage: problem %d, set %d: trace %d repeated (members %d and %d)", p, i, y, j0, j)
				}
			}
			for i0, m0 := 0, firstMember; i0 < i; i0++ {
				size0 := in.SetSizes[s+i0]
				if slices.Equal(in.Members[m0:m0+size0], g) {
					return 0, fmt.Errorf("advantage: problem %d: sets %d and %d are identical %v", p, i0, i, g)
				}
				m0 += size0
			}
			m += size
			if count < 1 {
				return 0, fmt.Errorf("advantage: problem %d, set %d: no rewards (count %d)", p, i, count)
			}
			if count > len(in.Rewards)-r {
				return 0, fmt.Errorf("advantage: problem %d, set %d: %d rewards, but len(Rewards) = %d leaves %d",
					p, i, count, len(in.Rewards), len(in.Rewards)-r)
			}
			if !credit.RewardsValid(in.Rewards[r : r+count]) {
				for j, x := range in.Rewards[r : r+count] {
					if err := checkReward(float64(x)); err != nil {
						return 0, fmt.Errorf("advantage: problem %d, set %d, reward %d = %v: %w", p, i, j, x, err)
					}
				}
			}
			r += count
		}
		s += k
		traces += nt
	}
	if s != len(in.SetSizes) {
		return 0, fmt.Errorf("advantage: Sets sum to %d, want len(SetSizes) = %d", s, len(in.SetSizes))
	}
	if m != len(in.Members) {
		return 0, fmt.Errorf("advantage: SetSizes sum to %d, want len(Members) = %d", m, len(in.Members))
	}
	if r != len(in.Rewards) {
		return 0, fmt.Errorf("advantage: RewardCounts sum to %d, want len(Rewards) = %d", r, len(in.Rewards))
	}
	return traces, nil
}

// errNotFinite and errTooLarge are wrapped in the errors for bad rewards.
var (
	errNotFinite = fmt.Errorf("reward is not finite")
	errTooLarge  = fmt.Errorf("reward magnitude exceeds MaxAbsReward = %g", MaxAbsReward)
)

// checkReward returns an error saying why x is not a valid reward, or nil.
func checkReward(x float64) error {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return errNotFinite
	case math.Abs(x) > MaxAbsReward:
		return errTooLarge
	}
	return nil
}

// computeValid computes the credit of a batch already validated into dst,
// already checked to fit, with the package's one implementation of the
// formulas.
func computeValid[F constraints.Float](dst *BatchCredit[F], in Batch[F]) {
	credit.Compute(credit.Result[F](*dst), credit.Layout[F](in))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
