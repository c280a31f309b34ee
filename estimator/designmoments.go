package estimator

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"spiral/combin"
)

// Moments holds the exact first and second moments of the search
// estimator g = sum_i (e_{y_i} - p) A_search(y_i) under a SetDistribution, for N iid
// traces from a policy, an objective, a presentation rule and N2 rewards
// per set (see SetDistribution.Moments).
type Moments struct {
	// M is the design's multiplier, E[#traces in >= 1 group]/n - 1.
	M *big.Rat
	// Mean is E[g], a V-vector.
	Mean []*big.Rat
	// SquaredNorm is E[||g||^2] and Variance the total variance
	// E[||g - E g||^2] = trace Cov(g) = SquaredNorm - ||Mean||^2.
	SquaredNorm, Variance *big.Rat
	// SearchSquare is E[A^2] for the search advantage A = A_search(y_I) of a
	// trace I chosen uniformly; E[A] = 0 for every design (each selection's
	// weights sum to 0 over the groups), so it is also Var(A).
	SearchSquare *big.Rat
	// NoCredit is the probability that a uniformly chosen trace is in no
	// selected group, 1 - E[#traces in >= 1 group]/N.
	NoCredit *big.Rat
}

// NormalisedVariance returns Variance/M^2, the total variance of g/M, the
// update scaled to be unbiased for grad J when E[g] = M grad J. It returns
// nil if M = 0.
func (m *Moments) NormalisedVariance() *big.Rat {
	if m.M.Sign() == 0 {
		return nil
	}
	v := new(big.Rat).Quo(m.Variance, m.M)
	return v.Quo(v, m.M)
}

// maxMomentEntries bounds T^2 N^2, the number of int64 second-moment
// coefficients Moments holds (128 MiB).
const maxMomentEntries = 1 << 24

// Moments returns the exact moments of the search estimator
//
//	g = sum_{i=1..N} (e_{y_i} - p) A_search(y_i)
//
// for N iid traces from c, a selection drawn from d, each selected group
// presented under rule p and scored by the mean of N2 Bernoulli(f) rewards
// (N2 = 0: by f itself). Every outcome of the traces (V^N) and every
// selection is enumerated; presentation shuffles and rewards are integrated
// exactly, since g is linear in each set score: distinct groups' scores are
// conditionally independent given the traces, with conditional means f_p
// (the presented objective, as for Weights.Expectation), and a score's
// conditional second moment is (1 - 1/N2) f_p^2 + f_p/N2 with f_p^2 the
// presented square (averaged over orders for combin.Shuffled).
//
// The arithmetic is exact: the coefficients E[f_H f_H' (e_{y_i} - p).(e_{y_j}
// - p)] are int64 numerators over one denominator, precomputed for every
// pair of groups; they vanish unless trace i and j are both members of H or
// H' or i = j, so each selection contracts only the members' n x n blocks
// with its weights L/c_i (L = lcm(1..K)), and selections with equal
// probabilities are summed in 128-bit integers. The cost is about
// T^2 V^|U| |U|^2 / 4 for the coefficients (|U| <= 2n the traces of a pair
// of sets) plus K^2 (n^2 + 2n)/2 per selection; for
// UniformSets the sum over its C(T, K) selections (916,895 at the paper's
// configuration) is in closed form instead, about T^2 n^2.
//
// It returns an error if c.Size() != t.V(), d's group size is not
// t.Arity(), N2 < 0, p is unknown, V^N exceeds 1,048,576, T^2 N^2 exceeds
// 16,777,216, or the numerators could overflow int64 (denominators of p and
// of f too large for the configuration), and for a uniform design of more
// than 33,554,432 selections whose closed-form sums could overflow int64.
func (d *SetDistribution) Moments(c *Categorical, t *Table, p combin.Order, N2 int) (*Moments, error) {
	if err := checkPolicyTable(c, t); err != nil {
		return nil, err
	}
	if c.Size() != t.V() {
		return nil, argError(FieldTable, -1, t.V(), "V = %d symbols, the policy has V = %d", t.V(), c.Size())
	}
	if d.size != t.Arity() {
		return nil, argError(FieldTable, -1, t.Arity(), "arity n = %d, the sets have %d members", t.Arity(), d.size)
	}
	if N2 < 0 {
		return nil, argError(FieldN2, -1, N2, "%d < 0 (0 for exact set scores)", N2)
	}
	e, err := newMomentEngine(d, c, t, p, N2)
	if err != nil {
		return nil, err
	}
	e.coefficients()
	return e.contract()
}

