package eval_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/eval"
	"spiral/internal/spiraltest"
)

// errorBudget is the most a refused call may allocate: the error and its
// message.
const errorBudget = 8 << 10

// wantCostError checks that err is an *eval.InputError for argument arg that
// wraps ErrTooCostly and whose message holds every one of want.
func wantCostError(t *testing.T, call string, err error, arg string, want ...string) {
	t.Helper()
	var ae *eval.InputError
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one wrapping ErrTooCostly", call)
		return
	case !errors.As(err, &ae) || !errors.Is(err, eval.ErrTooCostly):
		t.Errorf("%s: error %v (%T), want an *InputError wrapping ErrTooCostly", call, err, err)
		return
	case ae.Field != arg:
		t.Errorf("%s: error names argument %q, want %q: %v", call, ae.Field, arg, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", call, err, w)
		}
	}
}

// TestExpectedMajorityHuge: the dynamic program's tables and steps grow as
// k·n and k²·n; a vote over 2^16 answers at k = 2^15 is refused naming k
// and the cost before any table is built, while the sizes of an
// evaluation (n = 256) are answered.
func TestExpectedMajorityHuge(t *testing.T) {
	answers := make([]int, 1<<16)
	for i := range answers {
		answers[i] = i % 3
	}
	for _, rule := range tieRules {
		var err error
		b := spiraltest.Allocated(func() { _, err = eval.ExpectedMajority(answers, 0, 1<<15, rule) })
		// The tally of the answers (one int per answer) is allowed.
		if b > 8*uint64(len(answers))+errorBudget+64<<10 {
			t.Errorf("%v: ExpectedMajority(2^16 answers, k = 2^15) allocated %d bytes", rule, b)
		}
		wantCostError(t, fmt.Sprintf("%v: ExpectedMajority(2^16 answers, k = 2^15)", rule), err, "k", "k: 32768 over 65536 answers")
	}
	worst := make([]int, 256) // a correct answer 128 times and 128 distinct wrong ones
	for i := range worst {
		if i%2 == 1 {
			worst[i] = i
		}
	}
	for _, rule := range tieRules {
		for _, k := range []int{64, 128, 256} {
			if _, err := eval.ExpectedMajority(worst, 0, k, rule); err != nil {
				t.Errorf("%v: ExpectedMajority(n = 256, k = %d): %v", rule, k, err)
			}
		}
	}
}

// hugeSize draws a size that is small, just around a power of two up to
// 2^62, MaxInt, or negative.
func hugeSize(t *rapid.T, label string) int {
	switch rapid.IntRange(0, 4).Draw(t, label+"Kind") {
	case 0:
		return rapid.IntRange(0, 64).Draw(t, label)
	case 1:
		e := rapid.IntRange(20, 62).Draw(t, label+"Exp")
		return 1<<e + rapid.IntRange(-2, 2).Draw(t, label+"Offset")
	case 2:
		return math.MaxInt - rapid.IntRange(0, 2).Draw(t, label+"Offset")
	case 3:
		return rapid.IntRange(math.MinInt, -1).Draw(t, label)
	}
	return rapid.IntRange(0, math.MaxInt).Draw(t, label)
}

