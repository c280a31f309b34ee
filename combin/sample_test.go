package combin

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// methods lists every way a Sampler can work for (f, K): the dense table
// when T < 2^64, and rejection with either set drawer and either
// duplicate check.
func methods(f Family) map[string]samplerMethod {
	m := map[string]samplerMethod{}
	if _, ok := f.Count64(); ok {
		m["dense"] = samplerMethod{dense: true}
	}
	for _, fy := range []bool{false, true} {
		for _, hashed := range []bool{false, true} {
			m[fmt.Sprintf("reject/fisherYates=%t/hashed=%t", fy, hashed)] = samplerMethod{fisherYates: fy, hashed: hashed}
		}
	}
	return m
}

// tester is what testing.T and rapid.T have in common.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
}

func checkSample(t tester, f Family, K int, flat []int) {
	t.Helper()
	n := f.SetSize()
	seen := map[string]bool{}
	for i := range K {
		g := flat[i*n : (i+1)*n]
		if err := f.checkSet(g); err != nil {
			t.Fatalf("%v, K = %d: set %d = %v: %v", f, K, i, g, err)
		}
		key := intsKey(g)
		if seen[key] {
			t.Fatalf("%v, K = %d: set %v drawn twice", f, K, g)
		}
		seen[key] = true
	}
}

// TestSampleValid: every method returns K valid, distinct sets, on random
// families including ones beyond 2^64.
func TestSampleValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := drawFamily(t, rapid.SampledFrom([]int{6, 40, 2000}).Draw(t, "maxN"), 80)
		maxK := 300
		if T, ok := f.Count64(); ok && T < uint64(maxK) {
			maxK = int(T)
		}
		K := rapid.IntRange(0, maxK).Draw(t, "K")
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		sets, err := f.Sample(rnd, K)
		if err != nil || len(sets) != K {
			t.Fatalf("%v.Sample(K = %d) = %d sets, %v", f, K, len(sets), err)
		}
		checkSample(t, f, K, slices.Concat(sets...))
		for name, m := range methods(f) {
			if m.dense && !countAtMost(f, 50000) {
				continue
			}
			s := newSampler(f, K, m)
			dst := make([]int, s.Len())
			if err := s.SampleTo(dst, rnd); err != nil {
				t.Fatalf("%v, %s: %v", f, name, err)
			}
			checkSample(t, f, K, dst)
		}
	})
}

// TestSampleMethodChoice: the large cases of the issue do not enumerate the
// family, and the dense one stores O(K*n).
func TestSampleMethodChoice(t *testing.T) {
	big := mustSampler(t, mustFamily(t, false, 1024, 16), 64)
	if big.table != nil || big.fy != nil || big.slots == nil {
		t.Errorf("Subsets(1024, 16), K = 64: table %d, fy %d, slots %d", len(big.table), len(big.fy), len(big.slots))
	}
	all := mustSampler(t, mustFamily(t, true, 8, 4), 1680)
	if len(all.table) != 1680*4 {
		t.Errorf("Tuples(8, 4), K = 1680: table of %d ints, want K*n = %d", len(all.table), 1680*4)
	}
	paper := mustSampler(t, mustFamily(t, false, 8, 4), 4)
	if len(paper.table) != 70*4 {
		t.Errorf("Subsets(8, 4), K = 4: table of %d ints, want 280", len(paper.table))
	}
	wide := mustSampler(t, mustFamily(t, false, 300, 70), 3)
	if wide.table != nil || len(wide.fy) != 300 || wide.slots != nil {
		t.Errorf("Subsets(300, 70), K = 3: table %d, fy %d, slots %d", len(wide.table), len(wide.fy), len(wide.slots))
	}
}

func mustSampler(t testing.TB, f Family, K int) *Sampler {
	t.Helper()
	s, err := NewSampler(f, K)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSampleAll: K = T returns every set once, in an order that differs
// between draws.
func TestSampleAll(t *testing.T) {
	f := mustFamily(t, true, 8, 4)
	rnd := rand.New(rand.NewPCG(1, 2))
	a, err := f.Sample(rnd, 1680)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Sample(rnd, 1680)
	if slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("two draws of all 1680 sets came in the same order")
	}
	slices.SortFunc(a, slices.Compare)
	if want := collect(f); !slices.EqualFunc(a, want, slices.Equal) {
		t.Errorf("Tuples(8, 4).Sample(1680) is not the whole family")
	}
}

