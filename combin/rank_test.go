package combin

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	gc "gonum.org/v1/gonum/stat/combin"
	"pgregory.net/rapid"
)

// TestRankMatchesAll: the i-th set of All has rank i, by every rank and
// unrank function.
func TestRankMatchesAll(t *testing.T) {
	for N := 1; N <= 8; N++ {
		for n := 1; n <= N; n++ {
			for _, ordered := range []bool{false, true} {
				f := mustFamily(t, ordered, N, n)
				dst := make([]int, n)
				i := uint64(0)
				for g := range f.All() {
					r, err := f.Rank(g)
					if err != nil || !r.IsUint64() || r.Uint64() != i {
						t.Fatalf("%v.Rank(%v) = %v, %v, want %d", f, g, r, err, i)
					}
					if r64, err := f.Rank64(g); err != nil || r64 != i {
						t.Fatalf("%v.Rank64(%v) = %d, %v, want %d", f, g, r64, err, i)
					}
					if u, err := f.Unrank(new(big.Int).SetUint64(i)); err != nil || !slices.Equal(u, g) {
						t.Fatalf("%v.Unrank(%d) = %v, %v, want %v", f, i, u, err, g)
					}
					if u, err := f.Unrank64(i); err != nil || !slices.Equal(u, g) {
						t.Fatalf("%v.Unrank64(%d) = %v, %v, want %v", f, i, u, err, g)
					}
					if err := f.UnrankTo(dst, i); err != nil || !slices.Equal(dst, g) {
						t.Fatalf("%v.UnrankTo(%d) = %v, %v, want %v", f, i, dst, err, g)
					}
					i++
				}
			}
		}
	}
}

// TestRankMatchesGonumSubsets: for subsets gonum's CombinationIndex and
// IndexToCombination use the same (lexicographic) order.
func TestRankMatchesGonumSubsets(t *testing.T) {
	for N := 1; N <= 14; N++ {
		for n := 1; n <= N; n++ {
			f := mustFamily(t, false, N, n)
			T, _ := f.Count64()
			for i := range T {
				want := gc.IndexToCombination(nil, int(i), N, n)
				got, err := f.Unrank64(i)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%v.Unrank64(%d) = %v, %v; gonum IndexToCombination = %v", f, i, got, err, want)
				}
				if r, err := f.Rank64(want); err != nil || r != uint64(gc.CombinationIndex(want, N, n)) {
					t.Fatalf("%v.Rank64(%v) = %d, %v; gonum CombinationIndex = %d", f, want, r, err, gc.CombinationIndex(want, N, n))
				}
			}
		}
	}
}

// TestTupleOrderDiffersFromGonum pins the example of the package doc: gonum
// orders (0, 2, 1) before (0, 1, 3); lexicographic order puts it after.
func TestTupleOrderDiffersFromGonum(t *testing.T) {
	f := mustFamily(t, true, 4, 3)
	a, b := []int{0, 2, 1}, []int{0, 1, 3}
	ra, _ := f.Rank64(a)
	rb, _ := f.Rank64(b)
	if !(ra > rb) {
		t.Errorf("Rank64(%v) = %d, Rank64(%v) = %d: want the first after the second", a, ra, b, rb)
	}
	if ga, gb := gc.PermutationIndex(a, 4, 3), gc.PermutationIndex(b, 4, 3); !(ga < gb) {
		t.Errorf("gonum PermutationIndex(%v) = %d, (%v) = %d: the package doc says gonum orders them the other way", a, ga, b, gb)
	}
}

// rankFormula is an independent rank: for subsets T - 1 - sum_i C(N-1-c_i,
// n-i) with math/big's Binomial; for tuples sum_i less_i (N-1-i)_{n-1-i}
// where less_i counts the unused indices below g[i].
func rankFormula(f Family, g []int) *big.Int {
	N, n := int64(f.Traces()), int64(f.SetSize())
	r := new(big.Int)
	if !f.Ordered() {
		for i, c := range g {
			r.Add(r, new(big.Int).Binomial(N-1-int64(c), n-int64(i)))
		}
		r.Sub(bigT(f), r)
		return r.Sub(r, big.NewInt(1))
	}
	for i, v := range g {
		less := int64(v)
		for _, u := range g[:i] {
			if u < v {
				less--
			}
		}
		// (N-1-i)_{n-1-i} = (N-1-i)!/(N-n)!
		p := new(big.Int).MulRange(N-n+1, N-1-int64(i))
		r.Add(r, p.Mul(p, big.NewInt(less)))
	}
	return r
}