// TestHugeSizesErrorOrAnswer draws sizes from every range, huge ones
// included, and calls each function that takes a size: each returns an
// *InputError or an answer in range, never panics, and allocates no more
// than its documented bound (a curve of kmax values, the bootstrap's
// b·kmax values). Curve widths and replicate counts are drawn either small
// or beyond the size cap, so that accepted calls stay quick.
func TestHugeSizesErrorOrAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n, c, k := hugeSize(t, "n"), hugeSize(t, "c"), hugeSize(t, "k")
		kmax := rapid.IntRange(1, 64).Draw(t, "kmax")
		if rapid.Bool().Draw(t, "hugeKmax") {
			kmax = rapid.IntRange(1<<24+1, math.MaxInt).Draw(t, "kmax")
		}
		b := rapid.IntRange(1, 64).Draw(t, "b")
		if rapid.Bool().Draw(t, "hugeB") {
			b = rapid.IntRange(1<<25, math.MaxInt).Draw(t, "b")
		}
		answer := func(call string, err error, p float64, budget uint64, used uint64) {
			var ae *eval.InputError
			if err != nil && !errors.As(err, &ae) {
				t.Fatalf("%s: error %v (%T) is not an *InputError", call, err, err)
			}
			if err == nil && !(p >= 0 && p <= 1) {
				t.Fatalf("%s = %v, not in [0, 1]", call, p)
			}
			if used > budget {
				t.Fatalf("%s allocated %d bytes > %d", call, used, budget)
			}
		}
		var p float64
		var err error
		used := spiraltest.Allocated(func() { p, err = eval.PassAtK(n, c, k) })
		answer(fmt.Sprintf("PassAtK(%d, %d, %d)", n, c, k), err, p, errorBudget, used)

		var r *big.Rat
		used = spiraltest.Allocated(func() { r, err = eval.PassAtKRat(n, c, k) })
		if err == nil {
			p = spiraltest.Float(r)
		}
		answer(fmt.Sprintf("PassAtKRat(%d, %d, %d)", n, c, k), err, p, 1<<20, used)

		var curve []float64
		used = spiraltest.Allocated(func() { curve, err = eval.PassAtKCurve(n, c, kmax) })
		if err == nil {
			p = curve[len(curve)-1]
		}
		answer(fmt.Sprintf("PassAtKCurve(%d, %d, %d)", n, c, kmax), err, p, errorBudget+8*uint64(min(kmax, 1<<24)), used)

		ps := []eval.PassCount{{N: n, C: c}, {N: max(n, kmax), C: min(max(c, 0), max(n, kmax))}}
		used = spiraltest.Allocated(func() { curve, err = eval.CoverageCurve(ps, kmax) })
		if err == nil {
			p = curve[len(curve)-1]
		}
		answer(fmt.Sprintf("CoverageCurve(%v, %d)", ps, kmax), err, p, errorBudget+8*uint64(min(kmax, 1<<24)), used)

		var band eval.CoverageBand
		used = spiraltest.Allocated(func() { band, err = eval.CoverageBootstrap(ps, kmax, b, 0.9, rand.New(rand.NewPCG(1, 2))) })
		if err == nil {
			p = band.Hi[len(band.Hi)-1]
		}
		answer(fmt.Sprintf("CoverageBootstrap(%v, %d, %d)", ps, kmax, b), err, p, errorBudget+64<<10, used)

		answers := []int{0, 1, 0, 2, 1, 0}
		used = spiraltest.Allocated(func() { p, err = eval.ExpectedMajority(answers, 0, k, eval.TieFirstSeen) })
		answer(fmt.Sprintf("ExpectedMajority(k = %d)", k), err, p, errorBudget+4<<10, used)
	})
}

// TestNoFusedMultiplyAdd: no architecture's compiler fuses a multiply and
// an add in this package: every product that feeds a sum is rounded by an
// explicit float64 conversion, so the curves and expectations have the
// same bits on every architecture (see spiraltest.NoFusedMultiplyAdd).
func TestNoFusedMultiplyAdd(t *testing.T) { spiraltest.NoFusedMultiplyAdd(t, "spiral/eval") }

