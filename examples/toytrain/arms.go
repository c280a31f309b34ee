package main

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/loss"
)

// A trainer updates a policy from one batch of problems per step.
type trainer interface {
	// step samples the arm's rollouts for every problem of batch from pol,
	// computes their credit and takes one gradient step on pol.
	step(pol *policy, batch []problem, rnd *rand.Rand) error
	// stats returns what the trainer observed over its steps so far.
	stats() trainStats
}

// trainStats are what a trainer observed over its steps.
type trainStats struct {
	// signal and noise are sums over steps of ||E[s]||^2 and
	// E||s - E[s]||^2 for the search step s per unit learning rate (the
	// mean over the batch of each problem's contribution to the search
	// logits), both estimated from the spread of the batch's contributions
	// (searchMeter); steps counts the steps that gave an estimate (a batch
	// of at least 2 problems).
	signal, noise float64
	steps         int
	// For SPIRAL: plans is the number of plans drawn (one per problem),
	// traces the search traces they planned, and uncredited and
	// uncreditedSq the sum and the sum of squares over plans of the number
	// of traces in no set (appearance count 0 in BatchCredit.Appearances).
	plans, traces            int
	uncredited, uncreditedSq float64
}

// snr returns the search step's signal-to-noise ratio per step,
// sum ||E[s]||^2 / sum E||s - E[s]||^2; NaN without an estimate.
func (s trainStats) snr() float64 {
	if s.steps == 0 || s.noise <= 0 {
		return math.NaN()
	}
	return s.signal / s.noise
}

// noCredit returns the fraction of planned search traces that were in no
// set and its standard error, from the spread of the per-plan counts; NaN
// for an arm without plans.
func (s trainStats) noCredit() (frac, se float64) {
	if s.plans == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(s.plans)
	perPlan := float64(s.traces) / n
	mean := s.uncredited / n
	if s.plans > 1 {
		v := (s.uncreditedSq - n*mean*mean) / (n - 1)
		se = math.Sqrt(math.Max(v, 0)/n) / perPlan
	}
	return mean / perPlan, se
}

// searchMeter watches a step's search-logit contributions, one problem at a
// time, and accumulates the step's signal and noise into trainStats. With
// c_b the contribution of problem b of B and s = (1/B) sum_b c_b the step,
// T = (sum_b ||c_b||^2 - B ||s||^2)/(B-1), the trace of the contributions'
// sample covariance, gives T/B for E||s - E[s]||^2 and ||s||^2 - T/B for
// ||E[s]||^2 (unbiased for independent problems; the batch is drawn
// without replacement from a finite pool, which the estimate ignores). The
// trainers keep their own gradient sums beside it, so that watching changes
// none of their arithmetic (and no arm's numbers).
type searchMeter struct {
	one []float64 // the current problem's contribution
	sum []float64 // sum of the step's contributions so far
	sq  float64   // sum of their squared norms
	n   int       // problems in the step so far
}

func newSearchMeter(V int) searchMeter {
	return searchMeter{one: make([]float64, V), sum: make([]float64, V)}
}

// problemDone adds the current problem's contribution to the step.
func (m *searchMeter) problemDone() {
	for i, x := range m.one {
		m.sum[i] += x
		m.sq += x * x
	}
	m.n++
	clear(m.one)
}

// stepDone records the step's signal and noise in st and starts a new step.
func (m *searchMeter) stepDone(st *trainStats) {
	B := float64(m.n)
	norm := 0.0
	for _, x := range m.sum {
		norm += (x / B) * (x / B)
	}
	if m.n >= 2 {
		tr := (m.sq - B*norm) / (B - 1)
		st.signal += norm - tr/B
		st.noise += tr / B
		st.steps++
	}
	clear(m.sum)
	m.sq, m.n = 0, 0
}

// arm is a named way to train the policy.
type arm struct {
	name  string
	about string // one line for the summary
	// objective says what the arm's search is rewarded for and where that
	// leads, for the summary's explanation.
	objective string
	// singleTrace reports whether the arm rewards single traces, which is
	// what pass@1 measures.
	singleTrace bool
	new         func(t toy, lr float64) (trainer, error)
	// searchWeight is the factor w with E[search update] = lr * w * grad J
	// for the arm's own search objective J, as the library computes it.
	searchWeight func() (*big.Rat, error)
	// pair names the arm this one is a variant of, with the same objective:
	// when both run, the summary compares them over -replicates training
	// streams each.
	pair string
	// config is a SPIRAL arm's configuration, nil for other arms.
	config *spiral.Config
}

