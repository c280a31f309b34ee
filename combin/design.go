package combin

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// SampleBalanced draws a balanced design: K distinct n-subsets of
// {0, ..., N1-1} in which every trace appears r = floor(K n/N1) or r+1
// times, exactly (K n) mod N1 of them r+1 times; whenever K n >= N1 every
// trace appears at least once. The design is exchangeable: relabelling the
// traces by a fixed permutation leaves its distribution unchanged, so the
// search estimator's multiplier is M = min(N1, K n)/n - 1 (see
// [Family.Constants] and docs/findings.md#set-designs).
//
// The K sets share one backing array of K n ints and are sorted ascending.
// The result equals that of a new BalancedSampler's SampleTo with the same
// rnd.
//
// SampleBalanced returns an error if rnd is nil, f is not a family of
// subsets, K < 0, K > T = C(N1, n), or K n > MaxSize. A balanced design
// exists for every K in [0, T], so these are the only errors.
func (f Family) SampleBalanced(rnd *rand.Rand, K int) ([][]int, error) {
	return sampleOnce(rnd, K, f.n, func() (sampler, error) { return NewBalancedSampler(f, K) })
}

// maxRoundDraws is the number of times a BalancedSampler draws the rounds
// construction before it falls back to switching.
const maxRoundDraws = 64

// maxRoundSlots bounds the slots that the redrawn rounds fill in one call
// (after the first draw) before the fallback: fewer than 64 draws when
// K*n > 2^16.
const maxRoundSlots = 1 << 22

// A BalancedSampler draws balanced designs of a family of subsets (see
// Family.SampleBalanced), again and again, into caller-owned memory and
// without allocating. Build one with NewBalancedSampler for each (Family, K)
// and call SampleTo every step. It holds scratch memory, O(N1 + K n): use
// one per goroutine.
//
// # Construction
//
// SampleTo fills the K n slots of dst in rounds, each an independent
// uniformly random ordering of the N1 traces (the last round stops after
// (K n) mod N1 slots); slots k n .. k n + n - 1 form set k, which is then
// sorted. Full rounds hold every trace once and the partial round a uniformly
// random subset once, which gives the replication. When a set straddling two
// rounds holds a trace twice, or two sets are equal, the whole draw is
// redrawn, up to 64 times (fewer when K n > 2^16, so that the redraws fill at
// most 2^22 slots). The design is the rounds construction conditioned on
// being valid: at the paper's configuration (N1 = 8, n = 4, K = 4), two
// independent uniformly random splits of the 8 traces into halves, redrawn
// when the second equals the first; every one of the 595 designs
// {A, A^c, B, B^c} with B not in {A, A^c} is equally likely, and no other
// design is drawn.
//
// When every redraw fails (K close to C(N1, n), or n close to N1), SampleTo
// draws K distinct sets uniformly and then, while some trace u appears at
// least twice more often than some trace v, replaces a set G that holds u but
// not v, and whose image G - u + v is not already a set, by that image (such
// a G exists: the sets holding u but not v outnumber those holding v but not
// u). Finally it relabels the traces by a uniformly random permutation,
// which keeps the mixture exchangeable. This can produce every balanced
// design.
//
// # Cost
//
// One draw of the rounds takes K n random numbers, a sort of each set and an
// O(K) hash check for equal sets; the expected number of draws is 1 over the
// probability that a draw is valid (35/34 at the paper's configuration, 1
// whenever K n <= N1). The fallback adds O(K n log n) steps plus O(n) per
// replacement. Every random number is drawn exactly uniformly from one
// 64-bit value of the source by Lemire's multiply-and-reject (as in
// [Sampler]), so a given source state gives the same design on every
// machine.
type BalancedSampler struct {
	f Family
	k int

	perm  []int // a permutation of [0, N): the identity between draws
	swaps []int // the swap partner of every slot of one draw, to restore perm
	slots []int // open-addressing hash set of sets, as index+1 (K > linearDedup)
	draws int   // rounds draws before the fallback (a test hook)

	// Fallback, allocated only when K*n > N1.
	uniform *Sampler
	count   []int // appearances of each trace
	cand    []int // a candidate replacement set
	table   []int // open-addressing hash set of the current sets, as index+1
	scan    int   // where the search for a set to switch resumes
}

