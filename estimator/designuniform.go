package estimator

import (
	"math/big"
	"math/bits"
)

// addMul adds x*y to a, exactly modulo 2^128.
func (a *int128) addMul(x, y int64) {
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	// The unsigned product of the two's complement patterns, corrected to
	// the signed one modulo 2^128.
	if x < 0 {
		hi -= uint64(y)
	}
	if y < 0 {
		hi -= uint64(x)
	}
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, lo, 0)
	a.hi += int64(hi + carry)
}

// binom returns C(n, k) (0 unless 0 <= k <= n) for values at most 2^31:
// every intermediate C(n-k+i, i) is at most C(n, k).
func binom(n, k int) int64 {
	if k < 0 || k > n {
		return 0
	}
	c := int64(1)
	for i := 1; i <= k; i++ {
		c = c * int64(n-k+i) / int64(i)
	}
	return c
}

// uniformTotals computes the selections' totals of contract in closed form
// when d is the uniform design (each of the C(T, K) selections of K of the T
// sets, probability 1/C(T, K)), without enumerating the selections. For a
// pair of sets (h, h') (h = h' included), the selections holding both are
// {h, h'} plus any r-subset R of the T' other sets, and c_i = b_i + a_i with
// b_i the number of h, h' holding i and a_i the number of sets of R holding
// i. So the sums over selections of L/c_i, (L/c_i)(L/c_j) and the cover
// depend only on b_i, b_j and how many of the other sets hold i, j or both:
// with those counts o_i, o_j, o_ij, the number of R with a_i = a, a_j = b is
// sum_x C(o_ij, x) C(o_i - o_ij, a - x) C(o_j - o_ij, b - x)
// C(T' - o_i - o_j + o_ij, r - a - b + x). The cost is T^2 n^2 look-ups of
// these sums, memoised by their counts.
//
// It reports false, having done nothing, if d is not the uniform design or a
// sum could exceed int64; the totals then come from the enumeration.
func (e *momentEngine) uniformTotals(pc *pairCoeffs, L int64, sums *momentSums) bool {
	d := e.d
	if d.lazy == nil { // only UniformSets is lazy
		return false
	}
	V, N, T, K, n := e.V, e.N, e.T, d.maxK, pc.n
	// Every int64 below is at most 8 N L^2 C(T, K): a count of selections
	// (or a product of binomials counting them, or binom's partial
	// products, at most K C(T, K)) times at most L^2; sum1 and sum2 sum
	// such terms over disjoint selections (<= L^2 C(T, K)), s1sum over the
	// 2n members (<= 2n L C(T, K)), missed over the traces (<= N C(T, K)),
	// and y is at most (N + 5n) L^2 C(T, K). The int128 accumulators take
	// the products with the coefficients.
	all := d.all
	bound := new(big.Int).Mul(all, big.NewInt(L*L))
	bound.Mul(bound, big.NewInt(int64(8*N)))
	if !fitsInt64(bound) {
		return false
	}
	invK := L / int64(K)
	held := d.held()            // held[i]: sets holding i
	both := make([]int, N*N)    // both[i*N+j]: sets holding i and j
	member := make([]bool, T*N) // member[h*N+i]: i in H_h
	for h, g := range d.groups {
		for _, i := range g {
			member[h*N+i] = true
			for _, j := range g {
				both[i*N+j]++
			}
		}
	}
	// count(o, b, Tp, r, a) is the number of r-subsets of Tp sets, o of
	// which hold i, with a of them holding i.
	count := func(o, Tp, r, a int) int64 {
		if a > o || r-a > Tp-o || a > r {
			return 0
		}
		return binom(o, a) * binom(Tp-o, r-a)
	}
	type key1 struct{ b, o, Tp, r, pow int }
	memo1 := map[key1]int64{}
	// sum1 is sum_R (L/c_i)^pow over the r-subsets R of the Tp other sets.
	sum1 := func(b, o, Tp, r, pow int) int64 {
		k := key1{b, o, Tp, r, pow}
		if s, ok := memo1[k]; ok {
			return s
		}
		var s int64
		for a := 0; a <= min(o, r); a++ {
			w := L / int64(b+a)
			if pow == 2 {
				w *= w
			}
			s += count(o, Tp, r, a) * w
		}
		memo1[k] = s
		return s
	}
	type key2 struct{ bi, bj, oij, oi, oj, Tp, r int }
	memo2 := map[key2]int64{}
	// sum2 is sum_R (L/c_i)(L/c_j), i != j.
	sum2 := func(k key2) int64 {
		if s, ok := memo2[k]; ok {
			return s
		}
		n11, n10, n01 := k.oij, k.oi-k.oij, k.oj-k.oij
		n00 := k.Tp - n11 - n10 - n01
		var s int64
		for x := 0; x <= min(n11, k.r); x++ {
			for y := 0; y <= min(n10, k.r-x); y++ {
				for z := 0; z <= min(n01, k.r-x-y); z++ {
					if k.r-x-y-z > n00 {
						continue
					}
					c := binom(n11, x) * binom(n10, y) * binom(n01, z) * binom(n00, k.r-x-y-z)
					s += c * (L / int64(k.bi+x+y)) * (L / int64(k.bj+x+z))
				}
			}
		}
		memo2[k] = s
		return s
	}
	// Mean: sum over the sets h and the selections holding h.
	{
		Tp, r := T-1, K-1
		nR := binom(Tp, r)
		for h, g := range d.groups {
			for m, i := range g {
				s := sum1(1, held[i]-1, Tp, r, 1)
				for v := range V {
					sums.accMean[v].addMul(pc.r1[(h*n+m)*V+v], s)
				}
			}
			for v := range V {
				sums.accMean[v].addMul(pc.r1sum[h*V+v], -invK*nR)
			}
		}
	}
	sums.accCover = d.uniformCovered(held)
	// Second moments over ordered pairs (h, h'), which count each unordered
	// pair of a selection twice, as contract does.
	b := make([]int, N)
	s1 := make([]int64, 2*n) // sum_R L/c of H_h's members, then H_h''s
	for h, g := range d.groups {
		for h2, g2 := range d.groups {
			Tp, r := T-2, K-2
			if h == h2 {
				Tp, r = T-1, K-1
			}
			if r < 0 {
				continue // K = 1: no selection holds two sets
			}
			nR := binom(Tp, r)
			p := h*T + h2
			for i := range N {
				b[i] = 0
				if member[h*N+i] {
					b[i]++
				}
				if h2 != h && member[h2*N+i] {
					b[i]++
				}
			}
			// o returns the other sets holding i, and those holding i and j.
			o := func(i int) int { return held[i] - b[i] }
			oo := func(i, j int) int {
				x := both[i*N+j]
				if member[h*N+i] && member[h*N+j] {
					x--
				}
				if h2 != h && member[h2*N+i] && member[h2*N+j] {
					x--
				}
				return x
			}
			var missed int64 // sum over i outside U of the R covering i
			var usize int64
			for i := range N {
				if b[i] > 0 {
					usize++
				} else {
					missed += nR - count(held[i], Tp, r, 0)
				}
			}
			var s1sum int64
			for m, i := range g {
				s1[m] = sum1(b[i], o(i), Tp, r, 1)
				s1sum += s1[m]
			}
			for m, j := range g2 {
				s1[n+m] = sum1(b[j], o(j), Tp, r, 1)
				s1sum += s1[n+m]
			}
			// E||g||^2: beta' qs beta - (L/K)(beta.rk + beta.rl) + (L/K)^2 (tot + (C - |U|) diag).
			qs := pc.qs[p*n*n : (p+1)*n*n]
			for m, i := range g {
				for m2, j := range g2 {
					var s int64
					if i == j {
						s = sum1(b[i], o(i), Tp, r, 2)
					} else {
						s = sum2(key2{b[i], b[j], oo(i, j), o(i), o(j), Tp, r})
					}
					sums.accSq.addMul(qs[m*n+m2], s)
				}
				sums.accSq.addMul(pc.rk[p*n+m], -invK*s1[m])
			}
			for m2 := range g2 {
				sums.accSq.addMul(pc.rl[p*n+m2], -invK*s1[n+m2])
			}
			sums.accSq.addMul(pc.tot[p], invK*invK*nR)
			sums.accSq.addMul(pc.diag[p], invK*invK*missed)
			// E[A^2]: pp (sum_{i in H and H'} (L/c_i)^2 - (L/K)(sum beta + sum beta') + (L/K)^2 C).
			var y int64
			for _, m := range pc.interPos[pc.interOff[p]:pc.interOff[p+1]] {
				i := g[m]
				y += sum1(b[i], o(i), Tp, r, 2)
			}
			y += invK*invK*(missed+usize*nR) - invK*s1sum
			sums.accA2.addMul(e.pp[p], y)
		}
	}
	sums.flush(new(big.Rat).SetFrac(big.NewInt(1), all))
	return true
}

