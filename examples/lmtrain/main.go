// Command lmtrain trains a tiny causal transformer, written with GoMLX and
// run on its pure-Go backend, with SPIRAL and with GRPO at the same
// generated-token ceiling, using the spiral library for every part the
// method defines, and compares the two on held-out problems.
//
// # The task
//
// A problem is four digits; its answer is the largest. Every output of the
// policy, search trace or aggregation output, follows one grammar,
//
//	digit{0,w} "=" digit stop
//
// a few free working tokens, "=", the answer and a stop token, enforced by
// masking the logits so that every output parses and its length is the
// policy's choice. A search prompt is the problem; an aggregation prompt is
// the problem and n candidate traces in the plan's presentation order. The
// reward is 1 for a right answer.
//
// # The policy
//
// One pre-norm causal transformer (default: 1 block, width 16, 2 heads)
// shared by both roles. Both arms start from the same base model, made by a
// short supervised warm-up on generated demonstrations (search traces right
// 40% of the time, otherwise another digit of the problem; aggregation
// outputs that repeat a random candidate), which stands in for a pretrained
// model. Nothing is downloaded.
//
// # The arms
//
//   - spiral: spiral.Config (N1 = 8, n = 4, K = 4, N2 = 4, the paper's) plans
//     the sets, the policy generates the traces and the aggregation outputs,
//     and Config.CreditBatch gives the credit after the length gates: by
//     default none on search traces (as in the GRPO arm) and L_target = 3
//     on aggregation outputs, so only the shortest, "= answer stop", keeps a
//     positive advantage. Problems with NoSignal are resampled (dynamic
//     sampling, up to -rounds rounds). The loss of a step is the mean over
//     its P problems of -(w_s sum_y A_search(y) log pi(y) + w_a sum_o
//     A_agg(o) log pi(o)), w_s and w_a the configuration's unbiased role
//     multipliers (Config.RoleWeights; 1 and 1 with -unbiased=false).
//
//   - grpo: G = 12 traces per problem with twice the maximum length, the
//     same generated-token ceiling as SPIRAL's 8 + 16 outputs (package
//     budget), advantages from advantage.GroupRelative (-grpo-preset), the
//     same dynamic sampling and loss normalisation.
//
// # What it reports
//
// Every -eval-every steps and at the end, on -test held-out problems: pass@1
// and the pass@k coverage curve up to k = -samples (package eval), the
// diversity of the search traces (distinct answers, answer entropy,
// distinct traces), the aggregator's accuracy against a majority vote over
// the same candidates (eval.MajorityVote), and the tokens spent; for the
// base and the final models also recursive self-aggregation (package rsa: a
// population of 8 search traces, -rsa-steps steps of aggregating sets of 4).
// It writes summary.txt, summary.json and the plots pass1.png,
// coverage.png, rsa.png and diversity.png to -out, with a progress line per
// step on standard error.
//
// Usage:
//
//	go run . [-steps 60] [-out lmtrain-out]
//
// The default run's outputs, with a reading of them, are in docs/lmtrain at
// the root of the repository; -replot redraws them from a summary.json.
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
	flag.Uint64Var(&opt.Seed, "seed", opt.Seed, "random seed")
	seeds := flag.String("seeds", "", "comma-separated seeds: run the study, each seed into -out/seed-<seed>, the study's summary and plots into -out")
	combine := flag.String("combine", "", "comma-separated directories of seed runs: write their study's summary and plots to -out without training")
	flag.Parse()
	if err := run(opt, *seeds, *combine); err != nil {
		fmt.Fprintln(os.Stderr, "lmtrain:", err)
		os.Exit(1)
	}
}

func run(opt Options, seeds, combine string) error {
	switch {
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
