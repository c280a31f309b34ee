package estimator

import (
	"fmt"
	"iter"
	"math"
	"math/big"

	"spiral/combin"
)

// presented returns the table of set scores under presentation rule p, as a
// function of the members' symbols in listed order: f itself for
// combin.IndexOrder, f(sort(y)) for SortedBySymbol, and for combin.Shuffled
// the average of f over the n! orders, sym f(y) = (1/n!) sum_pi f(y_pi).
// The last is exact for expectations because the shuffle is drawn
// independently of everything else and the estimator is linear in each set
// score.
func presented(t *Table, p combin.Order) (*Table, error) {
	switch p {
	case combin.IndexOrder:
		return t, nil
	case SortedBySymbol, combin.Shuffled:
	default:
		return nil, undefinedError(FieldOrder, int(p), "presentation")
	}
	V, n := t.v, t.n
	y := make([]int, n)
	key := make([]int, len(t.vals))
	for i := range key {
		decode(y, i, V)
		key[i] = sortedIndex(y, V)
	}
	vals := make([]*big.Rat, len(t.vals))
	if p == SortedBySymbol {
		for i, k := range key {
			vals[i] = t.vals[k]
		}
	} else {
		// A uniform permutation gives every distinct arrangement of the
		// multiset the same probability, so the permutation average is the
		// plain average over the arrangements sharing a sorted key.
		sum := make(map[int]*big.Rat)
		cnt := make(map[int]int64)
		for i, k := range key {
			if sum[k] == nil {
				sum[k] = new(big.Rat)
			}
			sum[k].Add(sum[k], t.vals[i])
			cnt[k]++
		}
		for i, k := range key {
			vals[i] = new(big.Rat).Quo(sum[k], big.NewRat(cnt[k], 1))
		}
	}
	return NewTable(V, n, vals)
}

// Objective returns J_p = E[f(present_p(y_1, ..., y_n))] for n iid symbols
// from c, exactly, by enumeration of the V^n tuples. For combin.IndexOrder and
// combin.Shuffled it equals J = E[f(y_1, ..., y_n)]; for SortedBySymbol it is
// J_sort = E[f(sort(y_1, ..., y_n))]. It returns an error if c.Size() !=
// t.V() or p is unknown.
func Objective(c *Categorical, t *Table, p combin.Order) (*big.Rat, error) {
	j, _, err := objectiveAndGradient(c, t, p)
	return j, err
}

// Gradient returns the exact gradient with respect to the logits of
// J_p = E[f(present_p(y_1, ..., y_n))], by enumeration of the V^n tuples:
//
//	grad J_p = sum_y p(y_1)...p(y_n) f_p(y) sum_{k=1..n} (e_{y_k} - p).
//
// With p = combin.IndexOrder this is grad J, the search part of the set-objective
// gradient (docs/method.md#proposition-31). Errors are as for Objective.
func Gradient(c *Categorical, t *Table, p combin.Order) ([]*big.Rat, error) {
	_, g, err := objectiveAndGradient(c, t, p)
	return g, err
}

func objectiveAndGradient(c *Categorical, t *Table, p combin.Order) (*big.Rat, []*big.Rat, error) {
	if err := checkPolicyTable(c, t); err != nil {
		return nil, nil, err
	}
	if c.Size() != t.V() {
		return nil, nil, argError(FieldTable, -1, t.V(), "V = %d symbols, the policy has V = %d", t.V(), c.Size())
	}
	tp, err := presented(t, p)
	if err != nil {
		return nil, nil, err
	}
	V, n := t.v, t.n
	j := new(big.Rat)
	// sumCount[v] = E[f_p(y) #{k: y_k = v}]; grad = sumCount - n p J_p.
	sumCount := make([]*big.Rat, V)
	for v := range sumCount {
		sumCount[v] = new(big.Rat)
	}
	y := make([]int, n)
	prob, term := new(big.Rat), new(big.Rat)
	for idx, fv := range tp.vals {
		if fv.Sign() == 0 {
			continue
		}
		decode(y, idx, V)
		prob.SetInt64(1)
		for _, s := range y {
			prob.Mul(prob, c.p[s])
		}
		term.Mul(prob, fv)
		j.Add(j, term)
		for _, s := range y {
			sumCount[s].Add(sumCount[s], term)
		}
	}
	grad := make([]*big.Rat, V)
	nj := new(big.Rat).Mul(j, big.NewRat(int64(n), 1))
	for v := range grad {
		grad[v] = new(big.Rat).Sub(sumCount[v], new(big.Rat).Mul(nj, c.p[v]))
	}
	return j, grad, nil
}

