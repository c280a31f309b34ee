package eval

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"spiral/internal/inputerr"
)

// TieRule says how a majority vote chooses among answers tied for the most
// votes. The zero value is not a rule: the choice must be explicit, since
// harnesses differ (Python's collections.Counter.most_common, for one,
// lists tied answers in first-seen order).
type TieRule int

const (
	// TieFirstSeen picks, among the tied answers, the one that occurs
	// first in the list of answers.
	TieFirstSeen TieRule = iota + 1
	// TieSmallest picks the smallest tied answer (cmp.Compare for
	// [MajorityVote], the caller's compare function for
	// [MajorityVoteFunc]).
	TieSmallest
	// TieRandom picks one of the tied answers uniformly at random, from an
	// injected *rand.Rand. Its exact expectation ([ExpectedMajority])
	// splits a tie evenly among the tied answers and needs no random
	// numbers.
	TieRandom
)

// String returns the name of the rule, such as "first seen".
func (r TieRule) String() string {
	switch r {
	case TieFirstSeen:
		return "first seen"
	case TieSmallest:
		return "smallest"
	case TieRandom:
		return "random"
	}
	return fmt.Sprintf("TieRule(%d)", int(r))
}

// checkTieRule validates a tie rule and the compare function it may need.
func checkTieRule[T any](what string, rule TieRule, compare func(a, b T) int) error {
	switch rule {
	case TieFirstSeen, TieRandom:
		return nil
	case TieSmallest:
		if compare == nil {
			return argError(what, "compare", fmt.Sprintf("tie rule %v needs a compare function, got nil", rule))
		}
		return nil
	}
	return argError(what, "rule", fmt.Sprintf("unknown tie rule %v", rule))
}

// MaxAnswers is the most answers [MajorityVote], [ExpectedMajority] and
// their Func forms accept: 2^20 = 1,048,576, far above the k of any
// evaluation. A tally of that many distinct answers holds a map entry for
// each (about 110 bytes an int answer, 120 MB in all) and takes well under
// a second; more is refused before any work.
const MaxAnswers = 1 << 20

// checkAnswers refuses more than MaxAnswers answers.
func checkAnswers(what string, n int) error {
	if n > MaxAnswers {
		return costError(what, "answers", fmt.Sprintf(
			"len = %d > %d, the most answers (memory: a map entry per distinct answer)", n, MaxAnswers))
	}
	return nil
}

// tallyAnswers groups answers by value (==), distinct values in order of
// first occurrence: values[a] is the a-th distinct answer and counts[a] how
// often it occurs. If class is not nil (len(class) == len(answers)), it
// sets class[i] to the index a of answers[i].
func tallyAnswers[T comparable](answers []T, class []int) (values []T, counts []int) {
	index := make(map[T]int)
	for i, x := range answers {
		a, ok := index[x]
		if !ok {
			a = len(values)
			index[x] = a
			values = append(values, x)
			counts = append(counts, 0)
		}
		counts[a]++
		if class != nil {
			class[i] = a
		}
	}
	return values, counts
}

// MajorityVote returns the most frequent of the answers (maj@k for
// k = len(answers)), ties broken by rule, answers compared with == and
// ordered by [cmp.Compare] for [TieSmallest]. It is [MajorityVoteFunc] with
// cmp.Compare; see there for the rules and errors.
func MajorityVote[T cmp.Ordered](answers []T, rule TieRule, rnd *rand.Rand) (T, error) {
	return MajorityVoteFunc(answers, rule, cmp.Compare[T], rnd)
}

