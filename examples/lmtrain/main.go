// Command lmtrain trains a tiny causal transformer, written with GoMLX and
// run on its pure-Go backend, with SPIRAL and with GRPO at the same
// generated-token ceiling, using the spiral library for every part the
// method defines, and measures what each method's search and aggregator do
// on test problems disjoint from the training problems.
//
// # The task: pair-sum
//
// A problem is four digits and a target T such that exactly one pair of
// positions has digits summing to T; its answer is that pair. Every output
// of the policy, search trace or aggregation output, follows one grammar,
//
//	(pair check){1,m} stop
//
// one token names a pair of positions, and the check after it is forced,
// as a tool's reply would be: hit when the pair sums to T, miss otherwise.
// The reward is 1 when the last proposal is the right pair. Finding the
// pair is hard for this model (it cannot compare digit sums in its two
// blocks, so a trace is near chance: 1 in 6); checking a candidate is
// easy (reading one token). An aggregation prompt shows the problem and n
// candidates, each as one token carrying its pair and its check, so an
// aggregator that reads the checks can pick a right candidate whenever the
// set holds one, and a majority vote over answers cannot.
//
// # The policy
//
// One pre-norm causal transformer (2 blocks, width 16, 2 heads) shared by
// both roles. Every arm starts from the same base model, made by a short
// supervised warm-up on generated demonstrations that stands in for a
// pretrained model: search traces right 30% of the time, a second
// proposal half the time whatever the first one's check; aggregation
// outputs that repeat a candidate, a hit one with probability
// -warmup-check (0.3). Nothing is downloaded.
//
// # The arms
//
// Every arm spends the same generated-token ceiling per problem (package
// budget: SPIRAL's 8 search traces and 16 aggregation outputs of one
// proposal, 72 tokens) and draws the same training problems at the same
// step and round:
//
//   - spiral: spiral.Config at the paper's N1 = 8, n = 4, K = 4, N2 = 4,
//     sets planned by the library, credit from Config.CreditBatch, problems
//     that give no update (BatchCredit.Skip) resampled, and the loss
//     coefficients of the unbiased joint gradient (Config.LossCoefficients
//     with JointGradient).
//   - spiral-paper: the same with the paper's update (PaperUpdate: the
//     aggregation part weighted K(N2-1) = 12 against the search part).
//   - grpo-2x: 12 traces of twice the length (room to propose, read the
//     check, and propose again), Dr. GRPO advantages.
//   - grpo-24: 24 traces of one proposal, as many traces as SPIRAL
//     generates outputs.
//
// # What it reports
//
// During training, each arm's own search and aggregator on the test
// problems. After training, every policy (the base model and each arm's)
// as a search policy and as an aggregator: pass@k and maj@k; the
// cross-pairing of search policies and aggregators over the same sets,
// with the majority vote and the oracle; hand-built probe sets; coverage
// overlap and unique coverage; answer entropy by difficulty; and the
// generated and prompt (prefill) tokens of each way to deploy a policy.
// A run of one seed writes its summary.json and the weights of every
// policy to -out/seed-<seed>; the study's summary.txt, summary.json and
// plots (training.png, coverage.png, tokens.png, tokens-prefill.png,
// entropy.png) go to -out.
//
// Usage:
//
//	go run .                   # one seed of 60 steps, about 2 minutes of CPU time: out/lmtrain at the repository's root
//	go run . -seeds 1,2,3      # the study in docs/lmtrain
//	go run . -combine out/lmtrain/seed-1,out/lmtrain/seed-2 -out dir
//
// The same seed gives the same summary, byte for byte.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	opt := DefaultOptions()
	flag.StringVar(&opt.Out, "out", opt.Out, "directory for the summary, the plots and the weights")
	flag.IntVar(&opt.Steps, "steps", opt.Steps, "training steps per arm")
	flag.IntVar(&opt.Problems, "problems", opt.Problems, "problems per training step (P)")
	flag.IntVar(&opt.Rounds, "rounds", opt.Rounds, "generation rounds per step for dynamic sampling (1: none)")
	flag.IntVar(&opt.Warmup, "warmup", opt.Warmup, "supervised warm-up steps of the base model")
	flag.IntVar(&opt.EvalEvery, "eval-every", opt.EvalEvery, "evaluate every this many steps")
	flag.IntVar(&opt.Test, "test", opt.Test, "test problems")
	flag.IntVar(&opt.Samples, "samples", opt.Samples, "search samples per test problem (pass@k up to this k)")
	flag.StringVar(&opt.Arms, "arms", opt.Arms, "comma-separated arms to train: spiral, spiral-paper, grpo-2x, grpo-24")
	flag.StringVar(&opt.GRPOPreset, "grpo-preset", opt.GRPOPreset, "advantage.Preset of the GRPO arms")
	flag.Float64Var(&opt.LearningRate, "lr", opt.LearningRate, "Adam learning rate of the RL steps")
	flag.Float64Var(&opt.WarmupCheck, "warmup-check", opt.WarmupCheck, "probability that a warm-up aggregation demonstration repeats a hit candidate (0: the base model does not read checks)")
	flag.Float64Var(&opt.Noise, "noise", opt.Noise, "probability e that the tool's check is wrong (0 <= e < 0.5)")
	flag.BoolVar(&opt.TrainOnly, "train-only", opt.TrainOnly, "train and write the weights and training history only (measure them later with -analyze)")
	flag.Uint64Var(&opt.Seed, "seed", opt.Seed, "random seed")
	seeds := flag.String("seeds", "", "comma-separated seeds: run the study, each seed into -out/seed-<seed>, the study's summary and plots into -out")
	analyze := flag.String("analyze", "", "comma-separated directories of seed runs with their weights: measure the policies again, rewrite each summary.json, and write the study to -out")
	combine := flag.String("combine", "", "comma-separated directories of seed runs: write their study's summary and plots to -out without training")
	flag.Parse()
	if err := run(opt, *seeds, *analyze, *combine); err != nil {
		fmt.Fprintln(os.Stderr, "lmtrain:", err)
		os.Exit(1)
	}
}

func run(opt Options, seeds, analyze, combine string) error {
	switch {
	case analyze != "":
		st, err := Reanalyze(strings.Split(analyze, ","), os.Stderr)
		if err != nil {
			return err
		}
		return writeStudy(opt.Out, st)
	case combine != "":
		st, err := LoadStudy(strings.Split(combine, ","))
		if err != nil {
			return err
		}
		return writeStudy(opt.Out, st)
	case seeds != "":
		var list []uint64
		for _, f := range strings.Split(seeds, ",") {
			s, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return fmt.Errorf("-seeds: %w", err)
			}
			list = append(list, s)
		}
		_, err := RunStudy(opt, list, os.Stderr)
		return err
	}
	_, err := RunStudy(opt, []uint64{opt.Seed}, os.Stderr)
	return err
}
