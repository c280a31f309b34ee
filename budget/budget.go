// Package budget counts the tokens of one problem under SPIRAL, the GRPO
// baseline and recursive self-aggregation, in one [Budget] type so that
// methods can be compared field by field (docs/method.md#token-budget).
//
// Generated tokens are what the paper matches between methods (its Table 1:
// SPIRAL's 8*4096 + 16*4096 = 98,304 against GRPO's 12*8192). Prefill, the
// prompt tokens the model reads, is what it does not count: each of SPIRAL's
// K*N2 aggregation calls reads the problem and n candidate traces.
//
//	s, err := budget.SPIRAL(spiral.Paper(), budget.PaperLimits(300))
//	g, err := budget.PaperGRPO().Budget(300)
//	fmt.Println(s.Generated(), g.Generated()) // 98304 98304
package budget

import (
	"errors"
	"fmt"
	"math/bits"

	"spiral"
	"spiral/internal/inputerr"
	"spiral/rsa"
)

// Limits are the token lengths a [Budget] is computed from.
type Limits struct {
	// Prompt is the number of prompt tokens every generation call reads
	// besides any candidate traces: the problem statement and the
	// instructions. 0 leaves prompts out of the prefill counts.
	Prompt int
	// Search is the maximum length of a search trace in generated tokens
	// (4096 in the paper).
	Search int
	// Aggregation is the maximum length of an aggregation output in
	// generated tokens (4096 in the paper).
	Aggregation int
}

// PaperLimits returns the paper's maximum output lengths, 4096 tokens for
// both roles, with the given prompt length (the paper does not report one).
func PaperLimits(prompt int) Limits {
	return Limits{Prompt: prompt, Search: 4096, Aggregation: 4096}
}

// Budget is the token accounting of one problem under one method. Every
// figure is a ceiling: the count when every output reaches its maximum
// length.
type Budget struct {
	// SearchCalls is the number of search generations: N1 for SPIRAL, the
	// group size G for GRPO, P for RSA.
	SearchCalls int64
	// AggregationCalls is the number of aggregation generations: K*N2 for
	// SPIRAL, 0 for GRPO, T*P for RSA.
	AggregationCalls int64
	// SearchGenerated = SearchCalls * Limits.Search (GRPO: G * MaxLength).
	SearchGenerated int64
	// AggregationGenerated = AggregationCalls * Limits.Aggregation.
	AggregationGenerated int64
	// SearchPrefill = SearchCalls * Limits.Prompt: every search call reads
	// the problem prompt.
	SearchPrefill int64
	// AggregationPrefill is the prompt tokens of every aggregation call:
	// the problem prompt and its n candidates. SPIRAL: K*N2 * (Limits.Prompt
	// + n*Limits.Search).
	AggregationPrefill int64
	// CachedPrefill is the prefill when calls that read an identical prompt
	// share one prefill (prefix caching): the problem prompt once for all
	// search calls, and each distinct aggregation prompt once. SPIRAL:
	// Prompt + K*(Prompt + n*Search); GRPO: Prompt.
	CachedPrefill int64
}

// Generated returns the ceiling on generated tokens per problem,
// SearchGenerated + AggregationGenerated: N1*Ls + K*N2*La for SPIRAL
// (8*4096 + 4*4*4096 = 98,304 at the paper's setting), G*L for GRPO
// (12*8192 = 98,304).
func (b Budget) Generated() int64 { return b.SearchGenerated + b.AggregationGenerated }

// Prefill returns SearchPrefill + AggregationPrefill, the prompt tokens read
// when every call prefills its own prompt.
func (b Budget) Prefill() int64 { return b.SearchPrefill + b.AggregationPrefill }

// Calls returns SearchCalls + AggregationCalls, the generations per problem.
func (b Budget) Calls() int64 { return b.SearchCalls + b.AggregationCalls }

// SPIRAL returns the token ceilings of one problem under c with the given
// limits (see [Budget] for each formula). It returns an error if c is
// invalid, a limit is negative or a maximum output length is 0, or a count
// overflows int64.
func SPIRAL(c spiral.Config, l Limits) (Budget, error) {
	if err := c.Validate(); err != nil {
		return Budget{}, err
	}
	if err := l.validate(); err != nil {
		return Budget{}, err
	}
	var m checkedMath
	n1, n, k, n2 := int64(c.SearchTraces), int64(c.SetSize), int64(c.Sets), int64(c.AggregationsPerSet)
	p, ls, la := int64(l.Prompt), int64(l.Search), int64(l.Aggregation)
	aggPrompt := m.add(p, m.mul(n, ls)) // problem + n candidates
	b := Budget{
		SearchCalls:          n1,
		AggregationCalls:     m.mul(k, n2),
		SearchGenerated:      m.mul(n1, ls),
		AggregationGenerated: m.mul(m.mul(k, n2), la),
		SearchPrefill:        m.mul(n1, p),
		AggregationPrefill:   m.mul(m.mul(k, n2), aggPrompt),
		CachedPrefill:        m.add(p, m.mul(k, aggPrompt)),
	}
	m.add(b.SearchGenerated, b.AggregationGenerated)
	m.add(b.SearchPrefill, b.AggregationPrefill)
	if m.overflow {
		return Budget{}, fieldError("Limits", 0, fmt.Errorf("the SPIRAL budget of %+v with %+v overflows int64", c, l))
	}
	return b, nil
}

