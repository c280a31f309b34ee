package estimator

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// PassCount is the evaluation record of one test problem: N samples drawn
// from the model, C of them correct.
type PassCount struct {
	N int // samples drawn
	C int // correct samples among them, 0 <= C <= N
}

// checkCoverageArgs validates a test set for a coverage curve of width kmax:
// at least one problem, each with valid counts and at least kmax samples.
func checkCoverageArgs(problems []PassCount, kmax int) error {
	if len(problems) == 0 {
		return fmt.Errorf("estimator: coverage: no problems")
	}
	if kmax < 1 {
		return fmt.Errorf("estimator: coverage: kmax = %d < 1", kmax)
	}
	for i, p := range problems {
		if msg := passAtKArgsProblem(p.N, p.C, kmax); msg != "" {
			return fmt.Errorf("estimator: coverage: problem %d: %s", i, msg)
		}
	}
	return nil
}

// CoverageCurve returns the coverage curve of a test set: element k-1 is the
// mean over the problems of pass@k (see [PassAtK]) for k = 1..kmax,
//
//	coverage(k) = (1/P) * sum_{i=1..P} [1 - C(N_i - C_i, k) / C(N_i, k)],
//
// each problem with its own number of samples N_i and of correct samples
// C_i. It is [CoverageCurveTo] with a newly allocated slice of length kmax,
// and returns its errors.
func CoverageCurve(problems []PassCount, kmax int) ([]float64, error) {
	if err := checkCoverageArgs(problems, kmax); err != nil {
		return nil, err
	}
	dst := make([]float64, kmax)
	coverageCurveInto(dst, problems)
	return dst, nil
}

// CoverageCurveTo writes the coverage curve of a test set for
// k = 1..len(dst) into dst, element k-1 holding the mean pass@k over the
// problems (see [CoverageCurve]). It does not allocate, and costs
// O(len(problems) * len(dst)): each problem's pass@k curve comes from the
// recurrence of [PassAtKCurveTo]. The curve is exactly nondecreasing in k
// and within about (2k+3) * 2^-53 of the exact mean.
//
// It returns an error naming the value if problems is empty, len(dst) = 0,
// or some problem has N < 0, C < 0, C > N, or N < len(dst) (pass@k needs at
// least k samples of every problem: a curve to k = 256 needs 256 samples per
// problem); dst is left unchanged then.
func CoverageCurveTo(dst []float64, problems []PassCount) error {
	if err := checkCoverageArgs(problems, len(dst)); err != nil {
		return err
	}
	coverageCurveInto(dst, problems)
	return nil
}

// coverageCurveInto is CoverageCurveTo on validated arguments.
func coverageCurveInto(dst []float64, problems []PassCount) {
	for i := range dst {
		dst[i] = 0
	}
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
// Hi[k-1] are the empirical quantiles (gonum's [stat.Empirical]: the
// smallest replicate value with at least that fraction of replicates at or
// below it) at (1-level)/2 and (1+level)/2 of the b replicate coverages at
// k. The intervals are pointwise: each holds at its own k, not
// simultaneously over the curve. They treat each problem's pass@k as fixed,
// so they ignore the sampling noise of the N samples within a problem.
//
// The same rnd state gives the same band on every machine. Memory is
// O(b * kmax + len(problems) * kmax) and time O(b * len(problems) * kmax);
// b = 1000 to 10000 is usual.
//
// It returns an error naming the value for the inputs [CoverageCurve]
// rejects, for b < 1, for level outside (0, 1) or NaN, and for a nil rnd.
func CoverageBootstrap(problems []PassCount, kmax, b int, level float64, rnd *rand.Rand) (CoverageBand, error) {
	if err := checkCoverageArgs(problems, kmax); err != nil {
		return CoverageBand{}, err
	}
	switch {
	case b < 1:
		return CoverageBand{}, fmt.Errorf("estimator: coverage bootstrap: b = %d < 1 replicates", b)
	case !(level > 0 && level < 1):
		return CoverageBand{}, fmt.Errorf("estimator: coverage bootstrap: level = %v not in (0, 1)", level)
	case rnd == nil:
		return CoverageBand{}, fmt.Errorf("estimator: coverage bootstrap: nil *rand.Rand")
	}
	P := len(problems)

	// The pass@k curve of every problem, one row per problem.
	curves := make([]float64, P*kmax)
	for i, p := range problems {
		addPassAtKCurve(curves[i*kmax:(i+1)*kmax], p.N, p.C)
	}

	mean := make([]float64, kmax)
	coverageCurveInto(mean, problems)

	// reps[k-1][r] is the coverage at width k of replicate r.
	reps := make([]float64, kmax*b)
	for r := range b {
		for range P {
			row := curves[rnd.IntN(P)*kmax:]
			for k := range kmax {
				reps[k*b+r] += row[k]
			}
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
		band.Lo[k] = stat.Quantile(lo, stat.Empirical, col, nil)
		band.Hi[k] = stat.Quantile(hi, stat.Empirical, col, nil)
	}
	return band, nil
}