// TestSampleReproducible: the same seed gives the same sets, through
// Sample and through a reused Sampler.
func TestSampleReproducible(t *testing.T) {
	for _, tc := range []struct {
		f Family
		K int
	}{
		{mustFamily(t, false, 8, 4), 4},
		{mustFamily(t, false, 1024, 16), 64},
		{mustFamily(t, true, 8, 4), 1680},
		{mustFamily(t, true, 30, 5), 10},
	} {
		a, _ := tc.f.Sample(rand.New(rand.NewPCG(7, 7)), tc.K)
		s := mustSampler(t, tc.f, tc.K)
		dst := make([]int, s.Len())
		rnd := rand.New(rand.NewPCG(9, 9))
		_ = s.SampleTo(dst, rnd) // leave scratch used
		_ = s.SampleTo(dst, rand.New(rand.NewPCG(7, 7)))
		if !slices.Equal(slices.Concat(a...), dst) {
			t.Errorf("%v, K = %d: Sample and a reused Sampler differ for one seed", tc.f, tc.K)
		}
	}
}

// TestSampleGolden pins the sets drawn for one seed. It is the promise
// that a seed gives the same sets on every machine and in every version:
// a change of method that changes these values breaks reproducibility of
// users' runs and must be announced.
func TestSampleGolden(t *testing.T) {
	for _, tc := range []struct {
		f    Family
		K    int
		want string
	}{
		{mustFamily(t, false, 8, 4), 4, "[[1 4 6 7] [1 2 5 7] [2 3 4 5] [2 3 4 6]]"},
		{mustFamily(t, true, 8, 4), 3, "[[6 1 0 4] [4 7 3 0] [6 1 7 4]]"},
		{mustFamily(t, false, 1024, 16), 2, "[[41 123 135 188 238 272 406 455 460 511 631 679 802 803 816 964] [21 49 74 213 231 339 345 472 521 606 657 690 726 758 844 982]]"},
	} {
		g, _ := tc.f.Sample(rand.New(rand.NewPCG(1, 2)), tc.K)
		if got := fmt.Sprint(g); got != tc.want {
			t.Errorf("%v.Sample(PCG(1, 2), %d) = %s, want %s", tc.f, tc.K, got, tc.want)
		}
	}
}

// TestDedupAgree: the duplicate check changes cost, not the sets drawn.
func TestDedupAgree(t *testing.T) {
	for _, tc := range []struct {
		f Family
		K int
	}{{mustFamily(t, false, 20, 3), 300}, {mustFamily(t, true, 9, 2), 40}, {mustFamily(t, false, 10, 4), 5}} {
		a := newSampler(tc.f, tc.K, samplerMethod{})
		b := newSampler(tc.f, tc.K, samplerMethod{hashed: true})
		da, db := make([]int, a.Len()), make([]int, b.Len())
		_ = a.SampleTo(da, rand.New(rand.NewPCG(3, 4)))
		_ = b.SampleTo(db, rand.New(rand.NewPCG(3, 4)))
		if !slices.Equal(da, db) {
			t.Errorf("%v, K = %d: linear and hashed duplicate checks disagree", tc.f, tc.K)
		}
	}
}

// TestSampleUniformChiSquare draws K sets many times and compares the
// frequency of every ordered sequence of K distinct sets, (T)_K cells, with
// the uniform distribution by Pearson's chi-square test at the 1e-4 quantile,
// for every method. A uniform set but a biased order fails it too.
func TestSampleUniformChiSquare(t *testing.T) {
	for caseIndex, tc := range sequenceCases(t) {
		ms := methods(tc.f)
		for j, name := range slices.Sorted(maps.Keys(ms)) {
			// By default each case checks every other method, alternating,
			// so that every method is checked by two cases.
			if !long() && j%2 != caseIndex%2 {
				continue
			}
			m := ms[name]
			t.Run(fmt.Sprintf("%v/K=%d/%s", tc.f, tc.K, name), func(t *testing.T) {
				s := newSampler(tc.f, tc.K, m)
				stat, df, draws := sequenceChiSquare(t, s, rand.New(rand.NewPCG(11, 13)), nil)
				if limit := chiSquareThreshold(df); stat > limit {
					t.Errorf("chi-square = %.1f > %.1f (df = %d, %d draws)", stat, limit, df, draws)
				}
			})
		}
	}
}