// Weights holds the selection-averaged credit matrix of the search
// estimator. For one selection S of K groups, with c_i the number of groups of
// S containing trace i, the participation-averaged advantage of Proposition
// 3.1 is linear in the set scores f_H:
//
//	A_marg(i) = sum_H w_S(i, H) f_H,
//	w_S(i, H) = [H in S] ( [i in H]/c_i - [c_i > 0]/K ),
//
// so the estimator g = sum_i score(y_i) A_marg(i) has expectation
//
//	E[g] = sum_i sum_H W(i, H) E_y[score(y_i) f_H(y)],   W = E_S[w_S].
//
// W depends only on the selection distribution, so it is computed once per
// configuration and reused for every policy and objective. Weights are
// immutable and safe for concurrent use.
type Weights struct {
	n      int        // number of traces N
	groups [][]int    // the T groups, members in listed order
	num    []*big.Int // W(i, h) = num[h*n+i] / den
	den    *big.Int
}

// Traces returns N1, the number of traces.
func (w *Weights) Traces() int { return w.n }

// NumSets returns T, the number of sets of the family or distribution.
func (w *Weights) NumSets() int { return len(w.groups) }

// Set returns a copy of set h's members in listed order. It panics if h is
// not in [0, NumSets()).
func (w *Weights) Set(h int) []int { return append([]int(nil), w.groups[h]...) }

// At returns W(i, h) exactly. It panics if i or h is out of range.
func (w *Weights) At(i, h int) *big.Rat {
	if i < 0 || i >= w.n {
		panic(fmt.Sprintf("estimator: Weights.At: trace %d out of range [0, %d)", i, w.n))
	}
	return new(big.Rat).SetFrac(w.num[h*w.n+i], w.den)
}

// maxSelections bounds the number of K-subsets SelectionWeights enumerates
// (about half a second of work per 10^7 selections at N = 8, K = 4).
const maxSelections = 1 << 25

