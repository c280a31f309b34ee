package combin

import (
	"errors"
	"math/rand/v2"
	"slices"
	"spiral/internal/spiraltest"
	"testing"

	"pgregory.net/rapid"
)

// refCheckSets is CheckSets written the plain way: pairwise comparisons and
// maps, the same order of checks.
func refCheckSets(traces int, ordered bool, sizes, members []int) *wantSet {
	o := 0
	var sets [][]int
	for i, size := range sizes {
		if size < 1 {
			return &wantSet{Empty, i, -1, size, -1, traces}
		}
		if o+size > len(members) {
			return &wantSet{Length, i, -1, size, o, traces}
		}
		set := members[o : o+size]
		for p, v := range set {
			if v < 0 || v >= traces {
				return &wantSet{OutOfRange, i, p, v, -1, traces}
			}
		}
		for p := range set {
			for q := range p {
				if set[q] == set[p] {
					return &wantSet{Repeated, i, p, set[p], q, traces}
				}
			}
		}
		for j, other := range sets {
			a, b := slices.Clone(other), slices.Clone(set)
			if !ordered {
				slices.Sort(a)
				slices.Sort(b)
			}
			if slices.Equal(a, b) {
				return &wantSet{Duplicate, i, -1, 0, j, traces}
			}
		}
		sets = append(sets, set)
		o += size
	}
	if o != len(members) {
		return &wantSet{Length, -1, o, members[o], -1, traces}
	}
	return nil
}

// A wantSet is the error CheckSets should return: an *InputError at set
// Set, member Output with value Value, about sizes for Empty and a set
// running past the end (Length with Set >= 0), about members otherwise,
// whose reason is the *SetError {Reason, Other, Traces}.
type wantSet struct {
	Reason                       SetErrorReason
	Set, Output, Value, Other, N int
}

// sameSetError reports whether got is the error w describes (both nil
// for none).
func sameSetError(got error, w *wantSet) bool {
	if got == nil || w == nil {
		return got == nil && w == nil
	}
	field := FieldMembers
	if w.Reason == Empty || (w.Reason == Length && w.Set >= 0) {
		field = FieldSizes
	}
	e, ok := errors.AsType[*InputError](got)
	se, sok := errors.AsType[*SetError](got)
	return ok && sok && e.Field == field && e.Problem == -1 && e.Set == w.Set && e.Output == w.Output && e.Value == float64(w.Value) &&
		*se == SetError{w.Reason, w.Other, w.N}
}

func TestCheckSetsCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		traces  int
		ordered bool
		sizes   []int
		members []int
		want    *wantSet
	}{
		{"ok", 8, false, []int{2, 3}, []int{0, 1, 2, 3, 4}, nil},
		{"ok unsorted", 8, false, []int{2, 2}, []int{1, 0, 0, 2}, nil},
		{"empty", 8, false, []int{2, 0}, []int{0, 1}, &wantSet{Empty, 1, -1, 0, -1, 8}},
		{"negative size", 8, false, []int{-1}, nil, &wantSet{Empty, 0, -1, -1, -1, 8}},
		{"past end", 8, false, []int{2, 3}, []int{0, 1, 2}, &wantSet{Length, 1, -1, 3, 2, 8}},
		{"left over", 8, false, []int{2}, []int{0, 1, 5}, &wantSet{Length, -1, 2, 5, -1, 8}},
		{"out of range", 8, false, []int{3}, []int{0, 8, 1}, &wantSet{OutOfRange, 0, 1, 8, -1, 8}},
		{"negative index", 8, true, []int{1, 2}, []int{0, 1, -3}, &wantSet{OutOfRange, 1, 1, -3, -1, 8}},
		{"repeated", 8, false, []int{1, 4}, []int{5, 1, 2, 3, 2}, &wantSet{Repeated, 1, 3, 2, 1, 8}},
		{"duplicate subset", 8, false, []int{2, 2, 2}, []int{0, 1, 2, 3, 1, 0}, &wantSet{Duplicate, 2, -1, 0, 0, 8}},
		{"tuples differ", 8, true, []int{2, 2}, []int{0, 1, 1, 0}, nil},
		{"duplicate tuple", 8, true, []int{2, 1, 2}, []int{0, 1, 7, 0, 1}, &wantSet{Duplicate, 2, -1, 0, 0, 8}},
		{"ragged not duplicate", 8, false, []int{1, 2}, []int{0, 0, 1}, nil},
		{"no sets", 8, false, nil, nil, nil},
		{"no sets, members", 8, false, nil, []int{3, 4}, &wantSet{Length, -1, 0, 3, -1, 8}},
		{"no sets, empty sizes", 8, true, []int{}, []int{3}, &wantSet{Length, -1, 0, 3, -1, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSets(tc.traces, tc.ordered, tc.sizes, tc.members)
			want := tc.want
			if !sameSetError(err, want) {
				t.Fatalf("CheckSets = %#v, want %#v", err, tc.want)
			}
			if ref := refCheckSets(tc.traces, tc.ordered, tc.sizes, tc.members); (ref == nil) != (want == nil) || ref != nil && *ref != *want {
				t.Fatalf("reference = %#v, want %#v", ref, tc.want)
			}
			if err != nil && err.Error() == "" {
				t.Fatal("empty message")
			}
		})
	}
}

