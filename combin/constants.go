package combin

import (
	"fmt"
	"math"
	"math/big"

	"spiral/internal/inputerr"
)

// Constants holds the constants of one problem's set draw: the probability
// that a given trace is in none of the K sets (MissProb), in at least one
// (CoverProb, q_K in the paper's Proposition 3.1), and the multiplier M of
// the search estimator's expectation, M grad J. The exact fields are nil when
// the exact answer would need numbers of more than MaxExactBits bits; the
// float fields are always set.
type Constants struct {
	MissProb, CoverProb, M                *big.Rat
	MissProbFloat, CoverProbFloat, MFloat float64
}

// Constants returns the constants of drawing K sets from f with design d:
//
//   - Uniform (K distinct sets uniformly without replacement):
//     MissProb = C(T_avoid, K)/C(T, K) (see [Family.MissProb]),
//     CoverProb = q_K = 1 - MissProb, M = (N1/n) q_K - 1.
//   - Balanced (subsets only; see [BalancedSampler]): every trace appears
//     when K n >= N1, so MissProb = 0; otherwise the K sets are disjoint and
//     cover a uniformly random K n of the N1 traces, so MissProb =
//     1 - K n/N1. In both cases M = min(N1, K n)/n - 1.
//
// In both designs M = (N1/n) CoverProb - 1, the expected number of traces
// in at least one set, over n, minus 1; K = 1 gives M = 0 exactly. For the
// paper's configuration (Subsets(8, 4), K = 4), uniform M = 1365/1541 and
// balanced M = 1. See docs/findings.md#the-constant-m and
// docs/findings.md#set-designs.
//
// When the exact fields are set, the floats are the nearest float64 to them.
// Otherwise the floats come from [Family.MissProbFloat] (relative error
// below 1e-12 for MissProbFloat), CoverProbFloat = -expm1 of its logarithm,
// and MFloat = (N1/n) CoverProbFloat - 1, whose absolute error is below
// (N1/n) 1e-12.
//
// Constants returns an error if f is the zero Family, d is not Uniform or
// Balanced, d is Balanced and f is a family of tuples, or K is not in
// [1, T].
func (f Family) Constants(d Design, K int) (Constants, error) {
	if err := f.checkK(K); err != nil {
		return Constants{}, err
	}
	if K < 1 {
		return Constants{}, argError(FieldK, K, "%d, want at least 1 set", K)
	}
	switch d {
	case Uniform:
		return f.uniformConstants(K)
	case Balanced:
		if f.ordered {
			return Constants{}, inputerr.Int("combin", "", InputError{Field: FieldDesign, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf("balanced designs are drawn from subsets, not from %v", f)}, int(d))
		}
		return f.balancedConstants(K), nil
	}
	return Constants{}, inputerr.Undefined("combin", FieldDesign, int(d), "Design")
}

func (f Family) uniformConstants(K int) (Constants, error) {
	N1, n := int64(f.size), int64(f.n)
	if K == 1 {
		// q_1 = n/N1 exactly, and M = 0.
		return exactConstants(big.NewRat(N1-n, N1), N1, n), nil
	}
	if _, bits := f.exactFactors(K); bits <= MaxExactBits || (f.fits && uint64(K) > f.avoid64) {
		miss, err := f.missProbRat(K)
		if err != nil {
			return Constants{}, err
		}
		return exactConstants(miss, N1, n), nil
	}
	logMiss := f.logMissProb(K)
	c := Constants{
		MissProbFloat:  math.Exp(logMiss),
		CoverProbFloat: -math.Expm1(logMiss),
	}
	c.MFloat = float64(float64(float64(N1)/float64(n))*c.CoverProbFloat) - 1 // rounded: no fused multiply-add
	return c, nil
}

func (f Family) balancedConstants(K int) Constants {
	N1, n := int64(f.size), int64(f.n)
	miss := new(big.Rat)
	if int64(K) < (N1+n-1)/n { // K n < N1
		miss.SetFrac64(N1-int64(K)*n, N1)
	}
	return exactConstants(miss, N1, n)
}

// exactConstants returns the constants for an exact miss probability.
func exactConstants(miss *big.Rat, N1, n int64) Constants {
	cover := new(big.Rat).Sub(big.NewRat(1, 1), miss)
	m := new(big.Rat).Mul(cover, big.NewRat(N1, n))
	m.Sub(m, big.NewRat(1, 1))
	c := Constants{MissProb: miss, CoverProb: cover, M: m}
	c.MissProbFloat, _ = miss.Float64()
	c.CoverProbFloat, _ = cover.Float64()
	c.MFloat, _ = m.Float64()
	return c
}
