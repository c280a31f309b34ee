package advise

import (
	"errors"
	"fmt"
	"iter"
	"math/big"
	"slices"

	"spiral/combin"
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
//
// Under the leave-one-out baseline an output's advantage r_j - (N2 rbar -
// r_j)/(N2 - 1) is N2/(N2 - 1) times the within-set one and the weight is
// K N2, so the scaled update, and every term here, is the same.
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
	if N2 < 2 || N2 > MaxAggregations {
		return nil, argError(FieldN2, -1, N2, "%d outside [2, %d]", N2, MaxAggregations)
	}
	terms, err := newAggregationTerms(d.SetSize(), c, success)
	if err != nil {
		return nil, err
	}
	if err := terms.pairsOf(d, c, false); err != nil {
		return nil, err
	}
	return terms.at(N2), nil
}

// aggregationTerms are the parts of AggregationVariance that do not depend
// on N2: the contexts' probabilities and success rates, and the pair sum
// P = E_S sum_{G != G' in S} E[m(ctx_G) m(ctx_G') [ctx_G = ctx_G']] with
// m = s (1 - s) (E[U | ctx] = (N2 - 1) m). With shuffled set true each set
// is presented in a uniformly random order, independently, which leaves
// the law of one context (the traces are iid) and so everything but P
// unchanged; P then averages over the presentations.
type aggregationTerms struct {
	K        int
	prob, s  []*big.Rat
	m        []*big.Rat
	pairs    *big.Rat
	shuffled bool
	same     *presentedMemo // shared by the evaluations of one set size, or nil
	// The parts of at that do not depend on N2: E_ctx m^2, the signal, and
	// the distinct success rates with the probability of their contexts.
	m2, signal      *big.Rat
	rates, rateMass []*big.Rat
}

func newAggregationTerms(n int, c *estimator.Categorical, success *estimator.Table) (*aggregationTerms, error) {
	V := success.V()
	if c.Size() != V || success.Arity() != n {
		return nil, fieldError(FieldSuccess, "a table over %d symbols of arity %d, the policy has %d symbols and the sets %d members", V, success.Arity(), c.Size(), n)
	}
	L := success.Len()
	t := &aggregationTerms{prob: make([]*big.Rat, L), s: success.Values(), m: make([]*big.Rat, L)}
	y := make([]int, n)
	for idx := range L {
		r := idx
		p := big.NewRat(1, 1)
		for k := n - 1; k >= 0; k-- {
			y[k] = r % V
			r /= V
			p.Mul(p, c.Prob(y[k]))
		}
		t.prob[idx] = p
		m := new(big.Rat).Sub(big.NewRat(1, 1), t.s[idx])
		t.m[idx] = m.Mul(m, t.s[idx])
	}
	t.m2, t.signal = new(big.Rat), new(big.Rat)
	for idx, p := range t.prob {
		mm := new(big.Rat).Mul(t.m[idx], t.m[idx])
		t.m2.Add(t.m2, new(big.Rat).Mul(mm, p))
		t.signal.Add(t.signal, mm.Mul(mm, new(big.Rat).Mul(p, p)))
		j := slices.IndexFunc(t.rates, func(r *big.Rat) bool { return r.Cmp(t.s[idx]) == 0 })
		if j < 0 {
			j = len(t.rates)
			t.rates, t.rateMass = append(t.rates, t.s[idx]), append(t.rateMass, new(big.Rat))
		}
		t.rateMass[j].Add(t.rateMass[j], p)
	}
	t.signal.Mul(t.signal, big.NewRat(2, 1))
	return t, nil
}

