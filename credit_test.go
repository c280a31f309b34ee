package spiral

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"spiral/lengthgate"
)

// workedPlan is a plan at the paper's configuration for SPIRAL.md's worked
// example: trace 0 is only in G1 and G3 (groups 0 and 2).
var workedPlan = Plan{Groups: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 6, 7}, {2, 3, 5, 6}}}

// workedRewards give the set scores f = (0.75, 0.50, 0.25, 0.50) of the
// worked example, with G1's rewards (1, 1, 1, 0).
var workedRewards = [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}

func TestCreditWorkedExample(t *testing.T) {
	got, err := Paper().Credit(workedPlan, workedRewards, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	// Hand-derived from SPIRAL.md section 2: fbar = 0.5,
	// A_set = (+0.25, 0, -0.25, 0); trace y's A_search is the mean of A_set
	// over its sets: 0 {G1,G3}, 1 {G1,G2}, 2 {G1,G2,G4}, 3 {G1,G4},
	// 4 {G2,G3}, 5 {G2,G4}, 6 {G3,G4}, 7 {G3}.
	want := Credit{
		SetScores:     []float64{0.75, 0.5, 0.25, 0.5},
		SetAdvantages: []float64{0.25, 0, -0.25, 0},
		Search: SearchCredit{
			Advantages:  []float64{0, 0.125, 0.25 / 3, 0.125, -0.125, 0, -0.125, -0.25},
			Appearances: []int{2, 2, 3, 2, 2, 2, 2, 1},
			Gate:        lengthgate.Report{Outputs: 8, Positive: 3},
		},
		Aggregation: AggregationCredit{
			Advantages: [][]float64{
				{0.25, 0.25, 0.25, -0.75}, // SPIRAL.md's A_agg for G1
				{0.5, -0.5, 0.5, -0.5},
				{-0.25, -0.25, 0.75, -0.25},
				{-0.5, 0.5, 0.5, -0.5},
			},
			Gate: lengthgate.Report{Outputs: 16, Positive: 8},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("worked example (-want +got):\n%s", diff)
	}
	if got.Search.Advantages[0] != 0 {
		t.Errorf("trace 0 (in G1 and G3): A_search = %v, want exactly (0.25 - 0.25)/2 = 0", got.Search.Advantages[0])
	}
}

func TestCreditGates(t *testing.T) {
	c := Paper()
	c.Gates = lengthgate.Gates{
		Search:      lengthgate.Gate{Target: 4096}, // GateAtTarget: L == 4096 is gated
		Aggregation: lengthgate.Gate{Target: 4096, Boundary: lengthgate.KeepAtTarget},
	}
	l := Lengths{
		// Trace 1 (+0.125) is over the target, trace 3 (+0.125) at it, trace
		// 7 (-0.25) over it: 1 and 3 are gated, 7 keeps its penalty.
		Search: []int{100, 5000, 4095, 4096, 100, 100, 100, 9999},
		Aggregation: [][]int{
			{4096, 4097, 10, 5000}, // +0.25 kept at the target, +0.25 gated, -0.75 kept
			{1, 1, 1, 1},
			{1, 1, 4097, 1}, // +0.75 gated
			{1, 1, 1, 1},
		},
	}
	got, err := c.Credit(workedPlan, workedRewards, l)
	if err != nil {
		t.Fatal(err)
	}
	wantSearch := []float64{0, 0, 0.25 / 3, 0, -0.125, 0, -0.125, -0.25}
	if !cmp.Equal(wantSearch, got.Search.Advantages, cmpopts.EquateApprox(0, 1e-15)) {
		t.Errorf("gated search advantages = %v, want %v", got.Search.Advantages, wantSearch)
	}
	wantAgg := [][]float64{{0.25, 0, 0.25, -0.75}, {0.5, -0.5, 0.5, -0.5}, {-0.25, -0.25, 0, -0.25}, {-0.5, 0.5, 0.5, -0.5}}
	if !cmp.Equal(wantAgg, got.Aggregation.Advantages) {
		t.Errorf("gated aggregation advantages = %v, want %v", got.Aggregation.Advantages, wantAgg)
	}
	if want := (lengthgate.Report{Outputs: 8, Positive: 3, AtTarget: 1, Gated: 2, MassRemoved: 0.25}); got.Search.Gate != want {
		t.Errorf("search gate report = %+v, want %+v", got.Search.Gate, want)
	}
	if want := (lengthgate.Report{Outputs: 16, Positive: 8, AtTarget: 1, Gated: 2, MassRemoved: 1}); got.Aggregation.Gate != want {
		t.Errorf("aggregation gate report = %+v, want %+v", got.Aggregation.Gate, want)
	}
	// Gates act after the baselines: set scores and set advantages are the
	// ungated ones.
	if !cmp.Equal(got.SetAdvantages, []float64{0.25, 0, -0.25, 0}) || !cmp.Equal(got.SetScores, []float64{0.75, 0.5, 0.25, 0.5}) {
		t.Errorf("set scores %v, set advantages %v changed by the gates", got.SetScores, got.SetAdvantages)
	}
	if got.NoSignal || got.Search.NoSignal || got.Aggregation.NoSignal {
		t.Errorf("NoSignal set on a problem with signal: %+v", got)
	}
}

func TestCreditNoSignal(t *testing.T) {
	c := Paper()
	all := func(v float64) [][]float64 {
		return [][]float64{{v, v, v, v}, {v, v, v, v}, {v, v, v, v}, {v, v, v, v}}
	}
	for _, v := range []float64{0, 1, 0.3} {
		got, err := c.Credit(workedPlan, all(v), Lengths{})
		if err != nil {
			t.Fatal(err)
		}
		if !got.NoSignal || !got.Search.NoSignal || !got.Aggregation.NoSignal {
			t.Errorf("all rewards %v: NoSignal = %v (search %v, aggregation %v), want all true", v, got.NoSignal, got.Search.NoSignal, got.Aggregation.NoSignal)
		}
	}
	// Every set scores 0.5 but outputs differ: aggregation signal only.
	got, err := c.Credit(workedPlan, [][]float64{{1, 0, 1, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}, {0, 0, 1, 1}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if got.NoSignal || !got.Search.NoSignal || got.Aggregation.NoSignal {
		t.Errorf("equal set scores: NoSignal %v, search %v, aggregation %v; want false, true, false", got.NoSignal, got.Search.NoSignal, got.Aggregation.NoSignal)
	}
	// Each set's outputs agree, sets differ: search signal only.
	got, err = c.Credit(workedPlan, [][]float64{{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if got.NoSignal || got.Search.NoSignal || !got.Aggregation.NoSignal {
		t.Errorf("constant sets: NoSignal %v, search %v, aggregation %v; want false, false, true", got.NoSignal, got.Search.NoSignal, got.Aggregation.NoSignal)
	}
	// K = 1: a lone set has zero set advantage, so no search signal.
	one := Paper()
	one.Sets = 1
	got, err = one.Credit(Plan{Groups: [][]int{{1, 3, 5, 7}}}, [][]float64{{1, 0, 0, 0}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Search.NoSignal || got.Search.InNoSet != 4 || got.Aggregation.NoSignal {
		t.Errorf("K = 1: %+v; want no search signal, 4 traces in no set, aggregation signal", got)
	}
}

func TestCreditRagged(t *testing.T) {
	// A dropped generation: set 1 has 3 rewards; its score uses its own count.
	c := Paper()
	c.Gates.Aggregation = lengthgate.Gate{Target: 100}
	rewards := [][]float64{{1, 1, 1, 0}, {1, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 0}}
	lengths := Lengths{Aggregation: [][]int{{1, 1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}}
	got, err := c.Credit(workedPlan, rewards, lengths)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2.0 / 3; got.SetScores[1] != want || len(got.Aggregation.Advantages[1]) != 3 {
		t.Errorf("ragged set: f = %v, %d advantages; want 2/3 and 3", got.SetScores[1], len(got.Aggregation.Advantages[1]))
	}
	if got.Aggregation.Gate.Outputs != 15 {
		t.Errorf("gate saw %d outputs, want 15", got.Aggregation.Gate.Outputs)
	}
}

func TestCreditErrors(t *testing.T) {
	gated := Paper()
	gated.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	okLengths := Lengths{Search: make([]int, 8), Aggregation: [][]int{make([]int, 4), make([]int, 4), make([]int, 4), make([]int, 4)}}
	nan := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, zero / zero, 0}, {0, 1, 1, 0}}
	tests := []struct {
		c       Config
		p       Plan
		rewards [][]float64
		l       Lengths
		want    string
	}{
		{Config{}, workedPlan, workedRewards, Lengths{}, "SearchTraces (N1) = 0"},
		{Paper(), Plan{Groups: workedPlan.Groups[:3]}, workedRewards, Lengths{}, "plan: len(groups) = 3, want Sets (K) = 4"},
		{Paper(), workedPlan, workedRewards[:3], Lengths{}, "len(rewards) = 3, want Sets (K) = 4"},
		{Paper(), workedPlan, [][]float64{{1}, {}, {1}, {1}}, Lengths{}, "len(rewards[1]) = 0, want 1 to AggregationsPerSet (N2) = 4"},
		{Paper(), workedPlan, [][]float64{{1}, {1}, {1, 1, 1, 1, 1}, {1}}, Lengths{}, "len(rewards[2]) = 5"},
		{Paper(), workedPlan, nan, Lengths{}, "rewards[2][2] = NaN: reward is not finite"},
		{Paper(), workedPlan, [][]float64{{1}, {1}, {1}, {0, -2e30}}, Lengths{}, "rewards[3][1] = -2e+30: reward magnitude exceeds"},
		{gated, workedPlan, workedRewards, Lengths{Aggregation: okLengths.Aggregation}, "lengths.Search is nil, but its gate is enabled (Target = 4096)"},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search}, "lengths.Aggregation is nil, but its gate is enabled"},
		{Paper(), workedPlan, workedRewards, Lengths{Search: make([]int, 7)}, "len(lengths.Search) = 7, want SearchTraces (N1) = 8"},
		{Paper(), workedPlan, workedRewards, Lengths{Search: []int{0, 0, 0, -4, 0, 0, 0, 0}}, "lengths.Search[3] = -4 < 0"},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: okLengths.Aggregation[:2]}, "len(lengths.Aggregation) = 2, want Sets (K) = 4"},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: [][]int{{0, 0, 0, 0}, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}}, "len(lengths.Aggregation[1]) = 3, want len(rewards[1]) = 4"},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: [][]int{{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, -1, 0, 0}}}, "lengths.Aggregation[3][1] = -1 < 0"},
	}
	for _, tt := range tests {
		_, err := tt.c.Credit(tt.p, tt.rewards, tt.l)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Credit: error %v, want %q", err, tt.want)
		}
	}
	// Lengths given for a disabled gate are fine when well formed.
	if _, err := Paper().Credit(workedPlan, workedRewards, okLengths); err != nil {
		t.Errorf("lengths with disabled gates: %v", err)
	}
}

var zero = 0.0