// RSA returns the token ceilings of one problem under the RSA schedule r:
// SearchCalls = P initial candidates, AggregationCalls = T*P,
// SearchGenerated = P*Ls, AggregationGenerated = T*P*La, SearchPrefill =
// P*prompt, and AggregationPrefill = P*(prompt + n*Ls) + (T-1)*P*(prompt +
// n*La) for T >= 1, since step 1 reads search candidates and every later
// step reads aggregation outputs. CachedPrefill = prompt +
// AggregationPrefill: the search prompt once, and every aggregation prompt
// once (members that draw the same set under rsa.IndependentSets could share
// more, so it is a ceiling). It returns an error if r or l is invalid or a
// count overflows int64.
func RSA(r rsa.Config, l Limits) (Budget, error) {
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
		return Budget{}, fieldError("Limits", 0, fmt.Errorf("the RSA budget of %+v with %+v overflows int64", r, l))
	}
	return b, nil
}

func (l Limits) validate() error {
	var errs []error
	if l.Prompt < 0 {
		errs = append(errs, fieldError("Limits.Prompt", l.Prompt, fmt.Errorf("%d < 0", l.Prompt)))
	}
	if l.Search < 1 {
		errs = append(errs, fieldError("Limits.Search", l.Search, fmt.Errorf("%d < 1", l.Search)))
	}
	if l.Aggregation < 1 {
		errs = append(errs, fieldError("Limits.Aggregation", l.Aggregation, fmt.Errorf("%d < 1", l.Aggregation)))
	}
	return errors.Join(errs...)
}

// GRPO is the shape of the GRPO baseline for budget comparisons: a group of
// independent traces per problem, each up to MaxLength generated tokens.
type GRPO struct {
	// Group is G >= 1, the traces sampled per problem.
	Group int
	// MaxLength is the maximum trace length in generated tokens, >= 1.
	MaxLength int
}

// PaperGRPO returns the paper's GRPO baseline: G = 12 traces of up to 8192
// tokens, 98,304 generated tokens per problem, the same ceiling as SPIRAL's
// 8*4096 + 16*4096.
func PaperGRPO() GRPO { return GRPO{Group: 12, MaxLength: 8192} }

// Validate reports every invalid field of g, naming field and value.
func (g GRPO) Validate() error {
	var errs []error
	if g.Group < 1 {
		errs = append(errs, fieldError("GRPO.Group", g.Group, fmt.Errorf("%d < 1", g.Group)))
	}
	if g.MaxLength < 1 {
		errs = append(errs, fieldError("GRPO.MaxLength", g.MaxLength, fmt.Errorf("%d < 1", g.MaxLength)))
	}
	return errors.Join(errs...)
}

// Budget returns the token ceilings of one problem under g, each call reading
// prompt tokens: SearchCalls = G, SearchGenerated = G*MaxLength,
// SearchPrefill = G*prompt, CachedPrefill = prompt, and no aggregation. It
// returns an error if g is invalid, prompt < 0 or a count overflows int64.
func (g GRPO) Budget(prompt int) (Budget, error) {
	if err := g.Validate(); err != nil {
		return Budget{}, err
	}
	if prompt < 0 {
		return Budget{}, fieldError("prompt", prompt, fmt.Errorf("%d < 0", prompt))
	}
	var m checkedMath
	gg := int64(g.Group)
	b := Budget{
		SearchCalls:     gg,
		SearchGenerated: m.mul(gg, int64(g.MaxLength)),
		SearchPrefill:   m.mul(gg, int64(prompt)),
		CachedPrefill:   int64(prompt),
	}
	if m.overflow {
		return Budget{}, fieldError("GRPO", 0, fmt.Errorf("the GRPO budget of %+v with prompt %d overflows int64", g, prompt))
	}
	return b, nil
}

// InputError describes an invalid field ("Limits.Search", "GRPO.Group"),
// argument ("prompt") or combination ("Limits": a budget that overflows
// int64): its Value and, on Err, why. It is the module's one input error
// type, also spiral.InputError; recover it with errors.As.
type InputError = inputerr.InputError

// fieldError returns the *InputError about field, whose value is v.
func fieldError(field string, v int, err error) *InputError {
	return inputerr.Int("budget", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: err}, v)
}

// checkedMath does non-negative int64 arithmetic and records overflow.
type checkedMath struct{ overflow bool }

func (m *checkedMath) mul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		m.overflow = true
		return 0
	}
	return int64(lo)
}

func (m *checkedMath) add(a, b int64) int64 {
	s := a + b
	if s < a {
		m.overflow = true
		return 0
	}
	return s
}