// sequenceCases are the families and K of the chi-square tests of ordered
// sequences of sets: small enough to count every sequence.
func sequenceCases(t *testing.T) []struct {
	f Family
	K int
} {
	return []struct {
		f Family
		K int
	}{
		{mustFamily(t, false, 6, 3), 2}, // 20 sets, 380 cells
		{mustFamily(t, true, 4, 2), 2},  // 12 sets, 132 cells
		{mustFamily(t, true, 3, 2), 6},  // all 6 sets, 720 orders
		{mustFamily(t, false, 5, 2), 3}, // 10 sets, 720 cells
	}
}

// TestChiSquareDetectsBias: the same test rejects a sampler whose sets are
// uniform but whose sets come sorted by rank.
func TestChiSquareDetectsBias(t *testing.T) {
	f := mustFamily(t, false, 6, 3)
	s := newSampler(f, 2, samplerMethod{dense: true})
	sortByRank := func(dst []int) {
		a, _ := f.Rank64(dst[:3])
		b, _ := f.Rank64(dst[3:])
		if a > b {
			g := slices.Clone(dst[:3])
			copy(dst, dst[3:])
			copy(dst[3:], g)
		}
	}
	stat, df, _ := sequenceChiSquare(t, s, rand.New(rand.NewPCG(11, 13)), sortByRank)
	if limit := chiSquareThreshold(df); stat <= limit {
		t.Errorf("biased order passed: chi-square = %.1f <= %.1f", stat, limit)
	}
}

// sequenceChiSquare returns the chi-square statistic of the ordered
// sequences of ranks drawn by s (50 expected per cell by default, 1,000
// with SPIRAL_LONG=1), after an optional distortion of each sample.
func sequenceChiSquare(t *testing.T, s *Sampler, rnd *rand.Rand, distort func([]int)) (stat float64, df, draws int) {
	return sequenceChiSquareOf(t, s, func(dst []int) {
		if err := s.SampleTo(dst, rnd); err != nil {
			t.Fatal(err)
		}
	}, distort)
}

// sequenceChiSquareOf is sequenceChiSquare for sets drawn by draw.
func sequenceChiSquareOf(t *testing.T, s *Sampler, draw func(dst []int), distort func([]int)) (stat float64, df, draws int) {
	f, K, n := s.Family(), s.K(), s.Family().SetSize()
	T64, _ := f.Count64()
	T := int(T64)
	cells := 1 // (T)_K
	space := 1 // T^K
	for i := range K {
		cells *= T - i
		space *= T
	}
	draws = budget(100) * cells
	counts := make([]int, space)
	dst := make([]int, s.Len())
	for range draws {
		draw(dst)
		if distort != nil {
			distort(dst)
		}
		idx := 0
		for i := range K {
			r, err := f.Rank64(dst[i*n : (i+1)*n])
			if err != nil {
				t.Fatal(err)
			}
			idx = idx*T + int(r)
		}
		counts[idx]++
	}
	var observed []int
	var expected []float64
	for idx, c := range counts {
		digits := make([]int, 0, K)
		for x := idx; len(digits) < K; x /= T {
			digits = append(digits, x%T)
		}
		slices.Sort(digits)
		if len(slices.Compact(digits)) < K {
			if c != 0 {
				t.Fatalf("a sample repeated a set %d times", c)
			}
			continue
		}
		observed = append(observed, c)
		expected = append(expected, float64(draws)/float64(cells))
	}
	stat, df = chiSquare(observed, expected)
	return stat, df, draws
}

