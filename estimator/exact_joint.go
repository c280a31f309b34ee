package estimator

import (
	"errors"
	"fmt"
	"math/big"
	"spiral"

	"spiral/combin"
)

// Aggregator is a toy aggregation policy together with its reward. Given the
// presented tuple of candidate symbols, a context ctx in [V]^n indexed in
// mixed radix as for Table, it writes an output z in [V2] with probability
// pi(z | ctx), a tabular softmax with its own logits phi[ctx][z], and the
// output earns reward 1 with probability rho(ctx, z), else 0. Its set
// objective is f(ctx) = sum_z pi(z | ctx) rho(ctx, z) (see Table).
//
// The aggregation parameters phi have V^n * V2 components, component
// ctx*V2 + z. Search (theta, the logits of a Categorical over V symbols) and
// aggregation (phi) are separate parameter blocks here; with shared
// parameters the two blocks' gradients add, so each block's weight is the
// weight of the corresponding term of the shared gradient. An Aggregator is
// immutable and safe for concurrent use.
type Aggregator struct {
	v, n   int
	policy []*Categorical // per context
	reward [][]*big.Rat   // per context, per output
	table  *Table
}

// NewAggregator returns the aggregator with per-context output policies
// policy[ctx] (each over the same V2 >= 1 outputs) and reward probabilities
// reward[ctx][z]. It returns an error if len(policy) or len(reward) is not
// V^n, the policies differ in size, or a reward is nil or outside [0, 1].
// The rewards are copied.
func NewAggregator(V, n int, policy []*Categorical, reward [][]*big.Rat) (*Aggregator, error) {
	size, err := tableSize(V, n)
	if err != nil {
		return nil, err
	}
	if len(policy) != size || len(reward) != size {
		return nil, argError(FieldPolicies, -1, len(policy), "len(policy) = %d, len(reward) = %d, want V^n = %d", len(policy), len(reward), size)
	}
	a := &Aggregator{v: V, n: n, policy: append([]*Categorical(nil), policy...), reward: make([][]*big.Rat, size)}
	fv := make([]*big.Rat, size)
	for ctx, pc := range policy {
		if pc == nil {
			return nil, elementError(FieldPolicies, ctx, "nil")
		}
		if pc.Size() != policy[0].Size() {
			return nil, elementError(FieldPolicies, ctx, "%d outputs, policy[0] has %d", pc.Size(), policy[0].Size())
		}
		if err := checkRewards(reward[ctx], pc.Size()); err != nil {
			e, _ := errors.AsType[*InputError](err)
			return nil, e.In("estimator", fmt.Sprintf("%s[%d]", FieldReward, ctx))
		}
		a.reward[ctx] = make([]*big.Rat, pc.Size())
		fv[ctx] = new(big.Rat)
		for z, r := range reward[ctx] {
			a.reward[ctx][z] = new(big.Rat).Set(r)
			fv[ctx].Add(fv[ctx], new(big.Rat).Mul(pc.p[z], r))
		}
	}
	if a.table, err = NewTable(V, n, fv); err != nil {
		return nil, err
	}
	return a, nil
}

// Outputs returns V2, the number of aggregation outputs.
func (a *Aggregator) Outputs() int { return a.policy[0].Size() }

// Table returns the set objective f(ctx) = sum_z pi(z | ctx) rho(ctx, z).
func (a *Aggregator) Table() *Table { return a.table }

// contextProbs returns the distribution of the presented context when n iid
// symbols from c are presented under rule p: P(ctx) = p(ctx) for combin.IndexOrder
// and combin.Shuffled (iid symbols make every arrangement of a multiset equally
// likely), and the probability of the multiset for sorted ctx (0 otherwise)
// for SortedBySymbol.
func contextProbs(c *Categorical, V, n int, p combin.Order) ([]*big.Rat, error) {
	if p != combin.IndexOrder && p != combin.Shuffled && p != SortedBySymbol {
		return nil, undefinedError(FieldOrder, int(p), "presentation")
	}
	size, err := tableSize(V, n)
	if err != nil {
		return nil, err
	}
	probs := make([]*big.Rat, size)
	for i := range probs {
		probs[i] = new(big.Rat)
	}
	y := make([]int, n)
	py := new(big.Rat)
	for i := range probs {
		decode(y, i, V)
		py.SetInt64(1)
		for _, s := range y {
			py.Mul(py, c.p[s])
		}
		k := i
		if p == SortedBySymbol {
			k = sortedIndex(y, V)
		}
		probs[k].Add(probs[k], py)
	}
	return probs, nil
}

