package credit

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestUniformAsProblem: Uniform gives the bits Problem gives, problem by
// problem, for batches of every uniform shape (set sizes and output counts
// that are powers of two or not, so that means and the pivot are exact or
// not) and rewards on the 2^-16 grid: 0/1, quarters, -0, sets of equal
// rewards, and values near the bound of exact sums.
func TestUniformAsProblem(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sh := Shape{Traces: rapid.IntRange(1, 9).Draw(t, "N1"), Sets: rapid.IntRange(1, 6).Draw(t, "K"), Outputs: rapid.IntRange(1, 6).Draw(t, "N2")}
		sh.SetSize = rapid.IntRange(1, sh.Traces).Draw(t, "n")
		p := rapid.IntRange(0, 5).Draw(t, "problems")
		grid := rapid.SampledFrom([]float64{1, 0.25, 0x1p-16, 3, 0x1p30 + 1}).Draw(t, "grid")
		hi := rapid.IntRange(0, 4).Draw(t, "hi")
		in := Input[float64]{ExactSums: true}
		for range p * sh.Sets {
			in.SetSizes = append(in.SetSizes, sh.SetSize)
			in.RewardCounts = append(in.RewardCounts, sh.Outputs)
			for range sh.SetSize {
				in.Members = append(in.Members, rapid.IntRange(0, sh.Traces-1).Draw(t, "y"))
			}
			equal := rapid.IntRange(0, 3).Draw(t, "equal") == 0
			reward := func() float64 {
				if rapid.IntRange(0, 9).Draw(t, "negativeZero") == 0 {
					return math.Copysign(0, -1)
				}
				return grid * float64(rapid.IntRange(-hi, hi).Draw(t, "r"))
			}
			x := reward()
			for range sh.Outputs {
				if !equal {
					x = reward()
				}
				in.Rewards = append(in.Rewards, x)
			}
		}
		if _, exact := Scan(in.Rewards, nil, true); !exact {
			t.Skip("not exact sums")
		}
		n1, k, n, n2 := sh.Traces, sh.Sets, sh.SetSize, sh.Outputs
		var want, got Output[float64]
		want.Resize(p, p*n1, p*k, p*k*n2, n1, k)
		got.Resize(p, p*n1, p*k, p*k*n2, n1, k)
		wantZero, gotZero := make([]bool, p), make([]bool, p)
		for q := range p {
			sp := Span{Trace: q * n1, Traces: n1, Set: q * k, Sets: k, Member: q * k * n, Members: k * n, Reward: q * k * n2, Rewards: k * n2}
			wantZero[q] = Problem(&want, &in, q, sp)
		}
		// Scratch left by another batch, as in a reused BatchCredit.
		for i := range got.Search {
			got.Search[i], got.Appearances[i] = 7, 7
		}
		Uniform(&got, &in, gotZero, sh)
		sameBits(t, "Search", want.Search, got.Search)
		sameBits(t, "Aggregation", want.Aggregation, got.Aggregation)
		sameBits(t, "SetScores", want.SetScores, got.SetScores)
		sameBits(t, "SetAdvantages", want.SetAdvantages, got.SetAdvantages)
		sameInts(t, "Appearances", want.Appearances, got.Appearances)
		sameInts(t, "ScoredOutputs", want.ScoredOutputs, got.ScoredOutputs)
		sameInts(t, "ScoredSets", want.ScoredSets, got.ScoredSets)
		for q := range p {
			if gotZero[q] != wantZero[q] {
				t.Fatalf("problem %d: Uniform reports zero %v, Problem %v", q, gotZero[q], wantZero[q])
			}
		}
	})
}

func sameBits(t *rapid.T, name string, want, got []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d]: Uniform writes %v (%#x), Problem %v (%#x)", name, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

func sameInts(t *rapid.T, name string, want, got []int) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s[%d]: Uniform writes %d, Problem %d", name, i, got[i], want[i])
		}
	}
}
