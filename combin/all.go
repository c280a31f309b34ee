package combin

import "iter"

// All returns an iterator over every set of f in lexicographic order,
// ranks 0, 1, ..., T-1: subsets as ascending sequences, tuples as sequences.
//
// The yielded slice is a buffer that All reuses: it is overwritten by the next
// step, and the caller must not modify it. Copy it (slices.Clone) to keep it.
// Each iteration allocates its buffers once (n ints, and for tuples N bools)
// and nothing per step. A step takes O(n) time for subsets and O(n²) for
// tuples at worst, and a few operations on average. The zero Family yields
// nothing.
func (f Family) All() iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		if f.n == 0 {
			return
		}
		e := f.newEnumerator()
		for ok := true; ok; ok = e.next() {
			if !yield(e.g) {
				return
			}
		}
	}
}

// enumerator walks the sets of a family in lexicographic order.
type enumerator struct {
	f    Family
	g    []int  // the current set, initially the first
	used []bool // for tuples: used[v] reports whether v is in g
}

func (f Family) newEnumerator() *enumerator {
	e := &enumerator{f: f, g: make([]int, f.n)}
	for i := range e.g {
		e.g[i] = i
	}
	if f.ordered {
		e.used = make([]bool, f.size)
		for i := range f.n {
			e.used[i] = true
		}
	}
	return e
}

// next moves g to the next set and reports whether there was one.
func (e *enumerator) next() bool {
	if e.f.ordered {
		return e.nextTuple()
	}
	return e.nextSubset()
}

func (e *enumerator) nextSubset() bool {
	N, n, g := e.f.size, e.f.n, e.g
	// The rightmost entry that can still grow: entry j is at its maximum
	// when g[j] = N-n+j.
	j := n - 1
	for j >= 0 && g[j] == N-n+j {
		j--
	}
	if j < 0 {
		return false
	}
	g[j]++
	for l := j + 1; l < n; l++ {
		g[l] = g[l-1] + 1
	}
	return true
}

func (e *enumerator) nextTuple() bool {
	N, n, g, used := e.f.size, e.f.n, e.g, e.used
	// Free entries from the right until one can move up to a larger unused
	// index; then fill the rest with the smallest unused indices in
	// ascending order. Each scan skips at most n used indices.
	i := n - 1
	for ; i >= 0; i-- {
		used[g[i]] = false
		v := g[i] + 1
		for v < N && used[v] {
			v++
		}
		if v < N {
			g[i] = v
			used[v] = true
			break
		}
	}
	if i < 0 {
		return false
	}
	v := 0
	for l := i + 1; l < n; l++ {
		for used[v] {
			v++
		}
		g[l] = v
		used[v] = true
		v++
	}
	return true
}
