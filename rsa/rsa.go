// Package rsa schedules recursive self-aggregation (RSA, Venkatraman et al.,
// 2025) at inference time: an initial population of P candidates sampled
// independently, then T steps, each building a new population of P
// candidates in which member i aggregates a set of n candidates of the
// previous population. The SPIRAL paper evaluates every policy it compares
// through this scaffold (its Section 4;
// docs/method.md#token-budget).
//
// [Config.Schedule] draws every step's sets from an injected *rand.Rand:
//
//	r := rsa.Paper() // P = 8, n = 4, T = 10
//	steps, err := r.Schedule(rand.New(rand.NewPCG(seed, 0)))
//	// steps[t][i]: the indices into population t that member i of
//	// population t+1 aggregates, in presentation order.
//
// The token cost of a schedule is counted by package spiral/budget.
package rsa

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"spiral/combin"
	"spiral/internal/inputerr"
)

// InputError describes an invalid field of a Config ("Config.<Field>") or
// argument ("rnd"): its Value and, on Err, why. It is the module's one
// input error type, also spiral.InputError; recover it with errors.As.
// Validate joins one per invalid field.
type InputError = inputerr.InputError

// SetRule says how one step of recursive self-aggregation forms the sets
// that the members of its new population aggregate.
type SetRule int

const (
	// IndependentSets, the default (zero value), gives every member of the
	// new population its own n-subset of the previous population, drawn
	// uniformly and independently of the other members' subsets. This is
	// RSA as published, each new candidate aggregating a subset sampled for
	// it alone: two members may draw the same subset. At P = 8, n = 4 a
	// step repeats at least one subset with probability 1 - (70)_8/70^8,
	// about 0.34.
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

// Config is an RSA schedule's shape.
//
// The default SetRule is IndependentSets because it is RSA's own procedure,
// and the SPIRAL paper runs every policy it compares (base, GRPO, SPIRAL)
// through one RSA scaffold without disclosing any change to how sets are
// formed; reproducing its RSA curves therefore starts from the published
// procedure. DistinctSets matches how SPIRAL draws its training sets (K
// distinct sets), and never spends two aggregation calls of one step on the
// same candidates.
type Config struct {
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
	Order combin.Order
}

// Paper returns the paper's RSA evaluation: P = 8, n = 4, T = 10, with the
// default IndependentSets and IndexOrder. Published RSA presents each subset
// in the random order Python's random.sample returns; set Order to Shuffled
// to reproduce that as well (index order is the default here, as in
// spiral.Config, so that a schedule is comparable across set rules).
func Paper() Config { return Config{Population: 8, SetSize: 4, Steps: 10} }

// Validate reports every invalid field of r, each an *[InputError] naming
// the field ("Config.SetSize") and its value, joined: P, n or T out of
// range, an undefined SetRule or Order, DistinctSets with P > C(P, n), or a
// schedule of more than combin.MaxSize indices.
func (r Config) Validate() error {
	var errs []error
	bad := func(field string, v int, format string, args ...any) {
		f := "Config." + field
		errs = append(errs, inputerr.Int("rsa", "", InputError{Field: f, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}, v))
	}
	p, n, t := r.Population, r.SetSize, r.Steps
	if p < 1 {
		bad("Population", p, "%d < 1", p)
	}
	if n < 1 {
		bad("SetSize", n, "%d < 1", n)
	} else if p >= 1 && n > p {
		bad("SetSize", n, "%d > P = %d", n, p)
	}
	if t < 0 {
		bad("Steps", t, "%d < 0", t)
	}
	if p >= 1 && n >= 1 && n <= p && t >= 0 {
		// T = 0 steps make an empty schedule, whatever P and n.
		if t > 0 && (p > combin.MaxSize/n || p*n > combin.MaxSize/t) {
			bad("Steps", t, "the schedule's T*P*n = %d*%d*%d indices exceed %d, the most a schedule holds", t, p, n, combin.MaxSize)
		}
	}
	switch r.Sets {
	case IndependentSets:
	case DistinctSets:
		// C(P, n) >= P for 1 <= n < P, and C(P, P) = 1.
		if p > 1 && n == p {
			bad("Sets", int(r.Sets), "DistinctSets needs P = %d <= C(P, n) = C(%d, %d) = 1", p, p, n)
		}
	default:
		errs = append(errs, inputerr.Undefined("rsa", "Config.Sets", int(r.Sets), "SetRule"))
	}
	switch r.Order {
	case combin.IndexOrder, combin.Shuffled:
	default:
		errs = append(errs, inputerr.Undefined("rsa", "Config.Order", int(r.Order), "Order"))
	}
	return errors.Join(errs...)
}

// Schedule draws the sets of all T steps: Schedule(...)[t][i] lists, in
// presentation order, the indices into the population of step t (0 = the
// initial population) that member i of the population of step t+1
// aggregates. It returns an error if r is invalid or rnd is nil. The same
// seed gives the same schedule on every machine.
func (r Config) Schedule(rnd *rand.Rand) ([][][]int, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if rnd == nil {
		return nil, inputerr.New("rsa", "", InputError{Field: "rnd", Problem: -1, Set: -1, Output: -1, Err: errors.New("nil random generator")})
	}
	if r.Steps == 0 {
		return [][][]int{}, nil
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
			if r.Order == combin.Shuffled {
				rnd.Shuffle(len(set), func(a, b int) { set[a], set[b] = set[b], set[a] })
			}
			steps[t][i] = set
		}
	}
	return steps, nil
}