// TestSampleAppearances: the number of the K sets that contain a given
// index follows AppearanceDist, on families far too large to enumerate, for
// every method that applies.
func TestSampleAppearances(t *testing.T) {
	for caseIndex, tc := range []struct {
		f     Family
		K     int
		index int
	}{
		{mustFamily(t, false, 1024, 16), 64, 0},
		{mustFamily(t, false, 1024, 16), 64, 1023},
		{mustFamily(t, false, 8, 4), 4, 3},
		{mustFamily(t, true, 8, 4), 10, 7},
		{mustFamily(t, true, 8, 4), 500, 2},
		{mustFamily(t, false, 200, 70), 20, 5},
		{mustFamily(t, true, 100, 3), 40, 50},
	} {
		dist, err := tc.f.AppearanceDist(tc.K)
		if err != nil {
			t.Fatal(err)
		}
		names := slices.Sorted(maps.Keys(methods(tc.f)))
		applicable := 0
		for _, name := range names {
			m := methods(tc.f)[name]
			if m.dense && !countAtMost(tc.f, 5000) || !m.dense && countAtMost(tc.f, 2*uint64(tc.K)-1) {
				continue // the table is too big, or rejection too slow
			}
			if !m.dense && !m.hashed && tc.K > 4*linearDedup && !long() {
				continue // pairwise deduplication of many sets: slow, and never chosen
			}
			// By default each case checks one of its methods, in turn, so
			// that every method is checked by some case; SPIRAL_LONG=1
			// checks them all.
			if applicable++; !long() && applicable%3 != caseIndex%3 {
				continue
			}
			t.Run(fmt.Sprintf("%v/K=%d/index=%d/%s", tc.f, tc.K, tc.index, name), func(t *testing.T) {
				s := newSampler(tc.f, tc.K, m)
				draws := budget(2000)
				rnd := rand.New(rand.NewPCG(5, uint64(tc.index)))
				observed := make([]int, tc.K+1)
				dst := make([]int, s.Len())
				for range draws {
					_ = s.SampleTo(dst, rnd)
					observed[count(dst, tc.index)]++
				}
				expected := make([]float64, tc.K+1)
				for j, p := range dist {
					x, _ := p.Float64()
					expected[j] = x * float64(draws)
				}
				stat, df := chiSquare(observed, expected)
				if limit := chiSquareThreshold(df); stat > limit || math.IsNaN(stat) {
					t.Errorf("chi-square = %.1f > %.1f (df = %d, %d draws): %v", stat, limit, df, draws, observed)
				}
			})
		}
	}
}

// countAtMost reports whether T <= x.
func countAtMost(f Family, x uint64) bool {
	T, ok := f.Count64()
	return ok && T <= x
}

func count(s []int, v int) int {
	c := 0
	for _, x := range s {
		if x == v {
			c++
		}
	}
	return c
}

func TestSampleErrors(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		f    Family
		rnd  *rand.Rand
		K    int
		want string
	}{
		{f, nil, 4, "combin: rnd: nil random generator"},
		{f, nil, 0, "combin: rnd: nil random generator"},
		{f, rnd, -1, "K: -1 < 0"},
		{f, rnd, 71, "K: 71 > T = 70, the number of sets in Subsets(8, 4)"},
		{mustFamily(t, true, 8, 4), rnd, 1681, "K: 1681 > T = 1680"},
		{mustFamily(t, false, 1024, 16), rnd, math.MaxInt / 4, "> 16777216, the most indices a draw holds"},
		{mustFamily(t, false, 1024, 16), rnd, MaxSize/16 + 1, "K*n = 1048577*16 > 16777216, the most indices a draw holds"},
	} {
		if _, err := tc.f.Sample(tc.rnd, tc.K); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Sample(K = %d) error = %v, want %q", tc.f, tc.K, err, tc.want)
		}
	}
	s := mustSampler(t, f, 4)
	dst := []int{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	if err := s.SampleTo(dst, nil); err == nil || !strings.Contains(err.Error(), "combin: rnd: nil random generator") || dst[0] != 9 {
		t.Errorf("SampleTo(nil rnd) error = %v, dst = %v", err, dst)
	}
	g, err := f.Sample(rnd, 0)
	if err != nil || len(g) != 0 {
		t.Errorf("Sample(K = 0) = %v, %v", g, err)
	}
	if err := mustSampler(t, f, 0).SampleTo(nil, rnd); err != nil {
		t.Errorf("SampleTo with K = 0: %v", err)
	}
}

func TestSampleToPanicsOnLength(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(dst) = 15, want K*n = 4*4") {
			t.Errorf("recovered %v", r)
		}
	}()
	s := mustSampler(t, mustFamily(t, false, 8, 4), 4)
	_ = s.SampleTo(make([]int, 15), rand.New(rand.NewPCG(1, 1)))
}

// TestDrawToPanicMessages: DrawTo's two programmer errors panic with messages
// that say which, a nil src even when there is nothing to draw.
func TestDrawToPanicMessages(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	for _, tc := range []struct {
		K, length int
		src       rand.Source
		want      string
	}{
		{4, 15, rand.NewPCG(1, 1), "combin: DrawTo: len(dst) = 15, want K*n = 4*4"},
		{4, 16, nil, "combin: DrawTo: src is nil"},
		{0, 0, nil, "combin: DrawTo: src is nil"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || fmt.Sprint(r) != tc.want {
					t.Errorf("K = %d, len(dst) = %d: recovered %v, want %q", tc.K, tc.length, r, tc.want)
				}
			}()
			mustSampler(t, f, tc.K).DrawTo(make([]int, tc.length), tc.src)
		}()
	}
}

