package estimator

import (
	"fmt"
	"iter"
	"math"
	"math/big"
	"math/rand/v2"
	"spiral/internal/spiraltest"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral"
	"spiral/combin"
	"spiral/lengthgate"
)

// pow2 returns 2^bits, or math.MaxInt when that does not fit in an int
// (on 32-bit platforms).
func pow2(bits uint) int {
	if bits >= strconv.IntSize-1 {
		return math.MaxInt
	}
	return 1 << bits
}

// wantBoundedError runs f, which must return an error containing every one
// of want, and allocate at most limit bytes.
func wantBoundedError(t *testing.T, name string, limit uint64, f func() error, want ...string) {
	t.Helper()
	var err error
	if b := spiraltest.Allocated(func() { err = f() }); b > limit {
		t.Errorf("%s: allocated %d bytes, want at most %d", name, b, limit)
	}
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q, want it to contain %q", name, err, w)
		}
	}
}

// TestBoundedCost: every size a caller passes is checked against what the
// call will cost before any work: each case returns an error naming the
// argument and its bound, with little allocation, or a bounded answer.
func TestBoundedCost(t *testing.T) {
	const little = 1 << 20
	mc := MonteCarlo{Family: family(t, false, 8, 4), K: 4, N2: 4,
		Policy: must(NewCategorical(rats("1/2", "1/2"))), Objective: must(CoverTable(2, 4, 2))}
	wantBoundedError(t, "MonteCarlo.Run R = 2^40", little, func() error { _, err := mc.Run(pow2(40), 1); return err },
		fmt.Sprintf("R: %d outside", pow2(40)), "the most replicates")
	wantBoundedError(t, "MonteCarlo.Run R = MaxInt", little, func() error { _, err := mc.Run(math.MaxInt, 1); return err },
		fmt.Sprintf("R: %d outside", math.MaxInt), "the most replicates")
	wantBoundedError(t, "UniformCategorical V = 2^40", little, func() error { _, err := UniformCategorical(pow2(40)); return err },
		fmt.Sprintf("V: %d outside", pow2(40)), "the most symbols")
	wantBoundedError(t, "FixedSets N1 = MaxInt", little, func() error { _, err := FixedSets(math.MaxInt, [][]int{{0}}); return err },
		fmt.Sprintf("N1: %d outside", math.MaxInt), "the most traces a family holds")
	wantBoundedError(t, "NewSetDistribution nil iterator", little, func() error {
		_, err := NewSetDistribution(2, [][]int{{0}}, nil)
		return err
	}, "selections: nil")
	endless := func(yield func([]int, *big.Rat) bool) {
		s, zero := []int{0}, new(big.Rat)
		for yield(s, zero) {
		}
	}
	// The listed selections' bound, reached after 2^16 selections under
	// SPIRAL_LONG=1, after 2^10 by default.
	bound := maxListedSelections
	if !long() {
		maxListedSelections = 1 << 10
	}
	wantBoundedError(t, "NewSetDistribution endless iterator", 64<<20, func() error {
		_, err := NewSetDistribution(2, [][]int{{0}}, endless)
		return err
	}, fmt.Sprintf("selections: more than %d, the most", maxListedSelections))
	wantBoundedError(t, "DistributionWeights endless iterator", 64<<20, func() error {
		_, err := DistributionWeights(2, [][]int{{0}}, endless)
		return err
	}, fmt.Sprintf("selections: more than %d, the most", maxListedSelections))
	maxListedSelections = bound
	var yielded int
	if b := spiraltest.Allocated(func() {
		for range UniformSelections(math.MaxInt, math.MaxInt) {
			yielded++
		}
		for range UniformSelections(combin.MaxSize, combin.MaxSize/2) {
			yielded++
		}
	}); b > little || yielded != 0 {
		t.Errorf("UniformSelections on huge sizes: %d selections, %d bytes; want none, little memory", yielded, b)
	}
	huge := must(combin.Subsets(combin.MaxSize, combin.MaxSize/2))
	wantBoundedError(t, "SelectionWeights on a huge family", little, func() error { _, err := SelectionWeights(huge, 2); return err },
		"too large for exact enumeration")
	wantBoundedError(t, "SelectionWeights K = T/2", little, func() error {
		_, err := SelectionWeights(must(combin.Subsets(2048, 2)), 1<<19)
		return err
	}, "too large for exact enumeration")
	wantBoundedError(t, "SelectionWeights C(T, K) = C(1024, 512)", little, func() error {
		_, err := SelectionWeights(must(combin.Subsets(1024, 1)), 512)
		return err
	}, "C(T, K) = C(1024, 512)", "> 33554432, the most enumerated")
	tab := must(CoverTable(2, 2, 2))
	wantBoundedError(t, "Objective nil categorical", little, func() error {
		_, err := Objective(nil, tab, combin.IndexOrder)
		return err
	}, "c: nil")
	wantBoundedError(t, "Gradient nil table", little, func() error {
		_, err := Gradient(must(UniformCategorical(2)), nil, combin.IndexOrder)
		return err
	}, "t: nil")
	wantBoundedError(t, "RandomTable denom = MaxInt", little, func() error {
		_, err := RandomTable(rand.New(rand.NewPCG(1, 1)), 2, 2, math.MaxInt)
		return err
	}, fmt.Sprintf("denom: %d outside", math.MaxInt))
	wantBoundedError(t, "CoverTable V = 1, n = MaxInt", little, func() error { _, err := CoverTable(1, math.MaxInt, 1); return err },
		fmt.Sprintf("n: %d outside", math.MaxInt))
	wantBoundedError(t, "JointExpectation K = 2^20", little, func() error {
		a := randomAggregator(t, rand.New(rand.NewPCG(1, 2)), 2, 2, 2)
		_, err := JointExpectation(must(UniformCategorical(2)), a, must(combin.Subsets(2048, 2)), 1<<20, 2, 0, combin.IndexOrder)
		return err
	}, "too many for JointExpectation")
}

