package estimator

import (
	"cmp"
	"fmt"
	"iter"
	"math/big"
	"math/bits"
	"slices"

	"spiral/combin"
	"spiral/internal/numeric"
)

// A SetDistribution is a probability distribution over selections of sets:
// the way a trainer picks the K sets that its N1 search traces are credited
// through (its design). T sets of one size n are listed, each with its
// members in presentation order (the order the aggregator reads them under
// combin.IndexOrder); a selection is a list of distinct indices into that
// list, with a probability. A fixed design has one selection of probability
// 1; the paper's uniform design has C(T, K) equally likely selections.
//
// A SetDistribution is immutable and safe for concurrent use.
// docs/findings.md#set-designs states what each design does to the search
// estimator.
type SetDistribution struct {
	n      int     // number of traces N
	size   int     // group size n
	groups [][]int // the T groups, members in presentation order
	// Selections: sels/probs when listed, or lazy for UniformSets (every
	// K-subset of the T sets, K = maxK, probability 1/C(T, K)), which
	// Coverage and Moments sum in closed form.
	sels  [][]int
	probs []*big.Rat
	lazy  iter.Seq2[[]int, *big.Rat]
	all   *big.Int // C(T, K), the number of lazy selections
	maxK  int      // largest selection size
}

// maxListedSelections bounds the selections NewSetDistribution and
// DistributionWeights read; a variable only so that a test can reach the
// bound in fewer selections.
var maxListedSelections = 1 << 16

// maxDesignSelections bounds the sets times traces UniformSets stores and
// the selections a method walks one by one, maxRelabelN the N up to which
// all N! relabellings are enumerated, and maxClassN the N up to which
// BalancedClasses enumerates rounds (a set is a 16-bit mask).
const (
	maxDesignSelections = 1 << 25
	maxRelabelN         = 9
	maxClassN           = 16
	// maxRelabelledSelections bounds the selections BalancedSets lists.
	maxRelabelledSelections = 1 << 21
)

// NewSetDistribution returns the distribution with the given sets and
// selection law. sets lists T >= 1 sets of one size n >= 1, members in
// [0, N1) without repeats, no two sets equal as sequences (combin.CheckSets
// with ordered sets); selections yields each selection (distinct indices
// into sets, at least one) with its probability, >= 0, summing exactly to 1.
// Both are copied. It returns an error naming the offending set, selection
// or probability, and an error if selections is nil or yields more than
// 65,536 selections (it stops reading there, so an endless iterator ends).
func NewSetDistribution(N1 int, sets [][]int, selections iter.Seq2[[]int, *big.Rat]) (*SetDistribution, error) {
	if selections == nil {
		return nil, elementError(FieldSelections, -1, "nil, want an iterator over selections and their probabilities")
	}
	d, err := newDistributionSets(N1, sets)
	if err != nil {
		return nil, err
	}
	total := new(big.Rat)
	i := 0
	var ierr error
	for s, prob := range selections {
		if i == maxListedSelections {
			ierr = costError(FieldSelections, maxListedSelections+1, "more than %d, the most a listed distribution holds", maxListedSelections)
			break
		}
		if ierr = checkSelection(i, s, prob, len(d.groups)); ierr != nil {
			break
		}
		d.sels = append(d.sels, slices.Clone(s))
		d.probs = append(d.probs, new(big.Rat).Set(prob))
		d.maxK = max(d.maxK, len(s))
		total.Add(total, prob)
		i++
	}
	if ierr != nil {
		return nil, ierr
	}
	if total.Cmp(big.NewRat(1, 1)) != 0 {
		return nil, elementError(FieldSelections, -1, "probabilities sum to %s, want exactly 1", total.RatString())
	}
	return d, nil
}

// checkSelection returns an error if selection i has a nil or negative
// probability, or is not a set of distinct indices into the T sets
// (combin.CheckSets).
func checkSelection(i int, s []int, prob *big.Rat, T int) error {
	if prob == nil || prob.Sign() < 0 {
		return elementError(FieldSelections, i, "probability %v, want >= 0", prob)
	}
	if len(s) > T {
		return elementError(FieldSelections, i, "%d sets, more than the T = %d listed", len(s), T)
	}
	return setsError(combin.CheckSets(T, false, []int{len(s)}, s), fmt.Sprintf("%s[%d]", FieldSelections, i))
}

