// Package eval computes the evaluation metrics of SPIRAL's experiments
// ("SPIRAL: Learning to Search and Aggregate", arXiv 2606.23595, Section 4;
// docs/method.md#evaluation): pass@k and coverage curves, the scaling
// efficiency of one policy over another, and majority voting over final
// answers.
//
// From n samples of a problem of which c are correct, the unbiased
// estimator of pass@k, the probability that at least one of k samples is
// correct, is
//
//	pass@k = 1 - C(n-c, k) / C(n, k),   1 <= k <= n,
//
// in float64 by [PassAtK], exactly by [PassAtKRat], and for k = 1..kmax at
// O(1) per point by [PassAtKCurve]. Coverage at k is the mean of pass@k
// over the P problems of a test set, each with its own N_i samples and C_i
// correct ([PassCount], [CoverageCurve]); [CoverageBootstrap] adds
// percentile bootstrap intervals over problems. The paper plots coverage
// for k = 1..256.
//
// The scaling efficiency at a baseline width k_A is k_A / k_B, where k_B is
// the width at which the method's coverage curve, interpolated linearly in
// log k, first reaches the baseline's coverage at k_A ([ScalingEfficiency];
// the paper's "up to about 11x" is the maximum of such a curve). maj@k is
// the probability that a majority vote over k samples is correct:
// [MajorityVote] votes under an explicit [TieRule], and [ExpectedMajority]
// is its unbiased estimator from n >= k samples, the average over all
// C(n, k) subsets, computed exactly without visiting them.
// docs/findings.md#evaluation-estimators compares these estimators with the
// ones evaluation harnesses use. For comparing policies and aggregators:
// [AnswerEntropy] is the entropy of a problem's answers,
// [CoverageOverlap] and [UniqueCoverage] how policies' coverage at k
// overlaps, [PairedAccuracy] two predictors on the same items, and
// [PairedTTest] two measurements of the same units (seeds, or problems)
// with Student's t test.
//
// Every function checks its arguments before any work: bad values give an
// *[InputError] naming the argument, its value and its position, and sizes
// that would take more than 2^24 values of memory ([combin.MaxSize], the
// module's size cap) or more than 2^30 steps of time give one wrapping
// [ErrTooCostly]; no argument makes a call hang, exhaust memory or panic. The curves and
// ExpectedMajority use only arithmetic, each product rounded explicitly
// (never fused into a multiply-add), so the same inputs and the same
// *rand.Rand state give the same bits on every architecture;
// ScalingEfficiency, and PassAtK when both c and k exceed 2^20, also call
// math.Pow, math.Log1p or math.Expm1, whose last bits may differ between
// architectures.
//
// A typical evaluation, from the count of correct samples per problem:
//
//	problems := []eval.PassCount{{N: 256, C: 3}, {N: 256, C: 0}, {N: 256, C: 201}}
//	grpo, err := eval.CoverageCurve(problems, 256) // grpo[k-1] is coverage at k
//	band, err := eval.CoverageBootstrap(problems, 256, 2000, 0.95, rnd)
//	eff, err := eval.ScalingEfficiency(ks, grpoOnGrid, spiralOnGrid)
package eval