// momentEngine holds the precomputed coefficients of Moments.
type momentEngine struct {
	d       *SetDistribution
	V, N, T int
	pnum    []int64 // policy numerators over dp
	dp      int64
	f1, f2  []int64 // presented f over den1; conditional second moment over den2
	a, b    int64   // Dq/den1^2 and Dq/den2
	den1    *big.Int
	dq      *big.Int // common denominator of the products f_H f_H' and of f2
	dot     []int64  // dot[u*V+v] = dp^2 (e_u - p).(e_v - p)

	r1 []int64 // r1[(h*N+i)*V+v] = sum_y P f1_h snum_v(y_i), over dp^N den1 dp
	q  []int64 // q[(h*T+h')*N*N + i*N+j], h <= h': sum_y P F dot, over dp^N Dq dp^2
	pp []int64 // pp[h*T+h'], h <= h': sum_y P F, over dp^N Dq
}

// fitsInt64 reports whether |x| < 2^62.
func fitsInt64(x *big.Int) bool { return x.BitLen() <= 62 }

func newMomentEngine(d *SetDistribution, c *Categorical, t *Table, p combin.Order, N2 int) (*momentEngine, error) {
	V, N, T := c.Size(), d.n, len(d.groups)
	if _, err := tableSize(V, N); err != nil {
		return nil, fmt.Errorf("estimator: outcomes of N = %d traces: %w", N, err)
	}
	if T*T > maxMomentEntries/(N*N) {
		return nil, fmt.Errorf("estimator: T^2 N^2 = %d^2 %d^2 coefficients exceed the limit %d", T, N, maxMomentEntries)
	}
	t1, err := presented(t, p)
	if err != nil {
		return nil, err
	}
	sqVals := make([]*big.Rat, len(t.vals))
	for i, x := range t.vals {
		sqVals[i] = new(big.Rat).Mul(x, x)
	}
	sq, err := NewTable(t.v, t.n, sqVals)
	if err != nil {
		return nil, err
	}
	if sq, err = presented(sq, p); err != nil {
		return nil, err
	}
	second := make([]*big.Rat, len(t.vals))
	for i := range second {
		second[i] = new(big.Rat).Set(sq.vals[i])
		if N2 > 0 {
			// (1 - 1/N2) f^2 + f/N2
			second[i].Mul(second[i], big.NewRat(int64(N2-1), int64(N2)))
			second[i].Add(second[i], new(big.Rat).Quo(t1.vals[i], big.NewRat(int64(N2), 1)))
		}
	}
	den2, num2 := commonDenominator(second)
	den1sq := new(big.Int).Mul(t1.denom, t1.denom)
	dq := new(big.Int).Quo(new(big.Int).Mul(den1sq, den2), new(big.Int).GCD(nil, nil, den1sq, den2))

	if !fitsInt64(c.denom) || !fitsInt64(dq) {
		return nil, fmt.Errorf("estimator: denominators of the policy (%d bits) and objective (%d bits) too large for exact moments at N = %d (each must fit in 63 bits)", c.denom.BitLen(), dq.BitLen(), N)
	}
	dpN := new(big.Int).Exp(c.denom, big.NewInt(int64(N)), nil)
	// |sum_y P F dot| <= dp^N Dq 2 dp^2; |sum_y P f1 snum| <= dp^N den1 dp.
	bound := new(big.Int).Mul(dpN, dq)
	bound.Mul(bound, new(big.Int).Mul(c.denom, c.denom))
	bound.Lsh(bound, 1)
	if !fitsInt64(bound) || !fitsInt64(c.denom) {
		return nil, fmt.Errorf("estimator: denominators of the policy (%d bits) and objective (%d bits) too large for exact moments at N = %d", c.denom.BitLen(), dq.BitLen(), N)
	}
	e := &momentEngine{
		d: d, V: V, N: N, T: T,
		dp: c.denom.Int64(), pnum: make([]int64, V),
		f1: make([]int64, len(t.vals)), f2: make([]int64, len(t.vals)),
		a:    new(big.Int).Quo(dq, den1sq).Int64(),
		b:    new(big.Int).Quo(dq, den2).Int64(),
		den1: t1.denom, dq: dq,
		dot: make([]int64, V*V),
	}
	for v := range V {
		e.pnum[v] = c.num[v].Int64()
	}
	for i := range e.f1 {
		e.f1[i] = t1.num[i].Int64()
		e.f2[i] = num2[i].Int64()
	}
	var pp int64
	for _, x := range e.pnum {
		pp += x * x
	}
	for u := range V {
		for v := range V {
			x := pp - e.dp*(e.pnum[u]+e.pnum[v])
			if u == v {
				x += e.dp * e.dp
			}
			e.dot[u*V+v] = x
		}
	}
	return e, nil
}

