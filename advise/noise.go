package advise

import (
	"errors"
	"fmt"
	"math/big"

	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/inputerr"
)

// NoiseClosedForm returns Noise1 (the reward-noise term of Var(g/M) at N2 =
// 1, see SearchVariance) for a symmetric objective t in closed form, through
// the design's counts. Given the selection S and the traces, the score of
// set H has variance f_H (1 - f_H)/N2 and enters g with the coefficient
// sum_i w_S(i, H) s_i, s_i = e_{y_i} - p, w_S(i, H) = [i in H]/c_i -
// [c_i > 0]/K. A trace outside H is independent of f_H and has mean score
// 0, so only three moments of the toy problem remain,
//
//	B_d = E[f(1-f) ||s_1||^2],  B_o = E[f(1-f) s_1.s_2],  F sigma^2 = E[f(1-f)] E||s||^2,
//
// and, with u_i = 1/c_i - 1/K for the members of H and C_S the traces
// covered,
//
//	M^2 Noise1 = E_S sum_{H in S} [ (B_d - B_o) sum_{i in H} u_i^2
//	             + B_o (sum_{i in H} u_i)^2 + F sigma^2 (C_S - n)/K^2 ].
//
// The selections are enumerated (at most 2,097,152); the moments cost V^n.
// It returns an error if t is not symmetric or its sizes do not match c
// and d, or M = 0.
func NoiseClosedForm(d *estimator.SetDistribution, c *estimator.Categorical, t *estimator.Table) (*big.Rat, error) {
	if d.SetSize() != t.Arity() {
		return nil, fieldError(FieldTable, "a table over %d symbols of arity %d, the policy has %d symbols and the sets %d members", t.V(), t.Arity(), c.Size(), d.SetSize())
	}
	nm, err := newNoiseMoments(c, t)
	if err != nil {
		return nil, err
	}
	sum, err := countsTerm(d, nm.diag, nm.Bo, nm.Fs)
	if err != nil {
		return nil, err
	}
	cover, _, err := coverLaw(d) // E[C_S], which d.Coverage sums in rationals selection by selection
	if err != nil {
		return nil, err
	}
	return noiseOf(sum, cover, d.SetSize())
}

// noiseMoments are the toy problem's moments in NoiseClosedForm: diag =
// B_d - B_o, Bo = B_o and Fs = F sigma^2.
type noiseMoments struct{ diag, Bo, Fs *big.Rat }

// newNoiseMoments returns the moments of policy c and the symmetric
// objective t, by enumeration of [V]^n.
func newNoiseMoments(c *estimator.Categorical, t *estimator.Table) (noiseMoments, error) {
	V, n := t.V(), t.Arity()
	if c.Size() != V {
		return noiseMoments{}, fieldError(FieldTable, "a table over %d symbols, the policy has %d", V, c.Size())
	}
	if !symmetric(t) {
		return noiseMoments{}, fieldError(FieldTable, "not symmetric: the closed noise term needs a symmetric objective")
	}
	one := big.NewRat(1, 1)
	dot := func(u, v int) *big.Rat { // s_u . s_v for symbols u, v
		su, sv := c.Score(u), c.Score(v)
		x := new(big.Rat)
		for k := range su {
			x.Add(x, new(big.Rat).Mul(su[k], sv[k]))
		}
		return x
	}
	Bd, Bo, F, sigma2 := new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
	for v := range V {
		sigma2.Add(sigma2, new(big.Rat).Mul(c.Prob(v), dot(v, v)))
	}
	y := make([]int, n)
	for idx := range t.Len() {
		r := idx
		prob := new(big.Rat).Set(one)
		for k := n - 1; k >= 0; k-- {
			y[k] = r % V
			r /= V
			prob.Mul(prob, c.Prob(y[k]))
		}
		f := t.At(y)
		w := new(big.Rat).Sub(one, f)
		w.Mul(w, f).Mul(w, prob) // P(y) f (1 - f)
		F.Add(F, w)
		Bd.Add(Bd, new(big.Rat).Mul(w, dot(y[0], y[0])))
		if n > 1 {
			Bo.Add(Bo, new(big.Rat).Mul(w, dot(y[0], y[1])))
		}
	}
	return noiseMoments{diag: Bd.Sub(Bd, Bo), Bo: Bo, Fs: F.Mul(F, sigma2)}, nil
}

