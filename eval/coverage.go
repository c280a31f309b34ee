package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PassCount is the evaluation record of one test problem: N samples drawn
// from the model, C of them correct.
type PassCount struct {
	N int // samples drawn
	C int // correct samples among them, 0 <= C <= N
}

// checkCoverage validates a test set for a coverage curve of width kmax:
// at least one problem, each with valid counts and at least kmax samples,
// and len(problems)·kmax within maxSteps. what names the computation.
func checkCoverage(what string, problems []PassCount, kmax int) error {
	if len(problems) == 0 {
		return argError(what, "problems", "no problems")
	}
	if kmax < 1 {
		return argError(what, "kmax", fmt.Sprintf("%d < 1", kmax))
	}
	for i, p := range problems {
		switch {
		case p.N < 0:
			return intElementError(what, FieldProblemsN, i, p.N, "negative")
		case p.C < 0:
			return intElementError(what, FieldProblemsC, i, p.C, "negative")
		case p.C > p.N:
			return intElementError(what, FieldProblemsC, i, p.C, fmt.Sprintf("more correct samples than N = %d", p.N))
		case p.N < kmax:
			return intElementError(what, FieldProblemsN, i, p.N, fmt.Sprintf("fewer samples than kmax = %d: pass@k needs at least k samples of every problem", kmax))
		}
	}
	if !within(len(problems), kmax, maxSteps) {
		return costError(what, "kmax", fmt.Sprintf(
			"len(problems)·kmax = %d·%d > 2^30 steps (time: seconds)", len(problems), kmax))
	}
	return nil
}

// CoverageCurve returns the coverage curve of a test set: element k-1 is the
// mean over the problems of pass@k (see [PassAtK]) for k = 1..kmax,
//
//	coverage(k) = (1/P) · sum_{i=1..P} [1 - C(N_i - C_i, k) / C(N_i, k)],
//
// each of the P problems with its own number of samples N_i and of correct
// samples C_i. It is [CoverageCurveTo] with a newly allocated slice of
// length kmax, and returns its errors; it also refuses kmax > 2^24
// ([combin.MaxSize]), before allocating anything.
func CoverageCurve(problems []PassCount, kmax int) ([]float64, error) {
	if kmax > maxSize {
		return nil, costError("coverage", "kmax", fmt.Sprintf(
			"%d > %d, the longest curve (memory: the curve takes 8·kmax bytes)", kmax, maxSize))
	}
	if err := checkCoverage("coverage", problems, kmax); err != nil {
		return nil, err
	}
	dst := make([]float64, kmax)
	coverageCurveInto(dst, problems)
	return dst, nil
}

// CoverageCurveTo writes the coverage curve of a test set for
// k = 1..len(dst) into dst, element k-1 holding the mean pass@k over the
// problems (see [CoverageCurve]). It does not allocate, and costs
// O(len(problems)·len(dst)): each problem's pass@k curve comes from the
// recurrence of [PassAtKCurveTo]. The curve is exactly nondecreasing in k,
// has the same bits on every architecture, and is within (2k+3)·2^-53 of
// the exact mean when every N_i <= 2^53 ((4k+3)·2^-53 beyond).
//
// It returns an *[InputError] naming the value if problems is empty,
// len(dst) = 0, or some problem has N < 0, C < 0, C > N, or N < len(dst)
// (pass@k needs at least k samples of every problem: a curve to k = 256
// needs 256 samples per problem), and one wrapping [ErrTooCostly] if
// len(problems)·len(dst) > 2^30 (time: seconds); dst is left unchanged
// then.
func CoverageCurveTo(dst []float64, problems []PassCount) error {
	if err := checkCoverage("coverage", problems, len(dst)); err != nil {
		return err
	}
	coverageCurveInto(dst, problems)
	return nil
}

// coverageCurveInto is CoverageCurveTo on validated arguments.
func coverageCurveInto(dst []float64, problems []PassCount) {
	clear(dst)
	for _, p := range problems {
		addPassAtKCurve(dst, p.N, p.C)
	}
	P := float64(len(problems))
	for i := range dst {
		dst[i] /= P
	}
}

// CoverageBand is a coverage curve with pointwise bootstrap confidence
// intervals, as returned by [CoverageBootstrap]. All three slices have
// length kmax, element k-1 describing coverage at width k.
type CoverageBand struct {
	// Mean is the coverage curve of the test set itself (see
	// [CoverageCurve]), the point estimate.
	Mean []float64
	// Lo and Hi are the lower and upper ends of the percentile bootstrap
	// interval at confidence Level: Lo[k-1] <= Hi[k-1].
	Lo, Hi []float64
	// Level is the confidence level, in (0, 1), and B the number of
	// bootstrap replicates.
	Level float64
	B     int
}

