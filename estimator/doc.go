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
// big.Rat accumulation of [DistributionWeights] (see BENCHMARKS.md).
// [Weights.Expectation] then enumerates all V^N outcomes (256 at the paper's
// configuration, about 4 ms) in exact rationals. [DistributionWeights] accepts any
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
//   - index order ([combin.IndexOrder]): E[g] = M grad J with the subset
//     family's M, even for order-sensitive f. The position of a trace in its
//     set is fixed by indices, and the traces are iid, so every position
//     sees the same marginal as in the tuple model. Paper configuration:
//     E[g]_1 = 910/4623 = M * 2/9.
//   - a random shuffle per set ([combin.Shuffled]): E[g] = M grad J_sym with
//     J_sym = E[(1/n!) sum_pi f(y_pi)], and J_sym = J as a function of theta
//     because the traces are iid (verified exactly: grad J_sym = grad J).
//     Paper configuration: again 910/4623.
//   - an order that depends on content ([SortedBySymbol], sorting by symbol
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
// covered: averaging each role separately ([spiral.MeanPerRole]) gives 1365/12328
// ~ 0.111 and 3/4 (ratio 3082/455 ~ 6.77); averaging all 24 rollouts
// together ([spiral.MeanPooled]) gives 455/12328 and 1/2 (ratio 13.55). Token-level
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
// [MonteCarlo.Run] simulates the search estimator: each replicate draws N
// traces from the policy, K sets with a [spiral/combin.Sampler], orders each
// set's candidates by a [Presentation] rule, draws N2 Bernoulli(f) rewards per
// set (N2 = 0: the exact score f), computes the credit with
// [spiral/advantage.ComputeBatch] (the library's own code path), optionally
// gates the search advantages with a [spiral/lengthgate.Gate], and records
// g = sum_i A_search(y_i) (e_{y_i} - p) and the search advantage's moments.
// It returns the mean of g with per-component standard errors, the
// covariance, E[A], E[A^2], Var(A) (delta-method standard error) and the
// no-credit frequency. Replicates are cut into chunks of [MonteCarloChunk] =
// 8192, chunk c drawn from rand.NewPCG(seed, c), and merged in chunk order,
// so the result is bit-identical for any number of workers
// (TestMonteCarloDeterministic, which also checks the merged statistics
// against a plain two-pass computation). A replicate allocates nothing
// (TestMonteCarloReplicateAllocs) and takes about 0.6-0.7 us on one core;
// Run reaches 1.6-2.0 million replicates per second on the 2 shared cores
// (BENCHMARKS.md); about half of a replicate is advantage.ComputeBatch.
//
// The simulation is checked twice against independent code: every replicate
// equals a plain re-implementation from the definitions on the same random
// stream (TestMonteCarloMatchesNaive), and every statistic is within 5
// standard errors of its exact expectation by enumeration on small
// configurations, gate and noisy scores included (TestMonteCarloBruteForce).
//
// Proposition 3.1 by simulation, with noisy scores at the paper's
// configuration (N2 = 4): every component within 5 standard errors of
// M grad J for three tables (TestMonteCarloPaperNoisy; 2e6 replicates: 0.64
// SE), and the tuple family's M' = 0.8754 instead of 0.8858 fails the same
// check (the candidates are 12.9 SE apart; 91 SE with 1e8 replicates under
// SPIRAL_LONG=1, where the mean is 0.26 SE from M grad J). Under -short the
// wrong M is shown failing on Subsets(4, 3), K = 2 (M = 1/3 against 6/23, 20
// SE apart; TestMonteCarloWrongM). Tuples with their own M:
// TestMonteCarloTuples. The presentation rules agree with the exact results
// above (TestMonteCarloPresentation, first-candidate aggregator, values
// (1/4, 3/4), p = (1/3, 2/3), 2e7 replicates per rule under SPIRAL_LONG=1):
// index order and a shuffle give E[g]_1 = 0.09848 and 0.09835 (M grad J =
// 0.09842, within 1.5 SE); sorting gives 0.11660, 360 SE away and 1.0 SE
// from M grad J_sort = 0.11665.
//
// The "find" toy used below: a trace is wrong (symbol 0) or right, and the
// aggregator answers correctly with probability 3/4 when at least one
// candidate is right, else never; p = (3/4, 1/4); paper configuration.
//
// Noisy set scores keep the mean and cost variance (TestMonteCarloNoisyScores,
// 2e7 replicates each under SPIRAL_LONG=1): E[g]_1 = 0.2102 = M grad J_1 within
// 2.6 SE for N2 = 0, 1, 4 and 16, while Var(g_1) is 0.0573 with exact scores,
// 0.1198 with N2 = 1, 0.0729 with N2 = 4 (+27%) and 0.0612 with N2 = 16, and
// Var(A) is 0.0286, 0.0676, 0.0383 and 0.0310.
//
// Finite K (TestMonteCarloFiniteK, N = 8, n = 4, subsets, N2 = 4, 1e7
// replicates per K under SPIRAL_LONG=1; the no-credit frequency matches
// MissProb within 5 SE at every K, and the shape of Var(A) is pinned):
//
//	 K  P(no credit)  Var(A)   Var(A|credit)  M         SNR    SNR^2/rollout
//	 2  0.2464        0.02941  0.03902        0.5072    0.499  0.0156
//	 3  0.1196        0.03831  0.04351        0.7609    0.667  0.0222
//	 4  0.0571        0.03831  0.04064        0.8858    0.778  0.0252
//	 6  0.01238       0.03131  0.03170        0.9752    0.937  0.0274
//	 8  0.002493      0.02486  0.02492        0.9950    1.055  0.0278
//	10  4.63e-4       0.02062  0.02063        0.9991    1.146  0.0274
//	12  7.84e-5       0.01793  0.01793        0.9998    1.218  0.0265
//	16  1.64e-6       0.01485  0.01485        0.999997  1.325  0.0244
//
// (standard errors <= 1e-5 on Var(A); SNR = |E g_1| / sd(g_1) per
// replicate; a rollout is one of the N + K*N2 generations.) Var(A) is not
// monotone: it rises from K = 2 (where a quarter of the traces get exactly 0)
// to a plateau at K = 3-4, then falls as each trace's credit averages more
// sets. The signal-to-noise ratio per replicate grows with K, and per
// rollout it peaks near K = 7-9, about 10% above the paper's K = 4 on this
// toy.
//
// The length gate's bias (TestMonteCarloGateBias): the find toy with three
// symbols, a wrong trace of 2000 tokens, a right one of 3000 and a right one of
// 6000, p = (1/2, 1/4, 1/4), L_target = 4096. Ungated, M grad J = (-0.0830,
// 0.0415, 0.0415): both right traces are pushed up equally. Gated (1e8
// replicates under SPIRAL_LONG=1), E[g] = (-0.0254, 0.0704, -0.0450), standard
// errors <= 2e-5, a bias of (+0.0577, +0.0289, -0.0866): the long right trace
// is pushed DOWN, because its positive credit is removed while its negative
// credit is kept, and the push against the wrong trace shrinks by 70%. E[A]
// becomes -0.0144 (the gate only removes positive mass) and Var(A) falls from
// 0.0223 to 0.0189. The gate is not linear in the set scores, so its bias
// depends on N2: on small configurations, exactly by enumeration, N2 = 2 moves
// the gated E[g] by 0.02-0.03 from its exact-score value
// (TestMonteCarloBruteForce).
//
// Test budget: the Monte Carlo tests take about 9 s by default and 2 s with
// -short (smaller replicate counts, same seeds, tolerances from standard
// errors). SPIRAL_LONG=1 go test -run MonteCarlo ./estimator runs the long
// campaigns behind the numbers above (about 8e8 replicates, about 15 minutes
// on the 2 shared cores).
//
// # Set designs
//
// A [SetDistribution] is a distribution over selections of groups, the way a trainer
// picks its K sets: [FixedSets], [UniformSets] (the paper's),
// [RelabelledSets] (a fixed design under a uniformly random relabelling of
// the traces, which is what any randomised design that treats the traces
// alike amounts to) and [BalancedSets], the exact law of
// [spiral/combin.BalancedSampler]: every trace in r = Kn/N sets (r or r+1
// when N does not divide Kn); at the paper's configuration, two random
// splits of the 8 traces into halves, redrawn when equal, uniform over 595
// designs (TestBalancedDesignPaper, TestBalancedDesignMatchesSampler).
// [SetDistribution.Moments] gives E[g], E||g||^2, the total variance trace Cov(g) and
// E[A^2] exactly, noisy scores and every presentation rule included
// (integer arithmetic over all V^N outcomes and selections; checked against a
// brute-force enumeration from the definitions, TestDesignMomentsBruteForce,
// and its mean against [Weights.Expectation], TestDesignMeanMatchesWeights).
//
// Position weights. For iid traces and a presentation order that does not
// depend on the traces' content,
//
//	E[g] = sum_k a_k G_k,  a_k = E_S[ sum_{H in S} (1/c_{H[k]} - 1/K) ],  G_k = E[(e_{y_k} - p) f(y)],
//
// where H[k] is the trace read at position k ([SetDistribution.PositionWeights],
// [PositionalGradient]; TestDesignPositionWeightsRapid), and in every
// selection sum_k a_k = #covered traces - n, so sum_k a_k = n M with
// M = E[#traces in >= 1 set]/n - 1 ([SetDistribution.M]). Therefore:
//
//   - The hypothesis M = E[#traces in >= 1 set]/n - 1, which contains the
//     paper's (N/n) q_K - 1 as the uniform case, holds for every objective
//     exactly when all a_k are equal: always under [combin.Shuffled], for
//     every symmetric f, for every exchangeable design (uniform, any
//     relabelled design, the balanced sampler), and for every fixed design
//     whose covered traces are all in the same number of sets
//     (TestDesignHypothesisRapid: for random fixed designs, E[g] = M grad J
//     for the objective that reads only position k if and only if a_k = M).
//   - A fixed balanced design read in index order: every member of every set
//     is in r sets, so a_k = K/r - 1 = N/n - 1 for every k and E[g] =
//     (N/n - 1) grad J exactly, order-sensitive f included; M = 1 at the
//     paper's configuration, for all three kinds of balanced design
//     (TestDesignFixedBalanced, also over random sampler-drawn designs).
//   - It fails for an unbalanced fixed design read in index order. {0,1},
//     {0,2} of N = 3 traces has a = (0, 1) and M = 1/2: an aggregator that
//     trusts its first candidate gets E[g] = 0 (trace 0, the only one read
//     first, is in both sets and its two set advantages cancel). At N = 8 the
//     nearly balanced {0,1,2,3}, {4,5,6,7}, {0,1,4,5} has a = (1/2, 1/2,
//     3/2, 3/2) and M = 1, so E[g] = (1/2) grad J. A shuffle per set or a
//     uniform relabelling restores M grad J; sorting by content breaks it
//     for every design, balanced included (E[g] = M grad J_sort).
//     TestDesignHypothesisFails.
//   - The balanced sampler is exchangeable, so E[g] = M grad J with
//     M = min(N, Kn)/n - 1 ([BalancedM]): N/n - 1 whenever Kn >= N, 1 at the
//     paper's configuration against 1365/1541 ~ 0.8858 for the uniform
//     design; K - 1 (disjoint sets) when Kn < N (TestDesignM, every
//     configuration with N <= 6).
//
// Variance at the paper's configuration (N = 8, n = 4, K = 4, index order).
// Var(g/M) = E||g/M - grad J||^2 is the total variance of the update scaled
// to be unbiased. Exact values (TestDesignVariancePaper) and Monte Carlo
// through combin's samplers and advantage.ComputeBatch (2^18 replicates per
// design, fixed seeds; every moment within 4 standard errors of the exact
// value, TestDesignVarianceMonteCarlo):
//
//	objective                                  uniform   balanced  ratio  ratio (MC)
//	first candidate, f = (1/4, 1)[y_1],
//	  p = (1/3, 2/3), exact scores             0.14943   0.12662   0.847  0.846 ± 0.004
//	  the same with N2 = 4 rewards             0.17445   0.14225   0.815  0.809 ± 0.004
//	pieces: both of 2 symbols, p = (1/3, 2/3)  0.35315   0.27127   0.768  0.771 ± 0.004
//	pieces: all 3 of 3 symbols, p uniform      0.67729   0.41540   0.613  0.612 ± 0.002
//
// (balanced 10849/85680 and 572/1377 exactly; 0/1 objectives are unchanged
// by N2, a Bernoulli(0 or 1) reward being exact.) A single trace's search
// advantage has E[A] = 0 under every design; E[A^2] is, uniform (among
// credited traces; divided by M^2) against balanced: 0.02999 (0.03181;
// 0.03823) against 0.03461 for the first-candidate objective, 0.03476
// (0.03686; 0.04430) against 0.03852 with N2 = 4, 0.04256 (0.04514; 0.05424)
// against 0.04598 for two pieces and 0.07274 (0.07714; 0.09270) against
// 0.06754 for three: every trace is credited, and the raw advantage is often
// larger (a trace in exactly 2 sets averages fewer set advantages than one
// in 3 or 4), but after the division by M it is smaller in every case.
//
// Which balanced design. The paper-configuration law mixes two classes:
// splits that cut each other's halves in two (probability 9/17) and splits
// that meet in 1 and 3 (8/17). Their Var(g/M), as a fraction of the uniform
// design's, is 0.759 against 0.947 (first candidate), 0.740 against 0.901
// (N2 = 4), 0.704 against 0.840 (two pieces), 0.608 against 0.620 (three
// pieces); the law's variance is exactly the 9/17 : 8/17 mixture. A balanced
// design with no complementary pair, {0,1,2,3}, {0,4,5,6}, {1,2,4,7},
// {3,5,6,7}, which the rounds never draw, gives 0.642, 0.639, 0.756 and
// 0.638 (TestBalancedDesignClasses): no one design is best for every
// objective.
//
// Not a theorem. Over every small configuration the enumeration allows
// (N <= 6, K <= 6, p = (1/5, 4/5), the two-piece and first-candidate
// objectives) the balanced design is strictly lower in 52 cases and equal in
// 26 (where every selection is already balanced, such as n = N - 1), never
// higher (TestDesignVarianceSmall); at the paper's configuration it is lower
// for each of 40 random order-sensitive tables, ratio at most 0.81
// (TestDesignVarianceRandomTablesLong, SPIRAL_LONG=1). But at N = 6, n = 3,
// K = 4 the table f = (1, 1, 2/3, 1/3, 5/6, 2/3, 1/2, 0) with p = (3/7, 4/7)
// gives 0.1159 balanced against 0.1048 uniform, 10.6% higher
// (TestDesignVarianceSmall).
//
// # Evaluation
//
// [PassAtK] is the unbiased pass@k estimator 1 - C(n-c, k)/C(n, k) from n
// samples with c correct, computed as prod_{i=n-c+1..n} (i-k)/i, within
// (2c+1)·2^-53 of the exact [PassAtKRat]. c = 0 gives 0, n-c < k gives 1,
// and k > n is an error (the Codex reference code returns 1.0 there, even
// for c = 0). [CoverageCurve] is mean pass@k over a test set of [PassCount]
// for k = 1..kmax, O(1) per point; [CoverageBootstrap] adds pointwise
// percentile bootstrap intervals, resampling problems with an injected
// *rand.Rand (it treats each problem's pass@k as fixed, ignoring the noise
// within a problem).
//
// [ScalingEfficiency] defines the scaling efficiency the paper leaves
// informal: on a grid k_1 < ... < k_m, for each baseline width k_A, k_B is
// the smallest width at which the method's curve, interpolated linearly in
// log k, reaches the baseline's coverage A(k_A); the efficiency is
// k_A / k_B. Every point keeps a status: reached; lower bound (the method
// already reaches it at k_1); unreached (NaN, never +Inf); or saturated
// (A = 1 or no higher than at the previous width: undefined). For
// per-sample success p the efficiency is log(1-p_B)/log(1-p_A), not its
// reciprocal (TestScalingEfficiencyClosedForm pins the direction). The maximum is
// most affected by interpolation where k_B is small: with p_A = 0.01 and
// p_B = 0.05 on k = 1..256 the exact efficiency is 5.104 at every k_A, the
// points with k_B >= 8 are within 0.2% of it, but the maximum is 5.388 at
// k_A = 7, where k_B lies between 1 and 2; read the maximum together with
// its k_B.
//
// [MajorityVote] returns the most frequent answer under an explicit
// [TieRule] (first seen, smallest, seeded random). [ExpectedMajority] is the
// exact unbiased maj@k, the average over all C(n, k) subsets of the n
// answers, computed in polynomial time by a dynamic program over distinct
// answers; resampling with replacement is biased (answers with
// probabilities 1/2, 1/3, 1/6, n = 4, k = 3, ties broken by first seen: the
// subset average has expectation maj@3 = 5/9, resampling gives 25/48;
// TestExpectedMajorityUnbiased) and is not offered.
//
// # Test budget
//
// The exact tests cache W per configuration within the test binary, so the
// paper's 916,895-selection enumeration runs once; `go test -short` skips the
// larger brute-force configurations of TestJointExpectation.
package estimator