// MajorityVoteFunc returns the most frequent of the answers, the final
// answer of a majority vote over k = len(answers) samples; maj@k scores 1
// when it equals the correct answer. Answers are equal when == says so (a
// float NaN is never equal to itself, so each NaN is an answer of its own).
// Among answers tied for the most votes it picks, by rule:
//
//   - [TieFirstSeen]: the tied answer that occurs first in answers;
//   - [TieSmallest]: the tied answer that is smallest under compare (among
//     tied answers that compare equal, the first seen);
//   - [TieRandom]: a tied answer chosen uniformly with rnd.IntN, the tied
//     answers taken in order of first occurrence, so the same rnd state
//     gives the same answer.
//
// compare is used only by TieSmallest and rnd only by TieRandom; either may
// be nil otherwise. It costs O(n log n) time at most for n = len(answers)
// and O(D) memory for D distinct answers (a map entry each). It returns an
// *[InputError] naming the value for empty answers, an unknown rule, a nil
// compare with TieSmallest, or a nil rnd with TieRandom, and one wrapping
// [ErrTooCostly], before any work, for more than [MaxAnswers] answers.
func MajorityVoteFunc[T comparable](answers []T, rule TieRule, compare func(a, b T) int, rnd *rand.Rand) (T, error) {
	var zero T
	if err := checkTieRule("majority vote", rule, compare); err != nil {
		return zero, err
	}
	if rule == TieRandom && rnd == nil {
		return zero, argError("majority vote", "rnd", fmt.Sprintf("tie rule %v with a nil *rand.Rand", rule))
	}
	if len(answers) == 0 {
		return zero, argError("majority vote", "answers", "no answers")
	}
	if err := checkAnswers("majority vote", len(answers)); err != nil {
		return zero, err
	}
	// tally[x] holds the count of x in its high 32 bits and the position of
	// its first occurrence in the low 32 (n <= MaxAnswers fits both).
	tally := make(map[T]uint64)
	for i, x := range answers {
		if v, ok := tally[x]; ok {
			tally[x] = v + 1<<32
		} else {
			tally[x] = 1<<32 | uint64(i)
		}
	}
	most := uint64(0)
	for _, v := range tally {
		most = max(most, v>>32)
	}
	// The first occurrences of the tied answers, taken in order of first
	// occurrence (map iteration order is random).
	var tied []int
	for _, v := range tally {
		if v>>32 == most {
			tied = append(tied, int(v&(1<<32-1)))
		}
	}
	slices.Sort(tied)
	switch rule {
	case TieSmallest:
		best := tied[0]
		for _, i := range tied[1:] {
			if compare(answers[i], answers[best]) < 0 {
				best = i
			}
		}
		return answers[best], nil
	case TieRandom:
		return answers[tied[rnd.IntN(len(tied))]], nil
	}
	return answers[tied[0]], nil
}

// ExpectedMajority returns the exact expected maj@k over all size-k
// subsets of the answers: see [ExpectedMajorityFunc], which it calls with
// cmp.Compare.
func ExpectedMajority[T cmp.Ordered](answers []T, correct T, k int, rule TieRule) (float64, error) {
	return ExpectedMajorityFunc(answers, correct, k, rule, cmp.Compare[T])
}

