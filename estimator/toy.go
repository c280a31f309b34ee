package estimator

import (
	"fmt"
	"math/big"
	"math/rand/v2"
)

// maxTableSize bounds V^n for tables and V^N for exact enumerations, so that a
// careless size gives an error rather than an out-of-memory crash.
const maxTableSize = 1 << 20

// Categorical is a softmax policy over V symbols; a symbol stands for a whole
// search trace. It is given by its probabilities p_0..p_{V-1} (exact
// rationals, each > 0, summing exactly to 1). Its parameters are the logits
// theta, p = softmax(theta), so the score function of a symbol v is
//
//	grad_theta log pi(v) = e_v - p,
//
// a V-vector. A Categorical is immutable and safe for concurrent use.
type Categorical struct {
	p     []*big.Rat
	pf    []float64
	cdf   []float64 // cumulative float64 probabilities; cdf[V-1] == 1 exactly
	denom *big.Int  // least common denominator of p
	num   []*big.Int
}

// MaxSymbols bounds V, the number of symbols of a Categorical: the toy
// model's policies are small, and each symbol holds exact rationals.
const MaxSymbols = 1 << 12

// NewCategorical returns the categorical policy with probabilities p. It
// returns an error if p is empty or longer than MaxSymbols, if an entry is
// nil or not > 0, or if the entries do not sum exactly to 1. The slice and
// its values are copied.
func NewCategorical(p []*big.Rat) (*Categorical, error) {
	if len(p) == 0 || len(p) > MaxSymbols {
		return nil, argError(FieldProbs, -1, len(p), "len = %d outside [1, %d], the most symbols", len(p), MaxSymbols)
	}
	c := &Categorical{p: make([]*big.Rat, len(p)), pf: make([]float64, len(p)), cdf: make([]float64, len(p))}
	sum := new(big.Rat)
	for v, pv := range p {
		if pv == nil {
			return nil, elementError(FieldProbs, v, "nil")
		}
		if pv.Sign() <= 0 {
			return nil, elementError(FieldProbs, v, "%s, want > 0", pv.RatString())
		}
		c.p[v] = new(big.Rat).Set(pv)
		c.pf[v], _ = pv.Float64()
		sum.Add(sum, pv)
	}
	if sum.Cmp(big.NewRat(1, 1)) != 0 {
		return nil, elementError(FieldProbs, -1, "sum to %s, want exactly 1", sum.RatString())
	}
	acc := 0.0
	for v, pv := range c.pf {
		acc += pv
		c.cdf[v] = acc
	}
	c.cdf[len(p)-1] = 1
	c.denom, c.num = commonDenominator(c.p)
	return c, nil
}

// UniformCategorical returns the categorical policy with p_v = 1/V. It returns
// an error if V is not in [1, MaxSymbols], before allocating.
func UniformCategorical(V int) (*Categorical, error) {
	if V < 1 || V > MaxSymbols {
		return nil, argError(FieldSymbols, -1, V, "%d outside [1, %d], the most symbols (memory grows with V)", V, MaxSymbols)
	}
	p := make([]*big.Rat, V)
	for v := range p {
		p[v] = big.NewRat(1, int64(V))
	}
	return NewCategorical(p)
}

// Size returns V, the number of symbols.
func (c *Categorical) Size() int { return len(c.p) }

// Prob returns a copy of p_v. It panics if v is not in [0, V).
func (c *Categorical) Prob(v int) *big.Rat { return new(big.Rat).Set(c.p[v]) }

// Float64s returns the probabilities as float64 values (a new slice).
func (c *Categorical) Float64s() []float64 { return append([]float64(nil), c.pf...) }

// Sample draws one symbol by inverting the cumulative distribution of the
// float64 probabilities with one call to rnd.Float64. It does not allocate.
// rnd must not be nil: a nil rnd panics (a programmer error; the exported
// simulation entry points check for nil and return an error).
func (c *Categorical) Sample(rnd *rand.Rand) int {
	u := rnd.Float64()
	for v, cv := range c.cdf {
		if u < cv {
			return v
		}
	}
	return len(c.cdf) - 1
}

// Score returns the exact score function of symbol v, grad_theta log pi(v) =
// e_v - p, as a new V-vector. It panics if v is not in [0, V).
func (c *Categorical) Score(v int) []*big.Rat {
	if v < 0 || v >= len(c.p) {
		panic(fmt.Sprintf("estimator: Score: symbol %d out of range [0, %d)", v, len(c.p)))
	}
	s := make([]*big.Rat, len(c.p))
	for u, pu := range c.p {
		s[u] = new(big.Rat).Neg(pu)
	}
	s[v].Add(s[v], big.NewRat(1, 1))
	return s
}

