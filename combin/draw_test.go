package combin

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// values is a source that returns its values in order, then panics.
type values struct {
	x    []uint64
	used int
}

func (v *values) Uint64() uint64 {
	x := v.x[v.used]
	v.used++
	return x
}

// runProduct returns the radices top, top-1, ... of drawRun's longest run
// of at most most radices whose product is below 2^64, and that product,
// computed with math/big.
func runProduct(top, most int) (radices []int, p *big.Int) {
	p = big.NewInt(1)
	limit := new(big.Int).Lsh(big.NewInt(1), 64)
	for i := range most {
		next := new(big.Int).Mul(p, big.NewInt(int64(top-i)))
		if i > 0 && next.Cmp(limit) >= 0 {
			break
		}
		p, radices = next, append(radices, top-i)
	}
	return radices, p
}

// wantRun returns what drawRun must do with the value x for the run of
// radices with product p: the mixed-radix digits of floor(x p / 2^64), and
// whether x is accepted (x p mod 2^64 >= 2^64 mod p), computed with
// math/big.
func wantRun(x uint64, radices []int, p *big.Int) (digits []int, accept bool) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	xp := new(big.Int).Mul(new(big.Int).SetUint64(x), p)
	D, L := new(big.Int).QuoRem(xp, two64, new(big.Int))
	t := new(big.Int).Mod(two64, p)
	digits = make([]int, len(radices))
	for i := len(radices) - 1; i >= 0; i-- {
		r := big.NewInt(int64(radices[i]))
		var d big.Int
		D.QuoRem(D, r, &d)
		digits[i] = int(d.Int64())
	}
	return digits, L.Cmp(t) >= 0
}

// runCaller runs drawRun on given values, reusing its memory.
type runCaller struct {
	src values
	d   []int
}

// call runs drawRun on the value x followed by 2^64 - 1, which every run
// accepts (its remainder 2^64 - p is at least 2^64 mod p), and reports the
// digits (valid until the next call) and whether x was accepted.
func (c *runCaller) call(t *testing.T, x uint64, top, most int) (digits []int, accepted bool, m int) {
	if c.src.x == nil {
		c.src.x = make([]uint64, 2)
	}
	c.src.x[0], c.src.x[1], c.src.used = x, math.MaxUint64, 0
	if len(c.d) < most {
		c.d = make([]int, most)
	}
	m = drawRun(c.d[:most], top, &c.src)
	switch c.src.used {
	case 1:
		return c.d[:m], true, m
	case 2:
		return nil, false, m
	}
	t.Helper() // here, not at the top: call runs millions of times
	t.Fatalf("drawRun used %d values", c.src.used)
	return nil, false, 0
}

// TestDrawRunIdentity: on random and extreme values, drawRun picks the
// longest run whose product is below 2^64, gives the digits of
// floor(x p/2^64) and rejects exactly when x p mod 2^64 < 2^64 mod p, all
// checked with math/big.
func TestDrawRunIdentity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		top := rapid.OneOf(rapid.IntRange(1, 100), rapid.IntRange(1, 1<<24), rapid.IntRange(1, math.MaxInt)).Draw(t, "top")
		most := rapid.IntRange(1, min(top, 70)).Draw(t, "most")
		x := rapid.OneOf(rapid.Uint64(), rapid.Uint64Range(0, 1<<20), rapid.Uint64Range(math.MaxUint64-1<<20, math.MaxUint64)).Draw(t, "x")
		radices, p := runProduct(top, most)
		src := &values{x: []uint64{x, math.MaxUint64}}
		d := make([]int, most)
		m := drawRun(d, top, src)
		if m != len(radices) {
			t.Fatalf("run of %d radices, want %d (%v)", m, len(radices), radices)
		}
		digits, accept := wantRun(x, radices, p)
		if accept != (src.used == 1) {
			t.Fatalf("x = %d: used %d values, want accept = %v", x, src.used, accept)
		}
		if accept && !slices.Equal(d[:m], digits) {
			t.Fatalf("x = %d: digits %v, want %v", x, d[:m], digits)
		}
	})
}

