package combin

import (
	"slices"
	"testing"

	gc "gonum.org/v1/gonum/stat/combin"
	"pgregory.net/rapid"
)

func collect(f Family) [][]int {
	var all [][]int
	for g := range f.All() {
		all = append(all, slices.Clone(g))
	}
	return all
}

// TestAllSubsetsMatchesGonum: gonum's Combinations lists subsets in
// lexicographic order, as All does.
func TestAllSubsetsMatchesGonum(t *testing.T) {
	for N := 1; N <= 10; N++ {
		for n := 1; n <= N; n++ {
			f := mustFamily(t, false, N, n)
			if got, want := collect(f), gc.Combinations(N, n); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%v.All() = %v, gonum Combinations = %v", f, got, want)
			}
		}
	}
}

// TestAllTuplesMatchesGonumSorted: All lists the same tuples as gonum's
// Permutations, but in lexicographic order, which gonum's is not.
func TestAllTuplesMatchesGonumSorted(t *testing.T) {
	for N := 1; N <= 7; N++ {
		for n := 1; n <= N; n++ {
			f := mustFamily(t, true, N, n)
			want := gc.Permutations(N, n)
			slices.SortFunc(want, slices.Compare)
			if got := collect(f); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%v.All() = %v, sorted gonum Permutations = %v", f, got, want)
			}
		}
	}
}

// TestAllProperties: All yields exactly Count valid sets, strictly
// increasing, for random families.
func TestAllProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := drawFamily(t, 12, 6)
		if T, _ := f.Count64(); T > 20000 {
			t.Skip("family too large to enumerate")
		}
		var prev []int
		count := uint64(0)
		for g := range f.All() {
			if err := f.checkSet(g); err != nil {
				t.Fatalf("%v.All() yielded %v: %v", f, g, err)
			}
			if prev != nil && slices.Compare(prev, g) >= 0 {
				t.Fatalf("%v.All(): %v then %v, not increasing", f, prev, g)
			}
			prev = append(prev[:0], g...)
			count++
		}
		if T, _ := f.Count64(); count != T {
			t.Fatalf("%v.All() yielded %d sets, Count = %d", f, count, T)
		}
	})
}

func TestAllStopsEarly(t *testing.T) {
	for _, f := range []Family{mustFamily(t, false, 9, 3), mustFamily(t, true, 9, 3)} {
		seen := 0
		for range f.All() {
			seen++
			if seen == 5 {
				break
			}
		}
		if seen != 5 {
			t.Errorf("%v: break after 5 sets saw %d", f, seen)
		}
	}
}

// TestAllAllocs: a full enumeration allocates exactly what a one-step one
// does, so the steps allocate nothing.
func TestAllAllocs(t *testing.T) {
	for _, f := range []Family{mustFamily(t, false, 14, 7), mustFamily(t, true, 8, 5)} {
		full := testing.AllocsPerRun(5, func() {
			for range f.All() {
			}
		})
		one := testing.AllocsPerRun(5, func() {
			for range f.All() {
				break
			}
		})
		if full != one {
			t.Errorf("%v.All(): %v allocations for all %v sets, %v for one", f, full, bigT(f), one)
		}
	}
}
