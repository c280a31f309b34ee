package spiral

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"spiral/combin"
)

// Plan is one problem's plan: the K sets of search-trace indices, in the
// order the trainer builds the K aggregation prompts, each listing its
// candidates in presentation order (candidate j of set i is search trace
// Sets[i][j], numbered 0..N1-1).
//
// A Plan marshals to JSON as {"sets": [[...], ...]}. A plan decoded from
// outside is only data: [Config.CheckPlan] checks it, and [Config.Credit]
// does so before using it.
type Plan struct {
	Sets [][]int `json:"sets"`
}

// Plan draws one problem's plan, as [Planner.Plan] does. It allocates; a
// trainer that plans every step keeps a [Planner]. It returns an error if c
// is invalid or rnd is nil.
func (c Config) Plan(rnd *rand.Rand) (Plan, error) {
	p, err := c.NewPlanner()
	if err != nil {
		return Plan{}, err
	}
	return p.Plan(rnd)
}

// A Planner draws plans for a [Config] again and again without allocating.
// It holds the sampler's scratch memory, so it is not safe for concurrent
// use: give each goroutine its own Planner (with its own *rand.Rand).
type Planner struct {
	c     Config
	shape planShape
	s     interface {
		SampleManyTo(dst []int, rnd *rand.Rand) error
	} // a *combin.Sampler (Uniform) or *combin.BalancedSampler
}

// planShape is what a plan's validity depends on: two configs with the same
// shape accept the same plans.
type planShape struct {
	traces, setSize, sets int
	ordered               bool
	design                combin.Design
}

func (c Config) planShape() planShape {
	return planShape{c.SearchTraces, c.SetSize, c.Sets, c.Ordered, c.Design}
}

