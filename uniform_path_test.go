package spiral

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestUniformPathAsGeneral: a batch that takes the credit's uniform path
// (no RewardCounts, no Unscorable, rewards on the exact grid, none
// rejected) gets the bits of the same batch given its RewardCounts of N2
// for every set, which takes the kernel's general path problem by problem.
func TestUniformPathAsGeneral(t *testing.T) {
	var uniform, general BatchCredit
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		g := drawBatch(t, c)
		if g.in.RewardCounts != nil || g.in.Unscorable != nil {
			t.Skip("not the uniform shape")
		}
		if err := c.CreditBatch(&uniform, g.in); err != nil {
			t.Fatal(err)
		}
		in := g.in
		in.RewardCounts = g.counts
		if err := c.CreditBatch(&general, in); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name string
			u, g []float64
		}{
			{"Search", uniform.Search, general.Search},
			{"Aggregation", uniform.Aggregation, general.Aggregation},
			{"SetScores", uniform.SetScores, general.SetScores},
			{"SetAdvantages", uniform.SetAdvantages, general.SetAdvantages},
		} {
			if !slices.EqualFunc(f.u, f.g, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
				t.Fatalf("%s: uniform path %v, general %v", f.name, f.u, f.g)
			}
		}
		if !slices.Equal(uniform.Appearances, general.Appearances) || !slices.Equal(uniform.ScoredOutputs, general.ScoredOutputs) ||
			!slices.Equal(uniform.ScoredSets, general.ScoredSets) || !slices.Equal(uniform.NoSignal, general.NoSignal) ||
			uniform.Gates != general.Gates {
			t.Fatalf("uniform path %+v, general %+v", uniform, general)
		}
	})
}