// noiseOf returns sum/M^2, M = cover/n - 1: Noise1 from the design's sum
// M^2 Noise1 and its mean coverage.
func noiseOf(sum, cover *big.Rat, n int) (*big.Rat, error) {
	M := new(big.Rat).Quo(cover, new(big.Rat).SetInt64(int64(n)))
	M.Sub(M, big.NewRat(1, 1))
	if M.Sign() == 0 {
		return nil, errors.New("advise: the design's M is 0")
	}
	return new(big.Rat).Quo(sum, M.Mul(M, M)), nil
}

// noiseUniform returns Noise1 for K sets drawn uniformly from the subsets
// f, in closed form. By symmetry E_S sum_{H in S} (...) = K E[... | H in S],
// and given H in S the other K - 1 sets are drawn uniformly from the
// remaining T - 1. For two members i, j of H those split into Tb = C(N1-2,
// n-2) - 1 sets holding both, Ti = C(N1-2, n-1) holding i alone, as many
// holding j alone, and T0 = C(N1-2, n) holding neither; drawing a, b, c of
// the first three kinds (multivariate hypergeometric), c_i = 1 + a + b and
// c_j = 1 + a + c, so
//
//	M^2 Noise1 = K (B_d n E[u_i^2] + B_o n (n-1) E[u_i u_j]) + F sigma^2 (E[C_S] - n)/K,
//
// with E[C_S] from CoverMoments. The cost is O(K^3) terms.
func noiseUniform(f combin.Family, K int, nm noiseMoments) (*big.Rat, error) {
	if f.Ordered() {
		return nil, errors.New("advise: the uniform noise closed form is for subsets")
	}
	N1, n := f.Traces(), f.SetSize()
	T, _ := f.Count64()
	if K < 1 || uint64(K) > T {
		return nil, fmt.Errorf("advise: K = %d sets not in [1, %d]", K, T)
	}
	binom := func(a, b int) *big.Int {
		if a < 0 || b < 0 || b > a {
			return new(big.Int)
		}
		return new(big.Int).Binomial(int64(a), int64(b))
	}
	Tb := new(big.Int).Sub(binom(N1-2, n-2), big.NewInt(1))
	Ti := binom(N1-2, n-1)
	T0 := binom(N1-2, n)
	choose := func(x *big.Int, k int) *big.Int {
		if !x.IsInt64() || k < 0 || int64(k) > x.Int64() {
			return new(big.Int)
		}
		return new(big.Int).Binomial(x.Int64(), int64(k))
	}
	all := new(big.Int).Binomial(int64(T)-1, int64(K-1))
	u := func(c int) *big.Rat { return new(big.Rat).Sub(big.NewRat(1, int64(c)), big.NewRat(1, int64(K))) }
	uv := new(big.Rat) // the weighted sum of u_i u_j
	u2 := new(big.Rat)
	for a := 0; a <= K-1; a++ {
		for b := 0; a+b <= K-1; b++ {
			for c := 0; a+b+c <= K-1; c++ {
				w := new(big.Int).Mul(choose(Tb, a), choose(Ti, b))
				w.Mul(w, choose(Ti, c))
				w.Mul(w, choose(T0, K-1-a-b-c))
				if w.Sign() == 0 {
					continue
				}
				wr := new(big.Rat).SetInt(w)
				ui, uj := u(1+a+b), u(1+a+c)
				u2.Add(u2, new(big.Rat).Mul(wr, new(big.Rat).Mul(ui, ui)))
				uv.Add(uv, wr.Mul(wr, ui.Mul(ui, uj)))
			}
		}
	}
	inv := new(big.Rat).SetFrac(big.NewInt(1), all)
	u2.Mul(u2, inv)
	uv.Mul(uv, inv)
	Bd := new(big.Rat).Add(nm.diag, nm.Bo)
	per := new(big.Rat).Mul(Bd, u2.Mul(u2, big.NewRat(int64(n), 1)))
	per.Add(per, uv.Mul(uv, new(big.Rat).Mul(nm.Bo, big.NewRat(int64(n)*int64(n-1), 1))))
	sum := per.Mul(per, big.NewRat(int64(K), 1))
	cover, _, err := CoverMoments(f, K)
	if err != nil {
		return nil, err
	}
	out := new(big.Rat).Sub(cover, new(big.Rat).SetInt64(int64(n)))
	out.Mul(out, nm.Fs)
	sum.Add(sum, out.Quo(out, big.NewRat(int64(K), 1)))
	return noiseOf(sum, cover, n)
}

