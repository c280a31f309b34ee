package combin

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"spiral/internal/inputerr"
)

// Sample draws K distinct sets of f uniformly at random: every K-subset of
// the family is equally likely, and the K sets come in uniformly random
// order (so every ordered sequence of K distinct sets is equally likely).
// Subsets are sorted ascending; tuples are in the order their indices were
// drawn. K = 0 gives no sets.
//
// Sample does not enumerate the family unless the family is small (see
// Sampler for the method and its cost). The K sets share one backing array
// of K*n ints. The same rnd state gives the same sets on every machine; the
// result equals that of a new Sampler's SampleTo with the same rnd.
//
// Sample returns an error if rnd is nil, K < 0, K > T, or K*n > MaxSize.
func (f Family) Sample(rnd *rand.Rand, K int) ([][]int, error) {
	return sampleOnce(rnd, K, f.n, func() (sampler, error) { return NewSampler(f, K) })
}

// sampler is what Family.Sample and Family.SampleBalanced need of their
// samplers.
type sampler interface {
	Len() int
	SampleTo(dst []int, rnd *rand.Rand) error
}

// sampleOnce draws K sets of n from a new sampler into one backing array
// and returns them split (see splitSets), or the first error of rnd's
// check, the sampler's construction and its draw.
func sampleOnce(rnd *rand.Rand, K, n int, newSampler func() (sampler, error)) ([][]int, error) {
	if rnd == nil {
		return nil, errNilRand
	}
	s, err := newSampler()
	if err != nil {
		return nil, err
	}
	flat := make([]int, s.Len())
	if err := s.SampleTo(flat, rnd); err != nil {
		return nil, err
	}
	return splitSets(flat, K, n), nil
}