// TestDrawRunExact proves that drawRun is exactly uniform for runs whose
// product p is small enough to list every result. The values x giving the
// result D (before rejection) are the interval [a_D, a_{D+1}) with
// a_D = ceil(D 2^64/p), on which x p mod 2^64 grows by p per step, so only
// a_D can fall below the threshold 2^64 mod p < p. The test runs drawRun on
// a_D - 1, a_D and a_D + 1 for every D, checks the digits and the
// rejections there, and counts the accepted values of each result:
// (a_{D+1} - a_D) minus one if a_D is rejected. Every result must have
// exactly floor(2^64/p) of them.
func TestDrawRunExact(t *testing.T) {
	cases := []struct{ top, most int }{
		{2, 1}, {3, 1}, {7, 3}, {10, 3}, {70, 2}, {70, 1}, {6, 5}, {1000, 1}, {97, 2},
	}
	if long() {
		cases = append(cases, struct{ top, most int }{70, 4}) // Subsets(8, 4), K = 4
	} else {
		cases = append(cases, struct{ top, most int }{70, 3})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("top=%d/radices=%d", tc.top, tc.most), func(t *testing.T) {
			radices, pb := runProduct(tc.top, tc.most)
			p := pb.Uint64()
			want := math.MaxUint64 / p // floor((2^64-1)/p) = floor(2^64/p) unless p is a power of two
			if p&(p-1) == 0 {
				want = (math.MaxUint64-p+1)/p + 1
			}
			// start returns a_D = ceil(D 2^64 / p) for D < p, and 2^64 (as
			// ok = false) for D = p.
			start := func(D uint64) (a uint64, ok bool) {
				if D == p {
					return 0, false
				}
				q, r := bits.Div64(D, 0, p)
				if r != 0 {
					q++
				}
				return q, true
			}
			d := make([]int, len(radices))
			digits := func(D uint64) []int {
				for i := len(radices) - 1; i >= 0; i-- {
					d[i] = int(D % uint64(radices[i]))
					D /= uint64(radices[i])
				}
				return d
			}
			var c runCaller
			check := func(x uint64, D uint64) bool {
				got, ok, m := c.call(t, x, tc.top, tc.most)
				if m != len(radices) {
					t.Fatalf("run of %d, want %d", m, len(radices))
				}
				if ok && !slices.Equal(got, digits(D)) {
					t.Fatalf("x = %d gives %v, want D = %d: %v", x, got, D, digits(D))
				}
				return ok
			}
			for D := range p {
				a, _ := start(D)
				next, _ := start(D + 1)
				size := next - a // wraps to 2^64 - a when next = 2^64
				if D > 0 && !check(a-1, D-1) {
					t.Fatalf("the last value of result %d is rejected", D-1)
				}
				accepted := size
				if !check(a, D) {
					accepted--
				}
				if size > 1 && !check(a+1, D) {
					t.Fatalf("x = a_%d + 1 rejected", D)
				}
				if accepted != want {
					t.Fatalf("result %d has %d accepted values, want floor(2^64/p) = %d", D, accepted, want)
				}
			}
		})
	}
}

// chiSquareWithin reports whether Pearson's statistic is within 5 standard
// errors of its mean df (its variance is 2 df): a uniform sampler fails
// with probability below 1e-5, a sampler too regular to be random too.
func chiSquareWithin(t *testing.T, stat float64, df int) {
	t.Helper()
	se := math.Sqrt(2 * float64(df))
	if math.Abs(stat-float64(df)) > 5*se {
		t.Errorf("chi-square = %.1f, want %d ± 5·%.1f", stat, df, se)
	}
}

// TestDrawToChiSquare: DrawTo gives every ordered sequence of K distinct
// sets equally often, for every method, by Pearson's chi-square with a
// tolerance of 5 standard errors. By default each case checks every other
// method (in name order, the even ones on even cases), so that every method
// is checked by two cases; SPIRAL_LONG=1 checks them all.
func TestDrawToChiSquare(t *testing.T) {
	for caseIndex, tc := range sequenceCases(t) {
		ms := methods(tc.f)
		for i, name := range slices.Sorted(maps.Keys(ms)) {
			if !long() && i%2 != caseIndex%2 {
				continue
			}
			m := ms[name]
			t.Run(fmt.Sprintf("%v/K=%d/%s", tc.f, tc.K, name), func(t *testing.T) {
				s := newSampler(tc.f, tc.K, m)
				src := rand.NewPCG(5, 7)
				stat, df, _ := sequenceChiSquareOf(t, s, func(dst []int) { s.DrawTo(dst, src) }, nil)
				chiSquareWithin(t, stat, df)
			})
		}
	}
}

