package advise

import (
	"math/big"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"spiral"
)

// candidate returns a candidate told apart by its N2, of the given
// improvement per token.
func candidate(id int, tokens int64, rate float64) Candidate {
	cfg := spiral.Paper()
	cfg.AggregationsPerSet = id
	return Candidate{Config: cfg, Tokens: tokens, ImprovementPerToken: new(big.Rat).SetFloat64(rate)}
}

func ids(cs []Candidate) []int {
	out := []int{}
	for _, c := range cs {
		out = append(out, c.Config.AggregationsPerSet)
	}
	return out
}

// A hand-made case: a candidate beaten at equal tokens (2), one beaten at
// fewer tokens (3), equal scores at more tokens kept (5) and tied ones
// kept together (6, 7).
func TestFrontierHandMade(t *testing.T) {
	res := Result{Candidates: []Candidate{
		candidate(8, 40, 2.0),
		candidate(4, 20, 1.5),
		candidate(5, 30, 1.5),
		candidate(6, 35, 1.5),
		candidate(7, 35, 1.5),
		candidate(1, 10, 1.0),
		candidate(3, 20, 0.8),
		candidate(2, 10, 0.5),
		candidate(9, 5, 0.1),
		candidate(10, 50, 1.9),
	}}
	if got, want := ids(res.Frontier()), []int{9, 1, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("frontier %v, want %v", got, want)
	}
	if f := (Result{}).Frontier(); len(f) != 0 {
		t.Errorf("empty result: frontier %v", f)
	}
}

// On random candidates the frontier is exactly the set the definition
// gives, checked pair by pair, in Tokens order.
func TestFrontierDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		var res Result
		for i := range n {
			tokens := int64(rapid.IntRange(1, 8).Draw(t, "tokens"))
			snr := float64(rapid.IntRange(0, 6).Draw(t, "snr"))
			res.Candidates = append(res.Candidates, candidate(i, tokens, snr))
		}
		var want []int
		for _, c := range res.Candidates {
			dominated := false
			for _, d := range res.Candidates {
				dominated = dominated || (d.Tokens <= c.Tokens && d.ImprovementPerToken.Cmp(c.ImprovementPerToken) > 0)
			}
			if !dominated {
				want = append(want, c.Config.AggregationsPerSet)
			}
		}
		f := res.Frontier()
		got := ids(f)
		slices.Sort(got)
		if want == nil {
			want = []int{}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("frontier %v, want %v", got, want)
		}
		for i := 1; i < len(f); i++ {
			if f[i].Tokens < f[i-1].Tokens || f[i].ImprovementPerToken.Cmp(f[i-1].ImprovementPerToken) < 0 {
				t.Fatalf("frontier out of order at %d: %+v after %+v", i, f[i], f[i-1])
			}
		}
	})
}
