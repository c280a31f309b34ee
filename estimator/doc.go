// Package estimator verifies the SPIRAL search estimator (Proposition 3.1) by
// exact rational computation and by Monte Carlo on toy policies, computes its
// constants, and answers the paper's open questions by computation.
//
// (The full package documentation is being written.)
package estimator
