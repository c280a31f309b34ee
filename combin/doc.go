// Package combin builds the candidate sets of SPIRAL (arXiv 2606.23595,
// Section 3): the K sets of n traces that one problem's N1 search traces are
// grouped into, how they are drawn, checked and counted, and the constants
// of the draw.
//
// A [Family] is all sets of size n from the traces {0, ..., N1-1}: the
// C(N1, n) subsets ([Subsets]) or the (N1)_n ordered tuples ([Tuples];
// [NewFamily] picks by a flag), for 1 <= n <= N1 <= [MaxSize]. T is the
// number of sets in the family and T_avoid the number that avoid one given
// trace. With a family:
//
//   - draw K distinct sets with a [Design]: [Uniform], through
//     [Family.Sample] or an allocation-free [Sampler], or [Balanced] (every
//     trace in floor(K n/N1) or one more sets), through
//     [Family.SampleBalanced] or a [BalancedSampler];
//   - check sets from outside with [CheckSets] or [Family.CheckSets]: the one
//     check of the module, reporting an *[InputError] (the module's one
//     input error type) that wraps a [*SetError];
//   - get the constants of Proposition 3.1 with [Family.Constants]: the
//     probability that a trace is in no set, q_K and M, exact and in float64;
//     [Family.MissProb], [Family.MissProbFloat] and [Family.AppearanceDist]
//     give the miss probability and the distribution of a trace's number of
//     appearances under the uniform design;
//   - count, enumerate, rank and unrank sets in lexicographic order:
//     [Family.Count], [Family.Count64], [Family.LogCount], [Family.All],
//     [Family.Rank], [Family.Unrank] and their uint64 forms.
//
// An [Order] says how a set's candidates are presented (as drawn, or
// shuffled). The derivations and measured consequences of the designs and
// constants are in docs/findings.md#set-designs, docs/findings.md#the-constant-m
// and docs/findings.md#finite-k.
//
// # Costs and errors
//
// Every size from a caller is checked before any work: K n <= MaxSize for
// the samplers; exact answers (big.Int and big.Rat) only while their numbers
// stay within [MaxExactBits], so that each call ends within a fraction of a
// second; the float paths answer every size. Arguments out of range give an
// error naming the argument, its value and the bound. The only panics are
// for dst slices of the wrong length passed to the dst-first functions
// ([Family.UnrankTo], the samplers' SampleTo, and their SampleManyTo, which
// makes many draws in one call).
//
// Random draws come from an injected source of math/rand/v2: the samplers'
// DrawTo takes a rand.Source and draws as many uniform digits as exactness
// allows from each 64-bit value (one value for the paper's plan), and
// their SampleTo takes a *rand.Rand and draws each digit by IntN. Either
// way the same generator state gives the same sets on every machine. The float paths round every product explicitly, so the compiler
// fuses no multiply-add in them; their bits can still differ across
// architectures where the standard library's Log, Log1p, Exp or Lgamma do.
//
// Subsets are ordered as in gonum's stat/combin (Combinations,
// CombinationIndex); tuples are ordered lexicographically as sequences,
// unlike gonum's Permutations, which orders them by their set first.
package combin