// Gradient returns grad_phi J_p, the aggregation part of the joint gradient,
// when the context is n iid search symbols from c presented under rule p:
//
//	grad_phi J_p [ctx*V2 + z] = P_p(ctx) pi(z | ctx) (rho(ctx, z) - f(ctx)).
//
// It returns an error if c.Size() != V or p is unknown.
func (a *Aggregator) Gradient(c *Categorical, p combin.Order) ([]*big.Rat, error) {
	if c == nil {
		return nil, elementError(FieldPolicy, -1, "nil, want a *Categorical")
	}
	if c.Size() != a.v {
		return nil, argError(FieldPolicy, -1, c.Size(), "V = %d symbols, the aggregator has V = %d", c.Size(), a.v)
	}
	probs, err := contextProbs(c, a.v, a.n, p)
	if err != nil {
		return nil, err
	}
	V2 := a.Outputs()
	g := make([]*big.Rat, len(probs)*V2)
	for ctx, pc := range probs {
		for z := range V2 {
			x := new(big.Rat).Sub(a.reward[ctx][z], a.table.vals[ctx])
			x.Mul(x, a.policy[ctx].p[z])
			g[ctx*V2+z] = x.Mul(x, pc)
		}
	}
	return g, nil
}

// JointUpdate is the exact expectation of one problem's SPIRAL update,
// split by parameter block: Search (length V) is E[sum_i A_search(y_i)
// grad_theta log pi(y_i)] and Aggregation (length V^n * V2) is
// E[sum_G sum_j A_agg(G, j) grad_phi log pi(z_Gj | ctx_G)].
type JointUpdate struct {
	Search      []*big.Rat
	Aggregation []*big.Rat
}

// setOutcome is one outcome of a selected set: a presentation order, N2
// outputs and their rewards, with its conditional probability, the noisy set
// score fhat and the set's aggregation credit.
type setOutcome struct {
	prob   *big.Rat
	fhat   *big.Rat
	credit []*big.Rat // sum_j A_agg(j) grad_phi log pi(z_j | ctx)
}

