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