func TestSampleToAllocs(t *testing.T) {
	for _, tc := range []struct {
		f Family
		K int
	}{
		{mustFamily(t, false, 8, 4), 4},
		{mustFamily(t, false, 1024, 16), 64},
		{mustFamily(t, false, 1024, 16), 8},
		{mustFamily(t, true, 8, 4), 1680},
		{mustFamily(t, false, 300, 70), 20},
	} {
		s := mustSampler(t, tc.f, tc.K)
		dst := make([]int, s.Len())
		rnd := rand.New(rand.NewPCG(1, 1))
		if a := testing.AllocsPerRun(20, func() { _ = s.SampleTo(dst, rnd) }); a != 0 {
			t.Errorf("%v, K = %d: SampleTo makes %v allocations", tc.f, tc.K, a)
		}
	}
}

// TestSampleManyTo: SampleManyTo makes the draws of as many SampleTo calls
// with the same random numbers, for every method of both samplers, and
// leaves rnd where those calls leave it.
func TestSampleManyTo(t *testing.T) {
	type sampler interface {
		Len() int
		SampleTo(dst []int, rnd *rand.Rand) error
		SampleManyTo(dst []int, rnd *rand.Rand) error
	}
	rapid.Check(t, func(t *rapid.T) {
		f := drawFamily(t, rapid.SampledFrom([]int{6, 40, 300}).Draw(t, "maxN"), 80)
		maxK := 40
		if T, ok := f.Count64(); ok && T < uint64(maxK) {
			maxK = int(T)
		}
		K := rapid.IntRange(0, maxK).Draw(t, "K")
		var s sampler
		if !f.Ordered() && rapid.Bool().Draw(t, "balanced") {
			m := rapid.SampledFrom(balancedMethods).Draw(t, "balanced method")
			s = newBalancedSampler(f, K, m.draws)
		} else {
			ms := methods(f)
			if !countAtMost(f, 50000) {
				delete(ms, "dense")
			}
			name := rapid.SampledFrom(slices.Sorted(maps.Keys(ms))).Draw(t, "method")
			s = newSampler(f, K, ms[name])
		}
		draws := rapid.IntRange(0, 4).Draw(t, "draws")
		seed := rapid.Uint64().Draw(t, "seed")
		want := make([]int, draws*s.Len())
		one := rand.New(rand.NewPCG(seed, 3))
		for d := range draws {
			if err := s.SampleTo(want[d*s.Len():(d+1)*s.Len()], one); err != nil {
				t.Fatalf("SampleTo: %v", err)
			}
		}
		got := make([]int, len(want))
		many := rand.New(rand.NewPCG(seed, 3))
		if err := s.SampleManyTo(got, many); err != nil {
			t.Fatalf("SampleManyTo: %v", err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v, K = %d, %d draws: SampleManyTo %v, SampleTo %v", f, K, draws, got, want)
		}
		if a, b := many.Uint64(), one.Uint64(); a != b {
			t.Fatalf("%v, K = %d: rnd after SampleManyTo gives %d, after SampleTo %d", f, K, a, b)
		}
	})
}

func TestSampleManyToErrors(t *testing.T) {
	s := mustSampler(t, mustFamily(t, false, 8, 4), 4)
	dst := make([]int, 32)
	if err := s.SampleManyTo(dst, nil); err == nil || !slices.Equal(dst, make([]int, 32)) {
		t.Errorf("SampleManyTo(nil rnd) = %v, dst %v", err, dst)
	}
	for _, c := range []struct {
		s    interface{ SampleManyTo([]int, *rand.Rand) error }
		n    int
		want string
	}{
		{s, 17, "len(dst) = 17, not a multiple of K*n = 4*4"},
		{mustSampler(t, mustFamily(t, false, 8, 4), 0), 1, "len(dst) = 1, not a multiple of K*n = 0*4"},
		{newBalancedSampler(mustFamily(t, false, 8, 4), 4, maxRoundDraws), 20, "BalancedSampler.SampleManyTo: len(dst) = 20"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("len(dst) = %d: recovered %v, want %q", c.n, r, c.want)
				}
			}()
			_ = c.s.SampleManyTo(make([]int, c.n), rand.New(rand.NewPCG(1, 1)))
		}()
	}
}