// pairsOf sums the pair terms over d's selections. With relabelled true
// the design is d relabelled uniformly (d is estimator.BalancedClasses'
// law): each pair of sets then counts with the average of its term over
// relabellings, which moves it uniformly over the pairs of sets sharing as
// many traces, so the average is over those pairs of the family.
func (t *aggregationTerms) pairsOf(d *estimator.SetDistribution, c *estimator.Categorical, relabelled bool) error {
	T := d.NumSets()
	if T > 1024 {
		return errors.New("advise: more than 1024 sets")
	}
	sets := make([][]int, T)
	for h := range sets {
		sets[h] = d.Set(h)
	}
	same := t.presented(c)
	pair := make([]*big.Rat, T*T)
	for g := range T {
		for h := range T {
			if g != h {
				pair[g*T+h] = same.of(sets[g], sets[h])
			}
		}
	}
	// class[g*T+h] indexes the value of the pair in value: the pair itself,
	// or under relabelled its overlap.
	class, value := make([]int, T*T), pair
	for gh := range class {
		class[gh] = gh
	}
	if relabelled {
		class, value = averageByOverlap(pair, sets)
	}
	t.K, t.pairs = -1, new(big.Rat)
	counts := make([]int64, len(value)) // how often each class is selected in the run
	var touched []int                   // the classes with a count, so a run costs its own
	sizes := true
	err := selectionRuns(d, func(sel []int) {
		if t.K < 0 {
			t.K = len(sel)
		} else if t.K != len(sel) {
			sizes = false
		}
		for _, g := range sel {
			for _, h := range sel {
				if g != h {
					k := class[g*T+h]
					if counts[k] == 0 {
						touched = append(touched, k)
					}
					counts[k]++
				}
			}
		}
	}, func(prob *big.Rat) {
		s := new(big.Rat)
		for _, k := range touched {
			s.Add(s, new(big.Rat).Mul(value[k], big.NewRat(counts[k], 1)))
			counts[k] = 0
		}
		t.pairs.Add(t.pairs, s.Mul(s, prob))
		touched = touched[:0]
	})
	if err != nil {
		return err
	}
	if !sizes {
		return errors.New("advise: selections of different sizes")
	}
	return nil
}

// averageByOverlap returns, for every ordered pair g*T+h of distinct sets,
// the number of traces they share, and for each such number the average
// of pair over the ordered pairs of distinct sets that share as many.
func averageByOverlap(pair []*big.Rat, sets [][]int) (overlap []int, average []*big.Rat) {
	T := len(sets)
	overlap = make([]int, T*T)
	var count []int64
	for g := range T {
		for h := range T {
			if g == h {
				continue
			}
			shared := 0
			for _, v := range sets[h] {
				if slices.Contains(sets[g], v) {
					shared++
				}
			}
			overlap[g*T+h] = shared
			for len(average) <= shared {
				average, count = append(average, new(big.Rat)), append(count, 0)
			}
			average[shared].Add(average[shared], pair[g*T+h])
			count[shared]++
		}
	}
	for s := range average {
		if count[s] > 0 {
			average[s].Quo(average[s], big.NewRat(count[s], 1))
		}
	}
	return overlap, average
}

// pairsUniform is pairsOf for K sets drawn uniformly from f, in closed form:
// every ordered pair of distinct sets is selected with probability
// K (K-1)/(T (T-1)).
func (t *aggregationTerms) pairsUniform(f combin.Family, K int, c *estimator.Categorical) error {
	T64, ok := f.Count64()
	if !ok || T64 > 1024 {
		return errors.New("advise: more than 1024 sets")
	}
	T := int(T64)
	if K < 1 || K > T {
		return fmt.Errorf("advise: K = %d sets not in [1, %d]", K, T)
	}
	var sets [][]int
	for g := range f.All() {
		sets = append(sets, slices.Clone(g))
	}
	t.K, t.pairs = K, new(big.Rat)
	if T < 2 {
		return nil
	}
	same := t.presented(c)
	for g := range T {
		for h := range T {
			if g != h {
				t.pairs.Add(t.pairs, same.of(sets[g], sets[h]))
			}
		}
	}
	t.pairs.Mul(t.pairs, big.NewRat(int64(K)*int64(K-1), int64(T)*int64(T-1)))
	return nil
}

