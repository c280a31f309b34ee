package eval

import (
	"fmt"
	"math"
	"sort"
)

// EfficiencyStatus says how one point of a scaling-efficiency curve was
// resolved; see [ScalingEfficiency].
type EfficiencyStatus int

const (
	// EfficiencyReached: the method's curve first reaches the target
	// coverage strictly inside the grid, between two grid widths; KB is the
	// width interpolated linearly in log k and Efficiency = KA / KB.
	EfficiencyReached EfficiencyStatus = iota + 1

	// EfficiencyLowerBound: the method's coverage at the first grid width
	// k_1 already reaches the target. KB = k_1 and Efficiency = KA / k_1,
	// which is a lower bound: the grid cannot tell whether fewer samples
	// would do (with k_1 = 1 it is the efficiency in whole samples).
	EfficiencyLowerBound

	// EfficiencyUnreached: the method's coverage stays below the target at
	// every grid width. KB and Efficiency are NaN (not +Inf, and the point
	// is kept); all that is known is that the efficiency is below
	// KA / k_m, with k_m the largest grid width.
	EfficiencyUnreached

	// EfficiencySaturated: the baseline is saturated at KA, so the
	// efficiency is undefined and KB and Efficiency are NaN. Saturated means
	// the baseline's coverage is 1, or is no higher than at the previous
	// grid width (a plateau, such as the one at the baseline's own maximum
	// after it first attains it): the baseline then needed fewer than KA
	// samples for that coverage, and KA / KB would grow with KA for no
	// reason but the baseline's ceiling.
	EfficiencySaturated
)

// String returns the name of the status, such as "reached".
func (s EfficiencyStatus) String() string {
	switch s {
	case EfficiencyReached:
		return "reached"
	case EfficiencyLowerBound:
		return "lower bound"
	case EfficiencyUnreached:
		return "unreached"
	case EfficiencySaturated:
		return "saturated"
	}
	return fmt.Sprintf("EfficiencyStatus(%d)", int(s))
}

// EfficiencyPoint is one point of a scaling-efficiency curve: how many
// samples the method needs to match the baseline's coverage at KA samples.
type EfficiencyPoint struct {
	KA       int     // the baseline's width, a grid point
	Coverage float64 // the baseline's coverage at KA: the target
	// KB is the smallest width at which the method's interpolated curve
	// reaches Coverage; Efficiency = KA / KB. Both are NaN unless Status is
	// EfficiencyReached or EfficiencyLowerBound.
	KB, Efficiency float64
	Status         EfficiencyStatus
}

// ScalingEfficiencyCurve is the result of [ScalingEfficiency]: one point per
// grid width, and the maximum efficiency.
type ScalingEfficiencyCurve struct {
	// Points has one point per grid width, in grid order; none is dropped.
	Points []EfficiencyPoint
	// Max is the largest Efficiency over the points with status
	// EfficiencyReached (the first one on ties), at baseline width MaxKA,
	// Points[MaxIndex]. Lower bounds are not included. If no point is
	// reached, Max is NaN, MaxKA is 0 and MaxIndex is -1.
	Max      float64
	MaxKA    int
	MaxIndex int
}

// checkCoverageGrid validates one coverage curve against the grid: same
// length, every value in [0, 1] (so not NaN), nondecreasing in k.
func checkCoverageGrid(name string, ks []int, y []float64) error {
	const what = "scaling efficiency"
	if len(y) != len(ks) {
		return argError(what, name, fmt.Sprintf("len = %d != len(ks) = %d", len(y), len(ks)))
	}
	for i, v := range y {
		if !(v >= 0 && v <= 1) {
			return elementError(what, name, i, v, fmt.Sprintf("not a coverage in [0, 1] (at k = %d)", ks[i]))
		}
		if i > 0 && v < y[i-1] {
			return elementError(what, name, i, v, fmt.Sprintf("below the coverage %v before it: coverage must be nondecreasing in k (k = %d after k = %d)",
				y[i-1], ks[i], ks[i-1]))
		}
	}
	return nil
}