// ScoreTo writes e_v - p as float64 values into dst. It panics if len(dst)
// != V or v is not in [0, V). It does not allocate.
func (c *Categorical) ScoreTo(dst []float64, v int) {
	if len(dst) != len(c.pf) {
		panic(fmt.Sprintf("estimator: ScoreTo: len(dst) = %d, want V = %d", len(dst), len(c.pf)))
	}
	if v < 0 || v >= len(c.pf) {
		panic(fmt.Sprintf("estimator: ScoreTo: symbol %d out of range [0, %d)", v, len(c.pf)))
	}
	for u, pu := range c.pf {
		dst[u] = -pu
	}
	dst[v]++
}

// Table is a set objective f over n-tuples of symbols, f: [V]^n -> [0, 1],
// held exactly. Values are indexed in mixed radix with y_1 most significant:
//
//	idx = ((y_1*V + y_2)*V + ...)*V + y_n.
//
// A Table is immutable and safe for concurrent use.
type Table struct {
	v, n  int
	vals  []*big.Rat
	fvals []float64
	denom *big.Int   // least common denominator of vals
	num   []*big.Int // vals[i] = num[i]/denom
}

// maxArity bounds a table's arity n (V = 1 has V^n = 1 for every n).
const maxArity = 64

// tableSize returns V^n, or an error if V < 1, n is not in [1, maxArity] or
// V^n > maxTableSize.
func tableSize(V, n int) (int, error) {
	if V < 1 || V > MaxSymbols {
		return 0, argError(FieldSymbols, -1, V, "%d outside [1, %d], the most symbols", V, MaxSymbols)
	}
	if n < 1 || n > maxArity {
		return 0, argError(FieldArity, -1, n, "%d outside [1, %d]", n, maxArity)
	}
	size := 1
	for range n {
		size *= V
		if size > maxTableSize {
			return 0, argError(FieldArity, -1, n, "V^n = %d^%d > %d, the most entries of a table", V, n, maxTableSize)
		}
	}
	return size, nil
}

// NewTable returns the table with the given values, indexed as documented on
// Table. It returns an error if V < 1, n < 1, V^n is larger than 1,048,576,
// len(values) != V^n, or a value is nil or outside [0, 1]. The values are
// copied.
func NewTable(V, n int, values []*big.Rat) (*Table, error) {
	size, err := tableSize(V, n)
	if err != nil {
		return nil, err
	}
	if len(values) != size {
		return nil, argError(FieldValues, -1, len(values), "len = %d, want V^n = %d^%d = %d", len(values), V, n, size)
	}
	t := &Table{v: V, n: n, vals: make([]*big.Rat, size), fvals: make([]float64, size)}
	one := big.NewRat(1, 1)
	for i, x := range values {
		if x == nil {
			return nil, elementError(FieldValues, i, "nil")
		}
		if x.Sign() < 0 || x.Cmp(one) > 0 {
			return nil, elementError(FieldValues, i, "%s outside [0, 1]", x.RatString())
		}
		t.vals[i] = new(big.Rat).Set(x)
		t.fvals[i], _ = x.Float64()
	}
	t.denom, t.num = commonDenominator(t.vals)
	return t, nil
}

// V returns the number of symbols.
func (t *Table) V() int { return t.v }

// Arity returns n, the tuple length.
func (t *Table) Arity() int { return t.n }

// Len returns V^n, the number of entries.
func (t *Table) Len() int { return len(t.vals) }

// Index returns the mixed-radix index of the tuple y. It panics if len(y) !=
// n or an entry of y is not in [0, V).
func (t *Table) Index(y []int) int {
	if len(y) != t.n {
		panic(fmt.Sprintf("estimator: tuple of length %d, want n = %d", len(y), t.n))
	}
	idx := 0
	for _, s := range y {
		if s < 0 || s >= t.v {
			panic(fmt.Sprintf("estimator: symbol %d out of range [0, %d)", s, t.v))
		}
		idx = idx*t.v + s
	}
	return idx
}

// At returns a copy of f(y). It panics as Index does.
func (t *Table) At(y []int) *big.Rat { return new(big.Rat).Set(t.vals[t.Index(y)]) }

// Float returns f(y) as a float64. It does not allocate and panics as Index
// does.
func (t *Table) Float(y []int) float64 { return t.fvals[t.Index(y)] }

// FloatAt returns the float64 value at mixed-radix index idx. It panics if idx
// is not in [0, V^n).
func (t *Table) FloatAt(idx int) float64 { return t.fvals[idx] }

// Values returns copies of all V^n values in index order.
func (t *Table) Values() []*big.Rat {
	out := make([]*big.Rat, len(t.vals))
	for i, x := range t.vals {
		out[i] = new(big.Rat).Set(x)
	}
	return out
}

// decode writes the tuple with mixed-radix index idx into y (len n).
func decode(y []int, idx, V int) {
	for p := len(y) - 1; p >= 0; p-- {
		y[p] = idx % V
		idx /= V
	}
}

