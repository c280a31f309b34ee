package eval_test

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/combin"
	"pgregory.net/rapid"

	"spiral/eval"
	"spiral/internal/spiraltest"
)

var tieRules = []eval.TieRule{eval.TieFirstSeen, eval.TieSmallest, eval.TieRandom}

// voteWin is the probability that a majority vote over votes returns
// correct under rule, written independently of the package: 0 or 1 for the
// deterministic rules, 1/t for TieRandom when the correct answer is one of
// t tied answers.
func voteWin(votes []int, correct int, rule eval.TieRule) *big.Rat {
	count := map[int]int{}
	first := map[int]int{}
	for i, v := range votes {
		if _, ok := first[v]; !ok {
			first[v] = i
		}
		count[v]++
	}
	most := 0
	for _, c := range count {
		most = max(most, c)
	}
	if count[correct] != most {
		return new(big.Rat)
	}
	tied := 0
	for v, c := range count {
		if c != most || v == correct {
			continue
		}
		tied++
		if rule == eval.TieFirstSeen && first[v] < first[correct] ||
			rule == eval.TieSmallest && v < correct {
			return new(big.Rat)
		}
	}
	if rule == eval.TieRandom {
		return big.NewRat(1, int64(tied+1))
	}
	return big.NewRat(1, 1)
}

// bruteMajority is the expected maj@k by brute force: the average of
// voteWin over all C(n, k) subsets of the answers in their original
// order.
func bruteMajority(answers []int, correct, k int, rule eval.TieRule) *big.Rat {
	sum := new(big.Rat)
	gen := combin.NewCombinationGenerator(len(answers), k)
	idx := make([]int, k)
	sub := make([]int, k)
	total := 0
	for gen.Next() {
		gen.Combination(idx) // increasing indices: original order
		for i, j := range idx {
			sub[i] = answers[j]
		}
		sum.Add(sum, voteWin(sub, correct, rule))
		total++
	}
	return sum.Quo(sum, big.NewRat(int64(total), 1))
}

// compositionMajority is the expected maj@k in exact rationals by
// enumerating every composition (m_a) of the k-subset over the distinct
// answers, each with prod C(n_a, m_a) subsets, and the probability that the
// correct answer wins given the composition (for TieFirstSeen, summed over
// the position of the correct answer's first chosen copy). It visits all
// compositions, with no pruning, so it is a check on the dynamic program
// of ExpectedMajority for n too large for brute force.
func compositionMajority(answers []int, correct, k int, rule eval.TieRule) *big.Rat {
	var values []int
	counts := map[int]int{}
	for _, v := range answers {
		if counts[v] == 0 {
			values = append(values, v)
		}
		counts[v]++
	}
	nc := counts[correct]
	if nc == 0 {
		return new(big.Rat)
	}
	binom := func(n, k int) *big.Int {
		if k < 0 || k > n {
			return new(big.Int)
		}
		return new(big.Int).Binomial(int64(n), int64(k))
	}
	// after[v][j]: copies of v after the j-th copy of correct.
	after := map[int][]int{}
	for _, v := range values {
		after[v] = make([]int, nc)
	}
	j := 0
	for i, x := range answers {
		if x != correct {
			continue
		}
		for _, y := range answers[i+1:] {
			after[y][j]++
		}
		j++
	}
	sum := new(big.Rat)
	m := make([]int, len(values))
	var rec func(a, left int)
	rec = func(a, left int) {
		if a == len(values) {
			if left != 0 {
				return
			}
			mc := m[slices.Index(values, correct)]
			most := slices.Max(m)
			if mc != most {
				return
			}
			w := big.NewRat(1, 1)
			for i, v := range values {
				w.Mul(w, new(big.Rat).SetInt(binom(counts[v], m[i])))
			}
			var tied []int
			for i, v := range values {
				if m[i] == most && v != correct {
					tied = append(tied, v)
				}
			}
			var win *big.Rat
			switch rule {
			case eval.TieRandom:
				win = big.NewRat(1, int64(len(tied)+1))
			case eval.TieSmallest:
				win = big.NewRat(1, 1)
				if len(tied) > 0 && slices.Min(tied) < correct {
					win = new(big.Rat)
				}
			case eval.TieFirstSeen:
				win = new(big.Rat)
				for j := range nc {
					p := new(big.Rat).SetFrac(binom(nc-1-j, mc-1), binom(nc, mc))
					for _, v := range tied {
						p.Mul(p, new(big.Rat).SetFrac(binom(after[v][j], mc), binom(counts[v], mc)))
					}
					win.Add(win, p)
				}
			}
			sum.Add(sum, w.Mul(w, win))
			return
		}
		for x := 0; x <= min(left, counts[values[a]]); x++ {
			m[a] = x
			rec(a+1, left-x)
		}
	}
	rec(0, k)
	return sum.Quo(sum, new(big.Rat).SetInt(binom(len(answers), k)))
}

