package main

import "math/rand/v2"

// The vocabulary: the ten digit values, a name for each pair of positions,
// the nineteen numbers 0..18 (a problem's target), the tool's two replies,
// the markers, and a token for each checked candidate (a pair and its
// check) as an aggregation prompt shows it.
const (
	TokPair0     = 10 // TokPair0+id names the pair of positions numbered id (see pairOf)
	TokSum0      = 25 // TokSum0+s is the target s, 0 <= s <= 18
	TokHit       = 44 // the tool's reply: the proposed pair sums to the target
	TokMiss      = 45 // the tool's reply: it does not
	TokSep       = 46 // separates the problem, the candidates and the output
	TokSearch    = 47 // first token of a search prompt
	TokAggregate = 48 // first token of an aggregation prompt
	TokStop      = 49 // the stop token: ends every output
	TokPad       = 50 // padding after a row's last token
	TokCand0     = 51 // TokCand0+2*id+hit shows a candidate: pair id, checked (hit 1: a hit)
	VocabSize    = TokCand0 + 2*ProblemPairs
)

// ProblemDigits is the number of digits of a problem; a problem has
// ProblemPairs pairs of positions.
const (
	ProblemDigits = 4
	ProblemPairs  = ProblemDigits * (ProblemDigits - 1) / 2
)

// A Problem is ProblemDigits digits and a target T such that exactly one
// pair of positions i < j has D[i] + D[j] = T. Its answer is that pair.
type Problem struct {
	D      [ProblemDigits]int8
	Target int8
}

// pairID numbers the unordered pair {i, j}, i != j, from 0 to
// ProblemPairs-1 in the order (0,1), (0,2), ..., (4,5).
func pairID(i, j int) int32 {
	if i > j {
		i, j = j, i
	}
	return int32(i*ProblemDigits - i*(i+1)/2 + j - i - 1)
}

// pairOf is the pair of positions numbered id.
func pairOf(id int32) (i, j int) {
	for i = 0; ; i++ {
		if n := int32(ProblemDigits - 1 - i); id < n {
			return i, i + 1 + int(id)
		} else {
			id -= n
		}
	}
}

// Answer is the problem's one correct pair.
func (p Problem) Answer() int32 {
	for i := range ProblemDigits {
		for j := i + 1; j < ProblemDigits; j++ {
			if p.D[i]+p.D[j] == p.Target {
				return pairID(i, j)
			}
		}
	}
	return -1
}

// key is the problem as one number, for telling problems apart.
func (p Problem) key() int64 {
	k := int64(p.Target)
	for _, d := range p.D {
		k = k*10 + int64(d)
	}
	return k
}

// newProblem draws the digits uniformly and the target as the sum of a
// uniformly chosen pair, again until exactly one pair sums to the target.
func newProblem(r *rand.Rand) Problem {
	for {
		var p Problem
		for i := range p.D {
			p.D[i] = int8(r.IntN(10))
		}
		i := r.IntN(ProblemDigits)
		j := (i + 1 + r.IntN(ProblemDigits-1)) % ProblemDigits
		p.Target = p.D[i] + p.D[j]
		n := 0
		for a := range ProblemDigits {
			for b := a + 1; b < ProblemDigits; b++ {
				if p.D[a]+p.D[b] == p.Target {
					n++
				}
			}
		}
		if n == 1 {
			return p
		}
	}
}

// NewProblems draws n problems, none of them in exclude (nil: no
// exclusions).
func NewProblems(r *rand.Rand, n int, exclude map[int64]bool) []Problem {
	ps := make([]Problem, 0, n)
	for len(ps) < n {
		p := newProblem(r)
		if !exclude[p.key()] {
			ps = append(ps, p)
		}
	}
	return ps
}

// A Grammar is the form of every output (a search trace or an aggregation
// output): one to MaxPairs proposals, then the stop token,
//
//	output = (pair check){1,MaxPairs} stop
//
// A proposal names a pair of positions in one token; the check that
// follows is forced, as a tool's reply would be: TokHit when the pair's
// digits sum to the target, TokMiss otherwise. Finding the pair is the
// policy's work (a trace commits to one of 15 pairs, and which one sums to
// the target takes comparing pairs of digits, which a small model does
// not do in one step); checking a proposal is one token for whoever reads
// it. The last proposal is the output's answer. With MaxPairs = 2 a trace
// has room to propose a pair, read the check, and propose another.
// Sampling enforces the grammar by masking the logits, so every output
// parses; the number of proposals is the policy's choice.
//
// Noise is the probability e that the tool's reply is wrong: each check is
// drawn independently, the true reply with probability 1-e and the other
// one with probability e (Generate draws it). With e = 0 the check is the
// truth and no random number is drawn for it.
type Grammar struct {
	MaxPairs int
	Noise    float64
}

// MaxOutput is the longest output in tokens: two per proposal and the
// stop token.
func (g Grammar) MaxOutput() int { return 2*g.MaxPairs + 1 }

// problemOf reads the problem from a prompt (search or aggregation): the
// marker, the digits, the target.
func problemOf(prompt []int32) Problem {
	var p Problem
	for i := range p.D {
		p.D[i] = int8(prompt[1+i])
	}
	p.Target = int8(prompt[1+ProblemDigits] - TokSum0)
	return p
}

