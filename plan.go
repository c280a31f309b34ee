package spiral

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/inputerr"
)

// Plan is one problem's plan: the K sets of search-trace indices, in the
// order the trainer builds the K aggregation prompts, each listing its
// members (trace indices, numbered 0..N1-1) in presentation order:
// candidate j of set i is search trace Sets[i][j].
//
// A Plan marshals to JSON as {"sets": [[...], ...]}. A plan decoded from
// outside is only data: [Config.CheckPlan] checks it, and [Config.Credit]
// does so before using it.
type Plan struct {
	Sets [][]int `json:"sets"`
}

// Plans are the plans of a batch of problems, ready to be credited: for
// each problem, K sets of n members each that pass the set check of the
// Config they were made for. Only the library makes Plans:
// [Planner.PlanTo] draws them and [Config.CheckPlans] checks plans that
// come from outside. Nothing writes into them otherwise, so
// [Config.CreditBatch] credits them without checking them again. Read them
// with [Plans.Member], [Plans.Plan] and [Plans.AppendMembers].
//
// The zero value holds no problem. Reuse one Plans from step to step: once
// it has grown to a batch's size, PlanTo and CheckPlans allocate nothing.
type Plans struct {
	shape    planShape
	problems int                     // len(members) / (K*n)
	members  []int                   // problem after problem, set after set
	bad      []*advantage.InputError // problems CheckPlans rejected, in order
	scratch  setScratch              // CheckPlans' memory
}

// Problems returns the number of problems planned: 0 for the zero value,
// for a nil *Plans, and for Plans that a refused CheckPlans or PlanTo left
// empty.
func (p *Plans) Problems() int {
	if p == nil {
		return 0
	}
	return p.problems
}

// Member returns member j of set i of problem q: the index in [0, N1) of
// the search trace that is candidate j of aggregation prompt i. It panics
// if q, i or j is out of range.
func (p *Plans) Member(q, i, j int) int {
	k, n := p.shape.sets, p.shape.setSize
	if q < 0 || q >= p.Problems() || i < 0 || i >= k || j < 0 || j >= n {
		panic(fmt.Sprintf("spiral: Plans.Member(%d, %d, %d) of %d problems of K = %d sets of n = %d", q, i, j, p.Problems(), k, n))
	}
	return p.members[(q*k+i)*n+j]
}