// TestMajorityVote checks the vote and each tie rule on hand-made cases.
func TestMajorityVote(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		answers                  []string
		first, smallest, onlyWin string
	}{
		{[]string{"b", "a", "a", "b", "c"}, "b", "a", ""},
		{[]string{"c", "b", "a"}, "c", "a", ""},
		{[]string{"x", "y", "y"}, "y", "y", "y"},
		{[]string{"z"}, "z", "z", "z"},
	} {
		if got, err := eval.MajorityVote(tc.answers, eval.TieFirstSeen, nil); err != nil || got != tc.first {
			t.Errorf("MajorityVote(%q, first seen) = %q, %v; want %q", tc.answers, got, err, tc.first)
		}
		if got, err := eval.MajorityVote(tc.answers, eval.TieSmallest, nil); err != nil || got != tc.smallest {
			t.Errorf("MajorityVote(%q, smallest) = %q, %v; want %q", tc.answers, got, err, tc.smallest)
		}
		got, err := eval.MajorityVote(tc.answers, eval.TieRandom, rnd)
		if err != nil || tc.onlyWin != "" && got != tc.onlyWin {
			t.Errorf("MajorityVote(%q, random) = %q, %v; want %q", tc.answers, got, err, tc.onlyWin)
		}
	}
	// NaN never equals itself: each NaN is an answer of its own.
	nan := math.NaN()
	if got, _ := eval.MajorityVote([]float64{nan, nan, 1, 1}, eval.TieFirstSeen, nil); got != 1 {
		t.Errorf("MajorityVote(NaN, NaN, 1, 1) = %v, want 1", got)
	}
	// A comparable type with a caller's order: the smallest tied answer by
	// the second field.
	type ans struct{ text, rank int }
	votes := []ans{{1, 9}, {2, 3}, {2, 3}, {1, 9}, {5, 1}}
	byRank := func(a, b ans) int { return cmp.Compare(a.rank, b.rank) }
	if got, err := eval.MajorityVoteFunc(votes, eval.TieSmallest, byRank, nil); err != nil || got != (ans{2, 3}) {
		t.Errorf("MajorityVoteFunc(smallest by rank) = %v, %v; want {2 3}", got, err)
	}
	if got, err := eval.MajorityVoteFunc(votes, eval.TieFirstSeen, nil, nil); err != nil || got != (ans{1, 9}) {
		t.Errorf("MajorityVoteFunc(first seen) = %v, %v; want {1 9}", got, err)
	}
}

// TestMajorityVoteRandomTie checks that the random tie rule is
// reproducible and uniform: over 3000 votes with three tied answers each
// wins 1000 times in expectation with standard deviation
// sqrt(3000 * 1/3 * 2/3) = 25.8; we allow 5 standard deviations.
func TestMajorityVoteRandomTie(t *testing.T) {
	answers := []string{"p", "q", "r", "r", "q", "p", "s"}
	a, b := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	wins := map[string]int{}
	for range 3000 {
		x, err := eval.MajorityVote(answers, eval.TieRandom, a)
		if err != nil {
			t.Fatal(err)
		}
		if y, _ := eval.MajorityVote(answers, eval.TieRandom, b); y != x {
			t.Fatalf("same seed, different votes: %q and %q", x, y)
		}
		wins[x]++
	}
	sd := math.Sqrt(3000.0 / 3 * 2 / 3)
	for _, w := range []string{"p", "q", "r"} {
		if d := math.Abs(float64(wins[w]) - 1000); d > 5*sd {
			t.Errorf("%q won %d of 3000 random ties, want 1000 +- %.0f", w, wins[w], 5*sd)
		}
	}
	if wins["s"] != 0 {
		t.Errorf("the minority answer won %d times", wins["s"])
	}
}