// JointExpectation returns the exact expectation of the whole SPIRAL update
// for one problem, by brute force over everything random: the N = f.Traces()
// search symbols, the selection of K groups (uniform without replacement
// from f), each selected set's presentation order (one of n! for combin.Shuffled),
// its N2 aggregation outputs and their Bernoulli rewards. The set scores are
// the noisy means fhat = (1/N2) sum_j r_j, the search advantage is the
// participation average of A_set = fhat - mean fhat, and the aggregation
// advantages use baseline b; all credit is sum-reduced.
//
// It is a test oracle for tiny configurations: it returns an error if the
// number of leaves V^N * C(T, K) * (perms * (2 V2)^N2)^K exceeds 4,194,304,
// besides the errors of its arguments. Proposition 3.1 and the aggregation
// factor predict Search = M * Gradient(c, a.Table(), p) and Aggregation =
// K a * a.Gradient(c, p), the role weights of spiral.Config.RoleWeights with
// a sum (spiral.LossOptions{}; docs/findings.md#aggregation-factor-and-role-weights).
func JointExpectation(c *Categorical, a *Aggregator, f combin.Family, K, N2 int, b spiral.AggregationBaseline, p combin.Order) (JointUpdate, error) {
	if c == nil {
		return JointUpdate{}, elementError(FieldPolicy, -1, "nil, want a *Categorical")
	}
	if a == nil {
		return JointUpdate{}, elementError(FieldAggregator, -1, "nil, want an *Aggregator")
	}
	if c.Size() != a.v {
		return JointUpdate{}, argError(FieldPolicy, -1, c.Size(), "V = %d symbols, the aggregator has V = %d", c.Size(), a.v)
	}
	if f.SetSize() != a.n {
		return JointUpdate{}, elementError(FieldFamily, -1, "sets of n = %d, the aggregator reads n = %d", f.SetSize(), a.n)
	}
	if err := checkBaseline(N2, b); err != nil {
		return JointUpdate{}, err
	}
	if p != combin.IndexOrder && p != combin.Shuffled && p != SortedBySymbol {
		return JointUpdate{}, undefinedError(FieldOrder, int(p), "presentation")
	}
	V, n, N, V2 := a.v, a.n, f.Traces(), a.Outputs()
	T64, ok := f.Count64()
	if !ok || T64 > maxLeaves {
		return JointUpdate{}, elementError(FieldFamily, -1, "%v is too large for JointExpectation: T > %d", f, maxLeaves)
	}
	T := int(T64)
	if K < 1 || K > T {
		return JointUpdate{}, argError(FieldK, -1, K, "%d outside [1, T = %d]", K, T)
	}
	// Cheap bounds first, each factor of the leaf count being at least 2^x:
	// V^N1 >= 2^N1 (V >= 2), C(T, K) >= 2^min(K, T-K), (2 V2)^N2 >= 4^N2,
	// and n! orders under combin.Shuffled.
	if (V >= 2 && N > 22) || min(K, T-K) > 22 || N2 > 11 {
		return JointUpdate{}, fmt.Errorf("estimator: more than %d leaves (N1 = %d, T = %d, K = %d, N2 = %d, n = %d): too many for JointExpectation", maxLeaves, N, T, K, N2, n)
	}
	if p == combin.Shuffled && n > 10 { // 11! > maxLeaves
		return JointUpdate{}, fmt.Errorf("estimator: n = %d: n! orders exceed the JointExpectation limit %d", n, maxLeaves)
	}
	perms := [][]int{make([]int, n)} // the identity
	for i := range n {
		perms[0][i] = i
	}
	if p == combin.Shuffled {
		perms = permutations(n)
	}
	perSet := new(big.Int).Exp(big.NewInt(int64(2*V2)), big.NewInt(int64(N2)), nil)
	perSet.Mul(perSet, big.NewInt(int64(len(perms))))
	leaves := new(big.Int).Exp(big.NewInt(int64(V)), big.NewInt(int64(N)), nil)
	leaves.Mul(leaves, new(big.Int).Binomial(int64(T), int64(K)))
	leaves.Mul(leaves, new(big.Int).Exp(perSet, big.NewInt(int64(K)), nil))
	if leaves.Cmp(big.NewInt(maxLeaves)) > 0 {
		return JointUpdate{}, fmt.Errorf("estimator: %v leaves exceed the JointExpectation limit %d", leaves, maxLeaves)
	}
	groups := make([][]int, 0, T)
	for g := range f.All() {
		groups = append(groups, append([]int(nil), g...))
	}
	dimPhi := len(a.policy) * V2
	j := &jointEnum{
		a: a, b: b, p: p, n: n, N2: N2, perms: perms,
		outcomes: make(map[int][]setOutcome),
		search:   zeros(V), agg: zeros(dimPhi),
		scores: make([][]*big.Rat, V),
		fhat:   make([]*big.Rat, K), count: make([]int, N),
	}
	for v := range V {
		j.scores[v] = c.Score(v)
	}
	selProb := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Binomial(int64(T), int64(K)))
	y := make([]int, N)
	outcomes, _ := tableSize(V, N)
	j.y, j.sel, j.groups = y, make([]int, K), groups
	set := make([][]setOutcome, K)
	for range outcomes {
		py := new(big.Rat).Set(selProb)
		for _, s := range y {
			py.Mul(py, c.p[s])
		}
		for s := range UniformSelections(T, K) {
			copy(j.sel, s)
			clear(j.count)
			for k, h := range j.sel {
				ctx := 0
				for _, i := range groups[h] {
					ctx = ctx*V + y[i]
					j.count[i]++
				}
				set[k] = j.setOutcomes(ctx)
			}
			j.rec(set, 0, py, zeros(dimPhi))
		}
		for k := N - 1; k >= 0; k-- {
			y[k]++
			if y[k] < V {
				break
			}
			y[k] = 0
		}
	}
	return JointUpdate{Search: j.search, Aggregation: j.agg}, nil
}

func zeros(n int) []*big.Rat {
	out := make([]*big.Rat, n)
	for i := range out {
		out[i] = new(big.Rat)
	}
	return out
}

