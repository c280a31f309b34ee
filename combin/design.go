package combin

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// SampleBalanced draws a balanced design: K distinct n-subsets of
// {0, ..., N-1} in which every index appears r = floor(K*n/N) or r+1 times,
// exactly (K*n) mod N of them r+1 times. When N divides K*n every index
// appears exactly r = K*n/N times; whenever K*n >= N every index appears at
// least once. The design is exchangeable: relabelling the indices by any
// fixed permutation leaves its distribution unchanged. See BalancedSampler
// for the construction and the designs it can produce.
//
// The K sets share one backing array of K*n ints and are sorted ascending.
// The result equals that of a new BalancedSampler's SampleTo with the same
// rnd.
//
// SampleBalanced returns an error if rnd is nil, f is not a family of
// subsets, K < 0, K > T = C(N, n), or K*n > MaxSize. A
// balanced design exists for every K in [0, C(N, n)], so these are the only
// errors.
func (f Family) SampleBalanced(rnd *rand.Rand, K int) ([][]int, error) {
	if rnd == nil {
		return nil, errNilRand
	}
	s, err := NewBalancedSampler(f, K)
	if err != nil {
		return nil, err
	}
	flat := make([]int, s.Len())
	if err := s.SampleTo(flat, rnd); err != nil {
		return nil, err
	}
	return splitSets(flat, K, f.n), nil
}

// maxRoundDraws is the number of times a BalancedSampler draws the rounds
// construction before it falls back to switching.
const maxRoundDraws = 64

// A BalancedSampler draws balanced designs of a family of subsets (see
// Family.SampleBalanced), again and again, into caller-owned memory and
// without allocating. Build one with NewBalancedSampler for each (Family, K)
// and call SampleTo every step.
//
// A BalancedSampler holds scratch memory: it is not safe for concurrent use.
// Use one per goroutine.
//
// # Construction
//
// SampleTo fills the K*n slots of dst in rounds. Each round is an independent,
// uniformly random ordering of the N indices (a Fisher-Yates shuffle); the
// last round stops after (K*n) mod N slots when N does not divide K*n. Slots
// k*n .. k*n+n-1 form set k, which is then sorted. Every full round holds
// each index once and the last, partial round holds a uniformly random set of
// (K*n) mod N indices once, which gives the replication. A set that
// straddles two rounds may hold an index twice, and two sets of different
// rounds may be equal; if either happens the whole draw is redrawn, up to 64
// times. Sets come in round order: when n divides N, sets
// j*N/n .. (j+1)*N/n - 1 of each full round j partition {0, ..., N-1}.
//
// So the design is the rounds construction conditioned on being valid. At
// the paper's configuration (N = 8, n = 4, K = 4) it is two independent
// uniformly random splits of the 8 indices into halves, redrawn when the
// second split equals the first (probability 1/35): every one of the 595
// designs {A, A^c, B, B^c} with B not in {A, A^c} is equally likely. Other
// balanced designs, such as {0,1,2,3}, {0,4,5,6}, {1,2,4,7}, {3,5,6,7} in
// which no two sets are complementary, are never drawn there.
//
// When the rounds construction is rarely valid (K close to C(N, n), or n
// close to N with N not dividing K*n) all 64 draws may fail. SampleTo then
// draws K distinct sets uniformly (as Family.Sample does) and, while some
// index u appears at least twice more often than another index v, replaces
// a set G that holds u but not v by G - u + v, choosing the first G, in
// order, whose replacement is not already a set. Such a G always exists
// (the sets holding u but not v outnumber those holding v but not u), and
// every replacement lowers the sum of squared appearance counts by at least
// 2, so this ends with counts r or r+1. Finally it relabels the indices by a
// uniformly random permutation and sorts each set. This fallback can
// produce every balanced design, and the relabelling keeps it exchangeable;
// since the fallback is taken or not whatever the labels, the mixture is
// exchangeable too. A balanced design exists for every K <= C(N, n), so
// SampleTo never fails on a valid rnd.
//
// # Cost
//
// One draw of the rounds takes K*n random numbers (fewer when the last slot
// of a round needs none), a sort of each set and a duplicate check (pairwise
// when K <= 16, by an O(K) hash set otherwise); the expected number of draws
// is 1 over the probability that a draw is valid, 35/34 at the paper's
// configuration. When K*n <= N there is one partial round, its sets are
// disjoint and one draw always succeeds. When all 64 draws fail, a call
// costs those 64 draws plus the fallback (about 0.1 ms at N = 7, n = 3,
// K = 30 of 35; see BENCHMARKS.md). Memory is O(N + K*n).
//
// Every random number comes from rnd.IntN, so a given rnd state gives the
// same design on every machine.
type BalancedSampler struct {
	f Family
	k int

	perm  []int // a permutation of [0, N): the identity between draws
	swaps []int // the swap partner of every slot of one draw, to restore perm
	slots []int // open-addressing hash set of sets, as index+1 (K > linearDedup)
	draws int   // rounds draws before the fallback (a test hook)

	// Fallback, allocated only when K*n > N.
	uniform *Sampler
	count   []int // appearances of each index
	cand    []int // a candidate replacement set
	holders []int // sets that hold v but not u
}