// arms lists every arm -arms can name, in the order they are reported. The
// first is the baseline that scaling efficiencies are measured against.
var arms = []arm{
	{
		name:        "grpo",
		about:       "GRPO on single-trace rewards: a group of G = N1 + K*N2 = 24 search traces per problem, A = r - mean (Dr. GRPO), no aggregation training",
		objective:   "reward is single-trace correctness, whose expectation is linear in the search probabilities, so it is maximised by putting all mass on the one strategy most often correct alone",
		singleTrace: true,
		new: func(t toy, lr float64) (trainer, error) {
			return newGRPO(t, spiral.Paper().Generations(), lr), nil
		},
		// (1/G) sum_g (r_g - mean) (e - p) has expectation (G-1)/G grad E[r]:
		// the own-reward term of the mean. The group is SPIRAL's one set of
		// N2 = G aggregation outputs with the within-set baseline, so its
		// weight is the library's aggregation weight per output.
		searchWeight: func() (*big.Rat, error) {
			G := spiral.Paper().Generations()
			group := spiral.Config{SearchTraces: 1, SetSize: 1, Sets: 1, AggregationsPerSet: G}
			w, err := group.RoleWeights(spiral.LossOptions{Reduction: loss.SeqMeanTokenSum, SplitRoles: true})
			if err != nil {
				return nil, err
			}
			return w.Aggregation, nil
		},
	},
	spiralVariant("spiral",
		"SPIRAL at the paper's configuration (spiral.Paper(): N1 = 8, n = 4, K = 4, N2 = 4), plans from spiral.Planner.PlanTo, credit from spiral.Config.CreditBatch",
		"", spiral.Paper()),
	spiralVariant("spiral-balanced",
		"SPIRAL at the paper's configuration with Design = combin.Balanced: the K = 4 sets are two random splits of the 8 traces into halves, so every trace is in exactly 2 sets (M = 1), plans from spiral.Planner.PlanTo, credit from spiral.Config.CreditBatch",
		"spiral", balancedPaper()),
}

// spiralVariant returns the arm that trains with SPIRAL's credit at cfg.
func spiralVariant(name, about, pair string, cfg spiral.Config) arm {
	return arm{
		name: name, about: about, pair: pair, config: &cfg,
		objective: spiralObjective,
		new: func(t toy, lr float64) (trainer, error) {
			return newSPIRAL(t, cfg, lr)
		},
		searchWeight: func() (*big.Rat, error) { return pooledSearchWeight(cfg) },
	}
}

const spiralObjective = "reward is on aggregation outputs, which need a set holding the answer strategy or m distinct strategies of a complementary problem's subset"

// balancedPaper is the paper's configuration with the balanced design.
func balancedPaper() spiral.Config {
	c := spiral.Paper()
	c.Design = combin.Balanced
	return c
}

// pooledSearchWeight returns M/(N1 + K*N2): the multiplier of Proposition
// 3.1 for c's own design, each output's term divided by the outputs
// generated per problem (Config.RoleWeights with loss.SeqMeanTokenSum). It is
// 1365/(1541*24) = 455/12328 for the paper's uniform design and 1/24 for
// the balanced one (M = 8/4 - 1 = 1).
func pooledSearchWeight(c spiral.Config) (*big.Rat, error) {
	w, err := c.RoleWeights(spiral.LossOptions{Reduction: loss.SeqMeanTokenSum})
	if err != nil {
		return nil, err
	}
	return w.Search, nil
}

// countZero returns the number of zeros in xs.
func countZero(xs []int) int {
	m := 0
	for _, x := range xs {
		if x == 0 {
			m++
		}
	}
	return m
}