// splitSets returns the K sets of n ints that flat holds, as capped
// subslices of it.
func splitSets(flat []int, K, n int) [][]int {
	sets := make([][]int, K)
	for i := range sets {
		sets[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	return sets
}

var errNilRand = inputerr.New("combin", "", InputError{Field: FieldRand, Problem: -1, Set: -1, Output: -1, Err: errors.New("nil random generator")})

const (
	// tableInts bounds the size, in ints, of a family that a Sampler lists
	// in full even when K is small.
	tableInts = 1 << 13
	// smallSet is the largest n drawn by the O(n²) method that needs no
	// O(N) scratch.
	smallSet = 64
	// linearDedup is the largest K whose duplicate sets are found by
	// comparing with every earlier set rather than by a hash set.
	linearDedup = 16
)

// A Sampler draws K distinct sets of a family uniformly at random, again
// and again, into caller-owned memory and without allocating. Build one with
// NewSampler for each (Family, K) and call DrawTo (or SampleTo) every step.
//
// A Sampler holds scratch memory: it is not safe for concurrent use. Use one
// Sampler per goroutine.
//
// # Method
//
// When T < 2^64 and the family is small (T*n <= 8192 ints) or dense
// (T <= 2K), the Sampler lists every set once at construction, and each
// draw is a partial Fisher-Yates shuffle of the set indices: K random
// digits and K*n copied ints. Its memory is O(T*n), which is O(K*n) in the
// dense case.
//
// Otherwise a draw takes sets independently and uniformly from the
// family and rejects those equal to a set already drawn. Each accepted
// set is uniform over the sets not yet drawn, so the K sets are a
// uniformly random sequence of distinct sets. Since T > 2K here, fewer than
// 2 sets are drawn per accepted set on average. One set takes n random
// draws: the j-th index drawn is uniform over the N1-j traces not yet in the
// set (the j-th step of a partial Fisher-Yates shuffle of {0..N1-1}), found
// in O(n) steps among the sorted earlier indices when n <= 64, and by a
// swap-and-restore shuffle of an O(N1) scratch array when n > 64. Duplicate
// sets are found by comparison with the earlier sets when K <= 16 and by
// an O(K) hash set otherwise. Memory is O(n + K), plus O(N1) when n > 64.
//
// Every random index is a digit d_i uniform in [0, r_i) for a radix r_i
// (T-i for the listed sets, N1-j for a drawn set). Consecutive radices are
// drawn together from one 64-bit value of the source as long as their
// product p is below 2^64: the value x gives the digits of floor(x p/2^64)
// in mixed radix, and is rejected, with probability below p/2^64, when
// x p mod 2^64 < 2^64 mod p, which makes every digit sequence exactly
// equally likely (Lemire's multiply-and-reject, batched). A given source
// state therefore gives the same sets on every machine.
type Sampler struct {
	f    Family
	k    int
	size int // K*n, the length of one draw

	// Dense method.
	table []int // every set of f, flat, in lexicographic order
	pick  []int // a permutation of [0, T): the identity between calls

	// Rejection method.
	sorted []int // the current set's indices, ascending (n <= smallSet)
	fy     []int // the identity permutation of [0, N) between draws (n > smallSet)
	slots  []int // open-addressing hash set of accepted sets, as index+1 (K > linearDedup)

	// Both methods.
	runs   []run // the runs of the digits of one draw: K of T (dense) or n of N1 (rejection)
	digits []int // the digits of one draw (dense) or one set (rejection; then, n > smallSet, its swap partners)
}

// samplerMethod selects how a Sampler works; tests use it to force a method.
type samplerMethod struct {
	dense, fisherYates, hashed bool
}

// NewSampler returns a Sampler that draws K distinct sets of f per call.
// It returns an error if K < 0, K > T, or K*n > MaxSize.
func NewSampler(f Family, K int) (*Sampler, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	if err := f.checkDraw(K); err != nil {
		return nil, err
	}
	m := samplerMethod{
		dense:       f.fits && (f.t64 <= 2*uint64(K) || f.t64 <= uint64(tableInts/f.n)),
		fisherYates: f.n > smallSet,
		hashed:      K > linearDedup,
	}
	return newSampler(f, K, m), nil
}

func newSampler(f Family, K int, m samplerMethod) *Sampler {
	s := &Sampler{f: f, k: K, size: K * f.n}
	if K == 0 {
		return s
	}
	n := f.n
	if m.dense {
		T := int(f.t64)
		s.table = make([]int, T*n)
		e := f.newEnumerator()
		for i := range T {
			copy(s.table[i*n:(i+1)*n], e.g)
			e.next()
		}
		s.pick = make([]int, T)
		for i := range s.pick {
			s.pick[i] = i
		}
		s.digits = make([]int, K)
		s.runs = runsOf(T, K)
		return s
	}
	if m.fisherYates {
		s.fy = make([]int, f.size)
		for i := range s.fy {
			s.fy[i] = i
		}
	} else {
		s.sorted = make([]int, 0, n)
	}
	s.digits = make([]int, n)
	s.runs = runsOf(f.size, n)
	if m.hashed {
		s.slots = newSetTable(K)
	}
	return s
}

// Family returns the family s samples from.
func (s *Sampler) Family() Family { return s.f }

// K returns the number of sets s draws per call.
func (s *Sampler) K() int { return s.k }

// Len returns K*n, the length of the dst slice that SampleTo fills.
func (s *Sampler) Len() int { return s.size }

// SampleTo draws K distinct sets uniformly at random (see Family.Sample)
// and writes them into dst, set i in dst[i*n : (i+1)*n]. It is
// [Sampler.DrawTo] with each random digit drawn by its own rnd.IntN call
// rather than in runs: the stream of the results that programs computed
// from a seed with SampleTo, which it keeps. It returns an error, and
// leaves dst unchanged, if rnd is nil. It does not allocate.
//
// SampleTo panics if len(dst) != K*n.
func (s *Sampler) SampleTo(dst []int, rnd *rand.Rand) error {
	if len(dst) != s.Len() {
		panic(fmt.Sprintf("combin: SampleTo: len(dst) = %d, want K*n = %d*%d", len(dst), s.k, s.f.n))
	}
	return s.SampleManyTo(dst, rnd)
}

// SampleManyTo makes len(dst)/(K*n) draws of SampleTo, one after another,
// draw d in dst[d*K*n : (d+1)*K*n]: the same sets, from the same random
// numbers, as that many calls of SampleTo with the same rnd. It returns an
// error, and leaves dst unchanged, if rnd is nil. It does not allocate.
//
// SampleManyTo panics if len(dst) is not a multiple of K*n (when K*n = 0,
// if dst is not empty).
func (s *Sampler) SampleManyTo(dst []int, rnd *rand.Rand) error {
	size := checkMany("SampleManyTo", len(dst), s.k, s.f.n)
	if rnd == nil {
		return errNilRand
	}
	if size == 0 {
		return nil
	}
	for q := 0; q < len(dst); q += size {
		s.DrawTo(dst[q:q+size], intNSource{rnd})
	}
	return nil
}

// checkMany returns K*n, and panics, naming the method, unless length is a
// whole number of draws of K sets of n (none when K*n = 0).
func checkMany(method string, length, K, n int) int {
	size := K * n
	if size == 0 && length != 0 || size != 0 && length%size != 0 {
		panic(fmt.Sprintf("combin: %s: len(dst) = %d, not a multiple of K*n = %d*%d", method, length, K, n))
	}
	return size
}

// DrawTo draws K distinct sets uniformly at random (see Family.Sample) and
// writes them into dst, set i in dst[i*n : (i+1)*n], taking its random
// numbers from src: for the family's listed sets (see Sampler), as few
// 64-bit values as exactness allows, one for Subsets(8, 4) and K = 4 (the
// K indices of a partial Fisher-Yates shuffle of the T sets are drawn
// together, exactly uniformly, from one value whenever T (T-1) ... (T-K+1)
// < 2^64; see the method below). The sets are a function of src's values
// alone, the same on every machine: a planner that gives each problem a
// source seeded from the problem's own key gets plans that do not depend
// on the other problems. It does not allocate.
//
// DrawTo panics if len(dst) != K*n or src is nil.
func (s *Sampler) DrawTo(dst []int, src rand.Source) {
	if src == nil || len(dst) != s.size {
		panic(drawError{s, len(dst)})
	}
	s.draw(dst, src)
}

// drawError is DrawTo's panic: a dst of the wrong length, or else a nil
// src. A value rather than a formatted message keeps DrawTo small enough
// to be inlined into a planner's loop.
type drawError struct {
	s      *Sampler
	length int
}

func (e drawError) Error() string {
	if e.length != e.s.Len() {
		return fmt.Sprintf("combin: DrawTo: len(dst) = %d, want K*n = %d*%d", e.length, e.s.k, e.s.f.n)
	}
	return "combin: DrawTo: src is nil"
}

// drawRejecting is DrawTo for a family too large to list: sets drawn
// independently, each kept when it differs from the sets before it.
func (s *Sampler) drawRejecting(dst []int, src rand.Source) {
	n, k := s.f.n, s.k
	clear(s.slots)
	for i := 0; i < k; {
		s.drawSet(dst[i*n:(i+1)*n], src)
		if isNewSet(dst, n, i, s.slots) {
			i++
		}
	}
}

// draw is DrawTo once dst and src are checked. A family too large to list
// goes to drawRejecting. For a listed family, the K digits d_i, uniform in
// [0, T-i), are drawn into s.digits, then a partial Fisher-Yates shuffle of
// the set indices swaps position i with j = i + d_i and writes set pick[i]
// to dst. Position i holds its final set once step i has swapped it (later
// steps swap positions above i), so the step writes only position j and
// copies the set at once; afterwards every written position j holds its
// own index again. One loop over the K swaps, not three (swap, copy,
// restore both positions), takes about 60 instructions fewer a plan of
// Subsets(8, 4), K = 4; TestDrawToListedReference pins it to the plain
// shuffle.
func (s *Sampler) draw(dst []int, src rand.Source) {
	if s.table == nil {
		s.drawRejecting(dst, src)
		return
	}
	digits, n, table, pick := s.digits, s.f.n, s.table, s.pick
	if pcg, ok := src.(*rand.PCG); ok && len(s.runs) == 1 {
		// The planner's source, and the K digits in one run: the
		// digits drawn here, where PCG's Uint64 is inlined, not by
		// drawRuns through the interface, a call whose spills cost
		// about 58 instructions a plan of Subsets(8, 4), K = 4
		// (bench/cachegrind.sh's planning part). TestDrawToPCG pins it
		// to drawRuns.
		r := &s.runs[0]
		for !r.digits(pcg.Uint64(), digits) {
		}
	} else {
		drawRuns(digits, s.runs, src)
	}
	if n == 4 {
		// The paper's set size, copied by four moves instead of copy's
		// call of memmove: about 160 instructions fewer a plan of
		// Subsets(8, 4), K = 4 (bench/cachegrind.sh's planning part).
		for i, d := range digits {
			j := i + d
			g := pick[j]
			pick[j] = pick[i]
			set, to := table[g*4:g*4+4:g*4+4], dst[i*4:i*4+4:i*4+4]
			to[0], to[1], to[2], to[3] = set[0], set[1], set[2], set[3]
		}
	} else {
		for i, d := range digits {
			j := i + d
			g := pick[j]
			pick[j] = pick[i]
			copy(dst[i*n:(i+1)*n], table[g*n:(g+1)*n])
		}
	}
	for i, d := range digits {
		pick[i+d] = i + d
	}
}

// drawSet writes a uniformly random set of the family into g: its j-th
// index is the d_j-th of the N-j traces not yet in it, d_j uniform in
// [0, N-j).
func (s *Sampler) drawSet(g []int, src rand.Source) {
	n := s.f.n
	d := s.digits
	drawRuns(d, s.runs, src)
	if s.fy != nil {
		for j := range n {
			t := j + d[j]
			s.fy[j], s.fy[t] = s.fy[t], s.fy[j]
			d[j] = t
			g[j] = s.fy[j]
		}
		for j := n - 1; j >= 0; j-- {
			t := d[j]
			s.fy[j], s.fy[t] = s.fy[t], s.fy[j]
		}
		if !s.f.ordered {
			slices.Sort(g)
		}
		return
	}
	sorted := s.sorted[:0]
	for j := range n {
		// The v-th smallest index not yet drawn: step past every drawn
		// index at or below the candidate.
		v := d[j]
		p := 0
		for p < len(sorted) && sorted[p] <= v {
			v++
			p++
		}
		sorted = sorted[:len(sorted)+1]
		copy(sorted[p+1:], sorted[p:])
		sorted[p] = v
		if s.f.ordered {
			g[j] = v
		}
	}
	if !s.f.ordered {
		copy(g, sorted)
	}
}

// newSetTable returns an empty open-addressing hash set for up to K sets:
// a power of two of at least 2K slots, each 0 (empty) or the index+1 of a
// set in the flat slice that the set belongs to.
func newSetTable(K int) []int {
	size := 1
	for size < 2*K {
		size <<= 1
	}
	return make([]int, size)
}

// isNewSet reports whether set i of flat (sets of n ints) differs from
// sets 0..i-1. With a nil set it compares with each of them; otherwise set
// (from newSetTable) must hold exactly sets 0..i-1, and set i is added to
// it when it is new.
func isNewSet(flat []int, n, i int, set []int) bool {
	g := flat[i*n : (i+1)*n]
	if set == nil {
		for j := range i {
			if slices.Equal(flat[j*n:(j+1)*n], g) {
				return false
			}
		}
		return true
	}
	mask := len(set) - 1
	h := int(hashSet(g)) & mask
	for set[h] != 0 {
		j := set[h] - 1
		if slices.Equal(flat[j*n:(j+1)*n], g) {
			return false
		}
		h = (h + 1) & mask
	}
	set[h] = i + 1
	return true
}

// hashSet returns a 64-bit hash of g (a multiply-xorshift mix).
func hashSet[E int | int32](g []E) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range g {
		h ^= uint64(v)
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	return h
}
