package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := NewPolicy(ModelConfig{Dim: 16, Layers: 1, Heads: 2, Hidden: 32, LearningRate: 3e-3, Seed: 1}, Grammar{MaxWork: 2}.aggregateRowLen(4))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The sampler's log-probabilities are the teacher-forced ones of the same
// outputs, and every output parses under the grammar.
func TestGenerateMatchesSequenceLogProbs(t *testing.T) {
	p := testPolicy(t)
	g := Grammar{MaxWork: 3}
	r := rand.New(rand.NewPCG(1, 2))
	probs := NewProblems(r, 6)
	var prompts [][]int32
	for _, pr := range probs {
		prompts = append(prompts, searchPrompt(pr))
	}
	outs, logps, err := p.Generate(r, prompts, g.searchRowLen(), g)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]Row, len(outs))
	for i, o := range outs {
		if answerOf(o) < 0 || o[len(o)-1] != TokStop || len(o) < 3 || len(o) > g.MaxOutput() {
			t.Fatalf("output %d = %v does not parse", i, o)
		}
		rows[i] = Row{Prompt: prompts[i], Output: o}
	}
	tf, err := p.SequenceLogProbs(rows, g.searchRowLen(), g)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tf {
		if math.Abs(tf[i]-logps[i]) > 1e-4 || logps[i] >= 0 {
			t.Errorf("row %d: sampled log-prob %v, teacher-forced %v", i, logps[i], tf[i])
		}
	}
}

// The loss weights sit exactly on the positions that predict a sampled
// (not forced) output token, and the grammar bias forbids every token the
// grammar does not allow there.
func TestLayoutWeightsAndBias(t *testing.T) {
	g := Grammar{MaxWork: 2}
	prompt := searchPrompt(Problem{3, 9, 1, 4})
	rows := []Row{
		{Prompt: prompt, Output: []int32{7, 8, TokEq, 9, TokStop}}, // two working tokens: "=" forced
		{Prompt: prompt, Output: []int32{TokEq, 9, TokStop}},
	}
	seqLen := g.searchRowLen()
	tokens, bias, targets, weights := layout(rows, seqLen, g, []float32{0.5, -2})
	want := [][]float32{
		// positions 0..10; the prompt has 6 tokens, so position 5 predicts output token 0
		{0, 0, 0, 0, 0, 0.5, 0.5, 0, 0.5, 0, 0},
		{0, 0, 0, 0, 0, -2, -2, 0, 0, 0, 0},
	}
	for r := range rows {
		for p := range seqLen {
			i := r*seqLen + p
			if weights[i] != want[r][p] {
				t.Errorf("row %d position %d: weight %v, want %v", r, p, weights[i], want[r][p])
			}
			if p+1 < len(rows[r].Prompt)+len(rows[r].Output) && targets[i] != tokens[i+1] {
				t.Errorf("row %d position %d: target %d, next token %d", r, p, targets[i], tokens[i+1])
			}
		}
	}
	// Row 0, position 5 predicts the first output token: digits and "=" allowed.
	b := bias[5*VocabSize : 6*VocabSize]
	for v := range VocabSize {
		ok := v < 10 || v == TokEq
		if (b[v] == 0) != ok {
			t.Errorf("first output token %d: bias %v", v, b[v])
		}
	}
	// Row 0, position 7 predicts the forced "=" after two working tokens.
	b = bias[7*VocabSize : 8*VocabSize]
	for v := range VocabSize {
		if (b[v] == 0) != (v == TokEq) {
			t.Errorf("forced token %d: bias %v", v, b[v])
		}
	}
}