// newDistributionSets returns a distribution with the given sets and no
// selections, after combin.CheckSets (sets compared as sequences) and a
// check that all have one size.
func newDistributionSets(N1 int, sets [][]int) (*SetDistribution, error) {
	if N1 < 1 || N1 > combin.MaxSize {
		return nil, argError(FieldTraces, -1, N1, "%d outside [1, %d], the most traces a family holds", N1, combin.MaxSize)
	}
	if len(sets) == 0 {
		return nil, argError(FieldSets, -1, 0, "len = 0, want at least one set")
	}
	if len(sets) > combin.MaxSize {
		return nil, argError(FieldSets, -1, len(sets), "len = %d > %d, the most sets held", len(sets), combin.MaxSize)
	}
	d := &SetDistribution{n: N1, size: len(sets[0]), groups: make([][]int, len(sets))}
	sizes := make([]int, len(sets))
	total := 0
	for h, g := range sets {
		if len(g) != d.size {
			return nil, elementError(FieldSets, h, "len = %d, want %d, the size of set 0", len(g), d.size)
		}
		if total += len(g); total > combin.MaxSize {
			return nil, elementError(FieldSets, -1, "more than %d members in all, the most held", combin.MaxSize)
		}
		sizes[h] = len(g)
	}
	members := make([]int, 0, total)
	for _, g := range sets {
		members = append(members, g...)
	}
	if err := combin.CheckSets(N1, true, sizes, members); err != nil {
		return nil, setsError(err, FieldSets)
	}
	for h, g := range sets {
		d.groups[h] = slices.Clone(g)
	}
	return d, nil
}

// FixedSets returns the design that always selects the given sets, each
// presented in the order listed. It returns an error if sets is empty or its
// sets are invalid as for NewSetDistribution (different sizes, a member outside
// [0, N) or repeated, two equal sets).
func FixedSets(N int, sets [][]int) (*SetDistribution, error) {
	all := make([]int, len(sets))
	for k := range all {
		all[k] = k
	}
	return NewSetDistribution(N, sets, func(yield func([]int, *big.Rat) bool) { yield(all, big.NewRat(1, 1)) })
}

// UniformSets returns the paper's design: K distinct groups drawn
// uniformly without replacement from the family f, every one of the C(T, K)
// selections with probability 1/C(T, K). The groups are f's, in f.All's
// order; subsets are presented in ascending index order. The selections are
// enumerated, not stored, and Coverage, M, PositionWeights and Moments sum
// them in closed form, so the design is constructible for any C(T, K); the
// methods that walk the selections one by one (Weights, and Moments when a
// closed-form sum could overflow) refuse more than 33,554,432. It returns an
// error if K is not in [1, T], T*N exceeds 33,554,432, or C(T, K) may have
// more than 2^17 bits (min(K, T-K) times the bits of T).
func UniformSets(f combin.Family, K int) (*SetDistribution, error) {
	T64, ok := f.Count64()
	if !ok || T64*uint64(f.Traces()) > maxDesignSelections {
		return nil, elementError(FieldFamily, -1, "%v is too large for exact enumeration: T N1 > %d", f, maxDesignSelections)
	}
	T := int(T64)
	if K < 1 || K > T {
		return nil, argError(FieldK, -1, K, "%d outside [1, T = %d]", K, T)
	}
	if numeric.FallingBits(min(K, T-K), bits.Len(uint(T))) > numeric.MaxExactBits {
		return nil, costError(FieldK, K, "C(T, K) = C(%d, %d) has more than %d bits, the most computed exactly", T, K, numeric.MaxExactBits)
	}
	groups := make([][]int, 0, T)
	for g := range f.All() {
		groups = append(groups, slices.Clone(g))
	}
	d, err := newDistributionSets(f.Traces(), groups)
	if err != nil {
		return nil, err
	}
	all := new(big.Int).Binomial(int64(T), int64(K))
	d.lazy, d.maxK, d.all = uniformSelections(T, K, all), K, all
	return d, nil
}