// ExpectedMajorityFunc returns the unbiased estimator of maj@k, the
// probability that a majority vote over k independent samples gives the
// correct answer, from n = len(answers) >= k samples: the average, over all
// C(n, k) size-k subsets of the answers taken in their original order, of
// the indicator that [MajorityVoteFunc] on the subset returns correct. For
// [TieRandom] a tie among t answers that include the correct one counts
// 1/t, the exact expectation of the random pick, and no random numbers are
// used; [TieFirstSeen] uses the subset's own order, so the order of answers
// matters for it and for no other rule.
//
// The average over subsets is the analogue of [PassAtK]'s estimator, and is
// unbiased for the same reason: every size-k subset of n independent
// samples is itself a sample of k independent answers, in sample order.
// Resampling k answers with replacement from the n, as some harnesses do,
// is biased: its draws repeat samples, so its k-answer votes are not votes
// over k independent samples (for k = n it does not even return the vote
// over all n), and its expectation is not maj@k. For example, with answers
// drawn with probabilities 1/2 (correct), 1/3 and 1/6, maj@3 under
// TieRandom is 5/9, which the subset average from n = 4 samples has as
// its expectation, while three draws with replacement from the same four
// samples have expectation 25/48.
//
// The sum over subsets is computed exactly in floating point, without
// sampling and without visiting the C(n, k) subsets. A subset is described
// by how many answers it takes from each distinct answer a: the
// composition (m_a), with sum_a m_a = k and prod_a C(n_a, m_a) subsets for
// n_a copies of a, so the composition is multivariate hypergeometric. The
// correct answer, with m copies in the subset, wins when every other answer
// has at most m copies (fewer than m for answers smaller than it under
// TieSmallest) and the tie rule picks it among those with exactly m: 1/t
// for TieRandom, and for TieFirstSeen the probability that its first
// chosen copy precedes the first chosen copy of every tied answer, which
// given its first chosen position is a product of independent
// hypergeometric factors. The sum over compositions is organised as a
// dynamic program over the distinct answers, one hypergeometric transition
// per answer, with every quantity a probability, so nothing overflows for
// any n. The cost is polynomial: of the order of k^2 n steps for
// TieSmallest, k^2 n log k for TieRandom (which also counts the tied
// answers) and n_c k^2 n for TieFirstSeen (n_c copies of the correct
// answer), and much less with few distinct answers. Memory is at most about
// k n floats, for the hypergeometric tables. Results are within 1e-13 of the exact rational value for n up to
// a few hundred, and have the same bits on every architecture (every
// product that feeds a sum is rounded explicitly, never fused).
//
// For answers that are independent samples, the order of the answers
// within a subset is exchangeable, so TieFirstSeen and TieRandom have the
// same expectation over samples; for one given list of answers they
// differ.
//
// The result is 0 when correct is not among the answers. answers and
// correct are compared with ==, so compare (used only by TieSmallest, and
// nil otherwise) must order distinct answers strictly.
//
// It returns an *[InputError] naming the value for k < 1, k > n, an unknown
// rule, a nil compare with TieSmallest, or (TieSmallest) a compare that
// reports an answer different from correct as equal to it; and one
// wrapping [ErrTooCostly]: before any work for more than [MaxAnswers]
// answers, and after an O(n) tally (O(D) memory for D distinct
// answers, O(n) more for TieFirstSeen) and before any table is built, when
// the tables would hold more than 2^24 values, the module's
// size cap (memory), or an upper bound on the program's steps exceeds 2^30
// (time: seconds), as it does for thousands of answers with k in the
// thousands (with TieFirstSeen, for thousands of answers with k above about
// a hundred).
func ExpectedMajorityFunc[T comparable](answers []T, correct T, k int, rule TieRule, compare func(a, b T) int) (float64, error) {
	if err := checkTieRule("expected maj@k", rule, compare); err != nil {
		return 0, err
	}
	n := len(answers)
	if k < 1 {
		return 0, argError("expected maj@k", "k", fmt.Sprintf("%d < 1", k))
	}
	if k > n {
		return 0, argError("expected maj@k", "k", fmt.Sprintf("%d > n = %d answers", k, n))
	}
	if err := checkAnswers("expected maj@k", n); err != nil {
		return 0, err
	}
	var class []int // only TieFirstSeen needs each answer's class
	if rule == TieFirstSeen {
		class = make([]int, n)
	}
	values, counts := tallyAnswers(answers, class)
	ci := -1
	for a, v := range values {
		if v == correct {
			ci = a
			break
		}
	}
	var smaller []bool
	if rule == TieSmallest {
		smaller = make([]bool, len(values))
		for a, v := range values {
			if a == ci {
				continue
			}
			s := compare(v, correct)
			if s == 0 {
				return 0, inputerr.Element("eval: expected maj@k", InputError{Field: "answers", Problem: -1, Set: -1, Output: slices.Index(answers, v),
					Err: fmt.Errorf("compare reports answer %v equal to the correct answer %v", v, correct)})
			}
			smaller[a] = s < 0
		}
	}
	if ci < 0 {
		return 0, nil
	}
	if err := checkMajorityCost(n, k, rule, ci, counts); err != nil {
		return 0, err
	}
	dp := newMajorityDP(n, k, rule, ci, counts, class, smaller)
	return dp.expectation(), nil
}