// coefficients fills r1, q and pp. A coefficient of set h, or of the pair
// (h, h'), depends on the traces of U = H (or H and H') alone, except
// through the traces outside U, whose scores have mean 0: their sums over
// V^N outcomes are the sums over the V^|U| outcomes of U times dp for each
// trace outside U, q[i][j] is 0 for i != j unless both are in U, and
// q[i][i] for i outside U is sum_U P F times sum_v p_v ||e_v - p||^2. So
// each set costs V^n n V and each pair V^|U| |U|^2 / 2, not V^N.
func (e *momentEngine) coefficients() {
	V, N, T := e.V, e.N, e.T
	NN := N * N
	e.r1 = make([]int64, T*N*V)
	e.q = make([]int64, T*T*NN)
	e.pp = make([]int64, T*T)
	dpPow := make([]int64, N+1) // dp^k, at most dp^N, which fits (newMomentEngine)
	dpPow[0] = 1
	for k := 1; k <= N; k++ {
		dpPow[k] = dpPow[k-1] * e.dp
	}
	var s2 int64 // sum_v pnum_v dot[v][v]
	for v := range V {
		s2 += e.pnum[v] * e.dot[v*V+v]
	}
	pos := make([]int, N) // position in U, or -1
	z := make([]int, N)   // symbols of U's traces, by position
	var U []int
	// outcomes calls visit with P = prod_a pnum[z_a] for each z in V^|U|.
	outcomes := func(visit func(P int64)) {
		clear(z[:len(U)])
		for {
			P := int64(1)
			for _, s := range z[:len(U)] {
				P *= e.pnum[s]
			}
			visit(P)
			k := len(U) - 1
			for ; k >= 0; k-- { // next outcome, last position least significant
				z[k]++
				if z[k] < V {
					break
				}
				z[k] = 0
			}
			if k < 0 {
				return
			}
		}
	}
	index := func(g []int) int {
		idx := 0
		for _, i := range g {
			idx = idx*V + z[pos[i]]
		}
		return idx
	}
	setU := func(g, g2 []int) {
		for i := range pos {
			pos[i] = -1
		}
		U = U[:0]
		for _, i := range g {
			pos[i] = 0
		}
		for _, i := range g2 {
			pos[i] = 0
		}
		for i := range N {
			if pos[i] == 0 {
				pos[i] = len(U)
				U = append(U, i)
			}
		}
	}
	for h, g := range e.d.groups {
		setU(g, nil)
		scale := dpPow[N-len(U)]
		row := e.r1[h*N*V : (h+1)*N*V]
		outcomes(func(P int64) {
			f := e.f1[index(g)]
			if f == 0 {
				return
			}
			c := P * f * scale
			for a, i := range U {
				for v := range V {
					x := -e.pnum[v]
					if v == z[a] {
						x += e.dp
					}
					row[i*V+v] += c * x
				}
			}
		})
	}
	for h, g := range e.d.groups {
		for h2 := h; h2 < T; h2++ {
			g2 := e.d.groups[h2]
			setU(g, g2)
			u := len(U)
			scale := dpPow[N-u]
			blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
			var sumPF int64
			outcomes(func(P int64) {
				var F int64
				if h == h2 {
					F = e.b * e.f2[index(g)]
				} else {
					F = e.a * e.f1[index(g)] * e.f1[index(g2)]
				}
				if F == 0 {
					return
				}
				sumPF += P * F
				c := P * F * scale
				for a, i := range U {
					d := e.dot[z[a]*V:]
					for b := a; b < u; b++ {
						blk[i*N+U[b]] += c * d[z[b]]
					}
				}
			})
			e.pp[h*T+h2] = sumPF * scale
			if u < N {
				diag := sumPF * s2 * dpPow[N-u-1]
				for i := range N {
					if pos[i] < 0 {
						blk[i*N+i] = diag
					}
				}
			}
		}
	}
	// Mirror each block to full symmetric form, and the pairs (h2 > h).
	for h := range T {
		for h2 := h; h2 < T; h2++ {
			blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
			for i := range N {
				for j := i + 1; j < N; j++ {
					blk[j*N+i] = blk[i*N+j]
				}
			}
			if h2 != h {
				copy(e.q[(h2*T+h)*NN:(h2*T+h+1)*NN], blk)
				e.pp[h2*T+h] = e.pp[h*T+h2]
			}
		}
	}
}