// TestMajorityErrors checks that bad input is rejected with an error
// naming the value.
func TestMajorityErrors(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		answers []string
		rule    eval.TieRule
		rnd     *rand.Rand
		want    string
	}{
		{nil, eval.TieFirstSeen, nil, "no answers"},
		{[]string{"a"}, eval.TieRule(0), rnd, "unknown tie rule TieRule(0)"},
		{[]string{"a"}, eval.TieRule(9), rnd, "unknown tie rule TieRule(9)"},
		{[]string{"a"}, eval.TieRandom, nil, "tie rule random with a nil *rand.Rand"},
	} {
		if _, err := eval.MajorityVote(tc.answers, tc.rule, tc.rnd); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MajorityVote(%q, %v): error %v, want one containing %q", tc.answers, tc.rule, err, tc.want)
		}
	}
	if _, err := eval.MajorityVoteFunc([]int{1}, eval.TieSmallest, nil, nil); err == nil || !strings.Contains(err.Error(), "tie rule smallest needs a compare function") {
		t.Errorf("MajorityVoteFunc(smallest, nil compare): error %v", err)
	}
	answers := []string{"a", "b", "a"}
	for _, tc := range []struct {
		k    int
		rule eval.TieRule
		want string
	}{
		{0, eval.TieFirstSeen, "k: 0 < 1"},
		{4, eval.TieSmallest, "k: 4 > n = 3 answers"},
		{2, eval.TieRule(0), "unknown tie rule TieRule(0)"},
	} {
		if _, err := eval.ExpectedMajority(answers, "a", tc.k, tc.rule); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ExpectedMajority(k = %d, %v): error %v, want one containing %q", tc.k, tc.rule, err, tc.want)
		}
	}
	if _, err := eval.ExpectedMajority(nil, "a", 1, eval.TieRandom); err == nil || !strings.Contains(err.Error(), "k: 1 > n = 0") {
		t.Errorf("ExpectedMajority(no answers): error %v", err)
	}
	if _, err := eval.ExpectedMajorityFunc(answers, "a", 2, eval.TieSmallest, nil); err == nil || !strings.Contains(err.Error(), "needs a compare function") {
		t.Errorf("ExpectedMajorityFunc(smallest, nil compare): error %v", err)
	}
	fold := func(a, b string) int { return cmp.Compare(strings.ToLower(a), strings.ToLower(b)) }
	if _, err := eval.ExpectedMajorityFunc([]string{"A", "a", "b"}, "a", 2, eval.TieSmallest, fold); err == nil || !strings.Contains(err.Error(), "answer A equal to the correct answer a") {
		t.Errorf("ExpectedMajorityFunc(case-folding compare): error %v", err)
	}
	for r, name := range map[eval.TieRule]string{eval.TieFirstSeen: "first seen", eval.TieSmallest: "smallest", eval.TieRandom: "random"} {
		if r.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(r), r.String(), name)
		}
	}
}

// majorityTol is the tolerance of ExpectedMajority against exact
// rationals. Every term of its sums is a product of at most D + 3
// probabilities (D distinct answers), each within a few ulps of exact, and
// the sums add nonnegative terms, so the relative error is bounded by a few
// times (D + k + 4) * 2^-53 < 1e-13 for the sizes tested here.
const majorityTol = 1e-13

// TestExpectedMajorityBruteForce checks the exact expectation against
// enumeration of all size-k subsets, for every tie rule, on random answer
// lists of up to 11 answers over up to 5 distinct values.
func TestExpectedMajorityBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 11).Draw(t, "n")
		d := rapid.IntRange(1, 5).Draw(t, "d")
		answers := rapid.SliceOfN(rapid.IntRange(0, d-1), n, n).Draw(t, "answers")
		k := rapid.IntRange(1, n).Draw(t, "k")
		correct := rapid.IntRange(0, d).Draw(t, "correct") // d: absent
		for _, rule := range tieRules {
			want := spiraltest.Float(bruteMajority(answers, correct, k, rule))
			got, err := eval.ExpectedMajority(answers, correct, k, rule)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > majorityTol {
				t.Fatalf("ExpectedMajority(%v, %d, k = %d, %v) = %v, enumeration %v", answers, correct, k, rule, got, want)
			}
		}
	})
}