// NewPlanner returns a Planner for c, or an error if c is invalid.
func (c Config) NewPlanner() (*Planner, error) {
	fam, err := c.validFamily()
	if err != nil {
		return nil, err
	}
	p := &Planner{c: c, shape: c.planShape()}
	if c.Design == combin.Balanced {
		p.s, err = combin.NewBalancedSampler(fam, c.Sets)
	} else {
		p.s, err = combin.NewSampler(fam, c.Sets)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Config returns the configuration p plans for.
func (p *Planner) Config() Config { return p.c }

// Plan draws one problem's plan: K distinct sets, each in the Config's
// order. Under the Uniform design they are uniform over all K-subsets of
// the family (every ordered sequence of K distinct sets is equally likely);
// under the Balanced design they are a balanced design drawn by
// [combin.BalancedSampler]. Under Shuffled, each set is then put in a
// uniformly random order, set after set. The same rnd state gives the same
// plan on every machine, and the same sets as [Planner.PlanTo] draws for
// one problem. It returns an error if rnd is nil.
func (p *Planner) Plan(rnd *rand.Rand) (Plan, error) {
	k, n := p.c.Sets, p.c.SetSize
	flat := make([]int, k*n)
	if err := p.draw(flat, rnd); err != nil {
		return Plan{}, err
	}
	sets := make([][]int, k)
	for i := range sets {
		sets[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	return Plan{Sets: sets}, nil
}

// PlanTo draws the plans of the given number of problems into dst.Sets,
// problem after problem (candidate j of set i of problem q is
// dst.Sets[(q*K+i)*n+j], the layout of [Batch]), growing it only when it is
// too short: a Batch reused from step to step costs no allocation. Each
// problem's plan is what successive calls of [Planner.Plan] with the same
// rnd would draw.
//
// [Config.CreditBatch] does not check again the sets that a Planner drew
// into this Batch for a Config of the same N1, n, K, Ordered and Design:
// they are valid by construction. It checks sets that came from anywhere
// else, including a dst.Sets that was resliced or replaced since, and sets
// holding an index outside [0, N1). A program must not write into dst.Sets
// between PlanTo and CreditBatch: sets changed in place but still in range
// are not checked again.
//
// It returns an error, and leaves dst unchanged, if rnd is nil or problems
// is negative or too large for an int.
func (p *Planner) PlanTo(dst *Batch, problems int, rnd *rand.Rand) error {
	size := p.c.PlanSize()
	if problems < 0 || problems > maxInt/size {
		return fmt.Errorf("spiral: PlanTo: problems = %d out of range [0, %d]", problems, maxInt/size)
	}
	if rnd == nil {
		return errNilRand
	}
	dst.Sets = grow(dst.Sets, problems*size)
	dst.drawn = drawn{}
	if err := p.draw(dst.Sets, rnd); err != nil {
		return err
	}
	if len(dst.Sets) > 0 {
		dst.drawn = drawn{shape: p.shape, first: &dst.Sets[0], len: len(dst.Sets)}
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

var errNilRand = errors.New("spiral: rnd is nil")

// draw fills dst, a multiple of K*n long, with plans.
func (p *Planner) draw(dst []int, rnd *rand.Rand) error {
	if rnd == nil {
		return errNilRand
	}
	if p.c.Order != combin.Shuffled {
		// Problem after problem, as the loop below without its shuffles.
		return p.s.SampleManyTo(dst, rnd)
	}
	size, n := p.c.PlanSize(), p.c.SetSize
	for q := 0; q < len(dst); q += size {
		one := dst[q : q+size]
		if err := p.s.SampleManyTo(one, rnd); err != nil {
			return err // unreachable: rnd is not nil and one has K*n entries
		}
		for i := 0; i < size; i += n {
			set := one[i : i+n]
			rnd.Shuffle(n, func(a, b int) { set[a], set[b] = set[b], set[a] })
		}
	}
	return nil
}

// drawn records which sets a Planner drew into a Batch: the shape it drew
// for and the slice it filled.
type drawn struct {
	shape planShape
	first *int
	len   int
}

// trusted reports whether sets is exactly the slice a Planner of c's shape
// drew and every index in it is still in [0, N1): a program that wrote an
// index out of range into it since gets an error from the full check, not a
// panic.
func (d *drawn) trusted(c *Config, sets []int) bool {
	return d.first != nil && len(sets) == d.len && &sets[0] == d.first && d.shape == c.planShape() &&
		inRange(sets, c.SearchTraces)
}

// inRange reports whether every index x is in [0, n), with no branch on
// the data: x and n-1-x are both >= 0 exactly when x is in range, so the
// OR of all of them is negative when some index is not.
func inRange(xs []int, n int) bool {
	o := 0
	for _, x := range xs {
		o |= (n - 1 - x) | x
	}
	return o >= 0
}

// CheckPlan reports whether p fits c: exactly K sets of n indices each,
// every index in [0, N1) and none repeated inside a set, no two sets
// identical (as sets when c draws subsets, as sequences when Ordered), as
// [combin.CheckSets] decides; and, for the Balanced design, every trace in r
// or r+1 sets (exactly r when N1 divides K*n), r = floor(K*n/N1). Errors
// name the set and the position, or the trace; a *[combin.SetError] is
// available through errors.As. It also returns an error if c is invalid.
func (c Config) CheckPlan(p Plan) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if len(p.Sets) != c.Sets {
		return fmt.Errorf("spiral: plan: len(sets) = %d, want Sets (K) = %d", len(p.Sets), c.Sets)
	}
	flat := make([]int, 0, c.PlanSize())
	for i, s := range p.Sets {
		if len(s) != c.SetSize {
			return fmt.Errorf("spiral: plan: len(sets[%d]) = %d, want SetSize (n) = %d", i, len(s), c.SetSize)
		}
		flat = append(flat, s...)
	}
	var sc setScratch
	if err := c.checkSets(flat, &sc); err != nil {
		return fmt.Errorf("spiral: plan: %w", err)
	}
	return nil
}

// setScratch is the memory checkSets reuses.
type setScratch struct {
	sizes  []int // K copies of n
	counts []int // appearances of each trace (Balanced design)
}

// checkSets checks one problem's K*n flat indices for the valid c: combin's
// set check, then the balance of a Balanced design.
func (c *Config) checkSets(flat []int, sc *setScratch) error {
	if len(sc.sizes) != c.Sets || c.Sets > 0 && sc.sizes[0] != c.SetSize {
		sc.sizes = grow(sc.sizes, c.Sets)
		for i := range sc.sizes {
			sc.sizes[i] = c.SetSize
		}
	}
	if err := combin.CheckSets(c.SearchTraces, c.Ordered, sc.sizes, flat); err != nil {
		return err
	}
	if c.Design != combin.Balanced {
		return nil
	}
	return balanceError(c.SearchTraces, flat, sc)
}

// balanceError reports whether the sets of one problem, flat, hold every
// trace of [0, n1) r or r+1 times, r = floor(len(flat)/n1), and exactly r
// times when n1 divides len(flat), as a Balanced design does. It counts in
// sc.counts and skips indices out of range, which the set check reports.
func balanceError(n1 int, flat []int, sc *setScratch) error {
	sc.counts = grow(sc.counts, n1)
	cnt := sc.counts
	clear(cnt)
	for _, y := range flat {
		if uint(y) < uint(n1) {
			cnt[y]++
		}
	}
	r, hi := len(flat)/n1, (len(flat)+n1-1)/n1
	for y, m := range cnt {
		if m < r || m > hi {
			want := fmt.Sprint(r)
			if hi != r {
				want = fmt.Sprintf("%d or %d", r, hi)
			}
			return fmt.Errorf("trace %d is in %d sets, want %s (Design = balanced, K*n = %d, N1 = %d)", y, m, want, len(flat), n1)
		}
	}
	return nil
}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