// int128 is a signed 128-bit accumulator of int64 values.
type int128 struct {
	hi int64
	lo uint64
}

func (a *int128) add(x int64) {
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, uint64(x), 0)
	a.hi += int64(carry)
	if x < 0 {
		a.hi--
	}
}

func (a int128) big() *big.Int {
	v := big.NewInt(a.hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(a.lo))
}

func maxAbs(xs []int64) *big.Int {
	var m int64
	for _, x := range xs {
		m = max(m, x, -x)
	}
	return big.NewInt(m)
}

// pairCoeffs holds what a selection needs of the coefficient block
// q[h, h'] of each ordered pair of sets (h, h'), p = h*T + h'. With U the
// union of the two sets, q[h, h'][i][j] is 0 unless i and j are both in U
// or i = j (a trace outside U has a score of mean 0 independent of the rest),
// and its diagonal outside U is one value. The credit weight of a covered
// trace i in set H_k is w_k(i) = L [i in H_k]/c_i - L/K, so with
// beta_k(m) = L/c_{H_k[m]} the block's contribution to a selection is
//
//	sum_{i,j} w_k(i) w_l(j) q[i][j] = beta_k' qs beta_l - (L/K) (beta_k . rk + beta_l . rl)
//	                                 + (L/K)^2 (tot + (C - |U|) diag),
//
// C the selection's cover, and its w_k . w_l is
// sum_{i in H_k and H_l} (L/c_i)^2 - (L/K) (sum beta_k + sum beta_l) + (L/K)^2 C.
// The arithmetic is int64 modulo 2^64 (Go's wrapping), exact because every
// per-selection total is bounded below 2^62 (checked in contract).
type pairCoeffs struct {
	n        int
	qs       []int64 // qs[(p*n+m)*n+m2] = q[h, h'][H_h[m]][H_h'[m2]]
	rk, rl   []int64 // rk[p*n+m] = sum_{j in U} q[H_h[m]][j], rl[p*n+m2] = sum_{j in U} q[H_h'[m2]][j]
	tot      []int64 // tot[p] = sum_{i, j in U} q[i][j]
	diag     []int64 // diag[p] = q[i][i] for i outside U (0 if there is none)
	usize    []int64 // usize[p] = |U|
	interOff []int32 // positions m of H_h that are in H_h': interPos[interOff[p]:interOff[p+1]]
	interPos []int32
	r1       []int64 // r1[(h*n+m)*V+v] = e.r1 at trace H_h[m]
	r1sum    []int64 // r1sum[h*V+v] = sum_m r1 of h
}

// pairs builds the pair coefficients from e.q and e.r1.
func (e *momentEngine) pairs() *pairCoeffs {
	V, N, T := e.V, e.N, e.T
	n := e.d.size
	NN := N * N
	pc := &pairCoeffs{
		n:  n,
		qs: make([]int64, T*T*n*n), rk: make([]int64, T*T*n), rl: make([]int64, T*T*n),
		tot: make([]int64, T*T), diag: make([]int64, T*T), usize: make([]int64, T*T),
		interOff: make([]int32, T*T+1),
		r1:       make([]int64, T*n*V), r1sum: make([]int64, T*V),
	}
	for h, g := range e.d.groups {
		for m, i := range g {
			for v := range V {
				x := e.r1[(h*N+i)*V+v]
				pc.r1[(h*n+m)*V+v] = x
				pc.r1sum[h*V+v] += x
			}
		}
	}
	inU := make([]bool, N)
	inH2 := make([]bool, N)
	for h, g := range e.d.groups {
		for h2, g2 := range e.d.groups {
			p := h*T + h2
			blk := e.q[p*NN : (p+1)*NN]
			clear(inU)
			clear(inH2)
			for _, i := range g {
				inU[i] = true
			}
			for _, i := range g2 {
				inU[i], inH2[i] = true, true
			}
			for m, i := range g {
				for m2, j := range g2 {
					pc.qs[(p*n+m)*n+m2] = blk[i*N+j]
				}
				if inH2[i] {
					pc.interPos = append(pc.interPos, int32(m))
				}
			}
			pc.interOff[p+1] = int32(len(pc.interPos))
			var tot, usize int64
			for i := range N {
				if !inU[i] {
					pc.diag[p] = blk[i*N+i]
					continue
				}
				usize++
				for j := range N {
					if inU[j] {
						tot += blk[i*N+j]
					}
				}
			}
			pc.tot[p], pc.usize[p] = tot, usize
			for m, i := range g {
				pc.rk[p*n+m] = rowSum(blk[i*N:(i+1)*N], inU)
			}
			for m2, j := range g2 {
				pc.rl[p*n+m2] = rowSum(blk[j*N:(j+1)*N], inU)
			}
		}
	}
	return pc
}