// RandomTable returns a table whose V^n values are k/denom with k drawn
// independently and uniformly from {0, ..., denom}. It returns an error if rnd
// is nil, denom < 1, or the sizes are invalid as for NewTable.
func RandomTable(rnd *rand.Rand, V, n, denom int) (*Table, error) {
	size, err := randomTableArgs(rnd, V, n, denom)
	if err != nil {
		return nil, err
	}
	vals := make([]*big.Rat, size)
	for i := range vals {
		vals[i] = big.NewRat(int64(rnd.IntN(denom+1)), int64(denom))
	}
	return NewTable(V, n, vals)
}

// SymmetricRandomTable returns a table that is invariant to the order of its
// arguments: one value k/denom (k uniform in {0, ..., denom}) is drawn for
// each multiset of n symbols, in index order of the sorted tuples. Errors are
// as for RandomTable.
func SymmetricRandomTable(rnd *rand.Rand, V, n, denom int) (*Table, error) {
	size, err := randomTableArgs(rnd, V, n, denom)
	if err != nil {
		return nil, err
	}
	vals := make([]*big.Rat, size)
	y := make([]int, n)
	for i := range vals {
		decode(y, i, V)
		key := sortedIndex(y, V)
		if key == i {
			vals[i] = big.NewRat(int64(rnd.IntN(denom+1)), int64(denom))
		} else {
			// The sorted tuple is the lexicographically smallest
			// rearrangement, so key < i has been drawn already.
			vals[i] = vals[key]
		}
	}
	return NewTable(V, n, vals)
}

func randomTableArgs(rnd *rand.Rand, V, n, denom int) (int, error) {
	if rnd == nil {
		return 0, elementError(FieldRand, -1, "nil")
	}
	if denom < 1 || denom > 1<<30 {
		return 0, argError(FieldDenom, -1, denom, "%d outside [1, 2^30]", denom)
	}
	return tableSize(V, n)
}

// sortedIndex returns the mixed-radix index of y sorted in increasing order,
// without modifying y. It uses a counting sort over the V symbols.
func sortedIndex(y []int, V int) int {
	var small [16]int
	var counts []int
	if V <= len(small) {
		counts = small[:V]
	} else {
		counts = make([]int, V)
	}
	for _, s := range y {
		counts[s]++
	}
	idx := 0
	for s, c := range counts {
		for range c {
			idx = idx*V + s
		}
	}
	return idx
}

// CoverTable returns the "complementary pieces" objective, the paper's
// motivating case: f(y) = 1 if the tuple y contains at least m distinct
// symbols, else 0. It is symmetric. It returns an error if m is not in
// [1, n] or the sizes are invalid as for NewTable. (If m > V no tuple
// qualifies and f is identically 0.)
func CoverTable(V, n, m int) (*Table, error) {
	size, err := tableSize(V, n)
	if err != nil {
		return nil, err
	}
	if m < 1 || m > n {
		return nil, argError(FieldCovered, -1, m, "%d outside [1, n = %d]", m, n)
	}
	vals := make([]*big.Rat, size)
	y := make([]int, n)
	seen := make([]bool, V)
	for i := range vals {
		decode(y, i, V)
		clear(seen)
		distinct := 0
		for _, s := range y {
			if !seen[s] {
				seen[s] = true
				distinct++
			}
		}
		if distinct >= m {
			vals[i] = big.NewRat(1, 1)
		} else {
			vals[i] = new(big.Rat)
		}
	}
	return NewTable(V, n, vals)
}

// FirstTable returns an order-sensitive objective that depends only on the
// first candidate: f(y_1, ..., y_n) = values[y_1]. It models an aggregator
// that trusts whichever candidate it reads first. It returns an error if
// len(values) != V, a value is nil or outside [0, 1], or the sizes are
// invalid as for NewTable.
func FirstTable(V, n int, values []*big.Rat) (*Table, error) {
	size, err := tableSize(V, n)
	if err != nil {
		return nil, err
	}
	if len(values) != V {
		return nil, argError(FieldValues, -1, len(values), "len = %d, want V = %d", len(values), V)
	}
	for v, x := range values {
		if x == nil {
			return nil, elementError(FieldValues, v, "nil")
		}
	}
	vals := make([]*big.Rat, size)
	block := size / V // entries sharing the same y_1 are contiguous
	for i := range vals {
		vals[i] = values[i/block]
	}
	return NewTable(V, n, vals)
}

// commonDenominator returns the least common denominator d of xs and the
// integer numerators num[i] = xs[i]*d.
func commonDenominator(xs []*big.Rat) (*big.Int, []*big.Int) {
	d := big.NewInt(1)
	g := new(big.Int)
	for _, x := range xs {
		g.GCD(nil, nil, d, x.Denom())
		d.Mul(d, new(big.Int).Quo(x.Denom(), g))
	}
	num := make([]*big.Int, len(xs))
	for i, x := range xs {
		num[i] = new(big.Int).Mul(x.Num(), new(big.Int).Quo(d, x.Denom()))
	}
	return d, num
}
