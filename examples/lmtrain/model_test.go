package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := NewPolicy(ModelConfig{Dim: 16, Layers: 1, Heads: 2, Hidden: 32, LearningRate: 3e-3, Seed: 1}, Grammar{MaxPairs: 1}.aggregateRowLen(4))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The sampler's log-probabilities are the teacher-forced ones of the same
// outputs, and every output parses under the grammar.
func TestGenerateMatchesSequenceLogProbs(t *testing.T) {
	p := testPolicy(t)
	g := Grammar{MaxPairs: 2}
	r := rand.New(rand.NewPCG(1, 2))
	probs := NewProblems(r, 6, nil)
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
		if answerOf(o) < 0 || o[len(o)-1] != TokStop || (len(o) != 3 && len(o) != 5) {
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
	g := Grammar{MaxPairs: 2}
	p := Problem{D: [ProblemDigits]int8{3, 9, 1, 4}, Target: 13} // only 9 + 4
	if p.Answer() != pairID(1, 3) {
		t.Fatalf("answer %d", p.Answer())
	}
	prompt := searchPrompt(p)
	miss, hit := TokPair0+pairID(0, 1), TokPair0+pairID(3, 1)
	rows := []Row{
		{Prompt: prompt, Output: []int32{miss, TokMiss, hit, TokHit, TokStop}},
		{Prompt: prompt, Output: []int32{hit, TokHit, TokStop}},
	}
	for _, r := range rows {
		if answerOf(r.Output) != p.Answer() {
			t.Errorf("answer of %v: %d", r.Output, answerOf(r.Output))
		}
	}
	seqLen := g.searchRowLen()
	tokens, bias, targets, weights := layout(rows, seqLen, g, []float32{0.5, -2})
	// The prompt has 7 tokens, so position 6+j predicts output token j:
	// the checks are forced, and so is the stop after a second proposal.
	want := [][]float32{
		{0, 0, 0, 0, 0, 0, 0.5, 0, 0.5, 0, 0, 0},
		{0, 0, 0, 0, 0, 0, -2, 0, -2, 0, 0, 0},
	}
	for r := range rows {
		for pos := range seqLen {
			i := r*seqLen + pos
			if weights[i] != want[r][pos] {
				t.Errorf("row %d position %d: weight %v, want %v", r, pos, weights[i], want[r][pos])
			}
			if pos+1 < len(rows[r].Prompt)+len(rows[r].Output) && targets[i] != tokens[i+1] {
				t.Errorf("row %d position %d: target %d, next token %d", r, pos, targets[i], tokens[i+1])
			}
		}
	}
	allowedAt := func(pos int, ok func(v int) bool) {
		t.Helper()
		b := bias[pos*VocabSize : (pos+1)*VocabSize]
		for v := range VocabSize {
			if (b[v] == 0) != ok(v) {
				t.Errorf("position %d, token %d: bias %v", pos, v, b[v])
			}
		}
	}
	isPair := func(v int) bool { return v >= TokPair0 && v < TokPair0+ProblemPairs }
	allowedAt(6, isPair)                                                       // the first proposal
	allowedAt(7, func(v int) bool { return v == TokMiss })                     // 3 + 9 != 13: forced
	allowedAt(8, func(v int) bool { return isPair(v) || v == TokStop })        // propose again or stop
	allowedAt(9, func(v int) bool { return v == TokHit })                      // 9 + 4 = 13: forced
	allowedAt(10, func(v int) bool { return v == TokStop })                    // no room for a third
	allowedAt(seqLen+8, func(v int) bool { return isPair(v) || v == TokStop }) // row 1 after its hit
}

// pairID and pairOf number the 15 pairs 0..14 and invert each other.
func TestPairIDs(t *testing.T) {
	seen := map[int32]bool{}
	for i := range ProblemDigits {
		for j := range ProblemDigits {
			if i == j {
				continue
			}
			id := pairID(i, j)
			a, b := pairOf(id)
			if id < 0 || id >= ProblemPairs || a != min(i, j) || b != max(i, j) {
				t.Errorf("pairID(%d, %d) = %d, pairOf = %d, %d", i, j, id, a, b)
			}
			seen[id] = true
		}
	}
	if len(seen) != ProblemPairs {
		t.Errorf("%d ids", len(seen))
	}
}

// Every problem has exactly one pair summing to its target, and the
// training stream never draws a test problem.
func TestProblems(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	test := NewProblems(r, 200, nil)
	exclude := map[int64]bool{}
	for _, p := range test {
		exclude[p.key()] = true
		n := 0
		for i := range ProblemDigits {
			for j := i + 1; j < ProblemDigits; j++ {
				if p.D[i]+p.D[j] == p.Target {
					n++
				}
			}
		}
		if n != 1 || p.Answer() < 0 {
			t.Fatalf("%v: %d pairs", p, n)
		}
	}
	s := problemStream{seed: 1, perStep: 50, exclude: exclude}
	for step := range 40 {
		for _, p := range s.step(step) {
			if exclude[p.key()] {
				t.Fatalf("step %d draws test problem %v", step, p)
			}
		}
	}
}

// With tool noise e every check is wrong independently with probability e;
// the sampler's log-probabilities still leave the checks out.
func TestNoisyChecks(t *testing.T) {
	p := testPolicy(t)
	r := rand.New(rand.NewPCG(3, 4))
	probs := NewProblems(r, 40, nil)
	for _, e := range []float64{0, 0.25} {
		g := Grammar{MaxPairs: 2, Noise: e}
		var prompts [][]int32
		var rows []Row
		for _, pr := range probs {
			for range 25 {
				prompts = append(prompts, searchPrompt(pr))
			}
		}
		outs, logps, err := p.Generate(r, prompts, g.searchRowLen(), g)
		if err != nil {
			t.Fatal(err)
		}
		wrong, checks := 0, 0
		for i, out := range outs {
			pr := probs[i/25]
			for j := 1; j < len(out); j += 2 {
				checks++
				if out[j] != checkToken(pr, out[j-1]-TokPair0) {
					wrong++
				}
			}
			rows = append(rows, Row{Prompt: prompts[i], Output: out})
		}
		rate := float64(wrong) / float64(checks)
		se := math.Sqrt(e * (1 - e) / float64(checks))
		if e == 0 && wrong != 0 || math.Abs(rate-e) > 4*se {
			t.Errorf("e = %v: %d of %d checks wrong", e, wrong, checks)
		}
		lp, err := p.SequenceLogProbs(rows, g.searchRowLen(), g)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lp {
			if math.Abs(lp[i]-logps[i]) > 1e-4 {
				t.Fatalf("e = %v, output %d: sampled log-probability %v, teacher-forced %v", e, i, logps[i], lp[i])
			}
		}
	}
}
