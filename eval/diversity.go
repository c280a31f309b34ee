package eval

import (
	"fmt"
	"math"
)

// AnswerEntropy returns the entropy in bits of the empirical distribution
// of a problem's answers: with m distinct answers, answer a occurring c_a
// times among n = len(answers),
//
//	H = -sum_a (c_a/n) log2(c_a/n),
//
// 0 when every answer is the same and log2(n) when all differ. Answers are
// equal when == says so (each float NaN is an answer of its own), and the
// terms are added in order of each answer's first occurrence, so the same
// answers give the same bits (math.Log2's last bits may differ between
// architectures). It is the plug-in estimate: from n samples it is biased
// low, by about (m-1)/(2n ln 2) bits, so compare entropies only between
// equal n. It costs O(n) time and memory, and returns an *[InputError] for
// no answers, and one wrapping [ErrTooCostly] for more than 2^24 answers.
func AnswerEntropy[T comparable](answers []T) (float64, error) {
	if len(answers) == 0 {
		return 0, argError("answer entropy", "answers", "no answers")
	}
	if len(answers) > maxSize {
		return 0, costError("answer entropy", "answers", fmt.Sprintf("%d answers > 2^24 (memory)", len(answers)))
	}
	_, counts := tallyAnswers(answers, nil)
	n := float64(len(answers))
	h := 0.0
	for _, c := range counts {
		if int(n) == c {
			return 0, nil
		}
		f := float64(c) / n
		h -= f * math.Log2(f)
	}
	return h, nil
}
