// Package advantage computes SPIRAL's three credit signals and the group
// baselines (GRPO, Dr. GRPO, RLOO) that trainers already use.
//
// # SPIRAL's credit
//
// For one problem with N1 search traces y_1..y_N1, K sets G_1..G_K of
// traces shown to the aggregator, and rewards r_i1..r_iN2 of the
// aggregation outputs of set i (docs/method.md#the-credit-signals):
//
//	f_i          = (1/N2_i) sum_j r_ij                    set score
//	fbar         = (1/K) sum_i f_i                        set baseline
//	A_set(G_i)   = f_i - fbar                             set advantage
//	A_search(y)  = (1/|G(y)|) sum_{G_i in G(y)} A_set(G_i), 0 if G(y) is empty
//	A_agg(i, j)  = r_ij - f_i                             aggregation advantage
//
// where G(y) is the set of sets that hold y. A_search multiplies the whole
// search trace's log-probability gradient; A_agg compares aggregation
// outputs that saw the same candidates. N2_i may differ from set to set.
// Outputs marked unscorable are left out: N2_i counts the scored ones, a
// set with none is left out of K and of every G(y), and an unscorable
// output's A_agg is 0.
//
// [ComputeBatch] takes many problems laid out flat in a [Batch] (the
// paper's step is 256 problems; [NewUniformBatch] builds the layout of
// problems of one shape, [Batch.Spans] locates each) and writes a
// caller-owned [BatchCredit], allocating nothing once it has grown (for
// problems of up to about 100 members); it works on float32 as well as
// float64 rewards. Its cost is linear in the size of the batch. [Compute] takes one
// problem in nested slices and returns a [Credit]; it is ComputeBatch on a
// batch of one.
//
// Numerics: sums are taken in float64 and results rounded to the reward
// type only when stored. Each set's score and aggregation advantages are
// computed from that set's rewards alone, to within a few units in the
// last place of its own values, whatever other sets hold. Set advantages
// are computed from the sets' exact sums, so a large value common to every
// set (a penalty) cancels exactly: each is within a few units in the last
// place of its own exact value (plus what the rounding of the rewards
// themselves moves it). A search advantage, a mean of set advantages, is
// within 4 (K + 2) units in the last place of the largest |A_set| of its
// problem. Equal
// rewards give exactly 0: the aggregation advantages of a set whose
// rewards are equal, every set and search advantage of a problem whose
// set scores are equal, and the search advantage of a trace in every set.
// A search advantage within its rounding error of 0 is written as exactly
// 0, so a problem with no signal never looks like one. Results are the
// same, bit for bit, on every architecture.
//
// # Group baselines
//
// The group baselines and SPIRAL's credit share only the reward check and
// [InputError]; each reads alone (batch.go and credit.go hold SPIRAL's
// credit, whose kernel is internal/credit; group.go, group_preset.go and
// group_range.go the baselines, group.go's GroupRelative one pass over the
// rows after one function per Scale, and whiten).
//
// [GroupRelative] centres rewards within groups given by an id per row, in
// any order (verl's layout), optionally dividing by the group's standard
// deviation (GRPO) or using a leave-one-out baseline (RLOO); see
// [GroupOptions]. It reports groups of one row and groups whose rewards are
// all equal, whose advantages are 0.
//
// # Bad input
//
// Everything from a caller's data is checked before any output is written.
// A bad entry gets an *[InputError] naming the field, problem, set and
// position; in a batch, a *[BatchError] lists every bad problem, and
// the others are credited. Sets are checked by combin.CheckSets.
// No output is ever NaN or infinite. Every exported function checks its
// input: none can be told to trust it (the kernel that skips the checks is
// internal, for the root package's plans and rewards, which it checked
// itself). Functions panic only on a nil destination or, for
// GroupRelative, on a destination of the wrong length.
package advantage