// TestRankProperties: on random families, many beyond 2^64, Rank agrees
// with rankFormula, Unrank inverts Rank and Rank inverts Unrank, and the
// uint64 paths agree with the big ones.
func TestRankProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := drawFamily(t, rapid.SampledFrom([]int{10, 70, 3000}).Draw(t, "maxN"), 40)
		N, n := f.Traces(), f.SetSize()
		g := rapid.SliceOfNDistinct(rapid.IntRange(0, N-1), n, n, rapid.ID[int]).Draw(t, "g")
		if !f.Ordered() {
			slices.Sort(g)
		}
		r, err := f.Rank(g)
		if err != nil {
			t.Fatalf("%v.Rank(%v): %v", f, g, err)
		}
		if want := rankFormula(f, g); r.Cmp(want) != 0 {
			t.Fatalf("%v.Rank(%v) = %v, formula gives %v", f, g, r, want)
		}
		if u, err := f.Unrank(r); err != nil || !slices.Equal(u, g) {
			t.Fatalf("%v.Unrank(Rank(%v) = %v) = %v, %v", f, g, r, u, err)
		}
		r64, err := f.Rank64(g)
		if r.IsUint64() != (err == nil) || (err == nil && r64 != r.Uint64()) {
			t.Fatalf("%v.Rank64(%v) = %d, %v; Rank = %v", f, g, r64, err, r)
		}
		x := drawBelow(t, bigT(f), "r")
		u, err := f.Unrank(x)
		if err != nil {
			t.Fatalf("%v.Unrank(%v): %v", f, x, err)
		}
		if err := f.checkSet(u); err != nil {
			t.Fatalf("%v.Unrank(%v) = %v: %v", f, x, u, err)
		}
		if back, _ := f.Rank(u); back.Cmp(x) != 0 {
			t.Fatalf("%v.Rank(Unrank(%v) = %v) = %v", f, x, u, back)
		}
		if x.IsUint64() {
			dst := make([]int, n)
			if err := f.UnrankTo(dst, x.Uint64()); err != nil || !slices.Equal(dst, u) {
				t.Fatalf("%v.UnrankTo(%v) = %v, %v; Unrank = %v", f, x, dst, err, u)
			}
		}
	})
}

// TestRankEnds: the first and last sets of families beyond 2^64.
func TestRankEnds(t *testing.T) {
	for _, tc := range []struct {
		ordered bool
		N, n    int
	}{{false, 1024, 16}, {true, 30, 20}, {false, 200, 100}, {true, MaxSize, 4}} {
		f := mustFamily(t, tc.ordered, tc.N, tc.n)
		first, last := make([]int, tc.n), make([]int, tc.n)
		for i := range tc.n {
			first[i] = i
			if tc.ordered {
				last[i] = tc.N - 1 - i
			} else {
				last[i] = tc.N - tc.n + i
			}
		}
		tMinus1 := new(big.Int).Sub(bigT(f), big.NewInt(1))
		for _, c := range []struct {
			g []int
			r *big.Int
		}{{first, new(big.Int)}, {last, tMinus1}} {
			if r, err := f.Rank(c.g); err != nil || r.Cmp(c.r) != 0 {
				t.Errorf("%v.Rank(%v) = %v, %v, want %v", f, c.g, r, err, c.r)
			}
			if g, err := f.Unrank(c.r); err != nil || !slices.Equal(g, c.g) {
				t.Errorf("%v.Unrank(%v) = %v, %v, want %v", f, c.r, g, err, c.g)
			}
		}
		if _, err := f.Rank64(last); err == nil || !strings.Contains(err.Error(), "does not fit a uint64") {
			t.Errorf("%v.Rank64(last) error = %v", f, err)
		}
	}
}

