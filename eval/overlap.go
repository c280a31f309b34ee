package eval

import (
	"fmt"
	"math"

	"spiral/internal/inputerr"
)

// Overlap is how two policies' coverage of one test set overlaps at a
// width k: the expected fractions of problems that both, only the first,
// only the second, or neither solve with k samples each.
type Overlap struct {
	Both, OnlyA, OnlyB, Neither float64
}

// CoverageOverlap returns the overlap of two policies' coverage at width k,
// from independent samples of each on the same P problems: with a_i and
// b_i the pass@k estimates of problem i (see [PassAtK]),
//
//	Both  = (1/P) sum_i a_i b_i          OnlyA   = (1/P) sum_i a_i (1 - b_i)
//	OnlyB = (1/P) sum_i (1 - a_i) b_i    Neither = (1/P) sum_i (1 - a_i)(1 - b_i)
//
// Each term is a product of unbiased estimates from independent samples,
// so each fraction is unbiased; the four add up to 1, and Both + OnlyA is
// A's coverage at k. Problem i of a and of b must be the same problem. It
// returns an *[InputError] when a and b differ in length, and the errors of
// [CoverageCurve] for either test set at kmax = k.
func CoverageOverlap(a, b []PassCount, k int) (Overlap, error) {
	if len(a) != len(b) {
		return Overlap{}, argError("coverage overlap", "b", fmt.Sprintf("%d problems, a has %d", len(b), len(a)))
	}
	for _, ps := range [][]PassCount{a, b} {
		if err := checkCoverage("coverage overlap", ps, k); err != nil {
			return Overlap{}, err
		}
	}
	var o Overlap
	for i := range a {
		pa, pb := passAtK(a[i].N, a[i].C, k), passAtK(b[i].N, b[i].C, k)
		o.Both += float64(pa * pb)
		o.OnlyA += float64(pa * (1 - pb))
		o.OnlyB += float64((1 - pa) * pb)
		o.Neither += float64((1 - pa) * (1 - pb))
	}
	p := float64(len(a))
	o.Both /= p
	o.OnlyA /= p
	o.OnlyB /= p
	o.Neither /= p
	return o, nil
}

// UniqueCoverage returns, for each of m policies evaluated on the same P
// problems, the expected fraction of problems that it solves with k
// samples and no other policy does with k samples of its own: with p_ij
// the pass@k estimate of problem i under policy j (see [PassAtK]),
//
//	unique_j = (1/P) sum_i p_ij prod_{l != j} (1 - p_il),
//
// unbiased when the policies' samples are independent. With two policies
// it is [CoverageOverlap]'s OnlyA and OnlyB. policies[j][i] is problem i
// of policy j. It returns an *[InputError] for no policies or test sets of
// different lengths, one wrapping [ErrTooCostly] when m·P exceeds 2^30
// steps, and the errors of [CoverageCurve] for any test set at kmax = k.
func UniqueCoverage(policies [][]PassCount, k int) ([]float64, error) {
	if len(policies) == 0 {
		return nil, argError("unique coverage", "policies", "no policies")
	}
	for j, ps := range policies {
		if len(ps) != len(policies[0]) {
			return nil, inputerr.Element("eval: unique coverage", InputError{Field: "policies", Problem: -1, Set: -1, Output: j,
				Err: fmt.Errorf("%d problems, the first policy has %d", len(ps), len(policies[0]))})
		}
		if err := checkCoverage("unique coverage", ps, k); err != nil {
			return nil, err
		}
	}
	m, p := len(policies), len(policies[0])
	if !within(m*m, p, maxSteps) {
		return nil, costError("unique coverage", "policies", fmt.Sprintf("m²·P = %d²·%d > 2^30 steps (time: seconds)", m, p))
	}
	unique := make([]float64, m)
	pass := make([]float64, m)
	for i := range p {
		for j := range m {
			pass[j] = passAtK(policies[j][i].N, policies[j][i].C, k)
		}
		for j := range m {
			u := pass[j]
			for l := range m {
				if l != j {
					u *= 1 - pass[l]
				}
			}
			unique[j] += u
		}
	}
	for j := range unique {
		unique[j] /= float64(p)
	}
	return unique, nil
}

// Paired is a paired comparison of two predictors, A and B, right or wrong
// on the same N items: how many both get right, only A, only B, neither;
// the difference of their accuracies, Diff = (OnlyA - OnlyB)/N; and its
// standard error, SE = s/sqrt(N), s^2 the sample variance (divisor N-1) of
// the per-item differences d_i in {-1, 0, 1},
//
//	SE = sqrt((OnlyA + OnlyB - N Diff^2) / (N (N - 1))),
//
// NaN for N = 1. Only the items on which A and B disagree move Diff, so
// pairing removes the variance they share (McNemar's comparison).
type Paired struct {
	N, Both, OnlyA, OnlyB, Neither int
	Diff, SE                       float64
}

// PairedAccuracy compares predictors A and B on the same items: a[i] and
// b[i] report whether each is right on item i. It returns an *[InputError]
// for no items or slices of different lengths.
func PairedAccuracy(a, b []bool) (Paired, error) {
	if len(a) == 0 {
		return Paired{}, argError("paired accuracy", "a", "no items")
	}
	if len(a) != len(b) {
		return Paired{}, argError("paired accuracy", "b", fmt.Sprintf("%d items, a has %d", len(b), len(a)))
	}
	r := Paired{N: len(a)}
	for i := range a {
		switch {
		case a[i] && b[i]:
			r.Both++
		case a[i]:
			r.OnlyA++
		case b[i]:
			r.OnlyB++
		default:
			r.Neither++
		}
	}
	n := float64(r.N)
	r.Diff = float64(r.OnlyA-r.OnlyB) / n
	r.SE = math.NaN()
	if r.N > 1 {
		r.SE = math.Sqrt(max(0, float64(r.OnlyA+r.OnlyB)-float64(float64(n*r.Diff)*r.Diff)) / (n * (n - 1)))
	}
	return r, nil
}