// enumerable returns an error if d's selections are too many to walk one by
// one (only the uniform design's can be): what, the method that would walk
// them, names itself in the error.
func (d *SetDistribution) enumerable(what string) error {
	if d.lazy == nil || d.all.Cmp(big.NewInt(maxDesignSelections)) <= 0 {
		return nil
	}
	return fmt.Errorf("estimator: %s: C(T, K) = C(%d, %d) = %v selections exceed the limit %d to enumerate", what, len(d.groups), d.maxK, d.all, maxDesignSelections)
}

// RelabelledSets returns the design obtained from the fixed design sets by
// a uniformly random relabelling of the N traces: a permutation sigma of
// [0, N) drawn uniformly maps each set H to sigma(H), which is presented in
// ascending order of the new labels. This is what any randomised design
// that treats the traces alike amounts to. The groups are all n-subsets of
// [0, N) in lexicographic order; the selections are the distinct images of
// sets, each with probability |{sigma : sigma(sets) = image}|/N!, which is
// uniform over the images. It returns an error if N > 9 (N! relabellings are
// enumerated) or sets is invalid as for FixedSets.
func RelabelledSets(N int, sets [][]int) (*SetDistribution, error) {
	if N > maxRelabelN {
		return nil, costError(FieldN, N, "%d > %d: too many relabellings to enumerate", N, maxRelabelN)
	}
	if _, err := FixedSets(N, sets); err != nil {
		return nil, err
	}
	sorted := make([][]int, len(sets))
	for k, s := range sets {
		sorted[k] = slices.Sorted(slices.Values(s))
	}
	if _, err := FixedSets(N, sorted); err != nil { // two sets equal up to order
		return nil, err
	}
	l, err := newLabelledLaw(N, len(sets[0]))
	if err != nil {
		return nil, err
	}
	l.addOrbit(sorted, big.NewRat(1, 1))
	return l.design()
}

// BalancedSets returns the exact law of the design drawn by
// combin.BalancedSampler for the subset family f and K groups: the rounds
// construction (independent uniformly random orderings of the N traces, cut
// into K groups of n consecutive slots) conditioned on the groups being K
// distinct n-subsets. It is BalancedClasses' law relabelled uniformly. The
// sampler follows this law except when 64 consecutive draws are invalid,
// which at the paper's configuration (N = 8, n = 4, K = 4: 595 equally
// likely designs, a draw valid with probability 34/35) has probability
// 35^-64. Subsets are presented in ascending index order.
//
// It returns the errors of BalancedClasses, and an error if N > 9 (every
// relabelling is enumerated) or the law has more than 2,097,152
// selections.
func BalancedSets(f combin.Family, K int) (*SetDistribution, error) {
	N, n := f.Traces(), f.SetSize()
	if N > maxRelabelN {
		return nil, costError(FieldFamily, N, "N1 = %d > %d: too many relabellings to enumerate", N, maxRelabelN)
	}
	law, err := balancedLaw(f, K)
	if err != nil {
		return nil, err
	}
	l, err := newLabelledLaw(N, n)
	if err != nil {
		return nil, err
	}
	total := new(big.Int).SetUint64(law.total)
	for i, sets := range law.sets(N) {
		l.addOrbit(sets, new(big.Rat).SetFrac(new(big.Int).SetUint64(law.counts[i]), total))
		if len(l.orbit) > maxRelabelledSelections {
			return nil, costError(FieldK, K, "the balanced design of %v with K sets has more than %d selections to list (BalancedClasses lists one class each)", f, maxRelabelledSelections)
		}
	}
	return l.design()
}