// checkMajorityCost bounds what ExpectedMajorityFunc's dynamic program
// will cost for k and the counts of the distinct answers (ci the correct
// one's), before it allocates: its tables hold at most maxSize values and it
// takes at most maxSteps steps. The estimate follows the program's loops,
// with each of the other answers (taken in increasing count) holding
// min(count, r)+1 probabilities for each r <= min(k-1, answers left), and
// each sweep for m correct copies visiting k-m+1 masses times
// min(count, m)+1 values per answer: once for TieSmallest, once per number
// of tied answers for TieRandom, and once per position of the first
// correct copy (for the answers with at least m copies) for TieFirstSeen.
// It takes O(D log D + k) time for D distinct answers.
func checkMajorityCost(n, k int, rule TieRule, ci int, counts []int) error {
	const what = "expected maj@k"
	nc := counts[ci]
	others := make([]int, 0, len(counts)-1)
	R := 0
	for a, c := range counts {
		if a != ci {
			others = append(others, c)
			R += c
		}
	}
	slices.Sort(others)
	kf := float64(k)
	table := 0.0
	for _, c := range others {
		rmax := float64(min(k-1, R))
		cf := float64(c)
		if rmax <= cf {
			table += float64(rmax * (rmax + 1) / 2)
		} else {
			table += float64(cf*(cf+1)/2) + float64((rmax-cf)*cf)
		}
		table += float64(4 * (rmax + 1)) // a probability and a slice header per r
		R -= c
	}
	if table > maxSize {
		return costError(what, "k", fmt.Sprintf(
			"%d over %d answers (%d distinct) needs tables of about %.3g values > %d, the most held (memory)",
			k, n, len(counts), table, maxSize))
	}
	// For m = 1..min(nc, k): below[m] answers have fewer than m copies,
	// holding sumBelow of them.
	steps := table
	below, sumBelow := 0, 0.0
	D := len(others)
	for m := 1; m <= min(nc, k); m++ {
		for below < D && others[below] < m {
			sumBelow += float64(others[below])
			below++
		}
		mf := float64(m)
		lt := float64(below) + sumBelow // sum of min(count, m)+1 over answers below m
		ge := float64(float64(D-below) * (mf + 1))
		per := kf - mf + 1
		switch rule {
		case TieSmallest:
			steps += float64(per * (lt + ge))
		case TieRandom:
			steps += float64(per * (lt + ge) * float64(min(D, (k-m)/m)+1))
		case TieFirstSeen:
			steps += float64(per * (lt + float64(float64(nc-m+1)*ge)))
		}
		if steps > maxSteps {
			return costError(what, "k", fmt.Sprintf(
				"%d over %d answers (%d distinct, %d correct) takes more than 2^30 steps (time: seconds)",
				k, n, len(counts), nc))
		}
	}
	return nil
}

// majHypergeomPMF returns, for a population of R items of which c are
// marked and a uniformly random r-subset of them, the probabilities
// pmf[x-lo] that the subset holds x marked items, for x = lo..lo+len-1 with
// lo = max(0, r-(R-c)) and upper end min(c, r). The probabilities are
// built from the mode outwards by the ratio of successive terms and then
// normalised to sum 1, so the terms that matter are accurate to a few ulps
// and nothing overflows for any R.
func majHypergeomPMF(R, c, r int) (pmf []float64, lo int) {
	lo, hi := max(0, r-(R-c)), min(c, r)
	pmf = make([]float64, hi-lo+1)
	mode := (r + 1) * (c + 1) / (R + 2)
	mode = min(max(mode, lo), hi)
	pmf[mode-lo] = 1
	sum := 1.0
	for x := mode; x < hi; x++ { // P(x+1)/P(x)
		num := float64(c-x) * float64(r-x)
		den := float64(x+1) * float64(R-c-r+x+1)
		pmf[x+1-lo] = float64(pmf[x-lo] * (num / den))
		sum += pmf[x+1-lo]
	}
	for x := mode; x > lo; x-- { // P(x-1)/P(x)
		num := float64(x) * float64(R-c-r+x)
		den := float64(c-x+1) * float64(r-x+1)
		pmf[x-1-lo] = float64(pmf[x-lo] * (num / den))
		sum += pmf[x-1-lo]
	}
	for i := range pmf {
		pmf[i] /= sum
	}
	return pmf, lo
}

// majBinomialRatios writes dst[g] = C(g, m) / C(N, m) for g = 0..N
// (len(dst) = N+1, 0 <= m <= N): the probability that a uniformly random
// m-subset of N ordered items lies within the last g of them.
func majBinomialRatios(dst []float64, N, m int) {
	dst[N] = 1
	for g := N; g > 0; g-- {
		if g <= m {
			// C(g', m) = 0 for g' < m.
			for i := range g {
				dst[i] = 0
			}
			return
		}
		dst[g-1] = dst[g] * (float64(g-m) / float64(g))
	}
}

