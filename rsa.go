package spiral

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"

	"spiral/combin"
)

// SetRule says how one step of recursive self-aggregation forms the sets
// that the members of its new population aggregate.
type SetRule int

const (
	// IndependentSets, the default (zero value), gives every member of the
	// new population its own n-subset of the previous population, drawn
	// uniformly and independently of the other members' subsets. This is
	// RSA as published (Venkatraman et al., 2025), each new candidate
	// aggregating a subset sampled for it alone: two members may draw the
	// same subset. At P = 8, n = 4 a step
	// repeats at least one subset with probability
	// 1 - (70)_8/70^8, about 0.34.
	IndependentSets SetRule = iota
	// DistinctSets gives the P members P distinct n-subsets, a uniform draw
	// without replacement from the C(P, n) subsets of the previous
	// population, as SPIRAL draws its K training sets. It requires
	// P <= C(P, n). Each member's subset is still uniform on its own; the
	// members' subsets are no longer independent.
	DistinctSets
)

// String returns "IndependentSets", "DistinctSets" or "SetRule(v)".
func (s SetRule) String() string {
	switch s {
	case IndependentSets:
		return "IndependentSets"
	case DistinctSets:
		return "DistinctSets"
	}
	return fmt.Sprintf("SetRule(%d)", int(s))
}

// RSA is the schedule of recursive self-aggregation at inference time: an
// initial population of P candidates sampled independently (step 0), then T
// steps, each of which builds a new population of P candidates, member i
// aggregating a set of n candidates of the previous population.
//
// The default SetRule is IndependentSets because it is RSA's own procedure,
// and the SPIRAL paper runs every policy it compares (base, GRPO, SPIRAL)
// through one RSA scaffold without disclosing any change to how sets are
// formed; reproducing its RSA curves therefore starts from the published
// procedure. DistinctSets is the alternative a user may prefer: it matches
// how SPIRAL draws its training sets (K distinct groups), and it never
// spends two aggregation calls of one step on the same candidates.
type RSA struct {
	// Population is P >= 1, the candidates kept at every step.
	Population int
	// SetSize is n, 1 <= n <= P: the candidates each aggregation reads.
	SetSize int
	// Steps is T >= 0, the aggregation steps after the initial population.
	Steps int
	// Sets is the rule that forms each step's sets.
	Sets SetRule
	// Order is the presentation order inside each set: IndexOrder
	// (ascending population index) or Shuffled (a uniformly random order per
	// set, as Python's random.sample returns).
	Order Order
}

// PaperRSA returns the paper's RSA evaluation: P = 8, n = 4, T = 10, with
// the default IndependentSets and IndexOrder. Published RSA presents each
// subset in the random order Python's random.sample returns; set Order to
// Shuffled to reproduce that as well (index order is the default here, as
// in [Config], so that a schedule is comparable across set rules).
func PaperRSA() RSA { return RSA{Population: 8, SetSize: 4, Steps: 10} }

// Validate reports every invalid field of r, naming field and value: P, n or
// T out of range, an undefined SetRule or Order, DistinctSets with
// P > C(P, n), or a schedule of more than [MaxSize] indices.
func (r RSA) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("spiral: RSA."+format, args...))
	}
	p, n, t := r.Population, r.SetSize, r.Steps
	if p < 1 {
		bad("Population (P) = %d < 1", p)
	}
	if n < 1 {
		bad("SetSize (n) = %d < 1", n)
	} else if p >= 1 && n > p {
		bad("SetSize (n) = %d > Population (P) = %d", n, p)
	}
	if t < 0 {
		bad("Steps (T) = %d < 0", t)
	}
	if p >= 1 && n >= 1 && n <= p && t >= 0 {
		if p > MaxSize/n || (t > 0 && p*n > MaxSize/t) {
			bad("Steps (T) = %d: the schedule's T*P*n = %d*%d*%d indices exceed MaxSize = %d", t, t, p, n, MaxSize)
		}
	}
	switch r.Sets {
	case IndependentSets:
	case DistinctSets:
		if p >= 1 && n >= 1 && n <= p {
			c := new(big.Int).Binomial(int64(p), int64(n))
			if c.Cmp(big.NewInt(int64(p))) < 0 {
				bad("Sets = DistinctSets needs Population (P) = %d <= C(P, n) = C(%d, %d) = %v", p, p, n, c)
			}
		}
	default:
		bad("Sets = %d is neither IndependentSets (%d) nor DistinctSets (%d)", int(r.Sets), int(IndependentSets), int(DistinctSets))
	}
	switch r.Order {
	case IndexOrder, Shuffled:
	default:
		bad("Order = %d is neither IndexOrder (%d) nor Shuffled (%d)", int(r.Order), int(IndexOrder), int(Shuffled))
	}
	return errors.Join(errs...)
}

