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
// pair of groups, and each selection contracts them with its credit weights
// L w_S(i, H) (L = lcm(1..K)); selections with equal probabilities are summed
// in 128-bit integers. The cost is V^N T^2 N^2 / 4 for the coefficients plus
// K^2 N^2 per selection (916,895 selections for the uniform design at the
// paper's configuration).
//
// It returns an error if c.Size() != t.V(), d's group size is not
// t.Arity(), N2 < 0, p is unknown, V^N exceeds 1,048,576, T^2 N^2 exceeds
// 16,777,216, or the numerators could overflow int64 (denominators of p and
// of f too large for the configuration).
func (d *SetDistribution) Moments(c *Categorical, t *Table, p combin.Order, N2 int) (*Moments, error) {
	if err := checkPolicyTable(c, t); err != nil {
		return nil, err
	}
	if c.Size() != t.V() {
		return nil, fmt.Errorf("estimator: policy has V = %d symbols, table has V = %d", c.Size(), t.V())
	}
	if d.size != t.Arity() {
		return nil, fmt.Errorf("estimator: the sets have %d members, table arity is n = %d", d.size, t.Arity())
	}
	if N2 < 0 {
		return nil, fmt.Errorf("estimator: N2 = %d, want >= 0 (0 for exact set scores)", N2)
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

	dpN := new(big.Int).Exp(c.denom, big.NewInt(int64(N)), nil)
	// |sum_y P F dot| <= dp^N Dq 2 dp^2; |sum_y P f1 snum| <= dp^N den1 dp.
	bound := new(big.Int).Mul(dpN, dq)
	bound.Mul(bound, new(big.Int).Mul(c.denom, c.denom))
	bound.Lsh(bound, 1)
	if !fitsInt64(bound) || !fitsInt64(c.denom) {
		return nil, fmt.Errorf("estimator: denominators of the policy (%v) and objective (%v) too large for exact moments at N = %d", c.denom, dq, N)
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

// coefficients enumerates the V^N outcomes and fills r1, q and pp.
func (e *momentEngine) coefficients() {
	V, N, T := e.V, e.N, e.T
	NN := N * N
	e.r1 = make([]int64, T*N*V)
	e.q = make([]int64, T*T*NN)
	e.pp = make([]int64, T*T)
	y := make([]int, N)
	f1 := make([]int64, T)
	f2 := make([]int64, T)
	dotY := make([]int64, NN)
	sn := make([]int64, N*V)
	outcomes := 1
	for range N {
		outcomes *= V
	}
	for range outcomes {
		pn := int64(1)
		for _, s := range y {
			pn *= e.pnum[s]
		}
		for h, g := range e.d.groups {
			idx := 0
			for _, i := range g {
				idx = idx*V + y[i]
			}
			f1[h], f2[h] = e.f1[idx], e.f2[idx]
		}
		for i, yi := range y {
			for j := i; j < N; j++ {
				dotY[i*N+j] = e.dot[yi*V+y[j]]
			}
			for v := range V {
				x := -e.pnum[v]
				if v == yi {
					x += e.dp
				}
				sn[i*V+v] = x
			}
		}
		for h := range T {
			if f1[h] == 0 {
				continue
			}
			c := pn * f1[h]
			row := e.r1[h*N*V : (h+1)*N*V]
			for k, s := range sn {
				row[k] += c * s
			}
		}
		for h := range T {
			for h2 := h; h2 < T; h2++ {
				var F int64
				if h == h2 {
					F = e.b * f2[h]
				} else {
					F = e.a * f1[h] * f1[h2]
				}
				if F == 0 {
					continue
				}
				c := pn * F
				e.pp[h*T+h2] += c
				blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
				for i := range N {
					for j := i; j < N; j++ {
						blk[i*N+j] += c * dotY[i*N+j]
					}
				}
			}
		}
		for k := N - 1; k >= 0; k-- { // next outcome, y_N least significant
			y[k]++
			if y[k] < V {
				break
			}
			y[k] = 0
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

// contract runs over the selections and assembles the moments.
func (e *momentEngine) contract() (*Moments, error) {
	d := e.d
	V, N, T := e.V, e.N, e.T
	NN := N * N
	maxK := int64(d.maxK)
	L := int64(1)
	for k := int64(2); k <= maxK; k++ {
		L = lcm(L, k)
		if L > math.MaxInt32 {
			return nil, fmt.Errorf("estimator: selections of up to %d sets are too large for exact moments", maxK)
		}
	}
	// Per selection: |mean| <= K N L max|r1|, |sq| <= K^2 N^2 L^2 max|q|,
	// |a2| <= K^2 N L^2 max|pp|.
	kl := big.NewInt(maxK * L)
	kl2 := new(big.Int).Mul(kl, kl)
	bigN := big.NewInt(int64(N))
	for _, b := range []*big.Int{
		new(big.Int).Mul(new(big.Int).Mul(kl, bigN), maxAbs(e.r1)),
		new(big.Int).Mul(new(big.Int).Mul(kl2, big.NewInt(int64(NN))), maxAbs(e.q)),
		new(big.Int).Mul(new(big.Int).Mul(kl2, bigN), maxAbs(e.pp)),
	} {
		if !fitsInt64(b) {
			return nil, fmt.Errorf("estimator: denominators too large for exact moments of this design")
		}
	}

	count := make([]int, N)
	w := make([]int64, int(maxK)*N) // w[k*N+i] = L w_S(i, H_k)
	tmp := make([]int64, N)
	accMean := make([]int128, V)
	var accSq, accA2 int128
	var accCover int64
	totMean := make([]*big.Rat, V)
	for v := range totMean {
		totMean[v] = new(big.Rat)
	}
	totSq, totA2, totCover := new(big.Rat), new(big.Rat), new(big.Rat)
	var cur *big.Rat
	flush := func() {
		if cur == nil {
			return
		}
		add := func(tot *big.Rat, a int128) {
			x := new(big.Rat).SetInt(a.big())
			tot.Add(tot, x.Mul(x, cur))
		}
		for v := range V {
			add(totMean[v], accMean[v])
			accMean[v] = int128{}
		}
		add(totSq, accSq)
		add(totA2, accA2)
		add(totCover, int128{lo: uint64(accCover)})
		accSq, accA2, accCover = int128{}, int128{}, 0
	}
	for s, prob := range d.Selections() {
		if cur == nil || (prob != cur && prob.Cmp(cur) != 0) {
			flush()
			cur = prob
		}
		K := len(s)
		clear(count)
		for _, h := range s {
			for _, i := range d.groups[h] {
				count[i]++
			}
		}
		for _, c := range count {
			if c > 0 {
				accCover++
			}
		}
		invK := L / int64(K)
		for k, h := range s {
			row := w[k*N : (k+1)*N]
			for i, c := range count {
				if c > 0 {
					row[i] = -invK
				} else {
					row[i] = 0
				}
			}
			for _, i := range d.groups[h] {
				row[i] += L / int64(count[i])
			}
		}
		// Mean.
		for k, h := range s {
			row := w[k*N : (k+1)*N]
			r := e.r1[h*N*V : (h+1)*N*V]
			for v := range V {
				var x int64
				for i, wi := range row {
					x += wi * r[i*V+v]
				}
				accMean[v].add(x)
			}
		}
		// Second moment of g and of A.
		var sq, a2 int64
		for k, h := range s {
			wk := w[k*N : (k+1)*N]
			for l := k; l < K; l++ {
				h2 := s[l]
				wl := w[l*N : (l+1)*N]
				blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
				for i := range N {
					row := blk[i*N : (i+1)*N]
					var x int64
					for j, wj := range wl {
						x += row[j] * wj
					}
					tmp[i] = x
				}
				var x, y int64
				for i, wi := range wk {
					x += wi * tmp[i]
					y += wi * wl[i]
				}
				y *= e.pp[h*T+h2]
				if l != k {
					x, y = 2*x, 2*y
				}
				sq += x
				a2 += y
			}
		}
		accSq.add(sq)
		accA2.add(a2)
	}
	flush()

	dm := &Moments{Mean: make([]*big.Rat, V)}
	dpN := new(big.Int).Exp(big.NewInt(e.dp), big.NewInt(int64(N)), nil)
	bigL := big.NewInt(L)
	// Mean: over L dp^N den1 dp.
	den := new(big.Int).Mul(bigL, dpN)
	den.Mul(den, e.den1)
	den.Mul(den, big.NewInt(e.dp))
	for v := range V {
		dm.Mean[v] = new(big.Rat).Quo(totMean[v], new(big.Rat).SetInt(den))
	}
	// Second moments: over L^2 dp^N Dq dp^2, and N L^2 dp^N Dq.
	den = new(big.Int).Mul(bigL, bigL)
	den.Mul(den, dpN)
	den.Mul(den, e.dq)
	denA := new(big.Int).Mul(den, big.NewInt(int64(N)))
	den.Mul(den, big.NewInt(e.dp*e.dp))
	dm.SquaredNorm = new(big.Rat).Quo(totSq, new(big.Rat).SetInt(den))
	dm.SearchSquare = new(big.Rat).Quo(totA2, new(big.Rat).SetInt(denA))
	dm.Variance = new(big.Rat).Set(dm.SquaredNorm)
	for _, m := range dm.Mean {
		dm.Variance.Sub(dm.Variance, new(big.Rat).Mul(m, m))
	}
	cover := totCover
	dm.M = new(big.Rat).Quo(cover, big.NewRat(int64(d.size), 1))
	dm.M.Sub(dm.M, big.NewRat(1, 1))
	dm.NoCredit = new(big.Rat).Quo(cover, big.NewRat(int64(N), 1))
	dm.NoCredit.Sub(big.NewRat(1, 1), dm.NoCredit)
	return dm, nil
}
