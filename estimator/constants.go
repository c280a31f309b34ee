package estimator

import (
	"fmt"
	"math/big"

	"spiral/combin"
)

// CoverProb returns q_K, the probability that a given trace is in at least
// one of K distinct groups drawn uniformly without replacement from the
// family f:
//
//	q_K = 1 - C(T_avoid, K) / C(T, K),
//
// where T is the family size and T_avoid the number of groups that avoid a
// given index (C(N-1, n) for subsets, (N-1)_n for tuples). It is 1 minus
// f.MissProb(K) and returns its error for an invalid family or K > T, and an
// error for K < 1.
// For the paper's configuration (subsets, N = 8, n = 4, K = 4),
// q_K = 1453/1541.
func CoverProb(f combin.Family, K int) (*big.Rat, error) {
	c, err := exactConstants(f, combin.Uniform, K)
	if err != nil {
		return nil, err
	}
	return c.CoverProb, nil
}

// exactConstants returns f.Constants(d, K), or an error when its exact
// fields are not computed.
func exactConstants(f combin.Family, d combin.Design, K int) (combin.Constants, error) {
	c, err := f.Constants(d, K)
	if err != nil {
		return c, err
	}
	if c.M == nil {
		return c, fmt.Errorf("estimator: the exact constants of %v with K = %d are beyond combin.MaxExactBits", f, K)
	}
	return c, nil
}

// CoverProbFloat is CoverProb as a float64 (the nearest float64 to the exact
// rational).
func CoverProbFloat(f combin.Family, K int) (float64, error) {
	q, err := CoverProb(f, K)
	if err != nil {
		return 0, err
	}
	x, _ := q.Float64()
	return x, nil
}

// M returns the multiplier of Proposition 3.1,
//
//	M = (N/n) q_K - 1,
//
// so that the participation-averaged search estimator has expectation
// M * grad E[f(y_1..y_n)]. It equals E[#traces in at least one group]/n - 1.
// K = 1 gives exactly 0 (a lone set has zero advantage); 0 <= M <= N/n - 1,
// and M > 0 for every K > 1 when n < N. For the paper's configuration
// (subsets, N = 8, n = 4, K = 4), M = 1365/1541 ~ 0.8858. Errors are those
// of CoverProb.
func M(f combin.Family, K int) (*big.Rat, error) {
	c, err := exactConstants(f, combin.Uniform, K)
	if err != nil {
		return nil, err
	}
	return c.M, nil
}

// MFloat is M as a float64 (the nearest float64 to the exact rational).
func MFloat(f combin.Family, K int) (float64, error) {
	m, err := M(f, K)
	if err != nil {
		return 0, err
	}
	x, _ := m.Float64()
	return x, nil
}