// TestDrawToPaper: at Subsets(8, 4), K = 4, one draw takes one value of the
// source, and the ordered pairs of the first two and of the last two sets
// (70·69 cells each) are uniform by chi-square.
func TestDrawToPaper(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, err := NewSampler(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	pcg := rand.NewPCG(3, 4)
	src := &counting{src: pcg}
	draws := budget(100) * 70 * 69
	first, last := make([]int, 70*70), make([]int, 70*70)
	dst := make([]int, 16)
	for range draws {
		s.DrawTo(dst, src)
		r := make([]int, 4)
		for i := range r {
			rk, err := f.Rank64(dst[i*4 : i*4+4])
			if err != nil {
				t.Fatal(err)
			}
			r[i] = int(rk)
		}
		first[r[0]*70+r[1]]++
		last[r[2]*70+r[3]]++
	}
	if src.n != draws {
		t.Errorf("%d draws took %d values", draws, src.n)
	}
	for _, counts := range [][]int{first, last} {
		var obs []int
		var exp []float64
		for c, x := range counts {
			if c/70 == c%70 {
				if x != 0 {
					t.Fatalf("a set repeated %d times", x)
				}
				continue
			}
			obs, exp = append(obs, x), append(exp, float64(draws)/(70*69))
		}
		stat, df := chiSquare(obs, exp)
		chiSquareWithin(t, stat, df)
	}
}

// counting counts the values taken from src.
type counting struct {
	src rand.Source
	n   int
}

func (c *counting) Uint64() uint64 { c.n++; return c.src.Uint64() }

// TestDrawToValid: DrawTo's sets are valid and distinct for random families
// and methods, and the same source state gives the same sets.
func TestDrawToValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := drawFamily(t, 80, 70)
		T := bigT(f)
		maxK := 40
		if T.IsInt64() && T.Int64() < int64(maxK) {
			maxK = int(T.Int64())
		}
		K := rapid.IntRange(0, maxK).Draw(t, "K")
		ms := methods(f)
		if T.Cmp(big.NewInt(1<<12)) > 0 {
			delete(ms, "dense") // listing the family would take too much memory
		}
		names := make([]string, 0, len(ms))
		for name := range ms {
			names = append(names, name)
		}
		slices.Sort(names)
		name := rapid.SampledFrom(names).Draw(t, "method")
		s := newSampler(f, K, ms[name])
		seed := rapid.Uint64().Draw(t, "seed")
		a, b := make([]int, s.Len()), make([]int, s.Len())
		s.DrawTo(a, rand.NewPCG(seed, 1))
		s.DrawTo(b, rand.NewPCG(seed, 1))
		if !slices.Equal(a, b) {
			t.Fatalf("same source, different sets: %v, %v", a, b)
		}
		if err := f.CheckSets(a); err != nil {
			t.Fatal(err)
		}
		if !f.ordered {
			for i := range K {
				if !slices.IsSorted(a[i*f.n : (i+1)*f.n]) {
					t.Fatalf("set %d not sorted: %v", i, a)
				}
			}
		}
	})
}

// recording records the values taken from src.
type recording struct {
	src rand.Source
	x   []uint64
}

func (r *recording) Uint64() uint64 {
	x := r.src.Uint64()
	r.x = append(r.x, x)
	return x
}

// drawListed draws a family small enough to list, with T sets: sets of 4
// of up to maxN traces (the paper's shape) or any family of drawFamily(t,
// 12, 12), and K of at most maxK; it returns them with a Sampler of the
// listed method.
func drawListed(t *rapid.T, maxN, maxK int) (f Family, T *big.Int, K int, s *Sampler) {
	if rapid.Bool().Draw(t, "paper-like") {
		f, _ = NewFamily(rapid.IntRange(4, maxN).Draw(t, "N"), 4, rapid.Bool().Draw(t, "ordered"))
	} else {
		f = drawFamily(t, 12, 12)
	}
	T = bigT(f)
	if T.Cmp(big.NewInt(1<<12)) > 0 {
		t.Skip("too large to list")
	}
	K = rapid.IntRange(0, int(min(T.Int64(), int64(maxK)))).Draw(t, "K")
	return f, T, K, newSampler(f, K, samplerMethod{dense: true})
}