// rowSum returns the sum of row[j] over the j with in[j].
func rowSum(row []int64, in []bool) int64 {
	var x int64
	for j, ok := range in {
		if ok {
			x += row[j]
		}
	}
	return x
}

// contractBound returns L = lcm(1..maxK) after checking that every
// per-selection sum of contract fits in int64: |mean| <= K N L max|r1|,
// |sq| <= K^2 N^2 L^2 max|q|, |a2| <= K^2 N L^2 max|pp|.
func (e *momentEngine) contractBound() (int64, error) {
	maxK := int64(e.d.maxK)
	N := e.N
	L := int64(1)
	for k := int64(2); k <= maxK; k++ {
		L = lcm(L, k)
		if L > math.MaxInt32 {
			return 0, fmt.Errorf("estimator: selections of up to %d sets are too large for exact moments", maxK)
		}
	}
	kl := big.NewInt(maxK * L)
	kl2 := new(big.Int).Mul(kl, kl)
	bigN := big.NewInt(int64(N))
	for _, b := range []*big.Int{
		new(big.Int).Mul(new(big.Int).Mul(kl, bigN), maxAbs(e.r1)),
		new(big.Int).Mul(new(big.Int).Mul(kl2, big.NewInt(int64(N*N))), maxAbs(e.q)),
		new(big.Int).Mul(new(big.Int).Mul(kl2, bigN), maxAbs(e.pp)),
	} {
		if !fitsInt64(b) {
			return 0, fmt.Errorf("estimator: denominators too large for exact moments of this design")
		}
	}
	return L, nil
}

// momentSums accumulates the selections' integer sums, one run of equal
// probabilities at a time: within a run in 128-bit integers, then once per
// run as rationals times the run's probability.
type momentSums struct {
	accMean       []int128
	accSq, accA2  int128
	accCover      int64
	mean          []*big.Rat
	sq, a2, cover *big.Rat
}

func newMomentSums(V int) *momentSums {
	s := &momentSums{accMean: make([]int128, V), mean: make([]*big.Rat, V), sq: new(big.Rat), a2: new(big.Rat), cover: new(big.Rat)}
	for v := range s.mean {
		s.mean[v] = new(big.Rat)
	}
	return s
}

// flush adds the run's sums times its probability prob to the totals.
func (s *momentSums) flush(prob *big.Rat) {
	add := func(tot *big.Rat, a int128) {
		x := new(big.Rat).SetInt(a.big())
		tot.Add(tot, x.Mul(x, prob))
	}
	for v := range s.accMean {
		add(s.mean[v], s.accMean[v])
		s.accMean[v] = int128{}
	}
	add(s.sq, s.accSq)
	add(s.a2, s.accA2)
	add(s.cover, int128{lo: uint64(s.accCover)})
	s.accSq, s.accA2, s.accCover = int128{}, int128{}, 0
}

// contract sums the coefficients over the selections and assembles the
// moments: in closed form for the uniform design (uniformTotals), else by
// enumerating the selections (enumerate).
func (e *momentEngine) contract() (*Moments, error) {
	L, err := e.contractBound()
	if err != nil {
		return nil, err
	}
	pc := e.pairs()
	sums := newMomentSums(e.V)
	if !e.uniformTotals(pc, L, sums) {
		if err := e.d.enumerable("Moments"); err != nil {
			return nil, err
		}
		e.enumerate(pc, L, sums)
	}
	return e.assemble(sums, L), nil
}

