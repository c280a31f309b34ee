package main

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// A Row is one sequence of the policy: a prompt and the output generated
// after it (ending with the stop token).
type Row struct {
	Prompt, Output []int32
}

// A Part is rows of one shape with a coefficient each: the loss of a step is
// -sum over parts, rows r and output tokens t of Coef[r] log pi(t | prefix).
// Coef carries the row's advantage, its role weight and the batch
// normalisation.
type Part struct {
	Rows    []Row
	Coef    []float32
	SeqLen  int
	Grammar Grammar
}

// disallowed is the logit bias of a token the grammar forbids.
const disallowed = -1e9

// layout pads rows to seqLen and returns the model's inputs: tokens [R, T],
// the grammar bias [R, T, V] at every position that predicts an output
// token, the targets [R, T] (the next token) and the per-position loss
// weights [R, T] (coef[r] where the position predicts a sampled output
// token, 0 on prompts, padding and forced tokens). coef may be nil.
func layout(rows []Row, seqLen int, g Grammar, coef []float32) (tokens []int32, bias []float32, targets []int32, weights []float32) {
	n := len(rows)
	tokens = make([]int32, n*seqLen)
	targets = make([]int32, n*seqLen)
	bias = make([]float32, n*seqLen*VocabSize)
	weights = make([]float32, n*seqLen)
	var mask [VocabSize]bool
	for r, row := range rows {
		if len(row.Prompt)+len(row.Output) > seqLen {
			panic(fmt.Sprintf("lmtrain: row of %d tokens in a layout of %d", len(row.Prompt)+len(row.Output), seqLen))
		}
		base := r * seqLen
		for t := range seqLen {
			tokens[base+t] = TokPad
			targets[base+t] = TokPad
		}
		copy(tokens[base:], row.Prompt)
		copy(tokens[base+len(row.Prompt):], row.Output)
		copy(targets[base:], tokens[base+1:base+seqLen])
		for j := range row.Output {
			pos := base + len(row.Prompt) + j - 1 // the position predicting output token j
			forced := g.allowed(row.Prompt, row.Output[:j], &mask)
			for v, ok := range mask {
				if !ok {
					bias[pos*VocabSize+v] = disallowed
				}
			}
			if !forced && coef != nil {
				weights[pos] = coef[r]
			}
		}
	}
	return tokens, bias, targets, weights
}

// Generate samples one output for each prompt at temperature 1, under the
// grammar, until every output has its stop token. It returns the outputs
// and the log-probability of each (the sum over its sampled tokens; forced
// tokens contribute 0). All rows go through the model together, one
// forward pass per generated position, padded to seqLen.
func (p *Policy) Generate(r *rand.Rand, prompts [][]int32, seqLen int, g Grammar) ([][]int32, []float64, error) {
	n := len(prompts)
	outs := make([][]int32, n)
	logps := make([]float64, n)
	tokens := make([]int32, n*seqLen)
	bias := make([]float32, n*seqLen*VocabSize)
	var mask [VocabSize]bool
	for step := 0; ; step++ {
		active := false
		needModel := false
		for i := range n {
			out := outs[i]
			if len(out) > 0 && out[len(out)-1] == TokStop {
				continue
			}
			active = true
			if forced := g.allowed(prompts[i], out, &mask); forced {
				if len(out)%2 == 1 {
					outs[i] = append(out, g.noisyCheck(r, prompts[i], out))
					continue
				}
				for v, ok := range mask {
					if ok {
						outs[i] = append(out, int32(v))
					}
				}
				continue
			}
			needModel = true
		}
		if !active {
			return outs, logps, nil
		}
		if !needModel {
			continue
		}
		clear(bias)
		for i := range n {
			row := tokens[i*seqLen : (i+1)*seqLen]
			for t := range row {
				row[t] = TokPad
			}
			if len(prompts[i])+g.MaxOutput() > seqLen {
				return nil, nil, fmt.Errorf("prompt %d: %d tokens do not fit rows of %d with an output of up to %d", i, len(prompts[i]), seqLen, g.MaxOutput())
			}
			copy(row, prompts[i])
			copy(row[len(prompts[i]):], outs[i])
			g.allowed(prompts[i], outs[i], &mask)
			pos := i*seqLen + len(prompts[i]) + len(outs[i]) - 1
			for v, ok := range mask {
				if !ok {
					bias[pos*VocabSize+v] = disallowed
				}
			}
		}
		lp, err := p.LogProbs(tokens, bias, n, seqLen)
		if err != nil {
			return nil, nil, err
		}
		for i := range n {
			out := outs[i]
			if len(out) > 0 && out[len(out)-1] == TokStop {
				continue
			}
			if g.allowed(prompts[i], out, &mask) {
				continue // forced: appended above, next round
			}
			pos := i*seqLen + len(prompts[i]) + len(out) - 1
			dist := lp[pos*VocabSize : (pos+1)*VocabSize]
			v := sampleLog(r, dist)
			outs[i] = append(out, int32(v))
			logps[i] += float64(dist[v])
		}
	}
}

// sampleLog draws an index with probability exp(logp[i]).
func sampleLog(r *rand.Rand, logp []float32) int {
	u := r.Float64()
	last := 0
	for v, l := range logp {
		if l <= disallowed/2 {
			continue
		}
		last = v
		u -= math.Exp(float64(l))
		if u < 0 {
			return v
		}
	}
	return last
}

// SequenceLogProbs returns, for each row, log pi(output | prompt) under the
// grammar: the teacher-forced sum of the log-probabilities of the output's
// sampled tokens.
func (p *Policy) SequenceLogProbs(rows []Row, seqLen int, g Grammar) ([]float64, error) {
	ones := make([]float32, len(rows))
	for i := range ones {
		ones[i] = 1
	}
	tokens, bias, targets, weights := layout(rows, seqLen, g, ones)
	lp, err := p.LogProbs(tokens, bias, len(rows), seqLen)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(rows))
	for r := range rows {
		for t := range seqLen {
			i := r*seqLen + t
			if weights[i] != 0 {
				out[r] += float64(lp[i*VocabSize+int(targets[i])])
			}
		}
	}
	return out, nil
}
