// Package estimator verifies, by exact rational computation and by Monte
// Carlo on toy policies, what SPIRAL's search estimator is unbiased for
// (Proposition 3.1 of "SPIRAL: Learning to Search and Aggregate", arXiv
// 2606.23595; docs/method.md#proposition-31). It owns no constant a
// trainer needs: it checks the ones combin.Family.Constants and
// spiral.Config.RoleWeights compute, and the credit of package advantage.
// The results it establishes are in docs/findings.md.
//
// The toy model: a search trace is a symbol in [V] drawn from a softmax
// policy ([Categorical]), whose score is grad log pi(v) = e_v - p exactly;
// a set objective is a table f: [V]^n -> [0, 1] ([Table], [CoverTable],
// [FirstTable], [RandomTable]). [Objective] and [Gradient] give
// J = E[f(y_1..y_n)] and grad J by enumeration, for a presentation order
// (combin.IndexOrder, combin.Shuffled, or the content-dependent
// [SortedBySymbol]).
//
// The exact engine. With c_i the number of the K chosen sets that hold
// trace i, the search advantage is A(i) = sum_H w_S(i, H) f_H with
// w_S(i, H) = [H in S]([i in H]/c_i - [c_i > 0]/K), so
//
//	E[g] = sum_i sum_H W(i, H) E[(e_{y_i} - p) f_H(y)],  W = E_S[w_S].
//
// [SelectionWeights] computes W for K sets drawn uniformly from a family by
// enumerating every selection in integer arithmetic, and
// [Weights.Expectation] then gives E[g] as an exact rational; Proposition
// 3.1 says it equals M grad J. A [SetDistribution] is any law over
// selections ([FixedSets], [UniformSets], [RelabelledSets], [BalancedSets],
// the law of combin.BalancedSampler, and [BalancedClasses], the same up to
// relabelling); [SetDistribution.Moments] gives the
// exact mean, variance and E[A^2] of the estimator, noisy set scores
// included. [JointExpectation] brute-forces the whole update (traces,
// selection, order, N2 aggregation outputs and their rewards) on tiny
// configurations, an independent oracle for both parts of the update.
//
// The Monte Carlo. [MonteCarlo.Run] simulates R steps on one problem
// through combin's sampler and advantage.ComputeBatch, optionally with a
// lengthgate.Gate, and returns the mean of g with standard errors and the
// moments of the search advantage; the result depends only on the
// configuration, R and the seed, never on the number of workers:
//
//	f, _ := combin.Subsets(8, 4)
//	policy, _ := estimator.NewCategorical([]*big.Rat{big.NewRat(3, 4), big.NewRat(1, 4)})
//	mc := estimator.MonteCarlo{Family: f, K: 4, N2: 4, Policy: policy, Objective: table}
//	res, err := mc.Run(200_000, 1) // res.Mean ~ M grad J within res.StdErr
//
// Sizes from a caller are checked before any work: tables hold at most
// 2^20 entries, policies at most [MaxSymbols] symbols, exact enumerations
// and listed distributions have documented limits, and Run at most
// [MaxReplicates] replicates.
package estimator