// permutations returns all n! permutations of 0..n-1, the identity first.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, q := range permutations(n - 1) {
		for pos := len(q); pos >= 0; pos-- {
			r := make([]int, 0, n)
			r = append(r, q[:pos]...)
			r = append(r, n-1)
			r = append(r, q[pos:]...)
			out = append(out, r)
		}
	}
	return out
}

type jointEnum struct {
	a        *Aggregator
	b        spiral.AggregationBaseline
	p        combin.Order
	n, N2    int
	perms    [][]int
	outcomes map[int][]setOutcome // by listed context
	search   []*big.Rat
	agg      []*big.Rat
	scores   [][]*big.Rat
	fhat     []*big.Rat
	count    []int
	y        []int
	sel      []int
	groups   [][]int
}

// setOutcomes lists the outcomes of a set whose members' symbols, in listed
// order, have mixed-radix index listed.
func (j *jointEnum) setOutcomes(listed int) []setOutcome {
	if o, ok := j.outcomes[listed]; ok {
		return o
	}
	a, V, n, N2 := j.a, j.a.v, j.n, j.N2
	V2 := a.Outputs()
	ys := make([]int, n)
	decode(ys, listed, V)
	shown := make([]int, n)
	var out []setOutcome
	permProb := big.NewRat(1, int64(len(j.perms)))
	adv := zeros(N2)
	leaves, _ := tableSize(2*V2, N2)
	for _, perm := range j.perms {
		for k, q := range perm {
			shown[k] = ys[q]
		}
		ctx := 0
		if j.p == SortedBySymbol {
			ctx = sortedIndex(shown, V)
		} else {
			for _, s := range shown {
				ctx = ctx*V + s
			}
		}
		pol := a.policy[ctx]
		for o := range outputOutcomes(pol.p, a.reward[ctx], N2, leaves) {
			sum := 0
			for _, r := range o.R {
				sum += r
			}
			aggAdvantages(adv, o.R, j.b)
			credit := zeros(len(a.policy) * V2)
			for k := range N2 {
				s := pol.Score(o.Z[k])
				for u, su := range s {
					credit[ctx*V2+u].Add(credit[ctx*V2+u], new(big.Rat).Mul(adv[k], su))
				}
			}
			prob := new(big.Rat).Mul(permProb, o.Prob)
			out = append(out, setOutcome{prob: prob, fhat: big.NewRat(int64(sum), int64(N2)), credit: credit})
		}
	}
	j.outcomes[listed] = out
	return out
}

// rec enumerates the product of the selected sets' outcomes.
func (j *jointEnum) rec(set [][]setOutcome, d int, prob *big.Rat, credit []*big.Rat) {
	K := len(set)
	if d == K {
		j.leaf(prob, credit)
		return
	}
	for _, o := range set[d] {
		j.fhat[d] = o.fhat
		c := make([]*big.Rat, len(credit))
		for u := range c {
			c[u] = new(big.Rat).Add(credit[u], o.credit[u])
		}
		j.rec(set, d+1, new(big.Rat).Mul(prob, o.prob), c)
	}
}

// leaf adds one fully specified outcome: the search advantages from the
// participation average of the noisy set advantages, and the aggregation
// credit.
func (j *jointEnum) leaf(prob *big.Rat, credit []*big.Rat) {
	K := len(j.fhat)
	mean := new(big.Rat)
	for _, f := range j.fhat {
		mean.Add(mean, f)
	}
	mean.Quo(mean, big.NewRat(int64(K), 1))
	// A_search(i) = (1/c_i) sum_{G in S, i in G} (fhat_G - mean).
	adv := zeros(len(j.count))
	for k, h := range j.sel {
		aset := new(big.Rat).Sub(j.fhat[k], mean)
		for _, i := range j.groups[h] {
			adv[i].Add(adv[i], new(big.Rat).Quo(aset, big.NewRat(int64(j.count[i]), 1)))
		}
	}
	for i, ai := range adv {
		if ai.Sign() == 0 {
			continue
		}
		coef := new(big.Rat).Mul(prob, ai)
		for u, su := range j.scores[j.y[i]] {
			j.search[u].Add(j.search[u], new(big.Rat).Mul(coef, su))
		}
	}
	for u, cu := range credit {
		if cu.Sign() != 0 {
			j.agg[u].Add(j.agg[u], new(big.Rat).Mul(prob, cu))
		}
	}
}