// Schedule draws the sets of all T steps: Schedule(...)[t][i] lists, in
// presentation order, the indices into the population of step t (0 = the
// initial population) that member i of the population of step t+1
// aggregates. It returns an error if r is invalid or rnd is nil. The same
// seed gives the same schedule on every machine.
func (r RSA) Schedule(rnd *rand.Rand) ([][][]int, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if rnd == nil {
		return nil, errors.New("spiral: RSA.Schedule: rnd is nil")
	}
	fam, err := combin.Subsets(r.Population, r.SetSize)
	if err != nil {
		return nil, err
	}
	p, n := r.Population, r.SetSize
	// DistinctSets draws the P sets of a step in one call; IndependentSets
	// draws one set per member.
	perCall := 1
	if r.Sets == DistinctSets {
		perCall = p
	}
	sampler, err := combin.NewSampler(fam, perCall)
	if err != nil {
		return nil, err
	}
	flat := make([]int, r.Steps*p*n)
	steps := make([][][]int, r.Steps)
	for t := range steps {
		// Step t: draw its P sets, then (Shuffled) order each one.
		step := flat[t*p*n : (t+1)*p*n]
		for i := 0; i < len(step); i += perCall * n {
			if err := sampler.SampleTo(step[i:i+perCall*n], rnd); err != nil {
				return nil, err
			}
		}
		steps[t] = make([][]int, p)
		for i := range steps[t] {
			set := step[i*n : (i+1)*n : (i+1)*n]
			if r.Order == Shuffled {
				shuffle(rnd, set)
			}
			steps[t][i] = set
		}
	}
	return steps, nil
}

// Budget returns the token ceilings of one problem under r, in the fields of
// [Budget]: SearchCalls = P initial candidates, AggregationCalls = T*P,
// SearchGenerated = P*Ls, AggregationGenerated = T*P*La, SearchPrefill =
// P*prompt, and AggregationPrefill = P*(prompt + n*Ls) + (T-1)*P*(prompt +
// n*La) for T >= 1, since step 1 reads search candidates and every later
// step reads aggregation outputs. CachedPrefill = prompt + AggregationPrefill:
// the search prompt once, and every aggregation prompt once (members that
// draw the same set under IndependentSets could share more, so it is a
// ceiling). It returns an error if r or l is invalid or a count overflows.
func (r RSA) Budget(l Limits) (Budget, error) {
	if err := r.Validate(); err != nil {
		return Budget{}, err
	}
	if err := l.validate(); err != nil {
		return Budget{}, err
	}
	var m checkedMath
	p, n, t := int64(r.Population), int64(r.SetSize), int64(r.Steps)
	pr, ls, la := int64(l.Prompt), int64(l.Search), int64(l.Aggregation)
	b := Budget{
		SearchCalls:          p,
		AggregationCalls:     m.mul(t, p),
		SearchGenerated:      m.mul(p, ls),
		AggregationGenerated: m.mul(m.mul(t, p), la),
		SearchPrefill:        m.mul(p, pr),
	}
	if t >= 1 {
		first := m.mul(p, m.add(pr, m.mul(n, ls)))
		later := m.mul(m.mul(t-1, p), m.add(pr, m.mul(n, la)))
		b.AggregationPrefill = m.add(first, later)
	}
	b.CachedPrefill = m.add(pr, b.AggregationPrefill)
	m.add(b.SearchGenerated, b.AggregationGenerated)
	m.add(b.SearchPrefill, b.AggregationPrefill)
	if m.overflow {
		return Budget{}, fmt.Errorf("spiral: budget of %+v with %+v overflows int64", r, l)
	}
	return b, nil
}

// shuffle permutes s uniformly (Fisher-Yates with rnd).
func shuffle(rnd *rand.Rand, s []int) {
	for i := len(s) - 1; i > 0; i-- {
		j := rnd.IntN(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}