// majClass is one distinct answer other than the correct one, in the
// dynamic program of ExpectedMajorityFunc.
type majClass struct {
	count   int  // copies among the n answers
	smaller bool // TieSmallest: the answer is smaller than the correct one
	// pmf[r] is the distribution of this answer's copies in the subset
	// when r picks remain for this answer and those after it, starting at
	// pmfLo[r] copies.
	pmf   [][]float64
	pmfLo []int
	// after[j] (TieFirstSeen) is the number of this answer's copies that
	// come after the j-th copy of the correct answer.
	after []int
}

// majorityDP is the exact expected maj@k for one answer list; see
// ExpectedMajorityFunc.
type majorityDP struct {
	k    int
	rule TieRule
	nc   int // copies of the correct answer
	// others are the other distinct answers in the order the program
	// takes them: by increasing count (first seen first among equal
	// counts), so that the answers that cannot reach m copies come first.
	others []majClass
	pm     []float64 // pm[m-pmLo]: P(the subset holds m correct copies)
	pmLo   int
}

func newMajorityDP(n, k int, rule TieRule, ci int, counts, class []int, smaller []bool) *majorityDP {
	d := &majorityDP{k: k, rule: rule, nc: counts[ci]}
	d.pm, d.pmLo = majHypergeomPMF(n, d.nc, k)
	order := make([]int, 0, len(counts)-1) // distinct answers other than ci
	for a := range counts {
		if a != ci {
			order = append(order, a)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(counts[a], counts[b]) })
	R := n - d.nc // population of the answers not yet taken
	d.others = make([]majClass, len(order))
	for i, a := range order {
		cl := majClass{count: counts[a]}
		if smaller != nil {
			cl.smaller = smaller[a]
		}
		rmax := min(k-1, R)
		cl.pmf = make([][]float64, rmax+1)
		cl.pmfLo = make([]int, rmax+1)
		for r := range rmax + 1 {
			cl.pmf[r], cl.pmfLo[r] = majHypergeomPMF(R, cl.count, r)
		}
		R -= cl.count
		d.others[i] = cl
	}
	if rule == TieFirstSeen {
		// after[j] for every other answer, by one backward scan keeping
		// the number of copies of each answer seen so far.
		suffix := make([]int, len(counts))
		for i := range d.others {
			d.others[i].after = make([]int, d.nc)
		}
		j := d.nc
		for p := n - 1; p >= 0; p-- {
			if a := class[p]; a != ci {
				suffix[a]++
				continue
			}
			j--
			for i, a := range order {
				d.others[i].after[j] = suffix[a]
			}
		}
	}
	return d
}

// expectation sums, over the number m of correct copies in the subset,
// P(m) times the probability that the correct answer wins given m.
func (d *majorityDP) expectation() float64 {
	total := 0.0
	for i, p := range d.pm {
		m := d.pmLo + i
		if m == 0 || p == 0 {
			continue
		}
		var win float64
		switch d.rule {
		case TieSmallest:
			win = d.winSmallest(m)
		case TieRandom:
			win = d.winRandom(m)
		case TieFirstSeen:
			win = d.winFirstSeen(m)
		}
		total += float64(p * win)
	}
	return min(total, 1)
}

// step takes other answer i into the dynamic program for a correct answer
// with m copies: src[r] is the probability mass with r picks still to be
// made, and answer i takes x of them with its hypergeometric probability,
// x at most most (m, or m-1 when a tie at m would lose outright); mass
// with x = m (a tie) is further weighted by tie. The result goes to dst.
func (d *majorityDP) step(dst, src []float64, i, most, m int, tie float64) {
	cl := &d.others[i]
	clear(dst)
	for r := range min(len(src), len(cl.pmf)) {
		mass := src[r]
		if mass == 0 {
			continue
		}
		lo, pmf := cl.pmfLo[r], cl.pmf[r]
		for x := lo; x < lo+len(pmf) && x <= most; x++ {
			f := float64(mass * pmf[x-lo])
			if x == m {
				f = float64(f * tie)
			}
			dst[r-x] += f
		}
	}
}

