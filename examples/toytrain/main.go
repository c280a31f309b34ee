// Command toytrain is a pure-Go toy of the SPIRAL paper's comparison of
// search entropy, success and coverage: one policy trained by GRPO on
// single-trace rewards and by SPIRAL on aggregated rewards, with the paper's
// uniform set design and with the balanced one, at the same number of
// generated outputs per problem, compared on the diversity of its search
// distribution, its success rates, and its pass@k coverage.
//
// # The toy
//
// A problem can be attacked with V strategies (default 8): a search trace is
// one strategy, drawn from the policy's search distribution, a softmax over V
// logits shared by all problems (one policy, no per-problem memory, as a
// language model's habits are shared across problems). There are two kinds
// of problems:
//
//   - single (default 30%): one answer strategy solves it; a trace with that
//     strategy is correct on its own, every other trace is wrong. The answer
//     strategy v is drawn with probability proportional to 1/(v+1), so a few
//     strategies solve most single problems.
//   - complementary (the other 70%): the problem has a subset C of c = 3
//     strategies (uniform among the 3-subsets); a trace with a strategy of C
//     is correct on its own only with probability ε = 0.05 (luck), and the
//     problem is solved reliably only by an aggregator that sees at least
//     m = 2 distinct strategies of C together.
//
// The aggregation role is a second head of the same policy: for each problem
// kind (the aggregator reads the problem), a softmax over two actions. Adopt
// answers with a candidate that is correct on its own, and is right when the
// set holds one. Synthesize combines the candidates' strategies, and is
// right when the problem is complementary and the set holds at least m
// distinct strategies of C. Both heads start uniform (all logits 0), so the
// search entropy starts at log2(V) bits.
//
// # The arms
//
// Every arm generates the same number of outputs per problem: the 24 of
// SPIRAL at the paper's configuration (N1 = 8 search traces, K = 4 sets of
// n = 4, N2 = 4 aggregations per set: 8 + 16).
//
//   - grpo: 24 search traces per problem, reward 1 for a trace that is
//     correct on its own, advantage r - mean over the group
//     (advantage.GroupRelative with the zero options, Dr. GRPO), so that both
//     arms use unscaled, mean-centred advantages. It never trains the
//     aggregation head, which stays uniform.
//   - spiral: spiral.Paper() through the root package: Planner.PlanTo draws
//     the K sets uniformly, as the paper does, each set's N2 aggregation
//     outputs are actions of the aggregation head rewarded as above, and
//     Config.CreditBatch, once per step for the whole batch, gives the
//     search advantages (to the search logits) and the aggregation
//     advantages (to the aggregation head). A trace is in no
//     set with probability 88/1541 (5.71%) and then gets no credit
//     (docs/method.md#proposition-31).
//   - spiral-balanced: the same with Design = combin.Balanced: the 4 sets are
//     two random splits of the 8 traces into halves, so every trace is in
//     exactly 2 sets and none goes without credit. Same outputs, same
//     aggregation calls (docs/findings.md#set-designs).
//
// Every arm takes the policy-gradient step with the softmax score: logits +=
// lr * A * (e_v - p) for every output v with advantage A, each output's term
// divided by the 24 outputs of its problem and averaged over the batch
// (default 32 problems from a pool of 512, learning rate 1, 2000 steps).
// In expectation the search step is lr * w * grad J for the arm's own
// objective J, with w = 23/24 for GRPO (J the single-trace reward) and w =
// M/24 for SPIRAL (J the aggregated reward, M the design's multiplier,
// Config.M: 1365/1541 uniform, 1 balanced; docs/findings.md#the-constant-m),
// so at the same learning rate the balanced arm's expected search step is
// 1541/1365 = 1.129 times the uniform one's. More arms are added to the
// list in arms.go and chosen with -arms.
//
// # What it reports
//
// Every -eval-every steps, on 256 held-out problems and exactly (in closed
// form, not samples): the search distribution's entropy in bits; the
// single-trace success rate; the aggregated success rate, the chance that
// one aggregation output of a set of n = 4 traces is right with the arm's
// own aggregation head; and the best-action success rate, the same with the
// best action for each set's strategies, which measures what the search
// distribution is worth to a perfect aggregator. At the end, pass@k
// coverage for k = 1..64 of each trained search policy (eval.CoverageCurve,
// from 256 samples per held-out problem) and the scaling efficiency of each
// arm against the first (eval.ScalingEfficiency,
// docs/findings.md#evaluation-estimators: how many times fewer samples the
// arm needs to reach the baseline's coverage).
//
// The two SPIRAL arms have the same objective, so their differences are
// small against one training run's noise: the summary compares them over
// -replicates (default 16) training streams each, as means with standard
// errors and z-scores, and calls a difference real from 3 standard errors.
// It also reports, measured during training, the fraction of search traces
// that no set held (from BatchCredit.Appearances, against the design's
// 1 - n(M+1)/N1: 88/1541 and 0); the noise of the search step, lr^2 sum
// over steps of E||s - E[s]||^2, estimated from the spread of each batch's
// problems, and its ratio between the designs once each is divided by its
// squared weight w^2 (the noise of the update scaled to be unbiased);
// how far the search logits moved, ||θ_T - θ_0||^2, which the noise alone
// would make about its own size; and the search's best-action success on
// the training problems.
//
// It writes entropy.png, success.png, coverage.png and summary.txt (key: value
// lines, then verdict and why lines that compare the arms from the numbers)
// to -out, default out/toytrain, which git ignores, and prints where. It runs
// in a few seconds. The same -seed gives the same numbers from the same
// build on every machine (a build for another architecture may round the
// policy's arithmetic differently, through fused multiply-adds or its own
// math.Exp, and so draw other samples); each arm draws from its own stream,
// so adding an arm (or replicate streams) changes no other arm's numbers.
//
// # What it shows
//
// At the defaults both SPIRAL arms keep the search diverse where GRPO
// collapses it, and beat GRPO's coverage from k = 2 on. The balanced design
// is indistinguishable from the uniform one on this toy: it credits every
// trace and its update, scaled to be unbiased, is about 12% less noisy, but
// there is little for the search to gain (training raises the search
// distribution's held-out worth to a perfect aggregator by under 0.01), and
// over 2000 steps of 32 problems the noise is about 5% of how far the search
// logits move, so training is not noise-limited. Its one visible effect is
// that of its 13% larger expected step at the same learning rate: the
// entropy falls slightly faster (z about -2). Smaller batches (-batch 2)
// make the noise most of the movement, and the two stay indistinguishable.
//
// # The -advice mode: a check of package advise
//
// -advice trains the configuration package advise ranks first and a
// reference (-advice-reference N1,n,K,N2[,design], default the paper's
// 8,4,4,4) side by side, and checks the ranking's prediction by training.
// The toy is stated as the advisor's "find one" model, exactly at the
// start: V = 2 strategies, every problem the same single problem, and an
// aggregation head with its own logits for every presented tuple of
// strategies (the advisor's tabular binary aggregator). The reward model is
// derived from the toy at its uniform start, not written in: Correct is the
// search distribution's probability of the answer, Found and Missed the
// head's success, sum over actions of q(a) times toy.reward, on every
// context with and without a correct candidate (1/2, 1/2 and 0).
//
// advise.Advise ranks the configurations at the reference's tokens per
// problem (budget.SPIRAL, 4,096 tokens per search trace and per aggregation
// output, generated tokens counted; -advice-max-traces, -advice-max-sets
// and -advice-max-aggregations narrow its search) and at the step budget
// of -batch reference problems' tokens (default 7), by expected
// improvement per token of one step; the reference's figures are
// advise.Evaluate's, its rank the ranking's. The top and the reference are
// trained at equal tokens per step: each arm's problems per step are the
// step's tokens over its own tokens per problem, rounded to the nearest,
// so the two differ by at most one problem's tokens. Each step takes the
// update the advisor's figures are of, (g/M, u/(K a)): the credit from
// Planner.PlanTo and Config.CreditBatch, the search and aggregation terms
// scaled by Config.RoleWeights(LossOptions{})'s multipliers,
// averaged over the step's problems, times -lr (default 1). Each arm
// trains -replicates streams (default 16) for -steps steps (default 60).
//
// The early check then tests the ranking's own claim: at each step budget
// of -advice-budgets (reference problems' tokens per step, default
// 1,7,28,112), the top of the ranking at that budget, the reference and the
// former top (-advice-former, default 7,2,7,2,balanced: the first by SNR
// per token alone) are trained from the start at every learning rate of
// -advice-lrs, on J and on J - (lambda/2) ||theta||^2 for each lambda of
// -advice-curvatures (default 0 and 4: the toy as it is, and held by a known
// curvature so that it is smooth as the prediction assumes), and the ratio
// of one step's gain at each arm's best learning rate is compared with the
// predicted ratio of the arms' improvements (-advice-early-steps and
// -advice-early-streams set the steps and streams).
//
// The report (advice.txt in -out, and standard output) gives the
// advisor's numbers for both arms; each arm's update variance measured on
// 4,096 problems at the start against the advisor's exact one; the
// success J (the chance that one aggregation output of the arm's own
// configuration is right), the search's single-trace success, the
// aggregator's success on sets with a correct candidate and the measured
// SNR per token, with standard errors over the streams, every tenth of the
// run and at the end; the verdict on J at the end: holds (advised above
// the reference by 2 standard errors), does not hold (below by 2), or
// inconclusive, with why lines computed from the numbers; and the early
// check's predicted and measured ratios with their verdicts.
// docs/toytrain/advice.md has the setup and the default run's reading. The
// default run takes a few minutes on one core, most of it the early check.
//
// Usage:
//
//	go run ./examples/toytrain [-seed 1] [-steps 2000] [-out out/toytrain] [-arms grpo,spiral,spiral-balanced] [-replicates 16]
//	go run ./examples/toytrain -advice [-advice-reference 8,4,4,4] [-advice-former 7,2,7,2,balanced] [-steps 60] [-batch 7] [-lr 1] [-replicates 16]
//		[-advice-budgets 1,7,28,112] [-advice-curvatures 0,4] [-advice-lrs ...] [-advice-early-steps 3] [-advice-early-streams 128]
//
// -strategies, -single and -luck change the toy's V, single fraction and ε;
// -batch, -lr, -eval-every and -samples the training and evaluation. Every
// evaluation is exact and in closed form for each distinct problem (a
// dynamic program over the strategies of its subset, not a sum over the V^4
// strategy tuples of a set), so larger V costs little more.
//
// docs/toytrain holds a copy of the default run's plots and summary for the
// README; SPIRAL_LONG=1 go test ./examples/toytrain checks that its
// summary.txt is what the program writes now.
package main

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"spiral"
	"spiral/eval"
)

