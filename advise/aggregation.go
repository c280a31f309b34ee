package advise

import (
	"errors"
	"fmt"
	"math/big"

	"spiral/estimator"
)

// AggregationVariance is the variance of the unbiased-scaled aggregation
// update u/(K a) of one problem for a binary aggregator: given the presented
// candidates ctx, an output is correct with probability s(ctx) and earns
// reward 1, else 0, under a tabular softmax with its own parameters per
// context (estimator.Aggregator with two outputs), and the within-set
// baseline (a = N2 - 1). For such an aggregator the update of one set is
//
//	u_G = sum_j (r_j - rbar)(r_j - s) (e_1 - e_2) = U_G (e_1 - e_2),
//	U_G = X (N2 - X)/N2,  X ~ Binomial(N2, s(ctx_G)),
//
// on the parameters of context ctx_G, so sets showing the same context add.
// Conditioning on the traces and the sets,
//
//	Var(u/(K a)) = Outputs + Draws,
//	Outputs = 2 K E_ctx Var(U | ctx)/(K a)^2,
//	Draws   = (2 E[sum_{G, G' in S} E[U_G | ctx] E[U_G' | ctx'] [ctx_G = ctx_G']] - ||E u||^2)/(K a)^2,
//
// Outputs, the outputs' reward noise, does not depend on the design; Draws,
// from which traces and sets were drawn, depends on it only through the
// chance that two selected sets present the same context, which is a
// function of where they share traces.
type AggregationVariance struct {
	// Weight is K a = K (N2 - 1), the role weight of the aggregation part.
	Weight *big.Rat
	// Signal is ||grad_phi J||^2.
	Signal *big.Rat
	// Outputs and Draws are the terms above.
	Outputs, Draws *big.Rat
}

// Total returns Outputs + Draws.
func (v *AggregationVariance) Total() *big.Rat { return new(big.Rat).Add(v.Outputs, v.Draws) }

// DecomposeAggregation returns the variance decomposition of the
// unbiased-scaled aggregation update for N iid traces from c, sets drawn
// from d and presented in their listed order, N2 >= 2 outputs per set and
// the binary aggregator whose success probability in context ctx is
// success's value there. The pair term is found for every two listed sets
// by enumerating the symbols of the traces they hold (V^(2n) at most) and
// summed over d's selections (at most 2,097,152). It returns an error if the
// sizes of c, success and d do not match, N2 < 2, or the design has more
// than 1,024 sets.
func DecomposeAggregation(d *estimator.SetDistribution, c *estimator.Categorical, success *estimator.Table, N2 int) (*AggregationVariance, error) {
	V, n := success.V(), success.Arity()
	if c.Size() != V || d.SetSize() != n {
		return nil, fmt.Errorf("advise: policy of %d symbols, table over %d symbols of arity %d, sets of %d", c.Size(), V, n, d.SetSize())
	}
	if N2 < 2 || N2 > MaxAggregations {
		return nil, fmt.Errorf("advise: N2 = %d not in [2, %d]", N2, MaxAggregations)
	}
	T := d.NumSets()
	if T > 1024 {
		return nil, errors.New("advise: more than 1024 sets")
	}
	one := big.NewRat(1, 1)
	// Per context: P(ctx), E[U | ctx] and E[U^2 | ctx].
	L := success.Len()
	prob := make([]*big.Rat, L)
	mean := make([]*big.Rat, L)
	square := make([]*big.Rat, L)
	y := make([]int, n)
	for idx := range L {
		r := idx
		p := new(big.Rat).Set(one)
		for k := n - 1; k >= 0; k-- {
			y[k] = r % V
			r /= V
			p.Mul(p, c.Prob(y[k]))
		}
		prob[idx] = p
		mean[idx], square[idx] = binaryMoments(success.At(y), N2)
	}
	a := new(big.Rat).SetInt64(int64(N2 - 1))
	K := -1
	// Pair terms h(G, G') = E[E[U|ctx_G] E[U|ctx_G'] [ctx_G = ctx_G']].
	sets := make([][]int, T)
	for h := range sets {
		sets[h] = d.Set(h)
	}
	pair := make([]*big.Rat, T*T)
	for g := range T {
		for h := range T {
			if g != h {
				pair[g*T+h] = samePresented(sets[g], sets[h], c, mean, V)
			}
		}
	}
	draws := new(big.Rat)
	selections := 0
	for sel, p := range d.Selections() {
		if selections++; selections > maxSelections {
			return nil, fmt.Errorf("advise: the design has more than %d selections", maxSelections)
		}
		if K < 0 {
			K = len(sel)
		} else if K != len(sel) {
			return nil, errors.New("advise: selections of different sizes")
		}
		s := new(big.Rat)
		for _, g := range sel {
			for _, h := range sel {
				if g != h {
					s.Add(s, pair[g*T+h])
				}
			}
		}
		draws.Add(draws, s.Mul(s, p))
	}
	Kr := new(big.Rat).SetInt64(int64(K))
	outputs, sq, signal := new(big.Rat), new(big.Rat), new(big.Rat)
	for idx := range L {
		// E[U^2] over contexts, Var(U | ctx), and ||grad_phi J||^2 =
		// 2 sum P(ctx)^2 s^2 (1-s)^2 = 2 sum P(ctx)^2 (E[U|ctx]/a)^2.
		sq.Add(sq, new(big.Rat).Mul(prob[idx], square[idx]))
		v := new(big.Rat).Sub(square[idx], new(big.Rat).Mul(mean[idx], mean[idx]))
		outputs.Add(outputs, v.Mul(v, prob[idx]))
		g := new(big.Rat).Mul(prob[idx], mean[idx])
		g.Quo(g, a)
		signal.Add(signal, g.Mul(g, g))
	}
	signal.Mul(signal, big.NewRat(2, 1))
	w := new(big.Rat).Mul(Kr, a)
	w2 := new(big.Rat).Mul(w, w)
	// E||u||^2 = 2 (K E[U^2] + draws); ||E u||^2 = (K a)^2 signal.
	total := new(big.Rat).Add(new(big.Rat).Mul(Kr, sq), draws)
	total.Mul(total, big.NewRat(2, 1))
	total.Quo(total, w2)
	total.Sub(total, signal)
	outputs.Mul(outputs, new(big.Rat).Mul(big.NewRat(2, 1), Kr))
	outputs.Quo(outputs, w2)
	return &AggregationVariance{Weight: w, Signal: signal, Outputs: outputs, Draws: total.Sub(total, outputs)}, nil
}

