// Package advise computes how the variance of SPIRAL's search update depends
// on the configuration (N1 search traces, sets of n, K sets, N2 aggregation
// outputs per set, the design), and ranks configurations by signal-to-noise
// per token under a token budget (docs/findings.md#choosing-a-configuration).
//
// DecomposeSearch splits the variance of the M-normalised search update g/M
// on one of package estimator's toy objectives into its sources: which sets
// were drawn, which traces were drawn, and the reward noise of the set
// scores, exactly in rational arithmetic:
//
//	Var(g/M) = Sets + Traces + Noise1/N2.
//
// Sets has a closed form through the law of the coverage count (CoverMoments)
// whenever the objective is symmetric or the candidates are shuffled, and
// the noise term falls as 1/N2.
//
//	v, err := advise.DecomposeSearch(design, policy, table, combin.IndexOrder)
//	snr := v.SNR(4) // ||grad J||^2 / Var(g/M) at N2 = 4
package advise