// NewBalancedSampler returns a BalancedSampler that draws a balanced design
// of K sets of the subset family f per call. It returns an error if f is not
// a family of subsets (for ordered presentation, shuffle each set), K < 0,
// K > T = C(N, n), or K*n > MaxSize.
func NewBalancedSampler(f Family, K int) (*BalancedSampler, error) {
	if err := f.checkK(K); err != nil {
		return nil, err
	}
	if f.ordered {
		return nil, fmt.Errorf("combin: balanced designs are drawn from subsets, not from %v (present each set shuffled for an ordered design)", f)
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
		s.holders = make([]int, 0, K)
	}
	return s
}

// Family returns the family s draws sets from.
func (s *BalancedSampler) Family() Family { return s.f }

// K returns the number of sets s draws per call.
func (s *BalancedSampler) K() int { return s.k }

// Len returns K*n, the length of the dst slice that SampleTo fills.
func (s *BalancedSampler) Len() int { return s.k * s.f.n }

// Replication returns r = floor(K*n/N) and extra = (K*n) mod N: in every
// design s draws, extra indices appear r+1 times and the other N - extra
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
	if rnd == nil {
		return errNilRand
	}
	if s.k == 0 {
		return nil
	}
	for range s.draws {
		if s.drawRounds(dst, rnd) {
			return nil
		}
	}
	s.fallback(dst, rnd)
	return nil
}

// drawRounds fills dst with one draw of the rounds construction, sorts each
// set, and reports whether the sets are K distinct n-subsets.
func (s *BalancedSampler) drawRounds(dst []int, rnd *rand.Rand) bool {
	N, n := s.f.size, s.f.n
	p := 0 // position in the current round
	for t := range dst {
		j := p
		if N-p > 1 {
			j += rnd.IntN(N - p)
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
func (s *BalancedSampler) fallback(dst []int, rnd *rand.Rand) {
	_ = s.uniform.SampleTo(dst, rnd) // rnd is not nil
	clear(s.count)
	for _, v := range dst {
		s.count[v]++
	}
	for {
		u, v := 0, 0
		for i, c := range s.count {
			if c > s.count[u] {
				u = i
			}
			if c < s.count[v] {
				v = i
			}
		}
		if s.count[u]-s.count[v] <= 1 {
			break
		}
		s.switchOne(dst, u, v)
		s.count[u]--
		s.count[v]++
	}
	N := s.f.size
	for i := N - 1; i > 0; i-- {
		j := rnd.IntN(i + 1)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
	for t, x := range dst {
		dst[t] = s.perm[x]
	}
	for i := range s.perm {
		s.perm[i] = i
	}
	n := s.f.n
	for k := range s.k {
		slices.Sort(dst[k*n : (k+1)*n])
	}
}

// switchOne replaces the first set of dst that holds u but not v, and
// whose image G - u + v is not a set of dst, by that image (kept sorted).
// The caller guarantees that u appears at least twice more often than v, so
// such a set exists.
func (s *BalancedSampler) switchOne(dst []int, u, v int) {
	n := s.f.n
	s.holders = s.holders[:0]
	for k := range s.k {
		g := dst[k*n : (k+1)*n]
		_, hasU := slices.BinarySearch(g, u)
		_, hasV := slices.BinarySearch(g, v)
		if hasV && !hasU {
			s.holders = append(s.holders, k)
		}
	}
	for k := range s.k {
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
		taken := false
		for _, h := range s.holders {
			if slices.Equal(dst[h*n:(h+1)*n], c) {
				taken = true
				break
			}
		}
		if !taken {
			copy(g, c)
			return
		}
	}
	panic("combin: BalancedSampler: no switch found (unreachable)")
}