// NewBalancedSampler returns a BalancedSampler that draws a balanced design
// of K sets of the subset family f per call. It returns an error if f is not
// a family of subsets (for ordered presentation, shuffle each set), K < 0,
// K > T = C(N1, n), or K n > MaxSize.
func NewBalancedSampler(f Family, K int) (*BalancedSampler, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	if f.ordered {
		return nil, familyError(fmt.Errorf("balanced designs are drawn from subsets, not from %v (present each set shuffled for an ordered design)", f))
	}
	if err := f.checkDraw(K); err != nil {
		return nil, err
	}
	return newBalancedSampler(f, K, maxRoundDraws), nil
}

func newBalancedSampler(f Family, K, draws int) *BalancedSampler {
	s := &BalancedSampler{f: f, k: K, draws: draws}
	if K == 0 {
		return s
	}
	N, n := f.size, f.n
	s.perm = make([]int, N)
	for i := range s.perm {
		s.perm[i] = i
	}
	s.swaps = make([]int, K*n)
	if K > linearDedup {
		s.slots = newSetTable(K)
	}
	if K*n > N || draws == 0 {
		// The fallback's uniform start: the listed family only when it is
		// dense (T <= 2K, so O(K n) memory), else rejection in O(n + K).
		s.uniform = newSampler(f, K, samplerMethod{
			dense:       f.fits && f.t64 <= 2*uint64(K),
			fisherYates: n > smallSet,
			hashed:      K > linearDedup,
		})
		s.count = make([]int, N)
		s.cand = make([]int, n)
		s.table = newSetTable(K)
	}
	return s
}

// Family returns the family s draws sets from.
func (s *BalancedSampler) Family() Family { return s.f }

// K returns the number of sets s draws per call.
func (s *BalancedSampler) K() int { return s.k }

// Len returns K*n, the length of the dst slice that SampleTo fills.
func (s *BalancedSampler) Len() int { return s.k * s.f.n }

// Replication returns r = floor(K*n/N1) and extra = (K*n) mod N1: in every
// design s draws, extra traces appear r+1 times and the other N1 - extra
// appear r times.
func (s *BalancedSampler) Replication() (r, extra int) {
	kn := s.k * s.f.n
	return kn / s.f.size, kn % s.f.size
}

// SampleTo draws a balanced design (see BalancedSampler) and writes it into
// dst, set i in dst[i*n : (i+1)*n], sorted ascending. It returns an error,
// and leaves dst unchanged, if rnd is nil. It does not allocate.
//
// SampleTo panics if len(dst) != K*n.
func (s *BalancedSampler) SampleTo(dst []int, rnd *rand.Rand) error {
	if len(dst) != s.Len() {
		panic(fmt.Sprintf("combin: BalancedSampler.SampleTo: len(dst) = %d, want K*n = %d*%d", len(dst), s.k, s.f.n))
	}
	return s.SampleManyTo(dst, rnd)
}

// SampleManyTo makes len(dst)/(K*n) draws of SampleTo, one after another,
// design d in dst[d*K*n : (d+1)*K*n]: the same designs, from the same
// random numbers, as that many calls of SampleTo with the same rnd. It
// returns an error, and leaves dst unchanged, if rnd is nil. It does not
// allocate.
//
// SampleManyTo panics if len(dst) is not a multiple of K*n (when K*n = 0,
// if dst is not empty).
func (s *BalancedSampler) SampleManyTo(dst []int, rnd *rand.Rand) error {
	size := checkMany("BalancedSampler.SampleManyTo", len(dst), s.k, s.f.n)
	if rnd == nil {
		return errNilRand
	}
	if size == 0 {
		return nil
	}
	for q := 0; q < len(dst); q += size {
		s.draw(dst[q:q+size], intNSource{rnd})
	}
	return nil
}