// uniformCovered returns the sum over the C(T, K) selections of the uniform
// design d of the number of traces they cover, held[i] being the number of
// sets holding trace i: trace i is missed by the C(T - held[i], K)
// selections of sets not holding it. It is at most N C(T, K), which
// uniformTotals' bound keeps within int64.
func (d *SetDistribution) uniformCovered(held []int) int64 {
	T, K := len(d.groups), d.maxK
	all := binom(T, K)
	var covered int64
	for _, t := range held {
		covered += all - binom(T-t, K)
	}
	return covered
}

// uniformMissed returns, for each number t of sets holding a trace of the
// uniform design d (held's values), the probability q_t = C(T - t, K)/C(T, K)
// that no selected set holds such a trace, for any C(T, K): one
// binomial per distinct t.
func (d *SetDistribution) uniformMissed(held []int) map[int]*big.Rat {
	T, K := int64(len(d.groups)), int64(d.maxK)
	q := map[int]*big.Rat{}
	for _, t := range held {
		if q[t] == nil {
			q[t] = new(big.Rat).SetFrac(new(big.Int).Binomial(T-int64(t), K), d.all)
		}
	}
	return q
}

// held returns, for each trace, the number of sets holding it.
func (d *SetDistribution) held() []int {
	held := make([]int, d.n)
	for _, g := range d.groups {
		for _, i := range g {
			held[i]++
		}
	}
	return held
}
