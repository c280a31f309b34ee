// Package combin counts, enumerates, ranks and samples the sets that SPIRAL
// builds from one problem's N search traces, and computes the exact
// probabilities of its set draw.
//
// A [Family] is either the C(N, n) unordered n-subsets of {0, ..., N-1}
// ([Subsets]) or the (N)_n = N!/(N-n)! ordered n-tuples of distinct indices
// ([Tuples]). The paper's implementation draws subsets; its Proposition 3.1
// is proved for tuples. T denotes the size of the family and T_avoid the
// number of its sets that avoid one given index.
//
// What the package provides, for every family with 1 <= n <= N <= [MaxSize]:
//
//   - exact counts T and T_avoid ([Family.Count], [Family.Avoiding]) as
//     big.Int, with [Family.Count64] for the common case T < 2^64;
//   - enumeration in lexicographic order ([Family.All]), and the matching
//     [Family.Rank] and [Family.Unrank], exact for every family, with uint64
//     fast paths ([Family.Rank64], [Family.Unrank64], [Family.UnrankTo]);
//   - uniform sampling of K distinct sets without enumerating the family
//     ([Family.Sample]), and an allocation-free [Sampler] for trainers that
//     draw every step;
//   - the exact probability that a given index is in none of the K sets,
//     C(T_avoid, K)/C(T, K) ([Family.MissProb], and [Family.MissProbFloat]
//     computed stably in float64), and the exact distribution of the number
//     of sets that contain it ([Family.AppearanceDist]);
//   - a balanced design ([Family.SampleBalanced], [BalancedSampler]): K
//     distinct subsets in which every index appears r = Kn/N times (r or r+1
//     when N does not divide Kn), randomised so that the indices are
//     exchangeable; see design.go for the construction.
//
// # Order
//
// Subsets are written in ascending order and tuples in their own order, and
// both families are ordered lexicographically as sequences. For subsets this
// is the order of gonum's stat/combin: Combinations, CombinationIndex and
// IndexToCombination agree with All, Rank and Unrank. For tuples it is not:
// gonum's Permutations, PermutationIndex and IndexToPermutation order tuples
// first by their set of indices (in combination order) and then by the
// arrangement of that set, so that (0, 2, 1) comes before (0, 1, 3) there,
// and after it here.
//
// gonum's Binomial and NumPermutations compute in int without overflow
// checks (Binomial(n, k) is wrong from n = 62, first at Binomial(62, 28),
// though the value fits an int64); this package's counts are exact big.Int
// values, and its uint64 paths report overflow.
//
// # Randomness and errors
//
// Random draws come from an injected *rand.Rand of math/rand/v2, through its
// IntN method only, so the same generator state gives the same sets on
// every machine. A nil generator is an error. Arguments out of range (n > N,
// n < 1, N < 1, K < 0, K > T, a rank outside [0, T), a set of the wrong
// length, with an index outside [0, N) or repeated, or an unsorted subset)
// give an error that names the argument and its value. The only panics are
// for dst slices of the wrong length passed to the dst-first functions
// [Family.UnrankTo] and [Sampler.SampleTo], which are programmer errors.
//
// # Tests
//
// The tests check every count, rank and probability against math/big
// formulas, full enumeration and gonum, run rapid property tests, and check
// the sampler's uniformity with chi-square tests whose thresholds are chi-square
// quantiles at a fixed seed. Setting SPIRAL_LONG=1 runs ten times larger
// statistical samples, and -short five times smaller ones; rapid's
// -rapid.checks flag sets the number of property cases (100 by default).
package combin