// TestDrawToListedReference pins DrawTo of a listed family, bit for bit,
// to a plain partial Fisher-Yates shuffle of the set ranks 0..T-1 whose
// digits are computed with math/big from the values DrawTo took (wantRun,
// run after run, a rejected value followed by the next), each set then
// unranked, on a sampler that has drawn before: the four moves of sets of
// n = 4, the restore of the written positions only and the runs drawn by
// one function give the sets of the plain definition.
func TestDrawToListedReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f, T, K, s := drawListed(t, 9, 40)
		seed := rapid.Uint64().Draw(t, "seed")
		got := make([]int, s.Len())
		s.DrawTo(got, rand.NewPCG(seed, 2)) // the sampler's state after a draw
		rec := &recording{src: rand.NewPCG(seed, 1)}
		s.DrawTo(got, rec)

		pick := make([]int, T.Int64())
		for i := range pick {
			pick[i] = i
		}
		values := rec.x
		for i := 0; i < K; {
			radices, p := runProduct(len(pick)-i, K-i)
			var digits []int
			for accept := false; !accept; values = values[1:] {
				if len(values) == 0 {
					t.Fatalf("DrawTo took fewer values than the reference needs")
				}
				digits, accept = wantRun(values[0], radices, p)
			}
			for _, d := range digits {
				pick[i], pick[i+d] = pick[i+d], pick[i]
				i++
			}
		}
		if len(values) != 0 {
			t.Fatalf("DrawTo took %d values more than the reference", len(values))
		}
		want := make([]int, s.Len())
		for i, r := range pick[:K] {
			if err := f.UnrankTo(want[i*f.n:(i+1)*f.n], uint64(r)); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v, K = %d: DrawTo = %v, reference %v", f, K, got, want)
		}
	})
}

// TestDrawToPCG pins DrawTo from a *rand.PCG, whose digits a listed
// family with one run draws without drawRuns, to DrawTo from the same
// generator behind another type, which goes through drawRuns: the same
// sets, draw after draw, and the generator left in the same state. K up
// to 12 of up to 70 sets makes runs whose products come near 2^64, so
// values are rejected; larger K make several runs.
func TestDrawToPCG(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f, _, K, s := drawListed(t, 8, 24)
		seed := rapid.Uint64().Draw(t, "seed")
		pcg, other := rand.NewPCG(seed, 1), &recording{src: rand.NewPCG(seed, 1)}
		got, want := make([]int, s.Len()), make([]int, s.Len())
		for draw := range 4 {
			s.DrawTo(got, pcg)
			s.DrawTo(want, other)
			if !slices.Equal(got, want) {
				t.Fatalf("%v, K = %d, draw %d: from *rand.PCG %v, through drawRuns %v", f, K, draw, got, want)
			}
		}
		if x, y := pcg.Uint64(), other.Uint64(); x != y {
			t.Fatalf("%v, K = %d: the generators differ after the draws", f, K)
		}
	})
}

// TestDrawToGolden pins what DrawTo (of both samplers) and Shuffle draw
// from a given source, so that plans seeded the same way (the planner's,
// the bridge's conformance vectors) do not change unnoticed.
func TestDrawToGolden(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, _ := NewSampler(f, 4)
	dst := make([]int, 16)
	s.DrawTo(dst, rand.NewPCG(1, 2))
	if want := []int{1, 4, 6, 7, 2, 3, 6, 7, 0, 1, 3, 5, 3, 4, 6, 7}; !slices.Equal(dst, want) {
		t.Errorf("DrawTo = %v, want %v", dst, want)
	}
	bs, _ := NewBalancedSampler(f, 4)
	bs.DrawTo(dst, rand.NewPCG(1, 2))
	if want := []int{0, 2, 5, 6, 1, 3, 4, 7, 2, 3, 5, 6, 0, 1, 4, 7}; !slices.Equal(dst, want) {
		t.Errorf("BalancedSampler.DrawTo = %v, want %v", dst, want)
	}
	x := []int{0, 1, 2, 3, 4, 5, 6, 7}
	Shuffle(x, rand.NewPCG(1, 2))
	if want := []int{6, 2, 1, 5, 0, 3, 7, 4}; !slices.Equal(x, want) {
		t.Errorf("Shuffle = %v, want %v", x, want)
	}
}

