// Package lengthgate implements the asymmetric length gate of the SPIRAL
// paper (Appendix A, Eq. 8) and, beside it, the overlong controls of
// DAPO-style trainers: soft overlong punishment and overlong filtering.
//
// [Gate] modifies the advantage A of an output of length L tokens:
//
//	A_mod = A   if A < 0, or A > 0 and L < L_target
//	A_mod = 0   if A > 0 and L > L_target
//
// with the cases the paper leaves open made explicit: L == L_target is
// gated ([GateAtTarget], the zero value) or kept ([KeepAtTarget]); A == 0
// passes unchanged; Target 0 disables the gate. [Gates] holds one gate for
// search traces and one for aggregation outputs. See
// docs/method.md#the-length-gate. The gate is not neutral: it biases the
// update against length, and whether a long correct output is pushed down
// or only up by less depends on the reward noise (N2), K and the policy;
// see docs/findings.md#length-gate-bias.
//
// [SoftOverlong] is DAPO's length penalty, added to rewards. [OverlongFilter]
// (by length) and [MaskTruncated] (by the end-of-sequence flag, as TRL's
// mask_truncated_completions) give a mask that removes truncated outputs
// from the loss.
//
// # Order of passes
//
// One training step runs, per problem:
//
//  1. Dynamic sampling on the raw rewards: whether the problem has any
//     signal, or a mean reward inside the range (advantage.InRewardRange),
//     is decided before any shaping, so a length penalty cannot turn a
//     problem with no signal into one with credit.
//  2. Reward shaping, before the baselines: [SoftOverlong.Apply] adds the
//     penalty to each rewarded output's reward.
//  3. Baselines and advantages from the shaped rewards (package advantage).
//  4. The gate, after the baselines: [Gate.Apply] zeroes the positive
//     advantages of long outputs. It acts on advantages, never on rewards,
//     so a gated output moves no one's baseline.
//  5. The loss: the overlong mask drops truncated outputs' loss terms; their
//     rewards still took part in the baselines.
//
// The root package's batch credit runs passes 1 to 4 in this order.
//
// # Input rules
//
// Lengths, advantages and rewards are checked first: a negative length, a
// NaN or infinite value, or slices of different lengths give an error naming
// the argument, the position and the value, and nothing is written;
// every exported function checks. No finite input gives a non-finite
// output. The only panics are for a
// destination slice of the wrong length, a programmer error documented on
// each such function. The generic forms ([ApplyGate], [ApplySoftOverlong])
// take float32 as well as float64.
package lengthgate