// at returns the decomposition at N2 >= 2:
//
//	Outputs = 2 K E_ctx Var(U | ctx)/(K a)^2,
//	Draws   = 2 (E_ctx m^2/K + P/K^2) - Signal,  Signal = 2 sum_ctx P(ctx)^2 m^2,
//
// since E[U | ctx] = a m and E||u||^2 = 2 (K E[U^2] + a^2 P).
func (t *aggregationTerms) at(N2 int) *AggregationVariance {
	K := new(big.Rat).SetInt64(int64(t.K))
	a := new(big.Rat).SetInt64(int64(N2 - 1))
	w := new(big.Rat).Mul(K, a)
	outputs := new(big.Rat)
	for j, s := range t.rates { // Var(U | ctx) depends on ctx only through s
		mean, square := binaryMoments(s, N2)
		v := square.Sub(square, mean.Mul(mean, mean))
		outputs.Add(outputs, v.Mul(v, t.rateMass[j]))
	}
	two := big.NewRat(2, 1)
	signal := new(big.Rat).Set(t.signal)
	m2 := t.m2
	outputs.Mul(outputs, new(big.Rat).Mul(two, K))
	outputs.Quo(outputs, new(big.Rat).Mul(w, w))
	draws := new(big.Rat).Quo(m2, K)
	draws.Add(draws, new(big.Rat).Quo(t.pairs, new(big.Rat).Mul(K, K)))
	draws.Mul(draws, two)
	draws.Sub(draws, signal)
	return &AggregationVariance{Weight: w, Signal: signal, Outputs: outputs, Draws: draws}
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

// presented returns the shared presentedMemo, or a new one.
func (t *aggregationTerms) presented(c *estimator.Categorical) *presentedMemo {
	if t.same != nil {
		return t.same
	}
	return newPresentedMemo(c, t.m, t.shuffled)
}

// presentedMemo memoises samePresented by where H's traces sit in G: for
// each position k, the position of H[k] in G or none. The traces being iid,
// that pattern fixes the components of traces and so the value; a family
// has few patterns, against up to a million pairs of sets.
//
// With shuffled set, G and H are each presented in a uniformly random
// order, independently, and of returns the average of samePresented over
// the n!^2 presentations. For a symmetric mean (which the caller checks),
// presenting G as G o sigma and H as H o tau is presenting G as drawn and
// H as H o tau sigma^-1, so the average is over the n! orders of H alone,
// and, relabelling traces, it depends only on how many traces G and H
// share.
type presentedMemo struct {
	c         *estimator.Categorical
	mean      []*big.Rat
	memo      map[string]*big.Rat
	key       []byte
	shuffled  bool
	byOverlap map[int]*big.Rat
}

func newPresentedMemo(c *estimator.Categorical, mean []*big.Rat, shuffled bool) *presentedMemo {
	return &presentedMemo{c: c, mean: mean, memo: map[string]*big.Rat{}, shuffled: shuffled, byOverlap: map[int]*big.Rat{}}
}

// of returns samePresented(G, H), or its average over the presentations,
// for two sets of n distinct traces each.
func (p *presentedMemo) of(G, H []int) *big.Rat {
	if !p.shuffled {
		return p.inOrder(G, H)
	}
	shared := 0
	for _, h := range H {
		if slices.Contains(G, h) {
			shared++
		}
	}
	if v, ok := p.byOverlap[shared]; ok {
		return v
	}
	sum, count := new(big.Rat), int64(0)
	presented := make([]int, len(H))
	for perm := range permutations(len(H)) {
		for k, j := range perm {
			presented[k] = H[j]
		}
		sum.Add(sum, p.inOrder(G, presented))
		count++
	}
	v := sum.Quo(sum, big.NewRat(count, 1))
	p.byOverlap[shared] = v
	return v
}

// permutations yields the n! permutations of [0, n) (Heap's algorithm), in
// one buffer.
func permutations(n int) iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		a := make([]int, n)
		for i := range a {
			a[i] = i
		}
		c := make([]int, n)
		if !yield(a) {
			return
		}
		for i := 0; i < n; {
			if c[i] < i {
				if i%2 == 0 {
					a[0], a[i] = a[i], a[0]
				} else {
					a[c[i]], a[i] = a[i], a[c[i]]
				}
				if !yield(a) {
					return
				}
				c[i]++
				i = 0
			} else {
				c[i] = 0
				i++
			}
		}
	}
}

// inOrder returns samePresented(G, H), memoised.
func (p *presentedMemo) inOrder(G, H []int) *big.Rat {
	if len(G) > 254 { // a position would not fit in a byte
		return samePresented(G, H, p.c, p.mean, p.c.Size())
	}
	p.key = p.key[:0]
	for _, h := range H {
		p.key = append(p.key, byte(slices.Index(G, h)+1)) // 0 when H[k] is not in G
	}
	if v, ok := p.memo[string(p.key)]; ok {
		return v
	}
	v := samePresented(G, H, p.c, p.mean, p.c.Size())
	p.memo[string(p.key)] = v
	return v
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
