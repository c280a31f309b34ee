// Package advise computes how the variance of SPIRAL's search update depends
// on the configuration (N1 search traces, sets of n, K sets, N2 aggregation
// outputs per set, the design), and ranks configurations by the expected
// improvement per token of one training step at the trainer's step budget
// (docs/findings.md#choosing-a-configuration).
//
// DecomposeSearch splits the variance of the M-normalised search update g/M
// on one of package estimator's toy objectives into its sources: which sets
// were drawn, which traces were drawn, and the reward noise of the set
// scores, exactly in rational arithmetic:
//
//	Var(g/M) = Sets + Traces + Noise1/N2.
//
// Sets has a closed form through the law of the coverage count (CoverMoments)
// whenever the objective is symmetric or the candidates are shuffled, and
// the noise term falls as 1/N2 and, for a symmetric objective, closes
// through the design's counts (NoiseClosedForm). DecomposeAggregation does
// the same for the aggregation update u/(K a) of a binary aggregator: the
// outputs' reward noise, which no design changes, and the draws of traces
// and sets.
//
//	v, err := advise.DecomposeSearch(design, policy, table, combin.IndexOrder)
//	snr := v.SNR(4) // ||grad J||^2 / Var(g/M) at N2 = 4
//
// Advise ranks the configurations that fit a token budget (counted by
// package budget: generated tokens, optionally with prefill, with or without
// prefix caching) by the expected improvement per token of one step of B
// problems with the best step size on an L-smooth objective,
// (||G||^2/2L) rho/(1 + rho) over the step's tokens, rho = B SNR, where G
// and the SNR are those of the whole unbiased-scaled update on a reward
// model (Request.Step sets B, from tokens or problems per step;
// RewardModel: a search trace is correct with probability Correct, an
// aggregation output with probability Found when its Rule holds for the
// number c of correct candidates among its n, else Missed; the rules are
// FindOne, c >= 1, NeedsPieces, c >= Needs, and Majority, 2c > n), with the candidates presented in index or shuffled order
// (Request.Order), reporting each one's M and miss probability
// (combin.Family.Constants), token cost and role weights
// (spiral.Config.RoleWeights), rho and the rate's two limits. The search
// space is bounded (MaxTraces, MaxSets, MaxAggregations) and every
// evaluation in it is exact: Result.Refused, which would list what an
// exact enumeration cannot reach, is empty within the bounds.
//
//	res, err := advise.Advise(advise.Request{Budget: 98_304,
//		Lengths: budget.PaperLimits(0), Reward: model,
//		Step: advise.Step{Tokens: 256 * 98_304}})
//	best := res.Candidates[0]
//
// Evaluate gives one configuration's Candidate, the row Advise ranks it
// with, without ranking the space (under a second for the paper's).
//
//	paper, err := advise.Evaluate(spiral.Paper(), req)
//
// Result.Frontier keeps the candidates that no other beats in improvement
// per token with fewer or equal tokens: the best configuration for every
// cap on tokens per problem (examples/frontier draws it). Candidate.At
// gives a row's figures, and Result.At the ranking, at another step
// budget. With
// Request.DeploySetSize = n* the ranking is by the improvement of a fixed
// deployment objective J* (sets of n*) instead: its key is the update's
// component along grad J* (Candidate.Alignment).
package advise
