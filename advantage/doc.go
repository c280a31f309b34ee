// Package advantage computes SPIRAL's three credit signals and the group
// baselines (GRPO, Dr. GRPO, RLOO) that trainers already use.
//
// # SPIRAL's credit
//
// For one training problem with N1 search traces y_1..y_N1, K sampled sets
// G_1..G_K of traces, and rewards r_i1..r_iN2 for the aggregation outputs of
// set i (SPIRAL.md section 2):
//
//	f_i          = (1/N2) sum_j r_ij               set score
//	fbar         = (1/K) sum_i f_i                 set baseline
//	A_set(G_i)   = f_i - fbar                      set advantage
//	A_search(y)  = (1/|G(y)|) sum_{G in G(y)} A_set(G), 0 if G(y) is empty
//	A_agg(i, j)  = r_ij - f_i                      aggregation advantage
//
// where G(y) is the set of sampled sets that hold y. A_search is one scalar
// per search trace, multiplying the whole trace's log-probability gradient;
// A_agg compares aggregation outputs that saw the same candidates. With
// K = 1 every set and search advantage is 0. N2 may differ from set to set
// (a failed generation dropped): each set's score uses its own count.
//
// [Compute] takes one problem in nested slices and returns a [Credit].
// [ComputeBatch] takes many problems laid out flat in a [Batch] (the paper's
// step is 256 problems) and writes into a caller-owned [BatchCredit]; it
// allocates nothing, and works on float32 as well as float64 rewards;
// [Batch.Spans] locates each problem's inputs and results, and
// [NewUniformBatch] builds the layout of a batch whose problems share one
// shape. Compute is ComputeBatch on a batch of one.
//
// # Group baselines
//
// [GroupRelative] centres rewards within groups given by an id per row, in
// any order (verl's layout), optionally dividing by the group's standard
// deviation (GRPO) or using a leave-one-out baseline (RLOO); see
// [GroupOptions]. It reports groups of one row and groups whose rewards are
// all equal, whose advantages are 0.
//
// # Numerics
//
// Whatever the reward type, sums are taken in float64 and results rounded
// to the reward type only when stored. Means and variances are two-pass,
// computed on deviations from a first-pass mean, never as E[x^2] - E[x]^2, so
// rewards 1e8 + {0, 1e-4} get advantages of ±5e-5 to full precision. Equal
// rewards give advantages that are exactly 0, not a rounding residue, and a
// trace that is in every sampled set gets exactly 0. More generally, a
// computed search advantage within 4 (K + N2 + 2) 2^-53 F of zero, F the
// largest deviation of a set score from the problem's mean reward (about
// 4e-15 F at the paper's configuration), is below the computation's rounding
// error and is written as exactly 0: set scores (2/3, 1/3, 7/12, 1/4) with a
// trace in the first and the last set only would otherwise give that trace
// 7e-18 instead of 0, and a problem with no signal would look like one
// (TestSearchRoundingZero, TestSearchExactZerosRapid).
//
// # Bad input
//
// Everything that comes from a caller's data is validated before any output
// is written, and a bad value gets an error naming the problem, set and
// position (or the row and group): a NaN, infinite or over-large
// (|r| > [MaxAbsReward]) reward, fewer than 1 trace, a problem with no
// sets, a trace index out of range or repeated inside a set, an empty set,
// two identical sets (the same indices in the same order: sets are taken
// as passed, so a permutation of a set is another set, as for ordered
// tuples; pass sets as drawn, not as reordered for the aggregation prompt,
// see [ComputeBatch]), a set with no rewards, and slice lengths that do not
// match. On error the caller's destination is left untouched, and no
// output is ever NaN or infinite. Functions panic only when a caller
// passes destination slices of the wrong length, a programmer's error, as
// their documentation says.
package advantage