// start returns two buffers for a sweep with a correct answer with m
// copies, the first holding all the mass at k-m picks to make.
func (d *majorityDP) start(m int) (v, w []float64) {
	v, w = make([]float64, d.k-m+1), make([]float64, d.k-m+1)
	v[d.k-m] = 1
	return v, w
}

// winSmallest is P(correct wins | m copies) under TieSmallest: no other
// answer has more than m copies, and none smaller than it has m. It is the
// mass left with no picks to make after every other answer has taken its
// share under those caps.
func (d *majorityDP) winSmallest(m int) float64 {
	v, w := d.start(m)
	for i, cl := range d.others {
		most := m
		if cl.smaller {
			most = m - 1
		}
		d.step(w, v, i, most, m, 1)
		v, w = w, v
	}
	return v[0]
}

// winRandom is P(correct wins | m copies) under TieRandom: the expectation
// of 1/t over the subsets where no other answer has more than m copies,
// with t the number of answers (the correct one included) with exactly m.
// The program also tracks the number of other answers tied so far.
func (d *majorityDP) winRandom(m int) float64 {
	rlen := d.k - m + 1
	tmax := min(len(d.others), (d.k-m)/m) // other answers that can tie
	v := make([]float64, (tmax+1)*rlen)   // v[t*rlen+r]
	w := make([]float64, (tmax+1)*rlen)
	v[d.k-m] = 1
	for i := range d.others {
		cl := &d.others[i]
		clear(w)
		for t := range tmax + 1 {
			for r := range min(rlen, len(cl.pmf)) {
				mass := v[t*rlen+r]
				if mass == 0 {
					continue
				}
				lo, pmf := cl.pmfLo[r], cl.pmf[r]
				for x := lo; x < lo+len(pmf) && x <= m; x++ {
					if x == m {
						// t < tmax here: t+1 ties take (t+2)m <= k picks.
						w[(t+1)*rlen+r-x] += float64(mass * pmf[x-lo])
					} else {
						w[t*rlen+r-x] += float64(mass * pmf[x-lo])
					}
				}
			}
		}
		v, w = w, v
	}
	win := 0.0
	for t := range tmax + 1 {
		win += v[t*rlen] / float64(t+1)
	}
	return win
}

// winFirstSeen is P(correct wins | m copies) under TieFirstSeen. Given that
// the correct answer's first chosen copy is its j-th copy (probability
// C(n_c-1-j, m-1)/C(n_c, m)), an other answer with exactly m chosen copies
// loses the tie exactly when all m lie after that position, probability
// C(g, m)/C(n_a, m) for the g of its copies that come after; the answers'
// choices are independent given their counts, so this is one sweep per j.
// The answers with fewer than m copies come first in the order and do not
// depend on j, so their part of the sweep is shared.
func (d *majorityDP) winFirstSeen(m int) float64 {
	base, w := d.start(m)
	split := len(d.others) // first answer with at least m copies
	for i, cl := range d.others {
		if cl.count >= m {
			split = i
			break
		}
		d.step(w, base, i, m, m, 1)
		base, w = w, base
	}
	// first[g] = C(g, m-1)/C(n_c-1, m-1); the j-th copy is first with
	// probability (m/n_c) * first[n_c-1-j].
	first := make([]float64, d.nc)
	majBinomialRatios(first, d.nc-1, m-1)
	// ratio[i-split][g] = C(g, m)/C(n_a, m) for the answers that can tie.
	ratio := make([][]float64, len(d.others)-split)
	for i := range ratio {
		cl := &d.others[split+i]
		ratio[i] = make([]float64, cl.count+1)
		majBinomialRatios(ratio[i], cl.count, m)
	}
	v := make([]float64, len(base))
	win := 0.0
	for j := range d.nc - m + 1 {
		pj := float64(m) / float64(d.nc) * first[d.nc-1-j]
		if pj == 0 {
			continue
		}
		copy(v, base)
		for i := split; i < len(d.others); i++ {
			d.step(w, v, i, m, m, ratio[i-split][d.others[i].after[j]])
			v, w = w, v
		}
		win += float64(pj * v[0])
	}
	return win
}