// TestDrawToAllocs: DrawTo allocates nothing, for both samplers.
func TestDrawToAllocs(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, _ := NewSampler(f, 4)
	bs, _ := NewBalancedSampler(f, 4)
	src := rand.NewPCG(1, 2)
	dst := make([]int, 16)
	if a := testing.AllocsPerRun(100, func() { s.DrawTo(dst, src) }); a != 0 {
		t.Errorf("Sampler.DrawTo: %v allocations", a)
	}
	if a := testing.AllocsPerRun(100, func() { bs.DrawTo(dst, src) }); a != 0 {
		t.Errorf("BalancedSampler.DrawTo: %v allocations", a)
	}
	x := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if a := testing.AllocsPerRun(100, func() { Shuffle(x, src) }); a != 0 {
		t.Errorf("Shuffle: %v allocations", a)
	}
}

// TestDrawToPanics: a dst of the wrong length or a nil source is a
// programmer error.
func TestDrawToPanics(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, _ := NewSampler(f, 4)
	bs, _ := NewBalancedSampler(f, 4)
	for name, call := range map[string]func(){
		"Sampler short":      func() { s.DrawTo(make([]int, 15), rand.NewPCG(1, 2)) },
		"Sampler nil":        func() { s.DrawTo(make([]int, 16), nil) },
		"BalancedSampler":    func() { bs.DrawTo(make([]int, 17), rand.NewPCG(1, 2)) },
		"BalancedSampler ni": func() { bs.DrawTo(make([]int, 16), nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			call()
		}()
	}
}

// TestBalancedDrawTo: BalancedSampler.DrawTo draws each of the 595 balanced
// designs of Subsets(8, 4), K = 4, equally often (chi-square, 5 standard
// errors).
func TestBalancedDrawTo(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, _ := NewBalancedSampler(f, 4)
	src := rand.NewPCG(9, 9)
	counts := map[[4]uint64]int{}
	draws := budget(200) * 595
	dst := make([]int, 16)
	for range draws {
		s.DrawTo(dst, src)
		var key [4]uint64
		seen := make([]int, 8)
		for i := range 4 {
			key[i], _ = f.Rank64(dst[i*4 : i*4+4])
			for _, v := range dst[i*4 : i*4+4] {
				seen[v]++
			}
		}
		for v, c := range seen {
			if c != 2 {
				t.Fatalf("trace %d in %d sets: %v", v, c, dst)
			}
		}
		slices.Sort(key[:])
		counts[key]++
	}
	if len(counts) != 595 {
		t.Fatalf("%d designs drawn, want 595", len(counts))
	}
	obs := make([]int, 0, len(counts))
	exp := make([]float64, 0, len(counts))
	for _, c := range counts {
		obs, exp = append(obs, c), append(exp, float64(draws)/595)
	}
	stat, df := chiSquare(obs, exp)
	chiSquareWithin(t, stat, df)
}

// TestShuffle: Shuffle gives each of the 5! orders of 5 elements, and of
// the first 3 positions of 25 elements, equally often (chi-square, 5
// standard errors), and permutes any slice.
func TestShuffle(t *testing.T) {
	src := rand.NewPCG(2, 3)
	for _, tc := range []struct{ n, keep, cells int }{{5, 5, 120}, {25, 3, 25 * 24 * 23}} {
		counts := map[int]int{} // the first keep positions, in base n
		draws := budget(100) * tc.cells
		x := make([]int, tc.n)
		for range draws {
			for i := range x {
				x[i] = i
			}
			Shuffle(x, src)
			key := 0
			for _, v := range x[:tc.keep] {
				key = key*tc.n + v
			}
			counts[key]++
		}
		if len(counts) != tc.cells {
			t.Fatalf("n = %d: %d cells, want %d", tc.n, len(counts), tc.cells)
		}
		var obs []int
		var exp []float64
		for _, c := range counts {
			obs, exp = append(obs, c), append(exp, float64(draws)/float64(tc.cells))
		}
		stat, df := chiSquare(obs, exp)
		chiSquareWithin(t, stat, df)
	}
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.SliceOfN(rapid.Int(), 0, 200).Draw(t, "x")
		y := slices.Clone(x)
		Shuffle(y, rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			t.Fatal("not a permutation")
		}
	})
}