// BalancedClasses returns a law whose uniform relabelling is BalancedSets'
// law: one labelled design of each class the rounds construction reaches
// up to relabelling, or a few, with the class's probability spread over
// them. Relabelling the traces leaves the law of anything that treats the
// traces alike unchanged, so each such quantity (the coverage and M, the
// search estimator's moments under a symmetric objective, the law of the
// counts c_i) is the same under both, from a few thousand selections where
// BalancedSets lists up to N! per class. A quantity that depends on where
// traces sit within the sets (presentation order, pairs of sets presented
// alike) is not: average it over relabellings.
//
// The classes are found by enumerating, round after round, how many
// traces of each class of traces alike so far (held or missed alike by
// every earlier part) each part of the round takes, with the number of
// orderings each choice stands for: at most 94,087 choices and 4,680
// designs for N <= 8, K <= 8, where the round sequences number up to
// 8!^6, about 4 10^27.
//
// It returns an error if f is not a subset family, K is not in [1, T],
// N > 16, or the enumeration would take more than 4,194,304 steps.
func BalancedClasses(f combin.Family, K int) (*SetDistribution, error) {
	law, err := balancedLaw(f, K)
	if err != nil {
		return nil, err
	}
	groups := make([][]int, 0)
	for g := range f.All() {
		groups = append(groups, slices.Clone(g))
	}
	d, err := newDistributionSets(f.Traces(), groups)
	if err != nil {
		return nil, err
	}
	total := new(big.Int).SetUint64(law.total)
	start := len(d.sels)
	var counts []uint64
	for i, sets := range law.sets(f.Traces()) {
		counts = append(counts, law.counts[i])
		sel := make([]int, len(sets))
		for k, g := range sets {
			r, err := f.Rank64(g)
			if err != nil {
				return nil, fmt.Errorf("estimator: %w", err)
			}
			sel[k] = int(r)
		}
		slices.Sort(sel)
		d.sels = append(d.sels, sel)
		d.probs = append(d.probs, new(big.Rat).SetFrac(new(big.Int).SetUint64(law.counts[i]), total))
	}
	// Selections of one probability next to each other: a sum over them
	// costs rational work per run of one probability (SetDistribution.runs).
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(counts[i], counts[j]) })
	sels, probs := slices.Clone(d.sels[start:]), slices.Clone(d.probs[start:])
	for k, i := range order {
		d.sels[start+k], d.probs[start+k] = sels[i], probs[i]
	}
	d.maxK = K
	return d, nil
}

// balancedLaw checks f and K for BalancedSets and BalancedClasses and
// returns the rounds construction's law up to relabelling.
func balancedLaw(f combin.Family, K int) (roundLaw, error) {
	N, n := f.Traces(), f.SetSize()
	if f.Ordered() || n == 0 {
		return roundLaw{}, elementError(FieldFamily, -1, "%v: balanced designs are drawn from subsets", f)
	}
	if T, _ := f.Count64(); K < 1 || uint64(K) > T {
		return roundLaw{}, argError(FieldK, -1, K, "%d outside [1, T = %d]", K, T)
	}
	if N > maxClassN {
		return roundLaw{}, costError(FieldFamily, N, "N1 = %d > %d, more traces than a mask of the rounds enumeration holds", N, maxClassN)
	}
	law, err := roundClasses(N, n, K)
	if err != nil {
		return roundLaw{}, err
	}
	if law.total == 0 {
		return roundLaw{}, fmt.Errorf("estimator: no valid rounds design for %v, K = %d", f, K)
	}
	return law, nil
}

// labelledLaw accumulates a distribution over designs of n-subsets of [0, N)
// as a mixture of uniform relabellings (orbits).
type labelledLaw struct {
	N, n  int
	f     combin.Family
	perms [][]int
	orbit map[string]int // selection key -> orbit
	ranks []int          // scratch of selection
	key   []byte         // the last selection's key
	// per orbit: its distinct selections, and its total probability
	members [][][]int
	weight  []*big.Rat
}

func newLabelledLaw(N, n int) (*labelledLaw, error) {
	f, err := combin.Subsets(N, n)
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	T, _ := f.Count64()
	l := &labelledLaw{N: N, n: n, f: f, orbit: map[string]int{}, ranks: make([]int, T)}
	perms, err := combin.Tuples(N, N) // every permutation of the N labels
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	for p := range perms.All() {
		l.perms = append(l.perms, slices.Clone(p))
	}
	return l, nil
}