// expectedNoCredit returns the probability that a search trace is in no
// set under c's design, 1 - n(M+1)/N1 with M = c.M(): for a design that
// treats the traces alike, M = E[traces in at least one set]/n - 1
// (docs/findings.md#the-constant-m). It is 88/1541 for the paper's uniform design and 0
// for the balanced one.
func expectedNoCredit(c spiral.Config) (*big.Rat, error) {
	m, err := c.M()
	if err != nil {
		return nil, err
	}
	m.Add(m, big.NewRat(1, 1))
	m.Mul(m, big.NewRat(int64(c.SetSize), int64(c.SearchTraces)))
	return m.Sub(big.NewRat(1, 1), m), nil
}

// findArm returns the arm with the given name.
func findArm(name string) (arm, error) {
	for _, a := range arms {
		if a.name == name {
			return a, nil
		}
	}
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = a.name
	}
	return arm{}, fmt.Errorf("arms: unknown arm %q (known: %v)", name, names)
}

// grpo trains the search role on single-trace rewards with a group baseline.
type grpo struct {
	toy     toy
	group   int
	lr      float64
	p       []float64
	grad    []float64
	meter   searchMeter
	st      trainStats
	syms    []int
	rewards []float64
	adv     []float64
	ids     []int
}

func newGRPO(t toy, group int, lr float64) *grpo {
	return &grpo{
		toy: t, group: group, lr: lr,
		p: make([]float64, t.V), grad: make([]float64, t.V), meter: newSearchMeter(t.V),
		syms: make([]int, group), rewards: make([]float64, group),
		adv: make([]float64, group), ids: make([]int, group),
	}
}

// step: for each problem, G traces y_g from the search distribution, reward
// r_g = 1 when y_g is correct on its own, A_g = r_g - mean (from
// advantage.GroupRelative), and the update
//
//	search logits += lr * mean over problems of (1/G) sum_g A_g (e_{y_g} - p).
func (g *grpo) step(pol *policy, batch []problem, rnd *rand.Rand) error {
	softmax(g.p, pol.search)
	clear(g.grad)
	for _, x := range batch {
		for i := range g.group {
			g.syms[i] = draw(rnd, g.p)
			g.rewards[i] = 0
			if rnd.Float64() < g.toy.solveProb(x, g.syms[i]) {
				g.rewards[i] = 1
			}
		}
		if _, err := advantage.GroupRelative(g.adv, g.rewards, g.ids, advantage.GroupOptions{}); err != nil {
			return err
		}
		for i, a := range g.adv {
			addScore(g.grad, g.p, g.syms[i], a/float64(g.group))
			addScore(g.meter.one, g.p, g.syms[i], a/float64(g.group))
		}
		g.meter.problemDone()
	}
	g.meter.stepDone(&g.st)
	for v := range pol.search {
		pol.search[v] += g.lr * g.grad[v] / float64(len(batch))
	}
	return nil
}

func (g *grpo) stats() trainStats { return g.st }

// addScore adds w * (e_v - p), w times the score of a softmax at v, to grad.
func addScore(grad, p []float64, v int, w float64) {
	if w == 0 {
		return
	}
	for u := range grad {
		grad[u] -= w * p[u]
	}
	grad[v] += w
}

// spiralArm trains both roles with SPIRAL's credit, from the library: one
// Config.CreditBatch per step, into a BatchCredit reused from step to step.
type spiralArm struct {
	toy     toy
	cfg     spiral.Config
	planner *spiral.Planner
	lr      float64

	p        []float64
	q        [kinds][]float64
	grad     []float64
	meter    searchMeter
	st       trainStats
	aggGrad  [kinds][]float64
	correct  []bool
	setSyms  []int
	setRight []bool
	plans    spiral.Plans // the step's plans
	keys     []uint64     // 0, 1, ...: the step's problems
	// The step's batch, problem after problem: syms[q*N1+y] is the
	// strategy of search trace y of problem q, actions[o] the action of
	// aggregation output o (the layout of batch.Rewards).
	batch   spiral.Batch
	credit  spiral.BatchCredit
	syms    []int
	actions []int
}

