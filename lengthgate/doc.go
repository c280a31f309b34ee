// Package lengthgate implements the asymmetric length gate of the SPIRAL
// paper's Eq. 8 (Appendix A) and, clearly separated from it, the two overlong
// controls that users of DAPO-style trainers already know: soft overlong
// punishment and overlong filtering.
//
// # The gate of Eq. 8
//
// The paper's 4B model grew its outputs too fast, so every advantage A of an
// output of length L (in generated tokens) passes through
//
//	A_mod = A   if A < 0, or A > 0 and L < L_target
//	A_mod = 0   if A > 0 and L > L_target
//
// Overlong successes stop being reinforced; overlong failures are still
// penalised. The paper leaves the following open, and this package makes each
// an explicit choice:
//
//   - L == L_target: covered by neither case. The default, [GateAtTarget],
//     reads the first case literally (a positive advantage survives only when
//     L < L_target), so L == L_target is gated. [KeepAtTarget] keeps it.
//   - A == 0: covered by neither case. It passes unchanged (setting it to 0
//     would not change it anyway, and it is never counted as gated).
//   - L_target: not disclosed. The paper's maximum output length is 4096
//     tokens per trace; the target is a user setting, [Gate.Target]. Target 0
//     is the zero-value gate, which changes nothing; a negative target is an
//     error.
//   - Search and aggregation may use different targets: [Gates] holds one gate
//     per role (the paper does not say whether they share one; [Shared] gives
//     both roles the same gate).
//
// # Where each pass runs, and why the order matters
//
// A training step for one problem runs, in this order:
//
//  1. Generation. Every output's length L is known.
//  2. Reward passes, BEFORE any baseline: [SoftOverlong] adds DAPO's length
//     penalty to each rewarded output's reward. This is reward shaping by
//     design: the penalty enters the set scores f_i, the set baseline fbar and
//     every advantage computed from them, exactly as DAPO adds it to the rule
//     reward before its group baseline. In SPIRAL only aggregation outputs
//     have rewards; a search trace has no reward of its own to shape.
//  3. Baselines and advantages (package advantage): f_i, fbar, A_set,
//     A_search, A_agg.
//  4. The gate of Eq. 8, AFTER the baselines: [Gate.Apply] zeroes positive
//     advantages of long outputs. It acts on advantages, never on rewards,
//     so a gated output does not move anyone's baseline. Gating the reward
//     instead would change the mean it belongs to: with a set's rewards
//     (1, 1, 1, 0), f = 0.75 and A_agg = (0.25, 0.25, 0.25, -0.75); gating
//     the first output's advantage gives (0, 0.25, 0.25, -0.75), but zeroing
//     its reward gives f = 0.5 and A_agg = (-0.5, 0.5, 0.5, -0.5): the long
//     correct answer is now actively punished, the other outputs' credit
//     doubles, the failure's penalty shrinks, and the lower set score shifts
//     fbar, every A_set and every search trace's advantage as well.
//  5. The loss. [OverlongFilter] gives a mask that removes truncated outputs
//     from the loss (DAPO's overlong filtering: the loss of truncated samples
//     is masked). It can be computed from lengths at any time, but it is
//     applied to the per-output loss terms only: a filtered output's reward
//     still took part in its group's baseline, as in DAPO and in trainers
//     that implement it. Dropping truncated outputs before the baselines
//     would instead change every other output's advantage.
//
// The soft punishment and the gate answer different questions: the punishment
// lowers the reward of outputs near or past the generation limit L_max; the
// gate withholds positive credit from outputs longer than L_target, which is
// usually well below L_max, and leaves every negative advantage as it was.
//
// # Input rules
//
// Lengths, advantages and rewards come from outside and are validated first:
// a negative length, a NaN or infinite advantage or reward, or slices of
// different lengths give an error naming the argument, the position and the
// value, and on any error every slice is left untouched (no partial update).
// The only panics are for a dst-first call whose destination slice has the
// wrong length, a programmer error, documented on each such function.
package lengthgate