// selection returns the sorted ranks of the sets (each sorted) in f, and its
// key (two bytes per rank) in l.key, valid until the next call.
func (l *labelledLaw) selection(sets [][]int) []int {
	s := l.ranks[:len(sets)]
	for k, g := range sets {
		r, err := l.f.Rank64(g)
		if err != nil {
			panic(err) // sets are sorted subsets of [0, N)
		}
		s[k] = int(r)
	}
	slices.Sort(s)
	l.key = l.key[:0]
	for _, r := range s {
		l.key = append(l.key, byte(r), byte(r>>8))
	}
	return s
}

// addOrbit adds weight w spread uniformly over the relabellings of sets
// (sorted subsets).
func (l *labelledLaw) addOrbit(sets [][]int, w *big.Rat) {
	l.selection(sets)
	if o, ok := l.orbit[string(l.key)]; ok {
		l.weight[o].Add(l.weight[o], w)
		return
	}
	o := len(l.members)
	l.members = append(l.members, nil)
	l.weight = append(l.weight, new(big.Rat).Set(w))
	img := make([][]int, len(sets))
	for k := range img {
		img[k] = make([]int, l.n)
	}
	for _, p := range l.perms {
		for k, g := range sets {
			for j, v := range g {
				img[k][j] = p[v]
			}
			slices.Sort(img[k])
		}
		s := l.selection(img)
		if _, ok := l.orbit[string(l.key)]; !ok {
			l.orbit[string(l.key)] = o
			l.members[o] = append(l.members[o], slices.Clone(s))
		}
	}
}

// design returns the accumulated law as a SetDistribution over all n-subsets.
func (l *labelledLaw) design() (*SetDistribution, error) {
	groups := make([][]int, 0)
	for g := range l.f.All() {
		groups = append(groups, slices.Clone(g))
	}
	d, err := newDistributionSets(l.N, groups)
	if err != nil {
		return nil, err
	}
	for o, ms := range l.members {
		p := new(big.Rat).Quo(l.weight[o], big.NewRat(int64(len(ms)), 1))
		for _, s := range ms {
			d.sels = append(d.sels, s)
			d.probs = append(d.probs, p)
			d.maxK = max(d.maxK, len(s))
		}
	}
	return d, nil
}

// Traces returns N1, the number of traces.
func (d *SetDistribution) Traces() int { return d.n }

// SetSize returns n, the size of every set.
func (d *SetDistribution) SetSize() int { return d.size }

// NumSets returns T, the number of listed sets.
func (d *SetDistribution) NumSets() int { return len(d.groups) }

// Set returns a copy of set h's members in presentation order. It panics if
// h is not in [0, NumSets()).
func (d *SetDistribution) Set(h int) []int { return slices.Clone(d.groups[h]) }

// Selections yields every selection with its probability. The yielded slice
// and probability must not be modified; copy them to keep them. The uniform
// design yields all C(T, K) of them, however many: a caller that walks
// them bounds its own work (or stops early).
func (d *SetDistribution) Selections() iter.Seq2[[]int, *big.Rat] {
	if d.lazy != nil {
		return d.lazy
	}
	return func(yield func([]int, *big.Rat) bool) {
		for i, s := range d.sels {
			if !yield(s, d.probs[i]) {
				return
			}
		}
	}
}

// Weights returns the design's credit matrix W (see Weights), by
// DistributionWeights. For the uniform design SelectionWeights is much
// faster; Weights refuses a uniform design of more than 33,554,432
// selections.
func (d *SetDistribution) Weights() (*Weights, error) {
	if err := d.enumerable("Weights"); err != nil {
		return nil, err
	}
	return weights(d.n, d.groups, d.Selections(), -1)
}

