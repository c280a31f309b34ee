// Package estimator proves, by exact rational computation and by Monte Carlo
// on toy policies, what the SPIRAL search estimator is unbiased for
// (Proposition 3.1 of the paper, SPIRAL.md section 4), computes its
// constants, answers the questions the paper leaves open, and provides the
// evaluation estimators of the paper's section 4.
//
// # Toy model
//
// A search trace is a symbol y in [V] drawn from a softmax policy with
// logits theta ([Categorical]); its score function is
// grad_theta log pi(v) = e_v - p, exactly. A set objective is a table
// f: [V]^n -> [0, 1] ([Table]): arbitrary ([RandomTable]), symmetric
// ([SymmetricRandomTable]), order-sensitive ([FirstTable]: f depends only on
// the candidate read first) or the paper's motivating "complementary pieces"
// case ([CoverTable]: success when the set holds at least m distinct
// symbols). [Objective] and [Gradient] give J = E[f(y_1..y_n)] and grad J by
// enumeration of the V^n tuples.
//
// # Constants
//
// For K distinct groups drawn uniformly without replacement from a family of
// T groups of which T_avoid avoid a given trace,
//
//	q_K = 1 - C(T_avoid, K)/C(T, K)     ([CoverProb]: a trace is in >= 1 group)
//	M   = (N/n) q_K - 1                 ([M])
//
// At the paper's configuration (N = 8, n = 4, K = 4) the unordered subsets
// give q_K = 1453/1541 and M = 1365/1541 ~ 0.8858 (a trace is in no set with
// probability 88/1541 ~ 5.71%); the ordered tuples of the paper's proof give
// q_K = 1760221/1877122 and M = 821660/938561 ~ 0.8754. K = 1 gives M = 0.
// Pinned by [ExampleM] and TestPaperConfiguration.
//
// # The exact engine
//
// For one selection S of K groups, with c_i the number of groups of S that
// contain trace i, the participation-averaged search advantage is linear in
// the set scores f_H:
//
//	A_search(i) = sum_H w_S(i, H) f_H,  w_S(i, H) = [H in S]([i in H]/c_i - [c_i > 0]/K),
//
// so the estimator g = sum_i (e_{y_i} - p) A_search(i) has
//
//	E[g] = sum_i sum_H W(i, H) E_y[(e_{y_i} - p) f_H(y)],  W = E_S[w_S].
//
// [SelectionWeights] computes every W(i, H) by enumerating all C(T, K)
// selections with integer arithmetic over the common denominator
// lcm(1..K) * C(T, K); it assumes no symmetry of the family, so the
// comparison with M grad J is a genuine check. At the paper's configuration
// (916,895 selections) it takes about 52 ms, against 23 s for the naive
// big.Rat accumulation of [DesignWeights] (see BENCHMARKS.md).
// [Weights.Expectation] then enumerates all V^N outcomes (256 at the paper's
// configuration, about 4 ms) in exact rationals. [DesignWeights] accepts any
// distribution over selections (fixed or non-uniform designs), and
// [JointExpectation] brute-forces the whole update (traces, selection,
// presentation order, N2 aggregation outputs and their Bernoulli rewards) on
// tiny configurations, as an independent oracle that computes the
// advantages from their definitions.
//
// # Findings
//
// Each finding below is an exact equality of rationals, pinned by the named
// test.
//
// Proposition 3.1 holds exactly, for both families, with each family's own
// M: E[g] = M grad J for 100 random configurations (V in {2, 3}, N <= 6,
// 1 <= n <= N, 2 <= K <= min(4, T), random rational policies and tables,
// subsets and tuples; TestPropositionRapid) and at the paper's configuration
// for four fixed tables, among them the complementary-pieces objective
// (E[g] = (1365/1541)(-56/243, 56/243) at p = (1/3, 2/3)) and an
// order-sensitive one (TestPaperConfiguration). The other family's M does
// not match (TestPaperConfiguration, TestTupleFamilyWrongM): the paper's
// Appendix C restatement with T = C(N, n) and its proof with (N)_n are each
// right for their own family, and mixing them is off by 1.2% at the paper's
// configuration (0.8858 against 0.8754). W itself is pinned:
// T W(i, H) = M for i in H and sum_H W(i, H) = 0 (TestWeightsStructure).
//
// Unordered sets and an order-sensitive aggregator. What matters is not
// whether f is symmetric but whether the presentation order depends on the
// traces' content (TestPresentationRapid over random configurations and
// rules; [ExampleWeights_Expectation] at the paper's configuration with
// f = [first candidate is symbol 1], p = (1/3, 2/3)):
//
//   - index order ([PresentIndexOrder]): E[g] = M grad J with the subset
//     family's M, even for order-sensitive f. The position of a trace in its
//     set is fixed by indices, and the traces are iid, so every position
//     sees the same marginal as in the tuple model. Paper configuration:
//     E[g]_1 = 910/4623 = M * 2/9.
//   - a random shuffle per set ([PresentShuffled]): E[g] = M grad J_sym with
//     J_sym = E[(1/n!) sum_pi f(y_pi)], and J_sym = J as a function of theta
//     because the traces are iid (verified exactly: grad J_sym = grad J).
//     Paper configuration: again 910/4623.
//   - an order that depends on content ([PresentBySymbol], sorting by symbol
//     value as sorting by length would): E[g] = M grad J_sort with
//     J_sort = E[f(sort(y_1..y_n))], which is NOT proportional to grad J for
//     an order-sensitive f. Paper configuration: J = 2/3 but J_sort = 16/81
//     (the aggregator now always reads the smallest symbol first, so success
//     needs all four candidates to be 1), and E[g]_1 = 29120/124821 =
//     M * 64/243 instead of M * 2/9. The whole update, aggregation part
//     included, follows J_sort (TestJointSortedIsNotJ, TestJointExpectation).
//
// For a symmetric f (such as [CoverTable]) the three rules coincide.
//
// Noisy set scores. Replacing f(y_H) by the mean of N2 Bernoulli rewards
// does not change the expectation, because g is linear in the set scores and
// the rewards are conditionally unbiased. Shown exactly by brute force over
// every reward outcome with N2 = 1, 2 and 3 (TestJointExpectation: the
// search part equals the exact-score engine's expectation and M grad J). The
// variance cost is measured by simulation (see Monte Carlo below).
//
// The aggregation credit. With the paper's within-set baseline, which
// includes the output's own reward, the expected sum-reduced credit of one
// set is
//
//	E[sum_j (r_j - fhat) grad log pi(z_j)] = (N2 - 1) grad E[r]
//
// (the own-reward term removes 1/N2 of each of the N2 terms; cross terms
// vanish), that is (N2 - 1)/N2 = 3/4 of the unbiased N2 grad E[r] at
// N2 = 4. A leave-one-out baseline gives exactly N2 grad E[r]
// ([AggregationFactor]; TestAggregationCreditRapid over random policies,
// rewards, N2 <= 4; TestAggregationCreditPaper and [ExampleAggregationCredit]
// with hand-derived values: credit 3 * (5/24, -1/9, -7/72) within the set,
// 4 * (...) leave one out).
//
// The two terms together. With sum-reduced losses,
//
//	E[update] = M grad_search J + K a grad_agg J,  a = N2 - 1 (within set) or N2 (leave one out),
//
// verified exactly, both parameter blocks, with noisy rewards, every
// presentation rule and both baselines, by [JointExpectation]
// (TestJointExpectation). [RoleWeights] returns the two weights and
// [Roles.Multipliers] the factors 1/M and 1/(K a) that make the update
// unbiased for grad J. At the paper's configuration (subsets, 8/4/4/4,
// within-set baseline) the weights are 1365/1541 ~ 0.886 and 12: the
// aggregation part of the gradient is weighted 6164/455 ~ 13.55 times more
// than the search part (18.06 times with leave one out, weight 16);
// multipliers 1541/1365 and 1/12. Sequence-level mean reductions are also
// covered: averaging each role separately ([MeanPerRole]) gives 1365/12328
// ~ 0.111 and 3/4 (ratio 3082/455 ~ 6.77); averaging all 24 rollouts
// together ([MeanPooled]) gives 455/12328 and 1/2 (ratio 13.55). Token-level
// means weight rollouts by length and are not covered. With shared
// parameters grad J = grad_search J + grad_agg J, so the expected update is
// not proportional to grad J unless the weights are equal. Pinned by
// TestRoleWeightsPaper and [ExampleRoleWeights].
//
// Finite K. The probability that a trace gets no credit is 1 - q_K, exactly
// [spiral/combin.Family.MissProb]; at N = 8, n = 4 it falls from 0.2464 (K = 2) to
// 0.0571 (K = 4), 0.0025 (K = 8) and 1.6e-6 (K = 16) for subsets, and is
// slightly higher for tuples (0.2499, 0.0623, 0.0038, 1.4e-5), because two
// tuples can hold the same traces; M rises towards N/n - 1 = 1 (0.5072,
// 0.8858, 0.9950, 0.999997 for subsets). The full table for K = 2..16 is
// [ExampleCoverProb]. The variance of a trace's search advantage and the
// bias of the length gate are measured by simulation (see Monte Carlo
// below).
//
// # Monte Carlo
//
// The Monte Carlo verification and its findings are in montecarlo*.go.
//
// # Evaluation
//
// The evaluation estimators (pass@k, coverage, scaling efficiency, majority
// vote) are in eval*.go.
//
// # Test budget
//
// The exact tests cache W per configuration within the test binary, so the
// paper's 916,895-selection enumeration runs once; `go test -short` skips the
// larger brute-force configurations of TestJointExpectation.
package estimator
