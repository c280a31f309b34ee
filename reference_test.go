package spiral

import (
	"math/big"
	"slices"
	"testing"

	"spiral/internal/spiraltest"
)

// TestRefCreditWorkedExample: the exact reference credit
// (spiraltest.RefCredit), which the tests of CreditBatch and Credit compare
// against, on the worked example of docs/method.md#worked-example, value
// by value.
func TestRefCreditWorkedExample(t *testing.T) {
	sets := [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 5, 6}, {2, 3, 5, 6}}
	rewards := spiraltest.Rats([][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}})
	r := spiraltest.RefCredit(8, sets, rewards, nil)
	check := func(what string, got []*big.Rat, want ...string) {
		t.Helper()
		for i, w := range want {
			x, _ := new(big.Rat).SetString(w)
			if got[i].Cmp(x) != 0 {
				t.Errorf("%s[%d] = %s, want %s", what, i, got[i].RatString(), w)
			}
		}
	}
	check("SetScores", r.SetScores, "3/4", "1/2", "1/4", "1/2")
	check("SetAdvantages", r.SetAdvantages, "1/4", "0", "-1/4", "0")
	check("Search", r.Search, "0", "1/8", "1/12", "1/8", "-1/8", "-1/12", "-1/8", "0")
	check("Aggregation[0]", r.Aggregation[0], "1/4", "1/4", "1/4", "-3/4")
	if want := []int{2, 2, 3, 2, 2, 3, 2, 0}; !slices.Equal(r.Appearances, want) {
		t.Errorf("Appearances = %v, want %v", r.Appearances, want)
	}
	if r.ScoredSets != 4 || !slices.Equal(r.ScoredOutputs, []int{4, 4, 4, 4}) {
		t.Errorf("scored %d, %v", r.ScoredSets, r.ScoredOutputs)
	}
}

// TestRefCreditUnscorable: an unscorable output leaves its set's score and
// the baselines; a set with none scored leaves fbar and G(y).
func TestRefCreditUnscorable(t *testing.T) {
	sets := [][]int{{0, 1}, {1, 2}, {2, 3}}
	rewards := spiraltest.Rats([][]float64{{1, 0, 0}, {1, 1}, {0}})
	unscorable := [][]bool{{false, false, true}, {false, false}, {true}}
	r := spiraltest.RefCredit(4, sets, rewards, unscorable)
	// f = (1/2, 1, -), fbar = 3/4: A_set = (-1/4, 1/4, 0).
	for i, w := range []string{"1/2", "1", "0"} {
		if r.SetScores[i].RatString() != w {
			t.Errorf("SetScores[%d] = %s, want %s", i, r.SetScores[i].RatString(), w)
		}
	}
	for y, w := range []string{"-1/4", "0", "1/4", "0"} {
		if r.Search[y].RatString() != w {
			t.Errorf("Search[%d] = %s, want %s", y, r.Search[y].RatString(), w)
		}
	}
	if want := []int{1, 2, 1, 0}; !slices.Equal(r.Appearances, want) {
		t.Errorf("Appearances = %v, want %v", r.Appearances, want)
	}
	if r.Aggregation[0][2].Sign() != 0 || r.Aggregation[0][0].RatString() != "1/2" {
		t.Errorf("Aggregation[0] = %v", r.Aggregation[0])
	}
	if r.ScoredSets != 2 || !slices.Equal(r.ScoredOutputs, []int{2, 2, 0}) {
		t.Errorf("scored %d, %v", r.ScoredSets, r.ScoredOutputs)
	}
}
