package spiral

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"spiral/combin"
)

// Plan is one problem's group plan: the K groups of search-trace indices, in
// the order the trainer builds the K aggregation prompts, each group listing
// its candidates in presentation order (candidate j of group i is search
// trace Groups[i][j], numbered 0..N1-1).
//
// A Plan marshals to JSON as {"groups": [[...], ...]}. A plan decoded from
// outside is only data: check it with [Config.CheckPlan] (Credit does) before
// trusting it.
type Plan struct {
	Groups [][]int `json:"groups"`
}

// AppendFlat appends the groups of p, one after the other, to dst and
// returns the extended slice: the layout of [Batch.Groups].
func (p Plan) AppendFlat(dst []int) []int {
	for _, g := range p.Groups {
		dst = append(dst, g...)
	}
	return dst
}

// Plan draws one problem's plan: K distinct groups, each in c.Order. Under
// the Uniform design they are uniform over all K-subsets of the family
// (every ordered sequence of K distinct groups is equally likely); under the
// Balanced design they are a balanced design drawn by
// [combin.BalancedSampler]. Under Shuffled, each subset is then put
// in a uniformly random order, group after group. The same rnd state gives
// the same plan on every machine and the same plan as [Planner.Plan].
//
// Plan allocates; a trainer that plans every step uses a [Planner]. It
// returns an error if c is invalid or rnd is nil.
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
	c Config
	s groupSampler
}

// groupSampler is what a Planner needs of combin's samplers: a
// [combin.Sampler] for the Uniform design, a [combin.BalancedSampler] for the
// Balanced one.
type groupSampler interface {
	Len() int
	SampleTo(dst []int, rnd *rand.Rand) error
}

// NewPlanner returns a Planner for c, or an error if c is invalid.
func (c Config) NewPlanner() (*Planner, error) {
	fam, err := c.validFamily()
	if err != nil {
		return nil, err
	}
	if c.Design == Balanced {
		s, err := combin.NewBalancedSampler(fam, c.Sets)
		if err != nil {
			return nil, err
		}
		return &Planner{c: c, s: s}, nil
	}
	s, err := combin.NewSampler(fam, c.Sets)
	if err != nil {
		return nil, err
	}
	return &Planner{c: c, s: s}, nil
}

// Config returns the configuration p plans for.
func (p *Planner) Config() Config { return p.c }