// countsTerm returns the sum over d's selections in NoiseClosedForm, which
// depends on a selection only through three integers: with D = lcm(1..K),
// so that D u_i = D/c_i - D/K is an integer,
//
//	A = sum_{H in S} sum_{i in H} (D u_i)^2,  B = sum_{H in S} (sum_{i in H} D u_i)^2,  C = C_S,
//
// and the term is ((B_d - B_o) A + B_o B)/D^2 + F sigma^2 K (C - n)/K^2. It
// counts the selections of each (K, A, B, C) in runs of one probability,
// integer work per selection, and falls back to rational arithmetic per
// selection when D^2 K n^2 might overflow.
func countsTerm(d *estimator.SetDistribution, diag, Bo, Fs *big.Rat) (*big.Rat, error) {
	N, n := d.Traces(), d.SetSize()
	sets := make([][]int, d.NumSets())
	for h := range sets {
		sets[h] = d.Set(h)
	}
	counts := make([]int, N)
	type key struct {
		K       int
		A, B, C int64
	}
	run := map[key]int64{}
	sum := new(big.Rat)
	exact := false // a selection too large for the integer path
	lcm := []int64{1}
	err := selectionRuns(d, func(sel []int) {
		K := len(sel)
		if exact || K > 16 {
			exact = true
			return
		}
		for len(lcm) <= K {
			k := int64(len(lcm))
			l := lcm[k-1]
			lcm = append(lcm, l/gcd(l, k)*k)
		}
		D := lcm[K]
		if float64(D)*float64(D)*float64(K)*float64(n)*float64(n) > 1<<62 {
			exact = true
			return
		}
		clear(counts)
		for _, h := range sel {
			for _, i := range sets[h] {
				counts[i]++
			}
		}
		var k key
		k.K = K
		for _, c := range counts {
			if c > 0 {
				k.C++
			}
		}
		for _, h := range sel {
			var s1 int64
			for _, i := range sets[h] {
				u := D/int64(counts[i]) - D/int64(K)
				s1 += u
				k.A += u * u
			}
			k.B += s1 * s1
		}
		run[k]++
	}, func(prob *big.Rat) {
		for k, count := range run {
			D := lcm[k.K]
			term := new(big.Rat).Mul(diag, new(big.Rat).SetInt64(k.A))
			term.Add(term, new(big.Rat).Mul(Bo, new(big.Rat).SetInt64(k.B)))
			term.Quo(term, new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(D), big.NewInt(D))))
			term.Add(term, new(big.Rat).Mul(Fs, big.NewRat(int64(k.K)*(k.C-int64(n)), int64(k.K)*int64(k.K))))
			term.Mul(term, new(big.Rat).SetInt64(count))
			sum.Add(sum, term.Mul(term, prob))
		}
		clear(run)
	})
	if err != nil || !exact {
		return sum, err
	}
	return countsTermExact(d, diag, Bo, Fs)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// countsTermExact is countsTerm in rational arithmetic, selection by
// selection.
func countsTermExact(d *estimator.SetDistribution, diag, Bo, Fs *big.Rat) (*big.Rat, error) {
	N, n := d.Traces(), d.SetSize()
	sets := make([][]int, d.NumSets())
	for h := range sets {
		sets[h] = d.Set(h)
	}
	counts := make([]int, N)
	sum := new(big.Rat)
	selections := 0
	for sel, prob := range d.Selections() {
		if selections++; selections > maxSelections {
			return nil, inputerr.TooCostly(fmt.Sprintf("the design has more than %d selections", maxSelections))
		}
		clear(counts)
		for _, h := range sel {
			for _, i := range sets[h] {
				counts[i]++
			}
		}
		K := len(sel)
		covered := 0
		for _, ci := range counts {
			if ci > 0 {
				covered++
			}
		}
		invK := big.NewRat(1, int64(K))
		term := new(big.Rat)
		for _, h := range sel {
			s1, s2 := new(big.Rat), new(big.Rat)
			for _, i := range sets[h] {
				u := new(big.Rat).Sub(big.NewRat(1, int64(counts[i])), invK)
				s1.Add(s1, u)
				s2.Add(s2, new(big.Rat).Mul(u, u))
			}
			term.Add(term, s2.Mul(s2, diag))
			term.Add(term, s1.Mul(s1.Mul(s1, s1), Bo))
		}
		out := new(big.Rat).Mul(Fs, big.NewRat(int64(K)*int64(covered-n), int64(K)*int64(K)))
		term.Add(term, out)
		sum.Add(sum, term.Mul(term, prob))
	}
	return sum, nil
}
