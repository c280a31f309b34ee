package eval

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"spiral/internal/inputerr"
	"spiral/internal/numeric"
)

// maxSize is the module's one size cap: the longest curve a function
// allocates, and the most values a bootstrap keeps.
const maxSize = numeric.MaxSize

// productMax is the most rounded factors PassAtK multiplies. Beyond it
// (both c and k larger) it uses Stirling's series; see passAtKLarge.
const productMax = 1 << 20

// checkPassAtK validates the arguments shared by the pass@k functions: n
// samples of which c are correct, and a width k with 1 <= k <= n. what
// names the computation in the error.
func checkPassAtK(what string, n, c, k int) error {
	arg, msg := passAtKProblem(n, c, k)
	if msg == "" {
		return nil
	}
	v := k
	switch arg {
	case "n":
		v = n
	case "c":
		v = c
	}
	return inputerr.Int("eval: "+what, "", InputError{Field: arg, Problem: -1, Set: -1, Output: -1, Err: errors.New(msg)}, v)
}

// passAtKProblem names the argument that is wrong among n, c and k and
// says why, or returns "" if nothing is. It does not allocate when the
// arguments are valid.
func passAtKProblem(n, c, k int) (arg, msg string) {
	switch {
	case n < 0:
		return "n", fmt.Sprintf("%d < 0 samples", n)
	case c < 0:
		return "c", fmt.Sprintf("%d < 0 correct samples", c)
	case c > n:
		return "c", fmt.Sprintf("%d > n = %d (more correct samples than samples)", c, n)
	case k < 1:
		return "k", fmt.Sprintf("%d < 1", k)
	case k > n:
		return "k", fmt.Sprintf("%d > n = %d: pass@k needs at least k samples", k, n)
	}
	return "", ""
}

// PassAtK returns the unbiased estimator of pass@k, the probability that at
// least one of k samples is correct, from n samples of which c are correct
// (Chen et al., 2021, "Evaluating Large Language Models Trained on Code"):
//
//	pass@k = 1 - C(n-c, k) / C(n, k),
//
// the fraction of the C(n, k) size-k subsets of the n samples that hold at
// least one correct sample. It is unbiased because every size-k subset of
// n independent samples is itself a set of k independent samples.
//
// When c <= 2^20, the ratio of binomials is the product of c factors
//
//	C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (i-k)/i,
//
// as in the Codex paper's reference code, each factor one rounded division,
// so the result is within (2c+1)·2^-53 of the exact value (see
// [PassAtKRat]) for n <= 2^53, within (4c+1)·2^-53 for larger n (whose
// conversion to float64 rounds), and is exactly nondecreasing in k and in
// c. When c > 2^20 and k <= 2^20 it is the same ratio as the product of the
// k factors (n-c-j)/(n-j), j = 0..k-1, with the same bounds in k, exactly
// nondecreasing in k and in c among such arguments. When both exceed 2^20
// the exact value is either below 2^-1075 from 1 (when c·k/n >= 800, and
// the result is 1) or it comes from Stirling's series for the log-gamma
// function, within 2^-48 of the exact value; either way the cost is at most
// 2^20 factors, whatever n is.
//
// Edge cases: c = 0 gives exactly 0; n - c < k (too few incorrect samples
// to fill a subset without a correct one) gives exactly 1.
//
// It returns an *[InputError] naming the value if n < 0, c < 0, c > n,
// k < 1, or k > n. The last one is deliberate: with fewer samples than k
// the estimator is undefined, and the Codex reference code returns 1.0
// there because its shortcut "if n - c < k: return 1.0" is taken even when
// c = 0, reporting an unsolved problem as solved.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkPassAtK("pass@k", n, c, k); err != nil {
		return 0, err
	}
	return passAtK(n, c, k), nil
}

// passAtK is PassAtK on validated arguments.
func passAtK(n, c, k int) float64 {
	switch {
	case c == 0:
		return 0
	case n-c < k:
		return 1
	case c <= productMax:
		q := 1.0
		for j := range c { // i = n-c+1..n, without overflow at n = MaxInt
			i := n - c + 1 + j
			q = float64(q * (float64(i-k) / float64(i)))
		}
		return 1 - q
	case k <= productMax:
		q := 1.0
		for j := range k {
			q = float64(q * (float64(n-c-j) / float64(n-j)))
		}
		return 1 - q
	}
	return passAtKLarge(n, min(c, k), max(c, k))
}

// passAtKLarge returns 1 - C(n-x, u)/C(n, u) (the ratio is symmetric in c
// and k, so u and x are min(c, k) and max(c, k)) for u > 2^20 and
// n - x >= u.
//
// Since each of the u factors (n-x-j)/(n-j) is at most 1 - x/n, the ratio
// q is below exp(-u·x/n); when u·x/n >= 800 that is below 2^-1150, and
// 1 - q rounds to 1. Otherwise u·x < 800 n with u > 2^20, so the
// arguments A = n-x+1, B = n+1, A-u and B-u of
//
//	log q = lgamma(A) - lgamma(A-u) - lgamma(B) + lgamma(B-u)
//
// all exceed n/2 > 2^29, and Stirling's series lgamma(z) =
// (z-1/2) log z - z + log(2π)/2 + 1/(12z) + O(z^-3) gives, with the linear
// terms cancelling,
//
//	log q = u log1p(-x/B) - E(A) + E(B) + φ(A) - φ(A-u) - φ(B) + φ(B-u),
//	E(z)  = u(u+1/2)/z - (z-u-1/2) L(u/z),  L(t) = -log1p(-t) - t,
//	φ(z)  = 1/(12z),
//
// every term computed without cancellation (u/z < 2^-10, so L is its
// series t²/2 + t³/3 + ...). Each term has a relative error of a few
// units of 2^-53 and the terms are at most about |log q| in size, so
// 1 - q = -expm1(log q) is within 2^-48 of the exact value.
func passAtKLarge(n, u, x int) float64 {
	fu, fx, fn := float64(u), float64(x), float64(n)
	if float64(fu*fx)/fn >= 800 {
		return 1
	}
	A, B := float64(n-x+1), fn+1
	Au, Bu := float64(n-x-u+1), float64(n-u+1)
	e := func(z float64) float64 {
		t := fu / z
		// L(t) = sum_{j>=2} t^j/j, t < 2^-10: ten terms reach 2^-100 t².
		l, p := 0.0, t
		for j := 2; j <= 11; j++ {
			p = float64(p * t)
			l += p / float64(j)
		}
		return float64(fu*(fu+0.5))/z - float64((z-fu-0.5)*l)
	}
	phi := 1/(12*A) - 1/(12*Au) - 1/(12*B) + 1/(12*Bu)
	logq := float64(fu*math.Log1p(-fx/B)) - e(A) + e(B) + phi
	return -math.Expm1(logq)
}

