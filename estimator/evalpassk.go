package estimator

import (
	"fmt"
	"math/big"
)

// checkPassAtKArgs validates the arguments shared by the pass@k functions:
// n samples of which c are correct, and a width k with 1 <= k <= n. what
// names the calling function in the error.
func checkPassAtKArgs(what string, n, c, k int) error {
	if msg := passAtKArgsProblem(n, c, k); msg != "" {
		return fmt.Errorf("estimator: %s: %s", what, msg)
	}
	return nil
}

// passAtKArgsProblem describes what is wrong with the pass@k arguments
// (n, c, k), or returns "" if nothing is. It does not allocate when the
// arguments are valid.
func passAtKArgsProblem(n, c, k int) string {
	switch {
	case n < 0:
		return fmt.Sprintf("n = %d < 0 samples", n)
	case c < 0:
		return fmt.Sprintf("c = %d < 0 correct samples", c)
	case c > n:
		return fmt.Sprintf("c = %d > n = %d (more correct samples than samples)", c, n)
	case k < 1:
		return fmt.Sprintf("k = %d < 1", k)
	case k > n:
		return fmt.Sprintf("k = %d > n = %d: pass@k needs at least k samples", k, n)
	}
	return ""
}

// PassAtK returns the unbiased estimator of pass@k, the probability that at
// least one of k samples is correct, from n samples of which c are correct
// (Chen et al., 2021, "Evaluating Large Language Models Trained on Code"):
//
//	pass@k = 1 - C(n-c, k) / C(n, k)
//
// the fraction of the C(n, k) size-k subsets of the n samples that contain at
// least one correct sample. It is unbiased for the pass@k of the model
// because every size-k subset of n independent samples is itself a set of k
// independent samples.
//
// The ratio of binomials is computed as the product of c factors
//
//	C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (1 - k/i) = prod_{i=n-c+1..n} (i-k)/i
//
// as in the Codex paper's reference code, each factor a single rounded
// division, so the result is within about (2c+1) * 2^-53 of the exact value
// (see [PassAtKRat]) and never overflows, however large n is. Computed this
// way the result is exactly nondecreasing in k and in c.
//
// Edge cases: c = 0 gives exactly 0; n - c < k (too few incorrect samples to
// fill a subset without a correct one) gives exactly 1.
//
// It returns an error naming the value if n < 0, c < 0, c > n, k < 1, or
// k > n. The last one is deliberate: with fewer samples than k the estimator
// is undefined, and the Codex reference code (openai/human-eval,
// estimate_pass_at_k) returns 1.0 there because its shortcut "if n - c < k:
// return 1.0" is taken even when c = 0, reporting an unsolved problem as
// solved (human-eval issue #35, MultiPL-E issue #40).
func PassAtK(n, c, k int) (float64, error) {
	if err := checkPassAtKArgs("pass@k", n, c, k); err != nil {
		return 0, err
	}
	return passAtKProduct(n, c, k), nil
}

// passAtKProduct is PassAtK on validated arguments.
func passAtKProduct(n, c, k int) float64 {
	if c == 0 {
		return 0
	}
	if n-c < k {
		return 1
	}
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= float64(i-k) / float64(i)
	}
	return 1 - q
}

// PassAtKRat returns pass@k = 1 - C(n-c, k)/C(n, k) exactly, as a rational
// number computed from big-integer binomial coefficients. It is the
// reference that [PassAtK] approximates, for tests and for callers who want
// exact values; its cost grows with the size of C(n, k) (hundreds of bits
// for n = 256), so it is much slower than PassAtK. It returns the same errors
// as PassAtK.
func PassAtKRat(n, c, k int) (*big.Rat, error) {
	if err := checkPassAtKArgs("pass@k", n, c, k); err != nil {
		return nil, err
	}
	return passAtKBinomialRat(n, c, k), nil
}

// passAtKBinomialRat is PassAtKRat on validated arguments: the naive way,
// through the two binomial coefficients.
func passAtKBinomialRat(n, c, k int) *big.Rat {
	num := new(big.Int).Binomial(int64(n-c), int64(k)) // 0 when n-c < k
	den := new(big.Int).Binomial(int64(n), int64(k))
	q := new(big.Rat).SetFrac(num, den)
	return q.Sub(big.NewRat(1, 1), q)
}

// PassAtKCurve returns pass@k for k = 1..kmax from n samples of which c are
// correct: element k-1 is pass@k. It is [PassAtKCurveTo] with a newly
// allocated slice of length kmax, and returns its errors.
func PassAtKCurve(n, c, kmax int) ([]float64, error) {
	if kmax < 1 {
		return nil, fmt.Errorf("estimator: pass@k curve: kmax = %d < 1", kmax)
	}
	dst := make([]float64, kmax)
	if err := PassAtKCurveTo(dst, n, c); err != nil {
		return nil, err
	}
	return dst, nil
}

// PassAtKCurveTo writes pass@k for k = 1..len(dst) into dst, element k-1
// holding pass@k, from n samples of which c are correct. It does not
// allocate.
//
// The whole curve costs O(len(dst)) through the recurrence on
// q_k = C(n-c, k)/C(n, k),
//
//	q_0 = 1,  q_k = q_{k-1} * (n-c-k+1)/(n-k+1),
//
// each factor one rounded division, so pass@k = 1 - q_k is within about
// (2k+1) * 2^-53 of the exact value; it may differ from [PassAtK] (which
// multiplies c factors instead of k) in the last few bits. The curve is
// exactly nondecreasing in k, with the same edge cases as PassAtK: 0
// everywhere when c = 0 and exactly 1 for k > n-c.
//
// It returns an error naming the value if n < 0, c < 0, c > n, len(dst) = 0,
// or len(dst) > n; dst is left unchanged then.
func PassAtKCurveTo(dst []float64, n, c int) error {
	if len(dst) == 0 {
		return fmt.Errorf("estimator: pass@k curve: kmax = len(dst) = 0 < 1")
	}
	if err := checkPassAtKArgs("pass@k curve", n, c, len(dst)); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = 0
	}
	addPassAtKCurve(dst, n, c)
	return nil
}

// addPassAtKCurve adds pass@k for k = 1..len(dst) to dst[k-1], on validated
// arguments (1 <= len(dst) <= n, 0 <= c <= n).
func addPassAtKCurve(dst []float64, n, c int) {
	if c == 0 {
		return
	}
	q := 1.0
	for i := range dst {
		k := i + 1
		if k > n-c {
			// Every size-k subset holds a correct sample: pass@k = 1 from
			// here on.
			for j := i; j < len(dst); j++ {
				dst[j]++
			}
			return
		}
		q *= float64(n-c-k+1) / float64(n-k+1)
		dst[i] += 1 - q
	}
}
