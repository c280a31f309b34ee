package main

import "math/rand/v2"

// The vocabulary: the ten digits, then the markers.
const (
	TokEq        = 10 // "=": ends the working tokens; the next token is the answer
	TokSep       = 11 // separates the problem, the candidates and the output
	TokSearch    = 12 // first token of a search prompt
	TokAggregate = 13 // first token of an aggregation prompt
	TokStop      = 14 // the stop token: ends every output
	TokPad       = 15 // padding after a row's last token
	VocabSize    = 16
)

// ProblemDigits is the number of digits of a problem.
const ProblemDigits = 4

// A Problem is ProblemDigits digits; its answer is the largest of them.
type Problem [ProblemDigits]int32

// Answer is the problem's one correct answer, its largest digit.
func (p Problem) Answer() int32 { return max(p[0], p[1], p[2], p[3]) }

// NewProblems draws n problems, each digit uniform in 0..9.
func NewProblems(r *rand.Rand, n int) []Problem {
	ps := make([]Problem, n)
	for i := range ps {
		for j := range ps[i] {
			ps[i][j] = int32(r.IntN(10))
		}
	}
	return ps
}

// A Grammar is the form of every output (a search trace or an aggregation
// output):
//
//	output = digit{0,MaxWork} "=" digit stop
//
// The digits before "=" are free working tokens, the digit after it is the
// answer. Sampling enforces the grammar by masking the logits, so every
// output parses and its length (working tokens + 3, at most MaxOutput) is
// the policy's choice.
type Grammar struct {
	MaxWork int
}

// MaxOutput is the longest output in tokens: MaxWork working digits, "=",
// the answer digit and the stop token.
func (g Grammar) MaxOutput() int { return g.MaxWork + 3 }

// allowed reports which tokens may follow the output prefix out (the tokens
// generated so far) and whether the next token is forced (only one allowed).
func (g Grammar) allowed(out []int32, mask *[VocabSize]bool) (forced bool) {
	*mask = [VocabSize]bool{}
	eq := -1
	for i, t := range out {
		if t == TokEq {
			eq = i
		}
	}
	switch {
	case eq < 0:
		if len(out) < g.MaxWork {
			for d := range 10 {
				mask[d] = true
			}
		}
		mask[TokEq] = true
		return len(out) >= g.MaxWork
	case eq == len(out)-1:
		for d := range 10 {
			mask[d] = true
		}
		return false
	default:
		mask[TokStop] = true
		return true
	}
}

// answerOf is the answer digit of a complete output, or -1 when the output
// does not parse.
func answerOf(out []int32) int32 {
	for i, t := range out {
		if t == TokEq && i+1 < len(out) && out[i+1] < 10 {
			return out[i+1]
		}
	}
	return -1
}

// searchPrompt is the prompt of a search trace: TokSearch, the digits,
// TokSep.
func searchPrompt(p Problem) []int32 {
	return append(append([]int32{TokSearch}, p[:]...), TokSep)
}

// aggregatePrompt is the prompt of an aggregation call: TokAggregate, the
// digits, then each candidate trace (without its stop token) after a
// TokSep, in the order given, and a final TokSep.
func aggregatePrompt(p Problem, candidates [][]int32) []int32 {
	s := append([]int32{TokAggregate}, p[:]...)
	for _, c := range candidates {
		s = append(s, TokSep)
		s = append(s, c[:len(c)-1]...)
	}
	return append(s, TokSep)
}

// Lengths of the padded rows: a search row holds a prompt and an output, an
// aggregation row a prompt with n candidates of at most MaxOutput-1 tokens
// each and an output.
func (g Grammar) searchRowLen() int { return ProblemDigits + 2 + g.MaxOutput() }
func (g Grammar) aggregateRowLen(n int) int {
	return ProblemDigits + 1 + n*g.MaxOutput() + 1 + g.MaxOutput()
}

// demoTrace is a search trace of the base model the policy is warmed up
// on: 0..MaxWork working tokens (the running maxima of the first digits),
// then an answer that is right with probability correct and otherwise
// another digit of the problem (or, for a problem of equal digits, a random
// digit).
func (g Grammar) demoTrace(r *rand.Rand, p Problem, correct float64) []int32 {
	work := r.IntN(min(g.MaxWork, ProblemDigits-1) + 1)
	out := make([]int32, 0, g.MaxOutput())
	m := p[0]
	for i := range work {
		m = max(m, p[i+1])
		out = append(out, m)
	}
	ans := p.Answer()
	if r.Float64() >= correct {
		var wrong []int32
		for _, d := range p {
			if d != ans {
				wrong = append(wrong, d)
			}
		}
		if len(wrong) == 0 {
			ans = (ans + 1 + int32(r.IntN(9))) % 10
		} else {
			ans = wrong[r.IntN(len(wrong))]
		}
	}
	return append(out, TokEq, ans, TokStop)
}

// demoAggregation is the base model's aggregation output: the answer of a
// uniformly chosen candidate, with no working tokens.
func demoAggregation(r *rand.Rand, candidates [][]int32) []int32 {
	return []int32{TokEq, answerOf(candidates[r.IntN(len(candidates))]), TokStop}
}
