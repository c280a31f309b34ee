// Package loss writes the per-output coefficients a trainer puts in its
// advantage tensor so that its own loss reduction produces a chosen
// policy-gradient update exactly, for every batch, not only in expectation.
//
// A trainer's policy loss is sum_o sum_{t < L_o} w_o ell_{o,t}, with the
// per-token loss ell_{o,t} = -c_o rho_{o,t} (rho the importance ratio, 1
// on policy) and w_o the weight its reduction gives every token of output
// o: 1/T for a token mean over T tokens, 1/(B L_o) for a mean over B
// sequences of each sequence's token mean, and so on. On policy its
// gradient is -sum_o w_o c_o grad log pi(y_o). For a chosen update
// sum_o u_o grad log pi(y_o), [Coefficients] writes c_o = u_o kappa / w_o,
// so that the trainer's gradient is kappa times the chosen update, with
// kappa (the effective learning-rate scale) the same for every output and
// returned in [Report].Scale: 1 for a sum, 1/R for the means, R being the
// number of outputs with at least one token. Where a trainer reduces
// several loss terms separately (SPIRAL's search and aggregation outputs
// as two losses, each a mean over its own tokens), [Rows].Terms says which
// term each output belongs to, and each term's counts enter its w_o.
//
// The reductions are named as the trainers name them ([Reduction]); the
// derivation of every case is in docs/findings.md#loss-coefficients, and
// the tests reduce small batches with a transcription of each trainer's
// reduction in exact arithmetic.
//
// The package is a leaf: the root package composes it with SPIRAL's credit
// (spiral.Config.LossCoefficients) to give SPIRAL's unbiased joint
// gradient or the paper's plain update.
package loss