// PassAtKRat returns pass@k = 1 - C(n-c, k)/C(n, k) exactly, as a rational
// number: the reference that [PassAtK] approximates, for tests and for
// callers who want exact values. It computes the ratio as the product of
// the min(c, k) factors of PassAtK, exactly, so its cost grows with the
// size of that fraction, min(c, k)·bits(n) bits: it refuses, with an
// *[InputError] wrapping [ErrTooCostly], arguments with min(c, k)·bits(n) >
// 2^17 (combin.MaxExactBits, the module's cap on exact numbers; for
// n = 2^20, min(c, k) > 6241), unless c = 0 (exactly 0) or n - c < k
// (exactly 1). It returns the same errors as PassAtK otherwise.
func PassAtKRat(n, c, k int) (*big.Rat, error) {
	if err := checkPassAtK("exact pass@k", n, c, k); err != nil {
		return nil, err
	}
	switch {
	case c == 0:
		return new(big.Rat), nil
	case n-c < k:
		return big.NewRat(1, 1), nil
	}
	u, x, arg := k, c, "k"
	if c < k {
		u, x, arg = c, k, "c"
	}
	if b := bits.Len(uint(n)); numeric.FallingBits(u, b) > numeric.MaxExactBits {
		return nil, costError("exact pass@k", arg, fmt.Sprintf(
			"min(c, k) = %d factors of up to %d bits (n = %d) make a fraction of more than 2^17 bits (time: reducing it takes seconds); PassAtK gives the float",
			u, b, n))
	}
	// q = (n-x)_u / (n)_u = prod_{j<u} (n-x-j) / (n-j)
	q := numeric.FallingRatio(big.NewInt(int64(n-x)), big.NewInt(int64(n)), u)
	return q.Sub(big.NewRat(1, 1), q), nil
}

// PassAtKCurve returns pass@k for k = 1..kmax from n samples of which c are
// correct: element k-1 is pass@k. It is [PassAtKCurveTo] with a newly
// allocated slice of length kmax, and returns its errors; it also refuses
// kmax > 2^24 (combin.MaxSize, the module's size cap), with an
// *[InputError] wrapping [ErrTooCostly], before allocating anything.
func PassAtKCurve(n, c, kmax int) ([]float64, error) {
	if kmax < 1 {
		return nil, argError("pass@k curve", "kmax", fmt.Sprintf("%d < 1", kmax))
	}
	if err := checkPassAtK("pass@k curve", n, c, kmax); err != nil {
		return nil, err
	}
	if kmax > maxSize {
		return nil, costError("pass@k curve", "kmax", fmt.Sprintf(
			"%d > %d, the longest curve (memory: the curve takes 8·kmax bytes)", kmax, maxSize))
	}
	dst := make([]float64, kmax)
	addPassAtKCurve(dst, n, c)
	return dst, nil
}

// PassAtKCurveTo writes pass@k for k = 1..len(dst) into dst, element k-1
// holding pass@k, from n samples of which c are correct. It does not
// allocate.
//
// The whole curve costs O(len(dst)) through the recurrence on
// q_k = C(n-c, k)/C(n, k),
//
//	q_0 = 1,  q_k = q_{k-1} · (n-c-k+1)/(n-k+1),
//
// each factor one rounded division and each product rounded to float64
// (never fused into a multiply-add, so the curve has the same bits on
// every architecture), so pass@k = 1 - q_k is within (2k+1)·2^-53 of the
// exact value for n <= 2^53 and within (4k+1)·2^-53 beyond; it may differ
// from [PassAtK] (which multiplies c factors instead of k) in the last few
// bits. The curve is exactly nondecreasing in k, with the same edge cases
// as PassAtK: 0 everywhere when c = 0 and exactly 1 for k > n-c.
//
// It returns an *[InputError] naming the value if n < 0, c < 0, c > n,
// len(dst) = 0, or len(dst) > n; dst is left unchanged then.
func PassAtKCurveTo(dst []float64, n, c int) error {
	if len(dst) == 0 {
		return argError("pass@k curve", "dst", "len = 0 < 1")
	}
	if err := checkPassAtK("pass@k curve", n, c, len(dst)); err != nil {
		return err
	}
	clear(dst)
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
		if k > n-c || q == 0 {
			// Every size-k subset holds a correct sample, or q has
			// underflowed: pass@k = 1 from here on.
			for j := i; j < len(dst); j++ {
				dst[j]++
			}
			return
		}
		q = float64(q * (float64(n-c-k+1) / float64(n-k+1)))
		dst[i] += 1 - q
	}
}