// runs calls add for each selection of d, in order, and after each maximal
// run of consecutive selections of equal probability, flush with that
// probability, so that a sum over selections costs integer work per
// selection and rational work per run (one run for UniformSets, and one
// per orbit for RelabelledSets and BalancedSets). The slice and the
// probability must not be modified or kept.
func (d *SetDistribution) runs(add func(s []int), flush func(prob *big.Rat)) {
	var cur *big.Rat
	for s, prob := range d.Selections() {
		if cur != nil && prob != cur && prob.Cmp(cur) != 0 {
			flush(cur)
		}
		cur = prob
		add(s)
	}
	if cur != nil {
		flush(cur)
	}
}

// Coverage returns E[number of traces in at least one selected group]. For
// UniformSets it is sum_i (1 - C(T - t_i, K)/C(T, K)), t_i the number of
// sets holding trace i; otherwise a sum over the selections.
func (d *SetDistribution) Coverage() *big.Rat {
	if d.lazy != nil {
		held := d.held()
		traces := map[int]int64{} // traces held by t sets
		for _, t := range held {
			traces[t]++
		}
		sum := new(big.Rat)
		for t, q := range d.uniformMissed(held) {
			sum.Add(sum, new(big.Rat).Mul(q, new(big.Rat).SetInt64(traces[t])))
		}
		return sum.Sub(new(big.Rat).SetInt64(int64(d.n)), sum)
	}
	sum := new(big.Rat)
	seen := make([]int, d.n) // seen[i] == stamp: i is in the current selection
	stamp := 0
	var covered int64 // over the current run
	d.runs(func(s []int) {
		stamp++
		for _, h := range s {
			for _, i := range d.groups[h] {
				if seen[i] != stamp {
					seen[i] = stamp
					covered++
				}
			}
		}
	}, func(prob *big.Rat) {
		sum.Add(sum, new(big.Rat).Mul(prob, new(big.Rat).SetInt64(covered)))
		covered = 0
	})
	return sum
}

// M returns the design's multiplier
//
//	M = E[number of traces in at least one selected group]/n - 1,
//
// the constant with E[g] = M grad J whenever E[g] is proportional to grad J
// for every objective (see PositionWeights). For the uniform design it is
// Proposition 3.1's (N/n) q_K - 1; for a design in which every trace is in
// at least one group it is N/n - 1 (1 at N = 8, n = 4).
func (d *SetDistribution) M() *big.Rat {
	m := d.Coverage()
	m.Quo(m, big.NewRat(int64(d.size), 1))
	return m.Sub(m, big.NewRat(1, 1))
}