func newSPIRAL(t toy, cfg spiral.Config, lr float64) (*spiralArm, error) {
	planner, err := cfg.NewPlanner()
	if err != nil {
		return nil, err
	}
	s := &spiralArm{
		toy: t, cfg: cfg, planner: planner, lr: lr,
		p: make([]float64, t.V), grad: make([]float64, t.V), meter: newSearchMeter(t.V),
		correct: make([]bool, cfg.SearchTraces),
		setSyms: make([]int, cfg.SetSize), setRight: make([]bool, cfg.SetSize),
	}
	for k := range kinds {
		s.q[k] = make([]float64, actions)
		s.aggGrad[k] = make([]float64, actions)
	}
	return s, nil
}

// step: for each problem, N1 search traces, a plan of K sets of n of them
// (Planner.PlanTo), N2 aggregation actions per set from the aggregation
// head and their rewards; then the credit of the whole batch
// (Config.CreditBatch) and the update
//
//	search logits    += lr * mean over problems of (1/O) sum_y A_search(y) (e_{y} - p)
//	aggregation head += lr * mean over problems of (1/O) sum_ij A_agg(i, j) (e_{z_ij} - q)
//
// with O = N1 + K*N2 = 24 the outputs generated per problem, as for GRPO.
func (s *spiralArm) step(pol *policy, batch []problem, rnd *rand.Rand) error {
	softmax(s.p, pol.search)
	for k := range kinds {
		softmax(s.q[k], pol.agg[k][:])
		clear(s.aggGrad[k])
	}
	clear(s.grad)
	N1, K, n, N2 := s.cfg.SearchTraces, s.cfg.Sets, s.cfg.SetSize, s.cfg.AggregationsPerSet
	P := len(batch)
	s.syms = slices.Grow(s.syms[:0], P*N1)[:P*N1]
	s.actions = slices.Grow(s.actions[:0], P*K*N2)[:P*K*N2]
	s.batch.Rewards = slices.Grow(s.batch.Rewards[:0], P*K*N2)[:P*K*N2]
	for len(s.keys) < P {
		s.keys = append(s.keys, uint64(len(s.keys)))
	}
	if err := s.planner.PlanTo(&s.plans, rnd.Uint64(), 0, s.keys[:P]); err != nil {
		return err
	}
	s.batch.Plans = &s.plans
	for q, x := range batch {
		sp := s.cfg.Span(q)
		syms := s.syms[sp.Trace : sp.Trace+sp.Traces]
		for y := range syms {
			syms[y] = draw(rnd, s.p)
			s.correct[y] = rnd.Float64() < s.toy.solveProb(x, syms[y])
		}
		for i := range K {
			for j := range n {
				y := s.plans.Member(q, i, j)
				s.setSyms[j], s.setRight[j] = syms[y], s.correct[y]
			}
			for j := range N2 {
				o := sp.Reward + i*N2 + j
				a := draw(rnd, s.q[x.kind])
				s.actions[o] = a
				s.batch.Rewards[o] = s.toy.reward(x, s.setSyms, s.setRight, a)
			}
		}
	}
	if err := s.cfg.CreditBatch(&s.credit, s.batch); err != nil {
		return err
	}
	outputs := float64(s.cfg.Generations())
	for q, sp := range s.credit.Spans() {
		x := batch[q]
		syms := s.syms[sp.Trace : sp.Trace+sp.Traces]
		for y, a := range s.credit.Search[sp.Trace : sp.Trace+sp.Traces] {
			addScore(s.grad, s.p, syms[y], a/outputs)
			addScore(s.meter.one, s.p, syms[y], a/outputs)
		}
		s.meter.problemDone()
		uncredited := float64(countZero(s.credit.Appearances[sp.Trace : sp.Trace+sp.Traces])) // traces in no set
		s.st.plans++
		s.st.traces += N1
		s.st.uncredited += uncredited
		s.st.uncreditedSq += uncredited * uncredited
		for o := sp.Reward; o < sp.Reward+sp.Rewards; o++ {
			addScore(s.aggGrad[x.kind], s.q[x.kind], s.actions[o], s.credit.Aggregation[o]/outputs)
		}
	}
	s.meter.stepDone(&s.st)
	b := float64(len(batch))
	for v := range pol.search {
		pol.search[v] += s.lr * s.grad[v] / b
	}
	for k := range kinds {
		for a := range actions {
			pol.agg[k][a] += s.lr * s.aggGrad[k][a] / b
		}
	}
	return nil
}

func (s *spiralArm) stats() trainStats { return s.st }