// DrawTo draws a balanced design (see BalancedSampler) into dst, set i in
// dst[i*n : (i+1)*n], sorted ascending, taking its random numbers from src
// (see [Sampler.DrawTo]): the design is a function of src's values alone.
// It does not allocate.
//
// DrawTo panics if len(dst) != K*n or src is nil.
func (s *BalancedSampler) DrawTo(dst []int, src rand.Source) {
	if len(dst) != s.Len() {
		panic(fmt.Sprintf("combin: BalancedSampler.DrawTo: len(dst) = %d, want K*n = %d*%d", len(dst), s.k, s.f.n))
	}
	if src == nil {
		panic("combin: BalancedSampler.DrawTo: src is nil")
	}
	if len(dst) > 0 {
		s.draw(dst, src)
	}
}

// draw draws one design into dst, K*n > 0 long.
func (s *BalancedSampler) draw(dst []int, src rand.Source) {
	for d := range s.draws {
		if d > 0 && d*len(dst) > maxRoundSlots {
			break
		}
		if s.drawRounds(dst, src) {
			return
		}
	}
	s.fallback(dst, src)
}

// drawRounds fills dst with one draw of the rounds construction, sorts each
// set, and reports whether the sets are K distinct n-subsets.
func (s *BalancedSampler) drawRounds(dst []int, src rand.Source) bool {
	N, n := s.f.size, s.f.n
	p := 0 // position in the current round
	for t := range dst {
		j := p
		if N-p > 1 {
			j += uniformInt(N-p, src)
		}
		s.perm[p], s.perm[j] = s.perm[j], s.perm[p]
		s.swaps[t] = j
		dst[t] = s.perm[p]
		if p++; p == N {
			p = 0
		}
	}
	// Restore the identity, undoing the swaps of each round in reverse.
	for t := len(dst) - 1; t >= 0; t-- {
		p := t % N
		j := s.swaps[t]
		s.perm[p], s.perm[j] = s.perm[j], s.perm[p]
	}
	valid := true
	for k := range s.k {
		g := dst[k*n : (k+1)*n]
		slices.Sort(g)
		for i := 1; i < n; i++ {
			if g[i] == g[i-1] {
				valid = false
			}
		}
	}
	return valid && s.distinct(dst)
}

// distinct reports whether the K sorted sets of dst are pairwise distinct.
func (s *BalancedSampler) distinct(dst []int) bool {
	clear(s.slots)
	for i := range s.k {
		if !isNewSet(dst, s.f.n, i, s.slots) {
			return false
		}
	}
	return true
}

