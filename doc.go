// Package spiral is a reference implementation, in pure Go, of the estimators
// and the mathematics of SPIRAL ("SPIRAL: Learning to Search and Aggregate",
// Hamid et al., 2026), a reinforcement-learning method that trains one policy
// both to search (sample several solution traces for a problem) and to
// aggregate (read a set of traces and write the final answer).
//
// Trainers that drive real model hardware import this module for the parts
// that must be exactly right: which sets of traces to build, what credit each
// trace and each aggregation output gets, how over-long outputs are gated,
// and, by exact computation and property tests, that the resulting gradient
// estimator is unbiased for the objective it claims to follow.
//
// # Notation
//
// The library uses the paper's symbols throughout. For one training problem x:
//
//   - N1 (also N): the number of search traces y_1..y_N1 sampled independently
//     from the policy.
//   - n: the set size, the number of candidate traces shown to the aggregator
//     in one aggregation prompt.
//   - K: the number of distinct sets (groups) drawn uniformly without
//     replacement from the family of all C(N1, n) unordered n-subsets, or of
//     all (N1)_n = N1!/(N1-n)! ordered n-tuples of distinct indices.
//   - N2: the number of aggregation outputs sampled for each set.
//   - r: a reward in [0, 1] given to aggregation outputs only.
//
// The paper's configuration is N1 = 8, n = 4, K = 4, N2 = 4: 70 possible sets,
// 8 + 16 = 24 generated outputs per problem, 16 of them rewarded.
//
// # Packages
//
//   - [spiral/combin]: counting, enumeration, ranking and sampling of ordered
//     and unordered n-subsets, and the exact selection probabilities.
//   - [spiral/advantage]: the three credit signals (set, search and
//     aggregation advantages) and the GRPO family of group baselines.
//   - [spiral/lengthgate]: the asymmetric length gate of the paper's Eq. 8 and
//     the overlong controls of DAPO.
//   - [spiral/estimator]: the constants of Proposition 3.1, toy policies, exact
//     and Monte Carlo verification of the estimator, and evaluation estimators
//     (pass@k, coverage, scaling efficiency, majority vote).
//   - spiral (this package): the trainer-facing pipeline that ties them together.
//   - spiral/cmd/spiral: a JSON Lines bridge for trainers in other languages.
//   - spiral/examples/...: runnable programs that reproduce the paper's numbers.
//
// # The training step
//
// This package is the one object a trainer holds. A [Config] gives the
// shape of one problem's step (N1, n, K, N2, the family, the presentation
// order, the set design and the two length gates); [Paper] is the paper's
// 8/4/4/4, and [Config.Validate] names every bad field. For each problem:
//
//  1. Plan: [Config.Plan] (or a reused [Planner] for many problems) draws the
//     K distinct groups, uniformly without replacement from the family (the
//     Uniform design, the paper's) or as a balanced design in which every
//     trace appears equally often (Balanced, see [Design]), each listing
//     its candidates in presentation order: ascending trace index
//     (IndexOrder, the default) or a uniformly random order per set
//     (Shuffled). The same seed gives the same plan on every machine, and a
//     [Plan] marshals to JSON; [Config.CheckPlan] checks a decoded one.
//  2. Generate: sample the N1 search traces, build aggregation prompt i from
//     the traces of group i in that order, and sample N2 outputs for each.
//  3. Credit: [Config.Credit] takes the plan, the rewards of the aggregation
//     outputs and, when gates are on, every output's length, and returns
//     the search advantage of each trace and the aggregation advantage of
//     each output after gating ([Credit]), with diagnostics: set scores and
//     advantages, appearances, traces in no set, what each gate zeroed, and
//     NoSignal, which a trainer using the paper's dynamic sampling uses to
//     resample a problem that gives no gradient.
//
// [Config.CreditBatch] does step 3 for a whole batch laid out flat ([Batch]),
// writing into a reused [BatchCredit] without allocating; calls on different
// BatchCredits may run concurrently. Both results keep the search policy's
// credit apart from the aggregation policy's, so the two-model variant routes
// each to its own model with no other code. The credit formulas are those of
// [spiral/advantage], the gates those of [spiral/lengthgate].
//
// Token accounting is in [spiral/budget], the schedule of recursive
// self-aggregation at inference time in [spiral/rsa].
//
// Tests of this package take a few seconds; rapid's -rapid.checks flag sets
// the number of property cases (100 by default).
//
// # Rules every package follows
//
// Data that comes from outside (sizes, rewards, lengths, groups) is validated,
// and bad input gets an error that names the argument and its value; nothing
// panics on such data. Panics are reserved for programmer errors, such as a
// destination slice of the wrong length passed to a dst-first function, and
// every function that can panic says so in its documentation.
//
// Randomness is always injected: functions that draw random numbers take a
// *rand.Rand from math/rand/v2, and the same seed gives the same result on
// every machine. No package uses global random state.
//
// Hot paths have dst-first variants that write into caller-owned slices and do
// not allocate, in the style of gonum and of the standard library.
package spiral