// Plan returns a copy of the plan of problem q. It panics if q is out of
// range.
func (p *Plans) Plan(q int) Plan {
	k, n := p.shape.sets, p.shape.setSize
	if q < 0 || q >= p.Problems() {
		panic(fmt.Sprintf("spiral: Plans.Plan(%d) of %d problems", q, p.Problems()))
	}
	flat := append([]int(nil), p.members[q*k*n:(q+1)*k*n]...)
	sets := make([][]int, k)
	for i := range sets {
		sets[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	return Plan{Sets: sets}
}

// AppendMembers appends the members of every problem's sets to dst, flat:
// member j of set i of problem q at (q*K+i)*n+j, the layout
// [Config.CheckPlans] reads.
func (p *Plans) AppendMembers(dst []int) []int { return append(dst, p.members...) }

// Plan draws the plan of the problem key at the given seed and step, as
// [Planner.Plan] does. It allocates; a trainer that plans every step keeps
// a [Planner]. It returns an error if c is invalid.
func (c Config) Plan(seed, step, key uint64) (Plan, error) {
	p, err := c.NewPlanner()
	if err != nil {
		return Plan{}, err
	}
	return p.Plan(seed, step, key)
}

// A Planner draws plans for a [Config] again and again without allocating.
// It holds the sampler's scratch memory, so it is not safe for concurrent
// use: give each goroutine its own Planner. Planners of the same Config
// draw the same plans from the same seed, step and keys, on every machine.
// Only [Config.NewPlanner] makes one: the methods of a zero Planner or a
// nil *Planner panic, a programmer's error.
type Planner struct {
	c        Config
	shape    planShape
	size     int  // K*n, the members of one plan (c.PlanSize() copies c)
	maxKeys  int  // combin.MaxSize / size, the most problems one PlanTo plans
	shuffled bool // c.Order == combin.Shuffled
	// The sampler of c's design: uniform under Uniform, balanced under
	// Balanced, the other nil. PlanTo calls its DrawTo directly, not
	// through an interface, and the compiler inlines Sampler.DrawTo.
	uniform  *combin.Sampler
	balanced *combin.BalancedSampler
	src      rand.PCG // the stream of the problem being planned
}

// planShape is what a plan's validity depends on: two configs with the same
// shape accept the same plans.
type planShape struct {
	traces, setSize, sets int
	ordered               bool
	design                combin.Design
}

// planShape takes c by pointer: the comparisons of CreditBatch's checks
// copied the Config for each call.
func (c *Config) planShape() planShape {
	return planShape{c.SearchTraces, c.SetSize, c.Sets, c.Ordered, c.Design}
}

// NewPlanner returns a Planner for c, or an error if c is invalid.
func (c Config) NewPlanner() (*Planner, error) {
	fam, err := c.validFamily()
	if err != nil {
		return nil, err
	}
	size := c.PlanSize()
	p := &Planner{c: c, shape: c.planShape(), size: size, maxKeys: combin.MaxSize / size, shuffled: c.Order == combin.Shuffled}
	if c.Design == combin.Balanced {
		p.balanced, err = combin.NewBalancedSampler(fam, c.Sets)
	} else {
		p.uniform, err = combin.NewSampler(fam, c.Sets)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Config returns the configuration p plans for.
func (p *Planner) Config() Config { return p.c }

// Plan draws the plan of one problem, named by its key, at the given seed
// and training step; it is the plan [Planner.PlanTo] draws for that key.
func (p *Planner) Plan(seed, step, key uint64) (Plan, error) {
	var ps Plans
	if err := p.PlanTo(&ps, seed, step, []uint64{key}); err != nil {
		return Plan{}, err
	}
	return ps.Plan(0), nil
}

// PlanTo draws the plans of len(keys) problems into dst, problem q being
// the problem named keys[q] (for instance its index in the data set), and
// growing dst only when it is too short: Plans reused from step to step
// cost no allocation.
//
// The plan of a problem is a function of (seed, step, key) alone: the same
// whatever the other keys, their number, their order or the goroutine or
// machine that plans them. A data-parallel trainer whose ranks plan their
// own shards gets the plans one process planning every problem gets, and
// dynamic sampling that replaces some problems leaves the plans of the
// others unchanged. Each problem's plan is drawn from its own PCG
// generator (math/rand/v2's rand.PCG), seeded by [StreamSeed](seed, step,
// key), by the sampler's DrawTo: K distinct sets, uniform over all
// K-subsets of the family (every ordered sequence of K distinct sets
// equally likely) under the Uniform design ([combin.Sampler.DrawTo]), a
// balanced design under the Balanced design
// ([combin.BalancedSampler.DrawTo]); under Shuffled, each set is then put
// in a uniformly random order by [combin.Shuffle], set after set.
//
// It returns an *[InputError], and leaves dst unchanged, if dst is nil
// (about "dst") or the batch would hold more than combin.MaxSize = 2^24
// members, len(keys)*K*n (about "keys", Value len(keys)), before
// allocating.
func (p *Planner) PlanTo(dst *Plans, seed, step uint64, keys []uint64) error {
	if dst == nil {
		return errNilPlans
	}
	size := p.size
	if len(keys) > p.maxKeys {
		return (&InputError{Field: FieldKeys, Problem: -1, Set: -1, Output: -1, Value: float64(len(keys)),
			Err: fmt.Errorf("len = %d problems of K*n = %d members: more than %d members, the most a batch's plans hold (at most %d problems)",
				len(keys), size, combin.MaxSize, combin.MaxSize/size)}).In("spiral", FieldKeys)
	}
	dst.members = slices.Grow(dst.members[:0], len(keys)*size)[:len(keys)*size]
	dst.shape, dst.problems, dst.bad = p.shape, len(keys), dst.bad[:0]
	for q, key := range keys {
		one := dst.members[q*size : (q+1)*size]
		p.src.Seed(StreamSeed(seed, step, key))
		if p.uniform != nil {
			p.uniform.DrawTo(one, &p.src)
		} else {
			p.balanced.DrawTo(one, &p.src)
		}
		if p.shuffled {
			for i, n := 0, p.shape.setSize; i < size; i += n {
				combin.Shuffle(one[i:i+n], &p.src)
			}
		}
	}
	return nil
}

// StreamSeed returns the two words that seed the PCG generator
// (rand.NewPCG) from which the plan of problem key at the given seed and
// step is drawn:
//
//	hi = mix(seed ^ mix(key ^ 0x9e3779b97f4a7c15))
//	lo = mix(step ^ mix(key ^ 0xd1b54a32d192ed03))
//
// with mix the finalizer of SplitMix64, z ^= z >> 30; z *= 0xbf58476d1ce4e5b9;
// z ^= z >> 27; z *= 0x94d049bb133111eb; z ^= z >> 31 (a bijection of
// uint64). For a given seed, distinct (step, key) pairs give distinct
// generators: distinct keys give distinct hi, and one key at distinct
// steps distinct lo. Other implementations (the bridge, the Python
// package) reproduce the plans from it.
func StreamSeed(seed, step, key uint64) (hi, lo uint64) {
	return mix(seed ^ mix(key^0x9e3779b97f4a7c15)), mix(step ^ mix(key^0xd1b54a32d192ed03))
}

// mix is SplitMix64's finalizer, a bijection of uint64.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// errNilPlans is the error of PlanTo and CheckPlans given a nil dst.
var errNilPlans = (&InputError{Field: FieldDst, Problem: -1, Set: -1, Output: -1, Err: errors.New("nil *Plans")}).In("spiral", FieldDst)

// CheckPlans checks the plans of a batch of problems that come from
// outside and writes them into dst, ready for [Config.CreditBatch].
// members holds them flat: member j of set i of problem q at
// members[(q*K+i)*n+j], trace indices in [0, N1). Each problem's sets are
// checked as [Config.CheckPlan] checks a plan.
//
// A nil dst (an *[InputError] about "dst"), a length that is not a
// multiple of K*n or a batch of more than combin.MaxSize = 2^24 members
// (about "members", Value len(members)), or an invalid c gets an error and
// leaves dst unchanged. Otherwise every problem is written; a *[BatchError] lists the
// problems whose sets are bad, each as an *[InputError] about "members"
// naming the problem, set and member, and CreditBatch rejects them with the
// same error and credits the others.
func (c Config) CheckPlans(dst *Plans, members []int) error {
	if dst == nil {
		return errNilPlans
	}
	fam, err := c.validFamily()
	if err != nil {
		return err
	}
	size := c.PlanSize()
	if len(members)%size != 0 || len(members) > combin.MaxSize {
		why := fmt.Errorf("len(members) = %d is not a multiple of K*n = %d*%d", len(members), c.Sets, c.SetSize)
		if len(members)%size == 0 {
			why = fmt.Errorf("len = %d > %d, the most a batch's plans hold", len(members), combin.MaxSize)
		}
		return (&InputError{Field: FieldMembers, Problem: -1, Set: -1, Output: -1, Value: float64(len(members)), Err: why}).In("spiral", FieldMembers)
	}
	dst.members = slices.Grow(dst.members[:0], len(members))[:len(members)]
	copy(dst.members, members)
	dst.shape, dst.problems, dst.bad = c.planShape(), len(members)/size, dst.bad[:0]
	for q := range dst.problems {
		if e := c.checkSets(fam, dst.members[q*size:(q+1)*size], &dst.scratch); e != nil {
			e.Problem = q
			dst.bad = append(dst.bad, e.In("spiral", FieldMembers))
		}
	}
	if len(dst.bad) > 0 {
		return inputerr.NewBatch("spiral", dst.bad)
	}
	return nil
}

// CheckPlan reports whether p fits c: exactly K sets of n members each,
// every member in [0, N1) and none repeated inside a set, no two sets
// identical (as sets when c draws subsets, as sequences when Ordered), as
// [combin.CheckSets] decides; and, for the Balanced design, every trace in r
// or r+1 sets (exactly r when N1 divides K*n), r = floor(K*n/N1). A bad
// plan gets an *[InputError] about "Plan.Sets" naming the set and the
// member (Problem is -1). It also returns an error if c is invalid.
func (c Config) CheckPlan(p Plan) error {
	fam, err := c.validFamily()
	if err != nil {
		return err
	}
	flat, err := c.flatten(p, FieldPlanSets)
	if err != nil {
		return err
	}
	var sc setScratch
	if e := c.checkSets(fam, flat, &sc); e != nil {
		return e.In("spiral", FieldPlanSets)
	}
	return nil
}

// flatten returns the members of p flat, or an *InputError about field if
// p does not have K sets of n members.
func (c Config) flatten(p Plan, field string) ([]int, error) {
	if len(p.Sets) != c.Sets {
		return nil, (&InputError{Field: field, Problem: -1, Set: -1, Output: -1, Value: float64(len(p.Sets)),
			Err: fmt.Errorf("%d sets, want K = %d", len(p.Sets), c.Sets)}).In("spiral", field)
	}
	flat := make([]int, 0, c.PlanSize())
	for i, s := range p.Sets {
		if len(s) != c.SetSize {
			return nil, (&InputError{Field: field, Problem: -1, Set: i, Output: -1, Value: float64(len(s)),
				Err: fmt.Errorf("%d members, want n = %d", len(s), c.SetSize)}).In("spiral", field)
		}
		flat = append(flat, s...)
	}
	return flat, nil
}

// setScratch is the memory checkSets reuses.
type setScratch struct {
	sets   combin.SetChecker
	counts []int // appearances of each trace (Balanced design)
}

// checkSets checks one problem's K*n flat members for the valid c, whose
// family is fam: combin's set check, then the balance of a Balanced
// design. The error names the set and member (Problem -1, Field
// "members").
func (c *Config) checkSets(fam combin.Family, flat []int, sc *setScratch) *InputError {
	if err := sc.sets.Check(fam, flat); err != nil {
		// fam is valid and flat within MaxSize: err is combin's error
		// about a set of members.
		e, _ := errors.AsType[*InputError](err)
		return e.In("spiral", FieldMembers)
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
func balanceError(n1 int, flat []int, sc *setScratch) *InputError {
	sc.counts = slices.Grow(sc.counts[:0], n1)[:n1]
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
			return &InputError{Field: FieldMembers, Problem: -1, Set: -1, Output: -1, Value: float64(y),
				Err: fmt.Errorf("trace %d is in %d sets, want %s (Design = balanced, K*n = %d, N1 = %d)", y, m, want, len(flat), n1)}
		}
	}
	return nil
}