// ScalingEfficiency compares a method's coverage curve with a baseline's:
// for each grid width k_A it finds the width k_B at which the method
// reaches the coverage the baseline has at k_A, and reports
// efficiency(k_A) = k_A / k_B, how many times fewer independent samples the
// method needs for the same coverage (the paper's "up to about 11x" reads
// the maximum of such a curve). The paper gives no formula; this is the
// definition:
//
//   - ks is the grid of widths k_1 < k_2 < ... < k_m (k_1 >= 1), and
//     baseline[j] = A(k_j), method[j] = B(k_j) are the two coverage curves
//     on it (for example from [CoverageCurve]), each nondecreasing in k and
//     in [0, 1].
//   - Between grid points, B is interpolated linearly in log k: for
//     log k in [log k_{j-1}, log k_j], B(k) is the straight line through
//     (log k_{j-1}, B_{j-1}) and (log k_j, B_j). The interpolant is
//     nondecreasing and passes through every grid value.
//   - For the target y = A(k_A), k_B is the smallest width in [k_1, k_m] at
//     which the interpolated B is >= y. If j is the first grid index with
//     B_j >= y and j > 1, then with t = (y - B_{j-1}) / (B_j - B_{j-1}) in
//     (0, 1], k_B = k_{j-1} * (k_j / k_{j-1})^t, exactly k_j when t = 1
//     (status EfficiencyReached).
//   - If B_1 >= y already, k_B = k_1 (status EfficiencyLowerBound: the
//     efficiency is at least k_A / k_1).
//   - If B_m < y, B never reaches y on the grid (status
//     EfficiencyUnreached: no k_B, efficiency NaN rather than infinite).
//   - If A(k_A) = 1, or A(k_A) = A at the previous grid width, the baseline
//     is saturated there and the efficiency is undefined (status
//     EfficiencySaturated, efficiency NaN). This covers the baseline's
//     final plateau at its own maximum, except the first grid width that
//     attains it.
//
// The curves are not extrapolated beyond the grid, and the baseline is
// evaluated only at grid points, never interpolated. Interpolation in log k
// suits coverage curves, which rise roughly linearly in log k over much of
// their range. For per-sample success probabilities p_A < p_B,
// A(k) = 1 - (1-p_A)^k and B(k) = 1 - (1-p_B)^k, the exact efficiency is
// log(1-p_B) / log(1-p_A) at every k_A; the interpolated answer converges to
// it as the grid gets finer (on the grid segment that holds k_B, of width h
// in log k, the error in log k_B is at most h^2/8 times the largest second
// derivative of B with respect to log k, divided by the smallest first
// derivative), and it is exact where B is linear in log k or where the
// target falls on a grid value of B. The error is largest where k_B is
// small, since the grid is coarsest there in log k, and so is the maximum:
// for p_A = 0.01 and p_B = 0.05 on the grid k = 1..256 the exact efficiency
// is 5.104 at every k_A, the points with k_B >= 8 are within 0.2% of it,
// but the maximum is 5.388, at k_A = 7 with k_B between 1 and 2 (convex
// there in log k, so the chord overstates B). Read Max together with the KB
// it was found at.
//
// It costs O(m log m) for a grid of m widths. It returns an *[InputError]
// naming the value if ks is empty, ks[0] < 1, ks is not strictly
// increasing, the curves' lengths differ from len(ks), or a coverage value
// is NaN, outside [0, 1], or smaller than the value before it.
func ScalingEfficiency(ks []int, baseline, method []float64) (ScalingEfficiencyCurve, error) {
	const what = "scaling efficiency"
	if len(ks) == 0 {
		return ScalingEfficiencyCurve{}, argError(what, "ks", "empty grid")
	}
	for i, k := range ks {
		if i == 0 && k < 1 {
			return ScalingEfficiencyCurve{}, intElementError(what, "ks", 0, k, "a width < 1")
		}
		if i > 0 && k <= ks[i-1] {
			return ScalingEfficiencyCurve{}, intElementError(what, "ks", i, k, fmt.Sprintf("not above the width %d before it: widths must be strictly increasing", ks[i-1]))
		}
	}
	if err := checkCoverageGrid("baseline", ks, baseline); err != nil {
		return ScalingEfficiencyCurve{}, err
	}
	if err := checkCoverageGrid("method", ks, method); err != nil {
		return ScalingEfficiencyCurve{}, err
	}

	res := ScalingEfficiencyCurve{
		Points:   make([]EfficiencyPoint, len(ks)),
		Max:      math.NaN(),
		MaxIndex: -1,
	}
	for i, ka := range ks {
		y := baseline[i]
		pt := EfficiencyPoint{KA: ka, Coverage: y, KB: math.NaN(), Efficiency: math.NaN()}
		switch {
		case y >= 1 || (i > 0 && y <= baseline[i-1]):
			pt.Status = EfficiencySaturated
		case method[0] >= y:
			pt.Status = EfficiencyLowerBound
			pt.KB = float64(ks[0])
		case method[len(method)-1] < y:
			pt.Status = EfficiencyUnreached
		default:
			pt.Status = EfficiencyReached
			pt.KB = interpolateWidthLogK(ks, method, y)
		}
		if pt.Status == EfficiencyReached || pt.Status == EfficiencyLowerBound {
			pt.Efficiency = float64(ka) / pt.KB
		}
		if pt.Status == EfficiencyReached && (res.MaxIndex < 0 || pt.Efficiency > res.Max) {
			res.Max, res.MaxKA, res.MaxIndex = pt.Efficiency, ka, i
		}
		res.Points[i] = pt
	}
	return res, nil
}

// interpolateWidthLogK returns the smallest width at which the
// nondecreasing curve y, given on the grid ks and interpolated linearly in
// log k, reaches target, for y[0] < target <= y[len-1].
func interpolateWidthLogK(ks []int, y []float64, target float64) float64 {
	// j is the first index with y[j] >= target, found by bisection.
	j := sort.Search(len(y), func(i int) bool { return y[i] >= target })
	t := (target - y[j-1]) / (y[j] - y[j-1])
	if t >= 1 {
		return float64(ks[j])
	}
	lo, hi := float64(ks[j-1]), float64(ks[j])
	return lo * math.Pow(hi/lo, t)
}