// Plan draws one problem's plan, as [Config.Plan] does. It allocates the
// returned plan only; see [Planner.PlanTo] for the allocation-free form.
func (p *Planner) Plan(rnd *rand.Rand) (Plan, error) {
	k, n := p.c.Sets, p.c.SetSize
	flat := make([]int, k*n)
	if err := p.PlanTo(flat, rnd); err != nil {
		return Plan{}, err
	}
	groups := make([][]int, k)
	for i := range groups {
		groups[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	return Plan{Groups: groups}, nil
}

// PlanTo draws the plans of len(dst)/(K*n) problems into dst, problem after
// problem: candidate j of group i of problem q is dst[(q*K+i)*n+j]. That is
// the layout of [Batch.Groups]. Problem after problem, it draws exactly what
// successive calls of [Planner.Plan] with the same rnd would draw. It does
// not allocate.
//
// It returns an error, and leaves dst unchanged, if rnd is nil. It panics if
// len(dst) is not a multiple of K*n, a programmer's error.
func (p *Planner) PlanTo(dst []int, rnd *rand.Rand) error {
	size := p.s.Len()
	if len(dst)%size != 0 {
		panic(fmt.Sprintf("spiral: PlanTo: len(dst) = %d is not a multiple of K*n = %d", len(dst), size))
	}
	if rnd == nil {
		return errors.New("spiral: PlanTo: rnd is nil")
	}
	n := p.c.SetSize
	for q := 0; q < len(dst); q += size {
		one := dst[q : q+size]
		if err := p.s.SampleTo(one, rnd); err != nil {
			return err // unreachable: rnd is not nil
		}
		if p.c.Order == Shuffled {
			for i := 0; i < size; i += n {
				set := one[i : i+n]
				rnd.Shuffle(n, func(a, b int) { set[a], set[b] = set[b], set[a] })
			}
		}
	}
	return nil
}

// CheckPlan reports whether p fits c: exactly K groups of n indices each,
// every index in [0, N1) and none repeated inside a group, groups in
// ascending order when c draws Subsets in IndexOrder, and no two groups
// equal: as sets for Subsets (in either order), as sequences for Tuples; and,
// for the Balanced design, every trace in r or r+1 groups (exactly r when N1
// divides K*n), r = floor(K*n/N1). The error names the field, the group and
// the position, or the trace. It also returns an
// error if c is invalid.
func (c Config) CheckPlan(p Plan) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if len(p.Groups) != c.Sets {
		return fmt.Errorf("spiral: plan: len(groups) = %d, want Sets (K) = %d", len(p.Groups), c.Sets)
	}
	for i, g := range p.Groups {
		if len(g) != c.SetSize {
			return fmt.Errorf("spiral: plan: len(groups[%d]) = %d, want SetSize (n) = %d", i, len(g), c.SetSize)
		}
	}
	var chk planChecker
	if err := chk.check(c, p.AppendFlat(make([]int, 0, c.PlanSize()))); err != nil {
		return fmt.Errorf("spiral: plan: %w", err)
	}
	return nil
}

// planChecker checks flat plans. Its scratch memory (for large K under
// Shuffled) is reused between calls.
type planChecker struct {
	sorted []int // the groups of one plan, each sorted (Shuffled Subsets only)
	order  []int // group numbers sorted by group, for K > linearGroups
	counts []int // appearances of each trace (Balanced design only)
	// stamp[y] == epoch: trace y is in the group being checked (N1 > 64).
	// epoch grows by one per group, so stamp needs no clearing.
	stamp []uint64
	epoch uint64
}

// linearGroups is the largest K whose plans are checked for repeated groups
// by comparing every pair of groups; larger plans sort their groups.
const linearGroups = 16

// check reports whether flat, one problem's plan of K*n indices for the
// valid config c, fits c (see CheckPlan). Errors name the group and the
// position, as in "groups[2][1] = 9 out of range [0, SearchTraces (N1) =
// 8)", for the caller to prefix.
//
// When N1 <= 64, each group's traces are kept as a bit mask: equal masks
// mean the same subset, and are necessary for the same tuple, so for
// K <= linearGroups the pairwise comparison of groups is mostly a comparison
// of two words.
func (chk *planChecker) check(c Config, flat []int) error {
	if err := chk.checkGroups(c, flat); err != nil {
		return err
	}
	if c.Design == Balanced {
		return chk.checkBalance(c, flat)
	}
	return nil
}

// checkBalance reports whether the valid groups flat of the Balanced config
// c hold every trace r or r+1 times, r = floor(K*n/N1), and exactly r times
// when N1 divides K*n.
func (chk *planChecker) checkBalance(c Config, flat []int) error {
	n1 := c.SearchTraces
	chk.counts = slices.Grow(chk.counts[:0], n1)[:n1]
	clear(chk.counts)
	for _, y := range flat {
		chk.counts[y]++
	}
	r := len(flat) / n1
	hi := r
	if len(flat)%n1 != 0 {
		hi = r + 1
	}
	for y, m := range chk.counts {
		if m < r || m > hi {
			want := fmt.Sprint(r)
			if hi != r {
				want = fmt.Sprintf("%d or %d", r, hi)
			}
			return fmt.Errorf("trace %d is in %d groups, want %s (Design = Balanced, K*n = %d, N1 = %d)", y, m, want, len(flat), n1)
		}
	}
	return nil
}

// checkGroups checks everything check does but the balance of a Balanced
// design.
func (chk *planChecker) checkGroups(c Config, flat []int) error {
	const name = "groups"
	n1, n, k := c.SearchTraces, c.SetSize, c.Sets
	ascending := c.Family == Subsets && c.Order == IndexOrder
	small := n1 <= 64
	var masks [linearGroups]uint64 // masks[i]: the traces of group i, when small and k <= linearGroups
	if !small && len(chk.stamp) < n1 {
		chk.stamp = make([]uint64, n1)
		chk.epoch = 0
	}
	for i := range k {
		g := flat[i*n : (i+1)*n]
		var seen uint64 // bit y set: trace y is in g[:j] (when small)
		chk.epoch++
		for j, y := range g {
			if uint(y) >= uint(n1) {
				return fmt.Errorf("%s[%d][%d] = %d out of range [0, SearchTraces (N1) = %d)", name, i, j, y, n1)
			}
			repeated := false
			if small {
				repeated = seen&(1<<y) != 0
				seen |= 1 << y
			} else {
				repeated = chk.stamp[y] == chk.epoch
				chk.stamp[y] = chk.epoch
			}
			if repeated {
				return fmt.Errorf("%s[%d][%d] = %d repeats %s[%d][%d]", name, i, j, y, name, i, slices.Index(g, y))
			}
			if ascending && j > 0 && g[j-1] > y {
				return fmt.Errorf("%s[%d] = %v is not in ascending order (Subsets in IndexOrder)", name, i, g)
			}
		}
		if i < linearGroups {
			masks[i] = seen
		}
	}
	repeated := func(i0, i int) error {
		what := "subset"
		if c.Family == Tuples {
			what = "tuple"
		}
		return fmt.Errorf("%s[%d] = %v and %s[%d] = %v are the same %s", name, i0, flat[i0*n:(i0+1)*n], name, i, flat[i*n:(i+1)*n], what)
	}
	if small && k <= linearGroups {
		for i := 1; i < k; i++ {
			for i0 := range i {
				if masks[i0] == masks[i] && (c.Family == Subsets || slices.Equal(flat[i0*n:(i0+1)*n], flat[i*n:(i+1)*n])) {
					return repeated(i0, i)
				}
			}
		}
		return nil
	}
	// Compare groups in a canonical form: Subsets as sorted sequences,
	// Tuples as they are.
	canon := flat
	if c.Family == Subsets && c.Order == Shuffled {
		chk.sorted = append(chk.sorted[:0], flat...)
		canon = chk.sorted
		for i := range k {
			slices.Sort(canon[i*n : (i+1)*n])
		}
	}
	group := func(i int) []int { return canon[i*n : (i+1)*n] }
	if k <= linearGroups {
		for i := 1; i < k; i++ {
			for i0 := range i {
				if slices.Equal(group(i0), group(i)) {
					return repeated(i0, i)
				}
			}
		}
		return nil
	}
	chk.order = chk.order[:0]
	for i := range k {
		chk.order = append(chk.order, i)
	}
	slices.SortFunc(chk.order, func(a, b int) int {
		if d := slices.Compare(group(a), group(b)); d != 0 {
			return d
		}
		return a - b
	})
	for x := 1; x < k; x++ {
		if a, b := chk.order[x-1], chk.order[x]; slices.Equal(group(a), group(b)) {
			return repeated(a, b)
		}
	}
	return nil
}