// TestHugeSizesErrorOrAnswer: over random sizes up to MaxInt, every
// constructor and computation of the package returns an error or an
// answer, never panics, and allocates a bounded amount.
func TestHugeSizesErrorOrAnswer(t *testing.T) {
	size := func(t *rapid.T, name string) int {
		return rapid.OneOf(rapid.IntRange(-1, 5), rapid.IntRange(1<<20, 1<<30),
			rapid.SampledFrom([]int{pow2(40), pow2(62), math.MaxInt, math.MinInt})).Draw(t, name)
	}
	checkProperty(t, 100, func(t *rapid.T) {
		N1, n, K, V := size(t, "N1"), size(t, "n"), size(t, "K"), size(t, "V")
		N2, R := size(t, "N2"), size(t, "R")
		b := spiraltest.Allocated(func() {
			_, _ = UniformCategorical(V)
			_, _ = CoverTable(V, n, K)
			_, _ = RandomTable(rand.New(rand.NewPCG(1, 1)), V, n, K)
			_, _ = FixedSets(N1, [][]int{{0, 1}, {min(max(n, 0), 3)}})
			var zero iter.Seq2[[]int, *big.Rat]
			_, _ = NewSetDistribution(N1, [][]int{{0}}, zero)
			for range UniformSelections(N1, K) {
				break
			}
			f, err := combin.NewFamily(N1, n, K%2 == 0)
			if err != nil {
				return
			}
			_, _ = SelectionWeights(f, K)
			_, _ = UniformSets(f, K)
			_, _ = BalancedSets(f, K)
			c, err := UniformCategorical(min(max(V, 1), 3))
			if err != nil {
				return
			}
			if tab, err := CoverTable(c.Size(), f.SetSize(), 1); err == nil {
				mc := MonteCarlo{Family: f, K: K, N2: N2, Policy: c, Objective: tab, Workers: 1,
					Gate: lengthgate.Gate{Target: 1}, Lengths: make([]int, c.Size())}
				if R > 4 && R <= MaxReplicates {
					R = 4 // a run that is not refused takes time in proportion
				}
				_, _ = mc.Run(R, 1)
			}
		})
		if b > 512<<20 {
			t.Fatalf("N1 = %d, n = %d, K = %d, V = %d, N2 = %d, R = %d: allocated %d bytes", N1, n, K, V, N2, R, b)
		}
	})
}

// TestMonteCarloWorkersBounded: Run started one goroutine per chunk up to
// Workers, each with its own scratch and statistics, so Workers = 2^20
// with R = 2^30 exhausted memory before the first replicate. It now starts
// at most GOMAXPROCS, so Workers = 2^20 allocates what the default does.
func TestMonteCarloWorkersBounded(t *testing.T) {
	mc := MonteCarlo{Family: family(t, false, 2, 1), K: 1,
		Policy: must(NewCategorical(rats("1/2", "1/2"))), Objective: must(CoverTable(2, 1, 1))}
	R := 8 * MonteCarloChunk
	var res, huge MonteCarloResult
	var err, errHuge error
	base := spiraltest.Allocated(func() { res, err = mc.Run(R, 7) })
	mc.Workers = 1 << 20
	many := spiraltest.Allocated(func() { huge, errHuge = mc.Run(R, 7) })
	if err != nil || errHuge != nil {
		t.Fatal(err, errHuge)
	}
	if many > 2*base {
		t.Errorf("Run with Workers = 2^20 allocated %d bytes, the default %d", many, base)
	}
	if res.Mean[0] != huge.Mean[0] || res.Variance[1] != huge.Variance[1] {
		t.Errorf("Workers = 2^20 changed the result: %v, want %v", huge.Mean, res.Mean)
	}
}

// TestExactEnumerationsBounded: AggregationCredit's doc promised 4,194,304
// outcomes but refused over 1,048,576 naming V^n, and took 24 s and 4.4 GB
// at 1,048,576; ExactExpectation accepted V^N = 2^20 and ran 38 s. Both
// now refuse, before any work, an enumeration over MaxExactSteps
// operations, naming their own arguments; the largest accepted sizes run
// in seconds.
func TestExactEnumerationsBounded(t *testing.T) {
	const little = 64 << 10
	agg := must(NewCategorical(rats("1/2", "1/2")))
	for _, N2 := range []int{9, 10, 11} {
		wantBoundedError(t, fmt.Sprintf("AggregationCredit(V2 = 2, N2 = %d)", N2), little, func() error {
			_, err := AggregationCredit(agg, rats("1/3", "1"), N2, spiral.WithinSet)
			return err
		}, "AggregationCredit", fmt.Sprintf("N2 = %d outputs over agg's V = 2 outputs", N2), "more than 8388608 operations, the most computed exactly")
	}
	if _, err := AggregationCredit(agg, rats("1/3", "1"), 7, spiral.WithinSet); err != nil {
		t.Errorf("AggregationCredit(V2 = 2, N2 = 7): %v", err)
	}
	c := must(NewCategorical(rats("1/3", "2/3")))
	for _, N := range []int{17, 20} {
		f := family(t, false, N, 1)
		wantBoundedError(t, fmt.Sprintf("ExactExpectation(V = 2, Subsets(%d, 1), K = 1)", N), little+uint64(N)*4<<10, func() error {
			_, err := ExactExpectation(c, must(CoverTable(2, 1, 1)), f, 1, combin.IndexOrder)
			return err
		}, fmt.Sprintf("V^N = 2^%d outcomes of N = %d traces", N, N), "more than 8388608 operations, the most computed exactly")
	}
}