// TestExpectedMajorityHandValue checks a value derived by hand. Answers
// a b a b c at positions 1..5, correct a, k = 3; of the C(5,3) = 10
// subsets, a wins outright in the 3 that hold both a's ({1,3} with 2, 4 or
// 5), loses in the 2 with one a and both b's and in the 1 without a, and
// ties three ways in the 4 with one a, one b and c: {1,2,5}, {1,4,5},
// {2,3,5}, {3,4,5}, in 3 of which a comes first. So TieRandom gives
// (3 + 4/3)/10 = 13/30, TieSmallest (3 + 4)/10 = 7/10 and TieFirstSeen
// (3 + 3)/10 = 3/5.
func TestExpectedMajorityHandValue(t *testing.T) {
	answers := []string{"a", "b", "a", "b", "c"}
	for rule, want := range map[eval.TieRule]float64{
		eval.TieRandom: 13.0 / 30, eval.TieSmallest: 7.0 / 10, eval.TieFirstSeen: 3.0 / 5,
	} {
		got, err := eval.ExpectedMajority(answers, "a", 3, rule)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > majorityTol {
			t.Errorf("%v: %v, want %v", rule, got, want)
		}
	}
}

// TestExpectedMajorityCompositions checks the floating-point dynamic
// program against exact rational enumeration of compositions for n = 64
// to 256 with few distinct answers, in a shuffled order.
func TestExpectedMajorityCompositions(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		counts []int // counts[0] is the correct answer's
		ks     []int
		long   bool // seconds in rationals: only with SPIRAL_LONG=1
	}{
		{[]int{20, 24, 20}, []int{1, 5, 16, 33, 63, 64}, false},
		{[]int{40, 50, 6}, []int{2, 9, 48, 95}, false},
		{[]int{10, 12, 9, 11, 10, 12}, []int{6, 20}, true},
		{[]int{100, 96, 60}, []int{17, 40, 128}, true},
	} {
		if tc.long && !spiraltest.Long() {
			continue
		}
		var answers []int
		for v, c := range tc.counts {
			for range c {
				answers = append(answers, v)
			}
		}
		rnd.Shuffle(len(answers), func(i, j int) { answers[i], answers[j] = answers[j], answers[i] })
		for _, k := range tc.ks {
			for _, rule := range tieRules {
				if rule == eval.TieFirstSeen && len(answers) > 200 && k > 64 {
					continue // a second in rationals; k = 40 covers it
				}
				want := spiraltest.Float(compositionMajority(answers, 0, k, rule))
				got, err := eval.ExpectedMajority(answers, 0, k, rule)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-want) > majorityTol {
					t.Errorf("counts %v, k = %d, %v: %v, exact %v (off by %.3g)", tc.counts, k, rule, got, want, got-want)
				}
			}
		}
	}
}

// TestExpectedMajorityProperties checks, on random answer lists of up to
// 80 answers: the expectations of all distinct answers sum to 1 under
// every rule (each subset has exactly one winner, or a tie split evenly);
// k = 1 gives the answer's frequency; k = n gives the vote over all the
// answers; and TieSmallest and TieRandom do not depend on the order of the
// answers.
func TestExpectedMajorityProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 80).Draw(t, "n")
		d := rapid.IntRange(1, 8).Draw(t, "d")
		answers := rapid.SliceOfN(rapid.IntRange(0, d-1), n, n).Draw(t, "answers")
		k := rapid.IntRange(1, n).Draw(t, "k")
		shuffled := slices.Clone(answers)
		rand.New(rand.NewPCG(uint64(n), uint64(k))).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, rule := range tieRules {
			sum := 0.0
			for v := range d {
				e, err := eval.ExpectedMajority(answers, v, k, rule)
				if err != nil {
					t.Fatal(err)
				}
				if e < 0 || e > 1 {
					t.Fatalf("%v: expectation %v for answer %d", rule, e, v)
				}
				sum += e
				if rule != eval.TieFirstSeen {
					s, _ := eval.ExpectedMajority(shuffled, v, k, rule)
					if math.Abs(s-e) > majorityTol {
						t.Fatalf("%v depends on the order: %v and %v", rule, e, s)
					}
				}
				one, _ := eval.ExpectedMajority(answers, v, 1, rule)
				if f := float64(strings.Count(digits(answers), string(rune('0'+v)))) / float64(n); math.Abs(one-f) > majorityTol {
					t.Fatalf("%v: k = 1 gives %v for answer %d, frequency %v", rule, one, v, f)
				}
				all, _ := eval.ExpectedMajority(answers, v, n, rule)
				if want := spiraltest.Float(voteWin(answers, v, rule)); math.Abs(all-want) > majorityTol {
					t.Fatalf("%v: k = n gives %v for answer %d, full vote %v", rule, all, v, want)
				}
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("%v: expectations over the answers sum to %v", rule, sum)
			}
		}
	})
}