// allowed reports which tokens may follow the output prefix out (the tokens
// generated so far) after prompt, and whether the next token is forced
// (only one allowed).
func (g Grammar) allowed(prompt, out []int32, mask *[VocabSize]bool) (forced bool) {
	*mask = [VocabSize]bool{}
	n := len(out)
	if n > 0 && out[n-1] == TokStop {
		return false
	}
	if n%2 == 1 {
		if g.Noise > 0 {
			mask[TokHit], mask[TokMiss] = true, true
		} else {
			mask[checkToken(problemOf(prompt), out[n-1]-TokPair0)] = true
		}
		return true
	}
	if n/2 < g.MaxPairs {
		for id := range ProblemPairs {
			mask[TokPair0+id] = true
		}
	}
	if n > 0 {
		mask[TokStop] = true
	}
	return n/2 >= g.MaxPairs
}

// checkToken is the tool's reply to proposing pair id of p.
func checkToken(p Problem, id int32) int32 {
	i, j := pairOf(id)
	if p.D[i]+p.D[j] == p.Target {
		return TokHit
	}
	return TokMiss
}

// noisyCheck draws the tool's reply to the last proposal of out (a pair
// token): the true check with probability 1-g.Noise, else the other one.
func (g Grammar) noisyCheck(r *rand.Rand, prompt, out []int32) int32 {
	c := checkToken(problemOf(prompt), out[len(out)-1]-TokPair0)
	if g.Noise > 0 && r.Float64() < g.Noise {
		return TokHit + TokMiss - c
	}
	return c
}

// answerOf is the pair of the last proposal of an output, or -1 when it
// has none.
func answerOf(out []int32) int32 {
	n := len(out)
	if n > 0 && out[n-1] == TokStop {
		n--
	}
	if n < 2 {
		return -1
	}
	return out[n-2] - TokPair0
}

// lastProposal is the last proposal of a complete output: its pair and the
// check.
func lastProposal(out []int32) []int32 {
	n := len(out) - 1
	return out[n-2 : n]
}

// candidateToken is the token that shows a complete output in an
// aggregation prompt: its last proposal's pair and check in one token.
func candidateToken(out []int32) int32 {
	last := lastProposal(out)
	hit := int32(0)
	if last[1] == TokHit {
		hit = 1
	}
	return TokCand0 + 2*(last[0]-TokPair0) + hit
}

// searchPrompt is the prompt of a search trace: TokSearch, the digits, the
// target, TokSep.
func searchPrompt(p Problem) []int32 {
	s := make([]int32, 0, ProblemDigits+3)
	s = append(s, TokSearch)
	for _, d := range p.D {
		s = append(s, int32(d))
	}
	return append(s, TokSum0+int32(p.Target), TokSep)
}

// aggregatePrompt is the prompt of an aggregation call: TokAggregate, the
// digits, the target, TokSep, then one token per candidate (its last
// proposal's pair and check, candidateToken) in the order given, and a
// final TokSep. Reading a candidate's check is reading one token; finding
// the pair is not.
func aggregatePrompt(p Problem, candidates [][]int32) []int32 {
	s := searchPrompt(p)
	s[0] = TokAggregate
	for _, c := range candidates {
		s = append(s, candidateToken(c))
	}
	return append(s, TokSep)
}

// Lengths of the padded rows: a search row holds a prompt and an output, an
// aggregation row a prompt with n candidates and an output.
func (g Grammar) searchRowLen() int { return ProblemDigits + 3 + g.MaxOutput() }
func (g Grammar) aggregateRowLen(n int) int {
	return ProblemDigits + 3 + n + 1 + g.MaxOutput()
}

// proposal is the output tokens proposing pair id of p.
func proposal(p Problem, id int32) []int32 {
	return []int32{TokPair0 + id, checkToken(p, id)}
}

// demoTrace is a search trace of the base model the policy is warmed up on:
// a proposal that is the right pair with probability correct and otherwise
// a uniformly chosen wrong one; a second proposal (a fresh draw of the same
// kind) follows with probability again when the grammar allows it. The
// base model neither reads the check nor knows when to stop.
func (g Grammar) demoTrace(r *rand.Rand, p Problem, correct, again float64) []int32 {
	out := make([]int32, 0, g.MaxOutput())
	for k := 0; k < g.MaxPairs; k++ {
		if k > 0 && r.Float64() >= again {
			break
		}
		id := p.Answer()
		if r.Float64() >= correct {
			id = (id + 1 + int32(r.IntN(ProblemPairs-1))) % ProblemPairs
		}
		out = append(out, proposal(p, id)...)
	}
	return append(out, TokStop)
}

// demoAggregation is the base model's aggregation output: with
// probability check, the last proposal of a candidate whose check is a hit
// (when one is), otherwise that of a uniformly chosen candidate, repeated.
// A base model with check > 0 reads the checks a little, as a pretrained
// model might; training has that to build on.
func demoAggregation(r *rand.Rand, candidates [][]int32, check float64) []int32 {
	c := lastProposal(candidates[r.IntN(len(candidates))])
	if r.Float64() < check {
		for _, cand := range candidates {
			if lastProposal(cand)[1] == TokHit {
				c = lastProposal(cand)
			}
		}
	}
	return append(append([]int32{}, c...), TokStop)
}