// SelectionWeights returns W for K distinct groups drawn uniformly without
// replacement from the family f, by enumerating every one of the C(T, K)
// selections (no symmetry of the family is assumed: each W(i, H) is
// accumulated from the selections themselves). The arithmetic is exact: each
// selection adds the integers L/c_i and L/K, with L = lcm(1..K), and the sums
// are divided by L*C(T, K) at the end.
//
// It returns an error if K is not in [1, T], if T*N exceeds 33,554,432, or
// if C(T, K) exceeds 33,554,432 selections (the paper's configuration, subsets with
// N = 8, n = 4, K = 4, has C(70, 4) = 916,895; the tuple family at N = 8, n = 4 has C(1680, 4) ~ 3.3e11 and is refused).
func SelectionWeights(f combin.Family, K int) (*Weights, error) {
	N := f.Traces()
	T64, ok := f.Count64()
	if !ok || N < 1 || T64 > maxSelections/uint64(N) {
		return nil, elementError(FieldFamily, -1, "%v is too large for exact enumeration: T N1 > %d", f, maxSelections)
	}
	T := int(T64)
	if K < 1 || K > T {
		return nil, argError(FieldK, -1, K, "%d outside [1, T = %d]", K, T)
	}
	// C(T, k) >= 2^k for k <= T/2, so min(K, T-K) > 25 already exceeds the
	// limit; checking it first keeps the binomial below cheap.
	if min(K, T-K) > 25 {
		return nil, costError(FieldK, K, "C(T, K) = C(%d, %d) selections > %d, the most enumerated", T, K, maxSelections)
	}
	sel := new(big.Int).Binomial(int64(T), int64(K))
	if !sel.IsInt64() || sel.Int64() > maxSelections {
		return nil, costError(FieldK, K, "C(T, K) = C(%d, %d) = %v selections > %d, the most enumerated", T, K, sel, maxSelections)
	}
	L := int64(1)
	for k := int64(2); k <= int64(K); k++ {
		L = lcm(L, k)
		if L > math.MaxInt64/maxSelections {
			return nil, costError(FieldK, K, "lcm(1..K) too large for exact enumeration")
		}
	}
	groups := make([][]int, 0, T)
	for g := range f.All() {
		groups = append(groups, append([]int(nil), g...))
	}
	if len(groups) != T {
		return nil, fmt.Errorf("estimator: family listed %d sets, want Count = %d", len(groups), T)
	}
	e := &uniformEnum{
		n: N, k: K, groups: groups,
		count: make([]int, N), sel: make([]int, K),
		acc:  make([]int64, T*N),
		invC: make([]int64, K+1), invK: L / int64(K),
	}
	for c := 1; c <= K; c++ {
		e.invC[c] = L / int64(c)
	}
	e.rec(0, 0)
	w := &Weights{n: N, groups: groups, num: make([]*big.Int, T*N)}
	for i, a := range e.acc {
		w.num[i] = big.NewInt(a)
	}
	w.den = new(big.Int).Mul(big.NewInt(L), sel)
	return w, nil
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// uniformEnum enumerates the K-subsets of T groups depth first, keeping the
// participation counts c_i up to date incrementally.
type uniformEnum struct {
	n, k   int
	groups [][]int
	count  []int   // c_i for the current partial selection
	sel    []int   // the current selection's group indices
	acc    []int64 // acc[h*n+i] = L * sum_S w_S(i, h)
	invC   []int64 // invC[c] = L/c
	invK   int64   // L/K
}

func (e *uniformEnum) rec(d, start int) {
	T := len(e.groups)
	if d == e.k {
		e.leaf()
		return
	}
	for h := start; h <= T-(e.k-d); h++ {
		for _, i := range e.groups[h] {
			e.count[i]++
		}
		e.sel[d] = h
		e.rec(d+1, h+1)
		for _, i := range e.groups[h] {
			e.count[i]--
		}
	}
}

func (e *uniformEnum) leaf() {
	for _, h := range e.sel {
		row := e.acc[h*e.n : (h+1)*e.n]
		for i, c := range e.count {
			if c > 0 {
				row[i] -= e.invK
			}
		}
		for _, i := range e.groups[h] {
			row[i] += e.invC[e.count[i]]
		}
	}
}

// DistributionWeights returns W for an arbitrary distribution over
// selections: a fixed design, a non-uniform sampler, or the uniform one
// listed explicitly. sets and selections are as for NewSetDistribution: T
// sets of one size (members in presentation order, in [0, N1), no repeats,
// no two equal as sequences), and each selection a list of distinct indices
// into sets with its probability, >= 0, the probabilities summing exactly to
// 1; a selection may have any size K >= 1 (its w_S uses its own K).
//
// It returns an error naming the offending set, selection or probability,
// and the errors of NewSetDistribution for a nil or overlong iterator.
func DistributionWeights(N1 int, sets [][]int, selections iter.Seq2[[]int, *big.Rat]) (*Weights, error) {
	if selections == nil {
		return nil, elementError(FieldSelections, -1, "nil, want an iterator over selections and their probabilities")
	}
	d, err := newDistributionSets(N1, sets)
	if err != nil {
		return nil, err
	}
	if len(d.groups) > maxDesignSelections/N1 {
		return nil, argError(FieldSets, -1, len(d.groups), "T N1 = %d x %d > %d, the most weights computed", len(d.groups), N1, maxDesignSelections)
	}
	return weights(N1, d.groups, selections, maxListedSelections)
}

// weights accumulates W over the checked sets gs and the selections, which
// it checks, reading at most limit of them (no limit if limit < 0).
func weights(N int, gs [][]int, selections iter.Seq2[[]int, *big.Rat], limit int) (*Weights, error) {
	T := len(gs)
	acc := make([]*big.Rat, T*N)
	for k := range acc {
		acc[k] = new(big.Rat)
	}
	total := new(big.Rat)
	count := make([]int, N)
	term := new(big.Rat)
	nsel := 0
	var ierr error
	for s, prob := range selections {
		if nsel == limit {
			ierr = costError(FieldSelections, limit+1, "more than %d, the most a listed distribution holds", limit)
			break
		}
		if ierr = checkSelection(nsel, s, prob, T); ierr != nil {
			break
		}
		clear(count)
		for _, h := range s {
			for _, i := range gs[h] {
				count[i]++
			}
		}
		total.Add(total, prob)
		invK := new(big.Rat).Quo(prob, big.NewRat(int64(len(s)), 1))
		for _, h := range s {
			for i, c := range count {
				if c > 0 {
					acc[h*N+i].Sub(acc[h*N+i], invK)
				}
			}
			for _, i := range gs[h] {
				term.Quo(prob, big.NewRat(int64(count[i]), 1))
				acc[h*N+i].Add(acc[h*N+i], term)
			}
		}
		nsel++
	}
	if ierr != nil {
		return nil, ierr
	}
	if total.Cmp(big.NewRat(1, 1)) != 0 {
		return nil, elementError(FieldSelections, -1, "probabilities sum to %s, want exactly 1", total.RatString())
	}
	den, num := commonDenominator(acc)
	return &Weights{n: N, groups: gs, num: num, den: den}, nil
}

// UniformSelections lists every K-subset of the sets 0..T-1 with
// probability 1/C(T, K), in lexicographic order, for DistributionWeights. The
// yielded slice is reused: copy it to keep it. It yields nothing if K is not
// in [1, T], T > combin.MaxSize, or C(T, K) is larger than 2^62 (a list
// that could never be read to its end).
func UniformSelections(T, K int) iter.Seq2[[]int, *big.Rat] {
	return func(yield func([]int, *big.Rat) bool) {
		if K < 1 || K > T || T > combin.MaxSize || min(K, T-K) > 62 {
			return // C(T, k) >= 2^k for k <= T/2
		}
		c := new(big.Int).Binomial(int64(T), int64(K))
		if c.BitLen() > 62 {
			return
		}
		uniformSelections(T, K, c)(yield)
	}
}

// uniformSelections yields the C(T, K) = c K-subsets of [0, T), each with
// probability 1/c, in lexicographic order, for any c.
func uniformSelections(T, K int, c *big.Int) iter.Seq2[[]int, *big.Rat] {
	return func(yield func([]int, *big.Rat) bool) {
		prob := new(big.Rat).SetFrac(big.NewInt(1), c)
		s := make([]int, K)
		for k := range s {
			s[k] = k
		}
		for {
			if !yield(s, prob) {
				return
			}
			k := K - 1
			for k >= 0 && s[k] == T-K+k {
				k--
			}
			if k < 0 {
				return
			}
			s[k]++
			for j := k + 1; j < K; j++ {
				s[j] = s[j-1] + 1
			}
		}
	}
}

// Expectation returns the exact expectation of the search estimator
//
//	g = sum_{i=1..N} (e_{y_i} - p) A_marg(y_i)
//
// over N iid symbols from c (all V^N outcomes enumerated) and over the
// selection distribution behind w, when a group's set score is the exact
// f_H = f(members' symbols in presentation order p). Exact set scores are
// what noisy scores (means of N2 sampled rewards) average to, and g is
// linear in them, so this is also the expectation with noisy scores.
//
// It returns an error if c.Size() != t.V(), a group's size is not
// t.Arity(), p is unknown, or the enumeration would take more than
// [MaxExactSteps] big-number operations: V^N outcomes of N(T+3)+4V
// operations each, for T sets (with V = 2: N = 13 traces for T <= 75
// sets, N = 16 for T <= 4).
func (w *Weights) Expectation(c *Categorical, t *Table, p combin.Order) ([]*big.Rat, error) {
	if err := checkPolicyTable(c, t); err != nil {
		return nil, err
	}
	if c.Size() != t.V() {
		return nil, argError(FieldTable, -1, t.V(), "V = %d symbols, the policy has V = %d", t.V(), c.Size())
	}
	for h, g := range w.groups {
		if len(g) != t.Arity() {
			return nil, argError(FieldTable, -1, t.Arity(), "arity n = %d, set %d has %d members", t.Arity(), h, len(g))
		}
	}
	V, N, T := c.Size(), w.n, len(w.groups)
	outcomes, err := exactSteps(FieldPolicy, V, "Expectation", fmt.Sprintf("V^N = %d^%d outcomes of N = %d traces over the policy's V = %d symbols", V, N, N, V),
		V, N, N*(T+3)+4*V)
	if err != nil {
		return nil, err
	}
	tp, err := presented(t, p)
	if err != nil {
		return nil, err
	}
	// All quantities are integers over fixed denominators:
	// P(y) = prob/dp^N, score_v(y_i) = (dp [y_i = v] - pnum_v)/dp,
	// W = w.num/w.den, f_H = tp.num/tp.denom.
	dp, pnum := c.denom, c.num
	sum := make([]*big.Int, V)
	for v := range sum {
		sum[v] = new(big.Int)
	}
	y := make([]int, N)
	fH := make([]*big.Int, T)
	G := make([]*big.Int, N)
	for i := range G {
		G[i] = new(big.Int)
	}
	Gv := make([]*big.Int, V)
	for v := range Gv {
		Gv[v] = new(big.Int)
	}
	prob, Gsum, tmp, tmp2 := new(big.Int), new(big.Int), new(big.Int), new(big.Int)
	for range outcomes {
		prob.SetInt64(1)
		for _, s := range y {
			prob.Mul(prob, pnum[s])
		}
		for h, g := range w.groups {
			idx := 0
			for _, i := range g {
				idx = idx*V + y[i]
			}
			fH[h] = tp.num[idx]
		}
		for i := range G {
			G[i].SetInt64(0)
		}
		for h, fh := range fH {
			if fh.Sign() == 0 {
				continue
			}
			row := w.num[h*N : (h+1)*N]
			for i, wi := range row {
				G[i].Add(G[i], tmp.Mul(wi, fh))
			}
		}
		Gsum.SetInt64(0)
		for v := range Gv {
			Gv[v].SetInt64(0)
		}
		for i, gi := range G {
			Gsum.Add(Gsum, gi)
			Gv[y[i]].Add(Gv[y[i]], gi)
		}
		for v := range sum {
			tmp.Mul(dp, Gv[v])
			tmp.Sub(tmp, tmp2.Mul(pnum[v], Gsum))
			sum[v].Add(sum[v], tmp.Mul(tmp, prob))
		}
		// Next outcome, odometer with y_N least significant.
		for k := N - 1; k >= 0; k-- {
			y[k]++
			if y[k] < V {
				break
			}
			y[k] = 0
		}
	}
	den := new(big.Int).Exp(dp, big.NewInt(int64(N+1)), nil)
	den.Mul(den, w.den)
	den.Mul(den, tp.denom)
	out := make([]*big.Rat, V)
	for v, s := range sum {
		out[v] = new(big.Rat).SetFrac(s, den)
	}
	return out, nil
}

// ExactExpectation is SelectionWeights(f, K) followed by Expectation (and
// bounded as it is, by [MaxExactSteps]): the
// exact expectation of the search estimator for N = f.Traces() iid traces from c,
// K groups drawn uniformly from f, and set scores f_H under presentation p.
// Proposition 3.1 says it equals M * Gradient(c, t, combin.IndexOrder), M of
// f.Constants(combin.Uniform, K); docs/findings.md#presentation-order says
// what it equals under each order.
func ExactExpectation(c *Categorical, t *Table, f combin.Family, K int, p combin.Order) ([]*big.Rat, error) {
	w, err := SelectionWeights(f, K)
	if err != nil {
		return nil, err
	}
	return w.Expectation(c, t, p)
}

// MaxExactSteps bounds the big-number operations (a multiplication or an
// addition of rationals or integers, about 100 to 500 ns each) of the exact
// enumerations [Weights.Expectation] and [AggregationCredit], so that an
// accepted call finishes in seconds: 2^23 = 8,388,608.
const MaxExactSteps = 1 << 23

// exactSteps returns base^exp, the number of outcomes of an enumeration
// that takes per big-number operations for each, or an *InputError about
// argument field, of value v, naming the function, the outcomes (what) and
// MaxExactSteps when the enumeration would take more than MaxExactSteps
// operations. base, exp and per are >= 1.
func exactSteps(field string, v int, fn, what string, base, exp, per int) (int, error) {
	outcomes := 1
	for range exp {
		if outcomes > MaxExactSteps/per/base {
			return 0, costError(field, v, "%s: %s, of %d big-number operations each, take more than %d operations, the most computed exactly (time)", fn, what, per, MaxExactSteps)
		}
		outcomes *= base
	}
	if outcomes > MaxExactSteps/per {
		return 0, costError(field, v, "%s: %s, of %d big-number operations each, take more than %d operations, the most computed exactly (time)", fn, what, per, MaxExactSteps)
	}
	return outcomes, nil
}

// checkPolicyTable returns an error if the policy c or the table t is nil.
func checkPolicyTable(c *Categorical, t *Table) error {
	if c == nil {
		return elementError(FieldPolicy, -1, "nil, want a *Categorical")
	}
	if t == nil {
		return elementError(FieldTable, -1, "nil, want a *Table")
	}
	return nil
}