// fallback writes into dst a balanced design made by switching from a
// uniform draw, then relabelled uniformly (see BalancedSampler).
func (s *BalancedSampler) fallback(dst []int, src rand.Source) {
	s.uniform.DrawTo(dst, src)
	N, n := s.f.size, s.f.n
	clear(s.count)
	for _, v := range dst {
		s.count[v]++
	}
	clear(s.table)
	for k := range s.k {
		s.insert(dst, k)
	}
	s.scan = 0
	r := len(dst) / N
	c := s.count
	// next returns the first trace at or after i whose count satisfies ok,
	// or N.
	next := func(i int, ok func(int) bool) int {
		for i < N && !ok(c[i]) {
			i++
		}
		return i
	}
	over := func(x int) bool { return x >= r+2 }
	under := func(x int) bool { return x <= r-1 }
	// Pair traces above r+1 with traces below r; then the rest above r+1
	// with traces at r, or the rest below r with traces at r+1. Each switch
	// moves one appearance from u to v with c[u] >= c[v] + 2, and every
	// cursor only moves forward, so this ends with all counts r or r+1.
	u, v := next(0, over), next(0, under)
	for u < N && v < N {
		s.switchOne(dst, u, v)
		if c[u] < r+2 {
			u = next(u+1, over)
		}
		if c[v] > r-1 {
			v = next(v+1, under)
		}
	}
	atR := func(x int) bool { return x == r }
	for w := next(0, atR); u < N; w = next(w+1, atR) {
		s.switchOne(dst, u, w)
		if c[u] < r+2 {
			u = next(u+1, over)
		}
	}
	atR1 := func(x int) bool { return x == r+1 }
	for w := next(0, atR1); v < N; w = next(w+1, atR1) {
		s.switchOne(dst, w, v)
		if c[v] > r-1 {
			v = next(v+1, under)
		}
	}
	for i := N - 1; i > 0; i-- {
		j := uniformInt(i+1, src)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
	for t, x := range dst {
		dst[t] = s.perm[x]
	}
	for i := range s.perm {
		s.perm[i] = i
	}
	for k := range s.k {
		slices.Sort(dst[k*n : (k+1)*n])
	}
}

// switchOne replaces a set G of dst that holds u but not v, and whose image
// G - u + v is not a set of dst, by that image (kept sorted), and moves one
// count from u to v. It searches the sets in order from where the previous
// search stopped, cyclically. The caller guarantees that u appears at least
// twice more often than v, so such a set exists: the sets holding u but not
// v outnumber those holding v but not u, so they cannot all map onto them.
func (s *BalancedSampler) switchOne(dst []int, u, v int) {
	n := s.f.n
	for range s.k {
		k := s.scan
		if s.scan++; s.scan == s.k {
			s.scan = 0
		}
		g := dst[k*n : (k+1)*n]
		_, hasU := slices.BinarySearch(g, u)
		_, hasV := slices.BinarySearch(g, v)
		if !hasU || hasV {
			continue
		}
		// cand = g - u + v, sorted.
		c := s.cand[:0]
		placed := false
		for _, x := range g {
			if x == u {
				continue
			}
			if !placed && v < x {
				c = append(c, v)
				placed = true
			}
			c = append(c, x)
		}
		if !placed {
			c = append(c, v)
		}
		if s.lookup(dst, c) >= 0 {
			continue
		}
		s.remove(dst, k)
		copy(g, c)
		s.insert(dst, k)
		s.count[u]--
		s.count[v]++
		return
	}
	panic("combin: BalancedSampler: no switch found (unreachable)")
}

// insert adds set k of dst to s.table.
func (s *BalancedSampler) insert(dst []int, k int) {
	n, mask := s.f.n, len(s.table)-1
	h := int(hashSet(dst[k*n:(k+1)*n])) & mask
	for s.table[h] != 0 {
		h = (h + 1) & mask
	}
	s.table[h] = k + 1
}

// lookup returns the index of the set of dst equal to g, or -1.
func (s *BalancedSampler) lookup(dst, g []int) int {
	n, mask := s.f.n, len(s.table)-1
	for h := int(hashSet(g)) & mask; s.table[h] != 0; h = (h + 1) & mask {
		if j := s.table[h] - 1; slices.Equal(dst[j*n:(j+1)*n], g) {
			return j
		}
	}
	return -1
}

// remove deletes set k of dst from s.table, shifting later entries of its
// probe run back so that every entry stays reachable from its home slot.
func (s *BalancedSampler) remove(dst []int, k int) {
	n, mask := s.f.n, len(s.table)-1
	i := int(hashSet(dst[k*n:(k+1)*n])) & mask
	for s.table[i] != k+1 {
		i = (i + 1) & mask
	}
	for j := i; ; {
		j = (j + 1) & mask
		e := s.table[j]
		if e == 0 {
			break
		}
		home := int(hashSet(dst[(e-1)*n:e*n])) & mask
		// Leave e when its home lies cyclically in (i, j].
		if (i < j && i < home && home <= j) || (i > j && (i < home || home <= j)) {
			continue
		}
		s.table[i] = e
		i = j
	}
	s.table[i] = 0
}