func TestCheckSetsArguments(t *testing.T) {
	for _, tc := range []struct {
		traces int
		m      int
	}{{0, 1}, {-1, 1}, {MaxSize + 1, 1}} {
		err := CheckSets(tc.traces, false, []int{1}, make([]int, tc.m))
		var se *SetError
		if err == nil || errors.As(err, &se) {
			t.Errorf("CheckSets(traces = %d) = %v, want an argument error", tc.traces, err)
		}
	}
	// More sets than members: a length error, with scratch for the members
	// only.
	sizes := make([]int, 1<<20)
	for i := range sizes {
		sizes[i] = 1
	}
	var err error
	if b := spiraltest.Allocated(func() { err = CheckSets(8, false, sizes, []int{0, 1, 2}) }); b > 1<<12 {
		t.Errorf("CheckSets with 2^20 sizes and 3 members allocated %d bytes", b)
	}
	if !sameSetError(err, &wantSet{Length, 3, -1, 1, 3, 8}) {
		t.Errorf("CheckSets with 2^20 sizes and 3 members: %v", err)
	}
	// A members slice beyond MaxSize is refused before it is read (long
	// run only: the slice takes 128 MiB to allocate and clear).
	if long() {
		huge := make([]int, MaxSize+1)
		if err := CheckSets(8, false, nil, huge); err == nil {
			t.Error("CheckSets with len(members) > MaxSize: no error")
		}
	}
}

// TestCheckSetsMatchesReference: on random small inputs, often with
// problems, CheckSets reports exactly what the pairwise reference reports.
func TestCheckSetsMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		traces := rapid.IntRange(1, 6).Draw(t, "traces")
		ordered := rapid.Bool().Draw(t, "ordered")
		sizes := rapid.SliceOfN(rapid.IntRange(-1, 4), 0, 8).Draw(t, "sizes")
		sum := 0
		for _, s := range sizes {
			sum += max(s, 0)
		}
		m := max(0, sum+rapid.IntRange(-2, 2).Draw(t, "extra"))
		members := rapid.SliceOfN(rapid.IntRange(-1, traces), m, m).Draw(t, "members")
		got := CheckSets(traces, ordered, sizes, members)
		if want := refCheckSets(traces, ordered, sizes, members); !sameSetError(got, want) {
			t.Fatalf("CheckSets = %v, reference = %+v", got, want)
		}
	})
}

func TestFamilyCheckSets(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	if err := f.CheckSets([]int{0, 1, 2, 3, 7, 6, 5, 4}); err != nil {
		t.Fatal(err)
	}
	err := f.CheckSets([]int{0, 1, 2, 3, 3, 2, 1, 0})
	if !sameSetError(err, &wantSet{Duplicate, 1, -1, 0, 0, 8}) {
		t.Fatalf("duplicate subsets: %v", err)
	}
	tf := mustFamily(t, true, 8, 4)
	if err := tf.CheckSets([]int{0, 1, 2, 3, 3, 2, 1, 0}); err != nil {
		t.Fatalf("distinct tuples: %v", err)
	}
	if err := f.CheckSets([]int{0, 1, 2, 3, 4}); !sameSetError(err, &wantSet{Length, -1, 4, 4, -1, 8}) {
		t.Fatalf("length 5 for n = 4: %v", err)
	}
	if err := (Family{}).CheckSets(nil); err == nil {
		t.Fatal("zero Family: no error")
	}
}

// TestCheckSetsAllocations: no allocation for the paper's four sets, and a
// bounded number (one scratch slice) for 65,536 distinct sets.
func TestCheckSetsAllocations(t *testing.T) {
	members := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3, 5, 7}
	if a := testing.AllocsPerRun(100, func() {
		if err := CheckSets(8, false, []int{4, 4, 4, 4}, members); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("CheckSets on 4 sets of 4: %v allocations, want 0", a)
	}
	f := mustFamily(t, false, 8, 4)
	if a := testing.AllocsPerRun(100, func() { _ = f.CheckSets(members) }); a != 0 {
		t.Errorf("Family.CheckSets on 4 sets of 4: %v allocations, want 0", a)
	}
	const K, n = 1 << 14, 16
	big := mustFamily(t, false, 1<<12, n)
	s, err := NewSampler(big, K)
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]int, s.Len())
	if err := s.SampleTo(flat, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(2, func() {
		if err := big.CheckSets(flat); err != nil {
			t.Fatal(err)
		}
	}); a > 1 {
		t.Errorf("CheckSets on %d sets: %v allocations, want at most 1", K, a)
	}
	copy(flat[len(flat)-n:], flat[:n])
	if err := big.CheckSets(flat); !sameSetError(err, &wantSet{Duplicate, K - 1, -1, 0, 0, 1 << 12}) {
		t.Errorf("last set = first set: %v", err)
	}
}