// PositionWeights returns a_1..a_n, the weight of each presentation
// position in the expected search estimator when groups are presented in
// their listed order:
//
//	a_k = E_S[ sum_{H in S} (1/c_{H[k]} - 1/|S|) ],
//
// where H[k] is the trace at position k of H and c_i the number of selected
// groups that hold trace i. For N iid traces,
//
//	E[g] = sum_k a_k G_k,   G_k = E[(e_{y_k} - p) f(y_1..y_n)] (PositionalGradient),
//
// because a trace outside H is independent of f_H and a trace at position k
// of H contributes G_k whichever trace it is. The weights always sum to
// n M. So E[g] = M grad J for every objective f exactly when all a_k equal
// M; otherwise E[g] = M grad J still holds for every f that is symmetric (all
// G_k equal) and under combin.Shuffled (which replaces every a_k by their
// mean), and fails for objectives whose positional gradients differ.
//
// For the uniform design the sum is in closed form: the selections holding
// set h in which trace i is also held by a of the other t_i - 1 sets
// holding it number C(t_i - 1, a) C(T - t_i, K - 1 - a), so by Vandermonde
// E_S[sum_{H in S} 1/c_{H[k]}] = sum_h (1 - q_{H_h[k]})/t_{H_h[k]}, q_i =
// C(T - t_i, K)/C(T, K) the probability that no selected set holds i.
func (d *SetDistribution) PositionWeights() []*big.Rat {
	if d.lazy != nil {
		held := d.held()
		// cnt[k][t]: the sets whose member at position k is held by t sets.
		cnt := make([]map[int]int64, d.size)
		for k := range cnt {
			cnt[k] = map[int]int64{}
		}
		for _, g := range d.groups {
			for k, i := range g {
				cnt[k][held[i]]++
			}
		}
		one := big.NewRat(1, 1)
		sum := make([]*big.Rat, d.size)
		for k := range sum {
			sum[k] = new(big.Rat).Neg(one)
		}
		for t, q := range d.uniformMissed(held) {
			if t == 0 {
				continue
			}
			per := new(big.Rat).Sub(one, q) // (1 - q_t)/t: each set's share
			per.Quo(per, big.NewRat(int64(t), 1))
			for k := range sum {
				if c := cnt[k][t]; c != 0 {
					sum[k].Add(sum[k], new(big.Rat).Mul(per, new(big.Rat).SetInt64(c)))
				}
			}
		}
		return sum
	}
	// a_k = E_S[ sum_{H in S} 1/c_{H[k]} ] - 1: each selection's K sets give
	// sum_H 1/K = 1. Within a run, cnt[k*(T+1)+c] counts the sets whose
	// member at position k is in c selected sets (c <= T).
	T := len(d.groups)
	cnt := make([]int64, d.size*(T+1))
	count := make([]int, d.n)
	var sels int64 // selections in the run
	sum := make([]*big.Rat, d.size)
	for k := range sum {
		sum[k] = new(big.Rat)
	}
	total := new(big.Rat) // sum of the probabilities
	x := new(big.Rat)
	d.runs(func(s []int) {
		sels++
		clear(count)
		for _, h := range s {
			for _, i := range d.groups[h] {
				count[i]++
			}
		}
		for _, h := range s {
			for k, i := range d.groups[h] {
				cnt[k*(T+1)+count[i]]++
			}
		}
	}, func(prob *big.Rat) {
		for k := range sum {
			row := cnt[k*(T+1) : (k+1)*(T+1)]
			for c, m := range row {
				if m != 0 {
					sum[k].Add(sum[k], x.Mul(prob, x.SetFrac64(m, int64(c))))
					row[c] = 0
				}
			}
		}
		total.Add(total, x.Mul(prob, x.SetInt64(sels)))
		sels = 0
	})
	for k := range sum {
		sum[k].Sub(sum[k], total)
	}
	return sum
}

// PositionalGradient returns G_1..G_n, G_k = E[(e_{y_k} - p) f(y_1..y_n)]
// for n iid symbols from c: the part of grad J that flows through the
// candidate read at position k. They sum to Gradient(c, t,
// combin.IndexOrder). For a symmetric f all G_k are equal; for FirstTable
// only G_1 is non-zero. It returns an error if c.Size() != t.V().
func PositionalGradient(c *Categorical, t *Table) ([][]*big.Rat, error) {
	if err := checkPolicyTable(c, t); err != nil {
		return nil, err
	}
	if c.Size() != t.V() {
		return nil, argError(FieldTable, -1, t.V(), "V = %d symbols, the policy has V = %d", t.V(), c.Size())
	}
	V, n := t.v, t.n
	// count[k][v] = E[f(y) [y_k = v]]; G_k = count[k] - p E[f].
	count := make([][]*big.Rat, n)
	for k := range count {
		count[k] = make([]*big.Rat, V)
		for v := range count[k] {
			count[k][v] = new(big.Rat)
		}
	}
	j := new(big.Rat)
	y := make([]int, n)
	term := new(big.Rat)
	for idx, fv := range t.vals {
		if fv.Sign() == 0 {
			continue
		}
		decode(y, idx, V)
		term.Set(fv)
		for _, s := range y {
			term.Mul(term, c.p[s])
		}
		j.Add(j, term)
		for k, s := range y {
			count[k][s].Add(count[k][s], term)
		}
	}
	G := make([][]*big.Rat, n)
	for k := range G {
		G[k] = make([]*big.Rat, V)
		for v := range G[k] {
			G[k][v] = new(big.Rat).Sub(count[k][v], new(big.Rat).Mul(j, c.p[v]))
		}
	}
	return G, nil
}