// CoverageBootstrap returns the coverage curve of a test set for
// k = 1..kmax (see [CoverageCurve]) with percentile bootstrap confidence
// intervals over problems, for the uncertainty that comes from the finite
// test set (30 problems for an AIME year).
//
// Each of the b replicates draws len(problems) problems uniformly with
// replacement, using rnd, and computes the coverage curve of that resampled
// test set; each problem keeps its own (N, C) and so its own pass@k curve.
// The same resample serves all k within a replicate. For each k, Lo[k-1] and
// Hi[k-1] are the empirical quantiles at (1-level)/2 and (1+level)/2 of the
// b replicate coverages at k: the empirical quantile at p is the smallest
// replicate value with at least a fraction p of the replicates at or below
// it (the i-th smallest, i = ceil(p·b), as gonum's stat.Empirical). The intervals are pointwise: each holds at its own k, not
// simultaneously over the curve. They treat each problem's pass@k as fixed,
// so they ignore the sampling noise of the N samples within a problem.
//
// The same rnd state gives the same band on every machine. It keeps
// b·kmax + len(problems)·kmax values and takes b·len(problems)·kmax steps;
// b = 1000 to 10000 is usual.
//
// It returns an *[InputError] naming the value for the inputs [CoverageCurve]
// rejects, for b < 1, for level outside (0, 1) or NaN, and for a nil rnd;
// and one wrapping [ErrTooCostly] when b·kmax or len(problems)·kmax exceeds
// 2^24, the module's size cap (memory), or b·len(problems)·kmax exceeds
// 2^30 (time: seconds), before allocating anything.
func CoverageBootstrap(problems []PassCount, kmax, b int, level float64, rnd *rand.Rand) (CoverageBand, error) {
	const what = "coverage bootstrap"
	if kmax > maxSize {
		return CoverageBand{}, costError(what, "kmax", fmt.Sprintf(
			"%d > %d, the longest curve (memory: the curve takes 8·kmax bytes)", kmax, maxSize))
	}
	if err := checkCoverage(what, problems, kmax); err != nil {
		return CoverageBand{}, err
	}
	P := len(problems)
	switch {
	case b < 1:
		return CoverageBand{}, argError(what, "b", fmt.Sprintf("%d < 1 replicates", b))
	case !(level > 0 && level < 1):
		return CoverageBand{}, argError(what, "level", fmt.Sprintf("%v not in (0, 1)", level))
	case rnd == nil:
		return CoverageBand{}, argError(what, "rnd", "nil *rand.Rand")
	case !within(b, kmax, maxSize):
		return CoverageBand{}, costError(what, "b", fmt.Sprintf(
			"b·kmax = %d·%d > %d values, the most held (memory: one value per replicate and width)", b, kmax, maxSize))
	case !within(P, kmax, maxSize):
		return CoverageBand{}, costError(what, "problems", fmt.Sprintf(
			"len·kmax = %d·%d > %d values, the most held (memory: one pass@k curve per problem)", P, kmax, maxSize))
	case !within(b, P*kmax, maxSteps):
		return CoverageBand{}, costError(what, "b", fmt.Sprintf(
			"b·len(problems)·kmax = %d·%d·%d > 2^30 steps (time: seconds)", b, P, kmax))
	}

	// The pass@k curve of every problem, one row per problem.
	curves := make([]float64, P*kmax)
	for i, p := range problems {
		addPassAtKCurve(curves[i*kmax:(i+1)*kmax], p.N, p.C)
	}

	mean := make([]float64, kmax)
	coverageCurveInto(mean, problems)

	// reps[k*b+r] is the coverage at width k+1 of replicate r, summed in
	// acc over the replicate's draws in draw order.
	reps := make([]float64, kmax*b)
	acc := make([]float64, kmax)
	for r := range b {
		clear(acc)
		for range P {
			row := curves[rnd.IntN(P)*kmax:][:kmax]
			for k, v := range row {
				acc[k] += v
			}
		}
		for k, v := range acc {
			reps[k*b+r] = v
		}
	}
	band := CoverageBand{
		Mean:  mean,
		Lo:    make([]float64, kmax),
		Hi:    make([]float64, kmax),
		Level: level,
		B:     b,
	}
	lo, hi := (1-level)/2, (1+level)/2
	for k := range kmax {
		col := reps[k*b : (k+1)*b]
		for r := range col {
			col[r] /= float64(P)
		}
		slices.Sort(col)
		band.Lo[k] = empiricalQuantile(lo, col)
		band.Hi[k] = empiricalQuantile(hi, col)
	}
	return band, nil
}

// empiricalQuantile returns the smallest value of sorted with at least a
// fraction p of the values at or below it, for p in (0, 1): sorted[i-1]
// for the smallest whole i >= p·len(sorted).
func empiricalQuantile(p float64, sorted []float64) float64 {
	i := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(i, 1), len(sorted))-1]
}