// options are everything a run depends on.
type options struct {
	toy           toy
	seed          uint64
	steps         int
	batch         int
	trainProblems int
	evalProblems  int
	evalEvery     int
	evalSamples   int // search samples per held-out problem for pass@k
	kmax          int
	lr            float64
	arms          []string
	replicates    int // training streams per arm of a compared pair, the main one included
	out           string
}

func defaults() options {
	return options{
		toy:           toy{V: 8, single: 0.3, comp: 3, need: 2, luck: 0.05},
		seed:          1,
		steps:         2000,
		batch:         32,
		trainProblems: 512,
		evalProblems:  256,
		evalEvery:     20,
		evalSamples:   256,
		kmax:          64,
		lr:            1,
		arms:          []string{"grpo", "spiral", "spiral-balanced"},
		replicates:    16,
		out:           filepath.Join("out", "toytrain"),
	}
}

func main() {
	os.Exit(cli(os.Stdout, os.Stderr, os.Args[1:]))
}

// cli parses args, runs, and returns the exit status.
func cli(stdout, stderr io.Writer, args []string) int {
	opt := defaults()
	fs := flag.NewFlagSet("toytrain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&opt.seed, "seed", opt.seed, "random seed")
	fs.IntVar(&opt.steps, "steps", opt.steps, "training steps")
	fs.IntVar(&opt.batch, "batch", opt.batch, "problems per step")
	fs.IntVar(&opt.evalEvery, "eval-every", opt.evalEvery, "steps between evaluations")
	fs.IntVar(&opt.evalSamples, "samples", opt.evalSamples, "search samples per held-out problem for pass@k")
	fs.Float64Var(&opt.lr, "lr", opt.lr, "learning rate")
	fs.IntVar(&opt.toy.V, "strategies", opt.toy.V, "number of strategies V, 2..64")
	fs.Float64Var(&opt.toy.single, "single", opt.toy.single, "fraction of problems a single strategy solves")
	fs.Float64Var(&opt.toy.luck, "luck", opt.toy.luck, "chance that one trace of a complementary problem's subset solves it alone")
	fs.IntVar(&opt.replicates, "replicates", opt.replicates, "training streams per arm of a compared pair (such as spiral-balanced and spiral), the main one included")
	armList := fs.String("arms", strings.Join(opt.arms, ","), "comma-separated arms to train; the first is the baseline")
	fs.StringVar(&opt.out, "out", opt.out, "output directory")
	aopt := adviceDefaults()
	adviceMode := fs.Bool("advice", false, "check package advise: train the advisor's top configuration and -advice-reference side by side (default -steps 60, -batch 7 reference problems per step, -replicates 16)")
	var afl adviceFlags
	fs.StringVar(&afl.reference, "advice-reference", "8,4,4,4", "with -advice: the reference configuration N1,n,K,N2[,design] (uniform unless design is balanced), whose tokens per problem are the budget")
	fs.StringVar(&afl.former, "advice-former", formatConfig(aopt.former), "with -advice: the former top, ranked first by SNR per token alone, N1,n,K,N2[,design]")
	fs.StringVar(&afl.budgets, "advice-budgets", joinNumbers(aopt.early.budgets), "with -advice: the early check's step budgets, in reference problems of tokens per step")
	fs.StringVar(&afl.lrs, "advice-lrs", joinNumbers(aopt.early.lrs), "with -advice: the early check's learning rates")
	fs.StringVar(&afl.curvatures, "advice-curvatures", joinNumbers(aopt.early.curvatures), "with -advice: the early check's curvatures lambda, training on J - (lambda/2) ||theta||^2 (0: J itself)")
	fs.IntVar(&aopt.early.steps, "advice-early-steps", aopt.early.steps, "with -advice: the steps early progress is measured over")
	fs.IntVar(&aopt.early.streams, "advice-early-streams", aopt.early.streams, "with -advice: the early check's streams per step budget, arm and learning rate")
	fs.IntVar(&aopt.maxTraces, "advice-max-traces", 0, "with -advice: the advisor's bound on N1 (0: advise.MaxTraces)")
	fs.IntVar(&aopt.maxSets, "advice-max-sets", 0, "with -advice: the advisor's bound on K (0: advise.MaxSets)")
	fs.IntVar(&aopt.maxAggregations, "advice-max-aggregations", 0, "with -advice: the advisor's bound on N2 (0: advise.MaxAggregations)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *adviceMode {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		adviceRunDefaults(&opt, set)
		return cliAdvice(stdout, stderr, opt, aopt, afl)
	}
	opt.arms = strings.Split(*armList, ",")
	start := time.Now()
	res, err := run(opt)
	if err == nil {
		err = write(res)
	}
	if err != nil {
		fmt.Fprintln(stderr, "toytrain:", err)
		return 1
	}
	fmt.Fprint(stdout, res.verdict())
	fmt.Fprintf(stdout, "wrote %s (%.1fs)\n", strings.Join(res.files(), ", "), time.Since(start).Seconds())
	return 0
}

func (o options) validate() error {
	if err := o.toy.validate(); err != nil {
		return err
	}
	switch {
	case o.steps < 1:
		return fmt.Errorf("steps = %d, want >= 1", o.steps)
	case o.batch < 1 || o.batch > o.trainProblems:
		return fmt.Errorf("batch = %d, want 1..%d", o.batch, o.trainProblems)
	case o.evalEvery < 1:
		return fmt.Errorf("eval-every = %d, want >= 1", o.evalEvery)
	case o.kmax < 1 || o.evalSamples < o.kmax:
		return fmt.Errorf("samples = %d, want >= kmax = %d (pass@k needs k samples)", o.evalSamples, o.kmax)
	case !(o.lr > 0 && o.lr < 1e6):
		return fmt.Errorf("lr = %v, want a positive number", o.lr)
	case len(o.arms) == 0:
		return errors.New("arms: none")
	case o.replicates < 1:
		return fmt.Errorf("replicates = %d, want >= 1", o.replicates)
	case o.out == "":
		return errors.New("out: empty")
	}
	seen := map[string]bool{}
	for _, a := range o.arms {
		if seen[a] {
			return fmt.Errorf("arms: %q twice", a)
		}
		seen[a] = true
		if _, err := findArm(a); err != nil {
			return err
		}
	}
	return nil
}

// point is one evaluation during training.
type point struct {
	step int
	metrics
}

// streamResult is one arm trained from one random stream.
type streamResult struct {
	history  []point // the evaluations during training
	final    metrics
	coverage []float64 // pass@k coverage, k = 1..kmax
	stats    trainStats
	// moved is ||θ_T - θ_0||^2, how far training moved the search logits
	// (they start at 0 and every step keeps their sum at 0).
	moved float64
	// poolBest is the final best-action success on the training problems
	// (the metric BestAction on the pool the batches are drawn from).
	poolBest float64
}

// armResult is one trained arm.
type armResult struct {
	arm          arm
	searchWeight *big.Rat // arm.searchWeight(), nil without one
	streamResult          // the main stream
	// replicates are the main stream and, for an arm of a compared pair,
	// opt.replicates - 1 more.
	replicates []streamResult
}

// result is a whole run.
type result struct {
	opt   options
	arms  []armResult
	setN  int // n, the set size the aggregated metrics use
	evals []problem
	eff   []eval.ScalingEfficiencyCurve // eff[i] compares arms[i+1] with arms[0]
	pairs []pair
}

// pair is a compared pair of arms: variant's arm.pair names reference.
type pair struct{ variant, reference int }

// stream returns a generator for one named purpose: the same seed and name
// give the same numbers whatever else runs, so adding an arm (or replicate
// streams) changes no other arm's numbers. An arm's main stream trains from
// "train/<arm>" and samples coverage from "coverage/<arm>"; replicate i >= 1
// from "train/<arm>#i" and "coverage/<arm>#i".
func stream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// run trains every arm and evaluates it.
func run(opt options) (*result, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	rnd := stream(opt.seed, "problems")
	train := make([]problem, opt.trainProblems)
	for i := range train {
		train[i] = opt.toy.newProblem(rnd)
	}
	evals := make([]problem, opt.evalProblems)
	for i := range evals {
		evals[i] = opt.toy.newProblem(rnd)
	}
	res := &result{opt: opt, evals: evals, arms: make([]armResult, len(opt.arms)), setN: spiral.Paper().SetSize}
	index := map[string]int{}
	for i, name := range opt.arms {
		res.arms[i].arm, _ = findArm(name)
		index[name] = i
	}
	streams := make([]int, len(res.arms))
	for i := range streams {
		streams[i] = 1
	}
	for i, a := range res.arms {
		if j, ok := index[a.arm.pair]; ok {
			res.pairs = append(res.pairs, pair{variant: i, reference: j})
			streams[i], streams[j] = opt.replicates, opt.replicates
		}
	}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range res.arms {
		ar := &res.arms[i]
		ar.replicates = make([]streamResult, streams[i])
		for r := range ar.replicates {
			wg.Go(func() {
				if err := res.train(ar.arm, r, &ar.replicates[r], train); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		if ar.arm.searchWeight != nil {
			var err error
			if ar.searchWeight, err = ar.arm.searchWeight(); err != nil {
				return nil, err
			}
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range res.arms {
		res.arms[i].streamResult = res.arms[i].replicates[0]
	}
	ks := make([]int, opt.kmax)
	for k := range ks {
		ks[k] = k + 1
	}
	for _, a := range res.arms[1:] {
		e, err := eval.ScalingEfficiency(ks, res.arms[0].coverage, a.coverage)
		if err != nil {
			return nil, err
		}
		res.eff = append(res.eff, e)
	}
	return res, nil
}

// train trains arm a from the uniform policy on stream replicate (0 the
// main one) and fills sr.
func (res *result) train(a arm, replicate int, sr *streamResult, train []problem) error {
	opt := res.opt
	tr, err := a.new(opt.toy, opt.lr)
	if err != nil {
		return err
	}
	name := a.name
	if replicate > 0 {
		name = fmt.Sprintf("%s#%d", a.name, replicate)
	}
	pol := newPolicy(opt.toy.V)
	rnd := stream(opt.seed, "train/"+name)
	batch := make([]problem, opt.batch)
	for s := 0; ; s++ {
		if s%opt.evalEvery == 0 || s == opt.steps {
			sr.history = append(sr.history, point{s, opt.toy.evaluate(pol, res.evals, res.setN)})
		}
		if s == opt.steps {
			break
		}
		for i, j := range rnd.Perm(len(train))[:opt.batch] {
			batch[i] = train[j]
		}
		if err := tr.step(pol, batch, rnd); err != nil {
			return fmt.Errorf("%s, step %d: %w", name, s, err)
		}
	}
	sr.final = sr.history[len(sr.history)-1].metrics
	sr.stats = tr.stats()
	sr.poolBest = opt.toy.evaluate(pol, train, res.setN).BestAction
	for _, l := range pol.search {
		sr.moved += l * l
	}
	sr.coverage, err = res.coverage(pol, stream(opt.seed, "coverage/"+name))
	return err
}

// coverage draws evalSamples search traces per held-out problem from pol and
// returns the pass@k coverage curve for k = 1..kmax.
func (res *result) coverage(pol *policy, rnd *rand.Rand) ([]float64, error) {
	p := make([]float64, res.opt.toy.V)
	softmax(p, pol.search)
	counts := make([]eval.PassCount, len(res.evals))
	for i, x := range res.evals {
		counts[i].N = res.opt.evalSamples
		for range res.opt.evalSamples {
			if rnd.Float64() < res.opt.toy.solveProb(x, draw(rnd, p)) {
				counts[i].C++
			}
		}
	}
	return eval.CoverageCurve(counts, res.opt.kmax)
}