func TestRankErrors(t *testing.T) {
	s, tu := mustFamily(t, false, 8, 4), mustFamily(t, true, 8, 4)
	for _, tc := range []struct {
		f    Family
		g    []int
		want string
	}{
		{s, []int{1, 2, 3}, "combin: g: len = 3, want n = 4 for Subsets(8, 4)"},
		{s, nil, "combin: g: len = 0, want n = 4 for Subsets(8, 4)"},
		{s, []int{0, 1, 2, 8}, "combin: g[3] = 8: out of range [0, N1 = 8)"},
		{s, []int{-1, 1, 2, 3}, "combin: g[0] = -1: out of range"},
		{s, []int{1, 2, 2, 3}, "combin: g[2] = 2: repeats member 1"},
		{s, []int{1, 3, 2, 4}, "combin: g[2] = 2: < member 1 = 3; a subset must be sorted ascending"},
		{tu, []int{3, 1, 3, 0}, "combin: g[2] = 3: repeats member 0"},
		{tu, []int{3, 1, 9, 0}, "combin: g[2] = 9: out of range"},
	} {
		if _, err := tc.f.Rank(tc.g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Rank(%v) error = %v, want %q", tc.f, tc.g, err, tc.want)
		}
		if _, err := tc.f.Rank64(tc.g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Rank64(%v) error = %v, want %q", tc.f, tc.g, err, tc.want)
		}
	}
	big1024 := mustFamily(t, false, 1024, 16)
	huge := new(big.Int).Lsh(big.NewInt(1), 200)
	for _, tc := range []struct {
		f    Family
		r    *big.Int
		want string
	}{
		{s, nil, "combin: r: nil *big.Int"},
		{s, big.NewInt(-1), "combin: r: -1 out of range [0, T = 70)"},
		{s, big.NewInt(70), "combin: r: 70 out of range [0, T = 70)"},
		{tu, big.NewInt(1680), "combin: r: 1680 out of range [0, T = 1680)"},
		{s, huge, "out of range [0, T = 70)"},
		{big1024, bigT(big1024), "out of range [0, T = " + bigT(big1024).String()},
		{big1024, huge, "out of range"},
	} {
		if _, err := tc.f.Unrank(tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Unrank(%v) error = %v, want %q", tc.f, tc.r, err, tc.want)
		}
	}
	if _, err := s.Unrank64(70); err == nil || !strings.Contains(err.Error(), "combin: r: 70 out of range") {
		t.Errorf("Unrank64(70) error = %v", err)
	}
	if err := s.UnrankTo(make([]int, 4), 1<<40); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("UnrankTo(1<<40) error = %v", err)
	}
	// Every uint64 is a valid rank when T >= 2^64.
	if g, err := big1024.Unrank64(1<<64 - 1); err != nil || big1024.checkSet(g) != nil {
		t.Errorf("%v.Unrank64(2^64-1) = %v, %v", big1024, g, err)
	}
}

func TestUnrankToPanicsOnLength(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(dst) = 3, want n = 4") {
			t.Errorf("recovered %v", r)
		}
	}()
	_ = mustFamily(t, false, 8, 4).UnrankTo(make([]int, 3), 0)
}

func TestUnrankToAllocs(t *testing.T) {
	for _, f := range []Family{mustFamily(t, false, 8, 4), mustFamily(t, true, 8, 4), mustFamily(t, false, 60, 30), mustFamily(t, true, 20, 20)} {
		dst := make([]int, f.SetSize())
		T, _ := f.Count64()
		r := T / 3
		if a := testing.AllocsPerRun(100, func() { _ = f.UnrankTo(dst, r) }); a != 0 {
			t.Errorf("%v.UnrankTo: %v allocations", f, a)
		}
		g := slices.Clone(dst)
		if a := testing.AllocsPerRun(100, func() { _, _ = f.Rank64(g) }); a != 0 {
			t.Errorf("%v.Rank64: %v allocations", f, a)
		}
	}
}

// TestRank64StackArgument: a set held in a caller's array stays on the
// caller's stack (Rank64 does not let its argument escape).
func TestRank64StackArgument(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	tf := mustFamily(t, true, 8, 4)
	if a := testing.AllocsPerRun(100, func() {
		g := [4]int{1, 3, 5, 7}
		if r, err := f.Rank64(g[:]); err != nil || r == 0 {
			t.Fatal(r, err)
		}
		g = [4]int{7, 5, 3, 1}
		if r, err := tf.Rank64(g[:]); err != nil || r == 0 {
			t.Fatal(r, err)
		}
	}); a != 0 {
		t.Errorf("Rank64 on an array: %v allocations, want 0", a)
	}
}

// TestRankBigJumps: on subset families beyond 2^64 with long gaps between
// entries (where the walks compute binomials directly), Rank equals
// T - 1 - sum_i C(N1-1-c_i, n-i) computed with math/big, and Unrank
// inverts it.
func TestRankBigJumps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		N := rapid.SampledFrom([]int{1 << 12, 100_000, MaxSize}).Draw(t, "N1")
		n := rapid.IntRange(3, jumpK).Draw(t, "n")
		f, _ := Subsets(N, n)
		if _, fits := f.Count64(); fits {
			return
		}
		seen := map[int]bool{}
		g := make([]int, 0, n)
		for len(g) < n {
			v := rapid.IntRange(0, N-1).Draw(t, "v")
			if !seen[v] {
				seen[v] = true
				g = append(g, v)
			}
		}
		slices.Sort(g)
		want := new(big.Int).Sub(bigT(f), big.NewInt(1))
		for i, c := range g {
			want.Sub(want, new(big.Int).Binomial(int64(N-1-c), int64(n-i)))
		}
		got, err := f.Rank(g)
		if err != nil || got.Cmp(want) != 0 {
			t.Fatalf("%v.Rank(%v) = %v, %v; want %v", f, g, got, err, want)
		}
		back, err := f.Unrank(got)
		if err != nil || !slices.Equal(back, g) {
			t.Fatalf("%v.Unrank(%v) = %v, %v; want %v", f, got, back, err, g)
		}
	})
}
