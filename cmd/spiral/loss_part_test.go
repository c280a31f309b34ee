package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"spiral/loss"
)

// TestLossParts: lines with a scale are parts of one batch, written with
// loss.PartCoefficients; two micro-batches of unequal counts under
// token-mean give each token the weight kappa u_o; a bad scale or divisor
// is refused naming the line's field.
func TestLossParts(t *testing.T) {
	update := []float64{1, -1, 0.5, 2}
	lengths := []int{4, 2, 0, 6}
	kappa := loss.ScaleOf(loss.TokenMean, 4, 3)
	lines := []string{
		`{"update":[1],"lengths":[4],"scale":0.3333333333333333}`,
		`{"update":[-1,0.5,2],"lengths":[2,0,6],"scale":0.3333333333333333}`,
		`{"update":[1,2],"lengths":[3,5],"scale":0.5,"over_tokens":[100],"over_sequences":[0]}`,
		`{"update":[1,2],"lengths":[3,5],"scale":-1}`,
		`{"update":[1,2],"lengths":[3,5],"scale":1,"over_tokens":[1]}`,
		`{"update":[1,2],"lengths":[3,5],"over_tokens":[10]}`,
		`{"update":[1,2],"lengths":[3,5],"scale":1,"over_tokens":[10],"over_sequences":[1,2]}`,
	}
	out, _, code := runCmd(t, strings.Join(lines, "\n")+"\n", "loss", "-reduction", "token-mean")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (some lines refused)", code)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	var first, second lossOutput
	if err := json.Unmarshal([]byte(got[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got[1]), &second); err != nil {
		t.Fatal(err)
	}
	c := append(first.Coefficients, second.Coefficients...)
	tokens := []int64{first.Tokens, second.Tokens, second.Tokens, second.Tokens}
	for o := range c {
		if lengths[o] == 0 {
			continue
		}
		if w := c[o] / float64(tokens[o]); math.Abs(w-kappa*update[o]) > 1e-15 {
			t.Fatalf("row %d: token weight %v, want kappa u = %v", o, w, kappa*update[o])
		}
	}
	if !strings.Contains(got[2], `"coefficients":[50,100]`) {
		t.Errorf("over_tokens: %s", got[2])
	}
	for i, want := range []string{"scale: -1 outside [0, 2^53]", "over_tokens[0] = 1", `give its \"scale\" too`, "len(over_tokens) = 1, want len(over_sequences) = 2"} {
		if !strings.Contains(got[3+i], want) {
			t.Errorf("line %d: %s, want %q", 4+i, got[3+i], want)
		}
	}
}