// binaryMoments returns E[U] and E[U^2] for U = X (N2 - X)/N2, X ~
// Binomial(N2, s).
func binaryMoments(s *big.Rat, N2 int) (m1, m2 *big.Rat) {
	m1, m2 = new(big.Rat), new(big.Rat)
	q := new(big.Rat).Sub(big.NewRat(1, 1), s)
	for x := 0; x <= N2; x++ {
		p := new(big.Rat).SetInt(new(big.Int).Binomial(int64(N2), int64(x)))
		for range x {
			p.Mul(p, s)
		}
		for range N2 - x {
			p.Mul(p, q)
		}
		u := big.NewRat(int64(x*(N2-x)), int64(N2))
		t := new(big.Rat).Mul(p, u)
		m1.Add(m1, t)
		m2.Add(m2, t.Mul(t, u))
	}
	return m1, m2
}

// samePresented returns E[mean(ctx_G) mean(ctx_H) [ctx_G = ctx_H]]: the
// presented tuples are equal exactly when, joining G[k] and H[k] for every
// position k, every component of traces holds one symbol.
func samePresented(G, H []int, c *estimator.Categorical, mean []*big.Rat, V int) *big.Rat {
	n := len(G)
	// Components over the traces of G and H.
	label := map[int]int{}
	parent := []int{}
	find := func(x int) int {
		for parent[x] != x {
			x = parent[x]
		}
		return x
	}
	id := func(i int) int {
		if l, ok := label[i]; ok {
			return l
		}
		label[i] = len(parent)
		parent = append(parent, len(parent))
		return label[i]
	}
	for k := range n {
		a, b := find(id(G[k])), find(id(H[k]))
		if a != b {
			parent[a] = b
		}
	}
	roots := map[int]int{} // root -> component index
	size := []int{}
	for x := range parent {
		r := find(x)
		if _, ok := roots[r]; !ok {
			roots[r] = len(size)
			size = append(size, 0)
		}
		size[roots[r]]++
	}
	comp := make([]int, n) // component of position k
	for k := range n {
		comp[k] = roots[find(label[G[k]])]
	}
	sum := new(big.Rat)
	sym := make([]int, len(size))
	for {
		p := big.NewRat(1, 1)
		for j, v := range sym {
			for range size[j] {
				p.Mul(p, c.Prob(v))
			}
		}
		idx := 0
		for k := range n {
			idx = idx*V + sym[comp[k]]
		}
		m := new(big.Rat).Mul(mean[idx], mean[idx])
		sum.Add(sum, m.Mul(m, p))
		j := 0
		for ; j < len(sym); j++ {
			if sym[j]++; sym[j] < V {
				break
			}
			sym[j] = 0
		}
		if j == len(sym) {
			return sum
		}
	}
}