// enumerate adds every selection's contraction to sums. The cost per
// selection is K n for the weights, K n V for the mean and
// K^2 (n^2 + 2n)/2 for the second moments.
func (e *momentEngine) enumerate(pc *pairCoeffs, L int64, sums *momentSums) {
	d := e.d
	V, N, T := e.V, e.N, e.T
	n := pc.n
	nn := n * n
	maxK := d.maxK
	invC := make([]int64, maxK+1) // invC[c] = L/c
	for c := 1; c <= maxK; c++ {
		invC[c] = L / int64(c)
	}
	count := make([]int, N)
	beta := make([]int64, maxK*n) // beta[k*n+m] = L/c_i, i = H_k[m]
	bsum := make([]int64, maxK)
	mean := make([]int64, V)
	d.runs(func(s []int) {
		K := len(s)
		clear(count)
		for _, h := range s {
			for _, i := range d.groups[h] {
				count[i]++
			}
		}
		var cover int64
		for _, c := range count {
			if c > 0 {
				cover++
			}
		}
		sums.accCover += cover
		invK := L / int64(K)
		c2 := invK * invK
		for k, h := range s {
			row := beta[k*n : (k+1)*n]
			var x int64
			for m, i := range d.groups[h] {
				row[m] = invC[count[i]]
				x += row[m]
			}
			bsum[k] = x
		}
		// Mean: r1 of h is 0 outside H_h.
		clear(mean)
		for k, h := range s {
			row := beta[k*n : (k+1)*n]
			r := pc.r1[h*n*V : (h+1)*n*V]
			for v := range V {
				x := -invK * pc.r1sum[h*V+v]
				for m, b := range row {
					x += b * r[m*V+v]
				}
				mean[v] += x
			}
		}
		for v, x := range mean {
			sums.accMean[v].add(x)
		}
		// Second moments of g and of A.
		var sq, a2 int64
		for k, h := range s {
			bk := beta[k*n : (k+1)*n]
			for l := k; l < K; l++ {
				bl := beta[l*n : (l+1)*n]
				p := h*T + s[l]
				qs := pc.qs[p*nn : (p+1)*nn]
				var x int64
				for m, b := range bk {
					row := qs[m*n : (m+1)*n]
					var r int64
					for m2, b2 := range bl {
						r += row[m2] * b2
					}
					x += b * r
				}
				rk, rl := pc.rk[p*n:(p+1)*n], pc.rl[p*n:(p+1)*n]
				var z int64
				for m := range n {
					z += bk[m]*rk[m] + bl[m]*rl[m]
				}
				x += c2*(pc.tot[p]+(cover-pc.usize[p])*pc.diag[p]) - invK*z
				var in int64
				for _, m := range pc.interPos[pc.interOff[p]:pc.interOff[p+1]] {
					in += bk[m] * bk[m]
				}
				y := e.pp[p] * (in - invK*(bsum[k]+bsum[l]) + c2*cover)
				if l != k {
					x, y = 2*x, 2*y
				}
				sq += x
				a2 += y
			}
		}
		sums.accSq.add(sq)
		sums.accA2.add(a2)
	}, sums.flush)
}

// assemble divides the selections' totals by their common denominators.
func (e *momentEngine) assemble(s *momentSums, L int64) *Moments {
	V, N := e.V, e.N
	dm := &Moments{Mean: make([]*big.Rat, V)}
	dpN := new(big.Int).Exp(big.NewInt(e.dp), big.NewInt(int64(N)), nil)
	bigL := big.NewInt(L)
	// Mean: over L dp^N den1 dp.
	den := new(big.Int).Mul(bigL, dpN)
	den.Mul(den, e.den1)
	den.Mul(den, big.NewInt(e.dp))
	for v := range V {
		dm.Mean[v] = new(big.Rat).Quo(s.mean[v], new(big.Rat).SetInt(den))
	}
	// Second moments: over L^2 dp^N Dq dp^2, and N L^2 dp^N Dq.
	den = new(big.Int).Mul(bigL, bigL)
	den.Mul(den, dpN)
	den.Mul(den, e.dq)
	denA := new(big.Int).Mul(den, big.NewInt(int64(N)))
	den.Mul(den, big.NewInt(e.dp*e.dp))
	dm.SquaredNorm = new(big.Rat).Quo(s.sq, new(big.Rat).SetInt(den))
	dm.SearchSquare = new(big.Rat).Quo(s.a2, new(big.Rat).SetInt(denA))
	dm.Variance = new(big.Rat).Set(dm.SquaredNorm)
	for _, m := range dm.Mean {
		dm.Variance.Sub(dm.Variance, new(big.Rat).Mul(m, m))
	}
	cover := s.cover
	dm.M = new(big.Rat).Quo(cover, big.NewRat(int64(e.d.size), 1))
	dm.M.Sub(dm.M, big.NewRat(1, 1))
	dm.NoCredit = new(big.Rat).Quo(cover, big.NewRat(int64(N), 1))
	dm.NoCredit.Sub(big.NewRat(1, 1), dm.NoCredit)
	return dm
}