// FuzzPassAtK calls PassAtK, PassAtKRat and PassAtKCurve with any sizes:
// each gives an *InputError or an answer in [0, 1]; PassAtK agrees with the
// exact value within its documented bound whenever PassAtKRat answers; and
// the curve's value at kmax agrees with PassAtK.
func FuzzPassAtK(f *testing.F) {
	f.Add(int64(16), int64(2), int64(4))
	f.Add(int64(1)<<62, int64(1)<<61, int64(1)<<20)
	f.Add(int64(math.MaxInt64), int64(3)<<20, int64(5)<<30)
	f.Add(int64(0), int64(0), int64(1))
	f.Add(int64(-1), int64(5), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, n64, c64, k64 int64) {
		n, c, k := int(n64), int(c64), int(k64)
		p, err := eval.PassAtK(n, c, k)
		var ae *eval.InputError
		if err != nil {
			if !errors.As(err, &ae) {
				t.Fatalf("PassAtK(%d, %d, %d): error %v is not an *InputError", n, c, k, err)
			}
			return
		}
		if !(p >= 0 && p <= 1) {
			t.Fatalf("PassAtK(%d, %d, %d) = %v", n, c, k, p)
		}
		if r, err := eval.PassAtKRat(n, c, k); err == nil {
			// (4m+1) 2^-53 for the product of m factors: c of them when
			// c <= 2^20, else k when k <= 2^20; beyond, the series' 2^-48.
			bound := 0x1p-48
			if c <= eval.ProductMax {
				bound = float64(4*c+1) * 0x1p-53
			} else if k <= eval.ProductMax {
				bound = float64(4*k+1) * 0x1p-53
			}
			if d := math.Abs(p - spiraltest.Float(r)); d > bound {
				t.Fatalf("PassAtK(%d, %d, %d) = %v, exact %v: off by %g > %g", n, c, k, p, r.FloatString(20), d, bound)
			}
		} else if !errors.Is(err, eval.ErrTooCostly) {
			t.Fatalf("PassAtKRat(%d, %d, %d): %v, but PassAtK answers", n, c, k, err)
		}
		if k <= 1<<12 {
			curve, err := eval.PassAtKCurve(n, c, k)
			if err != nil {
				t.Fatalf("PassAtKCurve(%d, %d, %d): %v, but PassAtK answers", n, c, k, err)
			}
			if d := math.Abs(curve[k-1] - p); d > float64(8*k+2)*0x1p-53 {
				t.Fatalf("PassAtKCurve(%d, %d, %d)[k-1] = %v, PassAtK %v", n, c, k, curve[k-1], p)
			}
		}
	})
}

// TestMajorityTooManyAnswers: a majority vote over 2^25 distinct answers
// took 7.1 GB, and ExpectedMajority tallied every answer before refusing.
// More than MaxAnswers = 2^20 answers are refused before any work, naming
// answers and the cap, and an accepted vote allocates a bounded number of
// bytes per distinct answer (2^14 of them by default, 2^16 with
// SPIRAL_LONG=1).
func TestMajorityTooManyAnswers(t *testing.T) {
	over := make([]struct{}, eval.MaxAnswers+1) // no memory: every answer the same value
	small := make([]int8, eval.MaxAnswers+1)
	none := func(a, b struct{}) int { return 0 }
	for _, rule := range tieRules {
		var err error
		calls := map[string]func(){
			"MajorityVoteFunc": func() {
				_, err = eval.MajorityVoteFunc(over, rule, none, rand.New(rand.NewPCG(1, 2)))
			},
			"MajorityVote": func() { _, err = eval.MajorityVote(small, rule, rand.New(rand.NewPCG(1, 2))) },
			"ExpectedMajorityFunc": func() {
				_, err = eval.ExpectedMajorityFunc(over, struct{}{}, 1, rule, none)
			},
			"ExpectedMajority": func() { _, err = eval.ExpectedMajority(small, 0, 3, rule) },
		}
		for name, call := range calls {
			if b := spiraltest.Allocated(call); b > errorBudget {
				t.Errorf("%v: %s(2^20+1 answers) allocated %d bytes", rule, name, b)
			}
			wantCostError(t, fmt.Sprintf("%v: %s(2^20+1 answers)", rule, name), err, "answers",
				"answers: len = 1048577 > 1048576, the most answers")
		}
	}
	answers := 1 << 14
	if spiraltest.Long() {
		answers = 1 << 16
	}
	distinct := make([]int, answers)
	for i := range distinct {
		distinct[i] = i
	}
	for _, rule := range tieRules {
		b := spiraltest.Allocated(func() { eval.MajorityVoteFunc(distinct, rule, cmp.Compare[int], rand.New(rand.NewPCG(1, 2))) })
		if b > 128*uint64(len(distinct)) {
			t.Errorf("%v: MajorityVote(%d distinct answers) allocated %d bytes, %d a distinct answer, want at most 128", rule, len(distinct), b, b/uint64(len(distinct)))
		}
	}
}
