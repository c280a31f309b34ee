package main

import (
	"fmt"
	"math/big"
	"math/rand/v2"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/estimator"
)

// A trainer updates a policy from one batch of problems per step.
type trainer interface {
	// step samples the arm's rollouts for every problem of batch from pol,
	// computes their credit and takes one gradient step on pol.
	step(pol *policy, batch []problem, rnd *rand.Rand) error
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
		// the own-reward term of the mean, as for SPIRAL's within-set
		// aggregation baseline.
		searchWeight: func() (*big.Rat, error) {
			G := spiral.Paper().Generations()
			a, err := estimator.AggregationFactor(G, estimator.WithinSet)
			if err != nil {
				return nil, err
			}
			return a.Quo(a, big.NewRat(int64(G), 1)), nil
		},
	},
	{
		name:      "spiral",
		about:     "SPIRAL at the paper's configuration (spiral.Paper(): N1 = 8, n = 4, K = 4, N2 = 4), credit from spiral.Config.Plan and Credit",
		objective: "reward is on aggregation outputs, which need a set holding the answer strategy or m distinct strategies of a complementary problem's subset",
		new: func(t toy, lr float64) (trainer, error) {
			return newSPIRAL(t, spiral.Paper(), lr)
		},
		// M/(N1 + K*N2): Proposition 3.1's M, pooled over the 24 outputs.
		searchWeight: func() (*big.Rat, error) {
			c := spiral.Paper()
			f, err := combin.Subsets(c.SearchTraces, c.SetSize)
			if err != nil {
				return nil, err
			}
			w, err := estimator.RoleWeights(f, c.Sets, c.AggregationsPerSet, estimator.WithinSet, estimator.MeanPooled)
			return w.Search, err
		},
	},
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
	syms    []int
	rewards []float64
	adv     []float64
	ids     []int
}

func newGRPO(t toy, group int, lr float64) *grpo {
	return &grpo{
		toy: t, group: group, lr: lr,
		p: make([]float64, t.V), grad: make([]float64, t.V),
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
		}
	}
	for v := range pol.search {
		pol.search[v] += g.lr * g.grad[v] / float64(len(batch))
	}
	return nil
}

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

// spiralArm trains both roles with SPIRAL's credit, from the library.
type spiralArm struct {
	toy     toy
	cfg     spiral.Config
	planner *spiral.Planner
	lr      float64

	p        []float64
	q        [kinds][]float64
	grad     []float64
	aggGrad  [kinds][]float64
	syms     []int
	correct  []bool
	setSyms  []int
	setRight []bool
	actions  [][]int
	rewards  [][]float64
}

func newSPIRAL(t toy, cfg spiral.Config, lr float64) (*spiralArm, error) {
	planner, err := cfg.NewPlanner()
	if err != nil {
		return nil, err
	}
	s := &spiralArm{
		toy: t, cfg: cfg, planner: planner, lr: lr,
		p: make([]float64, t.V), grad: make([]float64, t.V),
		syms: make([]int, cfg.SearchTraces), correct: make([]bool, cfg.SearchTraces),
		setSyms: make([]int, cfg.SetSize), setRight: make([]bool, cfg.SetSize),
		actions: make([][]int, cfg.Sets), rewards: make([][]float64, cfg.Sets),
	}
	for k := range kinds {
		s.q[k] = make([]float64, actions)
		s.aggGrad[k] = make([]float64, actions)
	}
	for i := range cfg.Sets {
		s.actions[i] = make([]int, cfg.AggregationsPerSet)
		s.rewards[i] = make([]float64, cfg.AggregationsPerSet)
	}
	return s, nil
}

// step: for each problem, N1 search traces, a plan of K sets of n of them
// (Planner.Plan), N2 aggregation actions per set from the aggregation head
// and their rewards, the credit (Config.Credit), and the update
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
	outputs := float64(s.cfg.Generations())
	for _, x := range batch {
		for y := range s.syms {
			s.syms[y] = draw(rnd, s.p)
			s.correct[y] = rnd.Float64() < s.toy.solveProb(x, s.syms[y])
		}
		plan, err := s.planner.Plan(rnd)
		if err != nil {
			return err
		}
		for i, g := range plan.Groups {
			for j, y := range g {
				s.setSyms[j], s.setRight[j] = s.syms[y], s.correct[y]
			}
			for j := range s.actions[i] {
				a := draw(rnd, s.q[x.kind])
				s.actions[i][j] = a
				s.rewards[i][j] = s.toy.reward(x, s.setSyms, s.setRight, a)
			}
		}
		credit, err := s.cfg.Credit(plan, s.rewards, spiral.Lengths{})
		if err != nil {
			return err
		}
		for y, a := range credit.Search.Advantages {
			addScore(s.grad, s.p, s.syms[y], a/outputs)
		}
		for i, row := range credit.Aggregation.Advantages {
			for j, a := range row {
				addScore(s.aggGrad[x.kind], s.q[x.kind], s.actions[i][j], a/outputs)
			}
		}
	}
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