// digits writes small answers as a digit string.
func digits(answers []int) string {
	b := make([]byte, len(answers))
	for i, v := range answers {
		b[i] = byte('0' + v)
	}
	return string(b)
}

// TestExpectedMajorityUnbiased checks, exactly, that the subset average is
// unbiased for maj@k and that resampling with replacement is not. Answers
// are drawn independently from P(0) = 1/2, P(1) = 1/3, P(2) = 1/6 with 0
// correct. maj@3 is the sum over all 27 ordered triples of their
// probability times the vote; the expectation of ExpectedMajority over all
// 81 ordered samples of n = 4 must equal it, while the average over k = 3
// draws with replacement from the 4 samples (all 64 index triples) has a
// different expectation. By hand, maj@3 = P(at least two 0s) + P(three
// distinct answers) P(0 wins the tie) = 1/2 + (1/6)(1/3) = 5/9 for the
// first-seen and random rules and 1/2 + 1/6 = 2/3 for the smallest-answer
// rule; with replacement the expectations are 25/48 and 9/16 (the package
// documentation quotes 5/9 against 25/48).
func TestExpectedMajorityUnbiased(t *testing.T) {
	prob := []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big.NewRat(1, 6)}
	const n, k = 4, 3
	want := map[eval.TieRule][2]*big.Rat{ // maj@3, E[with replacement]
		eval.TieFirstSeen: {big.NewRat(5, 9), big.NewRat(25, 48)},
		eval.TieRandom:    {big.NewRat(5, 9), big.NewRat(25, 48)},
		eval.TieSmallest:  {big.NewRat(2, 3), big.NewRat(9, 16)},
	}
	seqs := func(length int, yield func(seq []int, p *big.Rat)) {
		seq := make([]int, length)
		for code := range int(math.Pow(3, float64(length))) {
			p := big.NewRat(1, 1)
			for i, c := 0, code; i < length; i, c = i+1, c/3 {
				seq[i] = c % 3
				p.Mul(p, prob[seq[i]])
			}
			yield(seq, p)
		}
	}
	for _, rule := range tieRules {
		truth := new(big.Rat)
		seqs(k, func(seq []int, p *big.Rat) { truth.Add(truth, p.Mul(p, voteWin(seq, 0, rule))) })
		subsets, replaced := 0.0, new(big.Rat)
		seqs(n, func(seq []int, p *big.Rat) {
			e, err := eval.ExpectedMajority(seq, 0, k, rule)
			if err != nil {
				t.Fatal(err)
			}
			pf, _ := p.Float64()
			subsets += pf * e
			// With replacement: every index triple in [0, n)^k.
			sum := new(big.Rat)
			draw := make([]int, k)
			for code := range n * n * n {
				for i, c := 0, code; i < k; i, c = i+1, c/n {
					draw[i] = seq[c%n]
				}
				sum.Add(sum, voteWin(draw, 0, rule))
			}
			sum.Quo(sum, big.NewRat(n*n*n, 1))
			replaced.Add(replaced, sum.Mul(sum, p))
		})
		if w := want[rule]; truth.Cmp(w[0]) != 0 || replaced.Cmp(w[1]) != 0 {
			t.Errorf("%v: maj@%d = %v and E[with replacement] = %v, want %v and %v", rule, k, truth, replaced, w[0], w[1])
		}
		tf := spiraltest.Float(truth)
		if math.Abs(subsets-tf) > majorityTol {
			t.Errorf("%v: E[subset average] = %v, maj@%d = %v (%v)", rule, subsets, k, tf, truth)
		}
		bias := spiraltest.Float(replaced) - tf
		if math.Abs(bias) < 1e-3 {
			t.Errorf("%v: with replacement %v, maj@%d = %v: expected a visible bias", rule, spiraltest.Float(replaced), k, tf)
		}
		t.Logf("%v: maj@3 = %v = %.6f; E[with replacement] = %v, bias %+.6f", rule, truth, tf, replaced, bias)
	}
}
