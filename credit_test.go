package spiral

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"spiral/lengthgate"
)

// workedPlan is a plan at the paper's configuration for the worked example
// of docs/method.md#worked-example: trace 0 is only in G1 and G3 (sets 0
// and 2).
var workedPlan = Plan{Sets: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {0, 4, 6, 7}, {2, 3, 5, 6}}}

// workedRewards give the set scores f = (0.75, 0.50, 0.25, 0.50) of the
// worked example, with G1's rewards (1, 1, 1, 0).
var workedRewards = [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}}

func TestCreditWorkedExample(t *testing.T) {
	got, err := Paper().Credit(workedPlan, workedRewards, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	// Hand-derived from docs/method.md#the-credit-signals: fbar = 0.5,
	// A_set = (+0.25, 0, -0.25, 0); trace y's A_search is the mean of A_set
	// over its sets: 0 {G1,G3}, 1 {G1,G2}, 2 {G1,G2,G4}, 3 {G1,G4},
	// 4 {G2,G3}, 5 {G2,G4}, 6 {G3,G4}, 7 {G3}.
	want := Credit{
		SetScores:     []float64{0.75, 0.5, 0.25, 0.5},
		SetAdvantages: []float64{0.25, 0, -0.25, 0},
		Search:        []float64{0, 0.125, 0.25 / 3, 0.125, -0.125, 0, -0.125, -0.25},
		Appearances:   []int{2, 2, 3, 2, 2, 2, 2, 1},
		Aggregation: [][]float64{
			{0.25, 0.25, 0.25, -0.75}, // the worked example's A_agg for G1
			{0.5, -0.5, 0.5, -0.5},
			{-0.25, -0.25, 0.75, -0.25},
			{-0.5, 0.5, 0.5, -0.5},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("worked example (-want +got):\n%s", diff)
	}
	if got.Search[0] != 0 {
		t.Errorf("trace 0 (in G1 and G3): A_search = %v, want exactly (0.25 - 0.25)/2 = 0", got.Search[0])
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
	if !cmp.Equal(wantSearch, got.Search, cmpopts.EquateApprox(0, 1e-15)) {
		t.Errorf("gated search advantages = %v, want %v", got.Search, wantSearch)
	}
	wantAgg := [][]float64{{0.25, 0, 0.25, -0.75}, {0.5, -0.5, 0.5, -0.5}, {-0.25, -0.25, 0, -0.25}, {-0.5, 0.5, 0.5, -0.5}}
	if !cmp.Equal(wantAgg, got.Aggregation) {
		t.Errorf("gated aggregation advantages = %v, want %v", got.Aggregation, wantAgg)
	}
	if want := (lengthgate.Report{Outputs: 8, Positive: 3, AtTarget: 1, Gated: 2, MassRemoved: 0.25}); got.Gates.Search != want {
		t.Errorf("search gate report = %+v, want %+v", got.Gates.Search, want)
	}
	if want := (lengthgate.Report{Outputs: 16, Positive: 8, AtTarget: 1, Gated: 2, MassRemoved: 1}); got.Gates.Aggregation != want {
		t.Errorf("aggregation gate report = %+v, want %+v", got.Gates.Aggregation, want)
	}
	// Gates act after the baselines: set scores and set advantages are the
	// ungated ones.
	if !cmp.Equal(got.SetAdvantages, []float64{0.25, 0, -0.25, 0}) || !cmp.Equal(got.SetScores, []float64{0.75, 0.5, 0.25, 0.5}) {
		t.Errorf("set scores %v, set advantages %v changed by the gates", got.SetScores, got.SetAdvantages)
	}
	if got.NoSignal {
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
		if !got.NoSignal || !allZero(got.Search) || !allZero(slices.Concat(got.Aggregation...)) {
			t.Errorf("all rewards %v: %+v, want NoSignal and zero advantages", v, got)
		}
	}
	// Every set scores 0.5 but outputs differ: aggregation signal only.
	got, err := c.Credit(workedPlan, [][]float64{{1, 0, 1, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}, {0, 0, 1, 1}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if got.NoSignal || !allZero(got.Search) || allZero(slices.Concat(got.Aggregation...)) {
		t.Errorf("equal set scores: %+v; want signal in the aggregation advantages only", got)
	}
	// Each set's outputs agree, sets differ: search signal only.
	got, err = c.Credit(workedPlan, [][]float64{{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if got.NoSignal || allZero(got.Search) || !allZero(slices.Concat(got.Aggregation...)) {
		t.Errorf("constant sets: %+v; want signal in the search advantages only", got)
	}
	// K = 1: a lone set has zero set advantage, so no search signal.
	one := Paper()
	one.Sets = 1
	got, err = one.Credit(Plan{Sets: [][]int{{1, 3, 5, 7}}}, [][]float64{{1, 0, 0, 0}}, Lengths{})
	if err != nil {
		t.Fatal(err)
	}
	if !allZero(got.Search) || !slices.Equal(got.Appearances, []int{0, 1, 0, 1, 0, 1, 0, 1}) || got.NoSignal {
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
	if want := 2.0 / 3; got.SetScores[1] != want || len(got.Aggregation[1]) != 3 {
		t.Errorf("ragged set: f = %v, %d advantages; want 2/3 and 3", got.SetScores[1], len(got.Aggregation[1]))
	}
	if got.Gates.Aggregation.Outputs != 15 {
		t.Errorf("gate saw %d outputs, want 15", got.Gates.Aggregation.Outputs)
	}
}

func TestCreditErrors(t *testing.T) {
	gated := Paper()
	gated.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	okLengths := Lengths{Search: make([]int, 8), Aggregation: [][]int{make([]int, 4), make([]int, 4), make([]int, 4), make([]int, 4)}}
	nan := [][]float64{{1, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, math.NaN(), 0}, {0, 1, 1, 0}}
	tests := []struct {
		c       Config
		p       Plan
		rewards [][]float64
		l       Lengths
		want    string
		// field, set and output of the *advantage.InputError, when one
		field       string
		set, output int
	}{
		{Config{}, workedPlan, workedRewards, Lengths{}, "Config.SearchTraces: 0", "", 0, 0},
		{Paper(), Plan{Sets: workedPlan.Sets[:3]}, workedRewards, Lengths{}, "spiral: plan.Sets: 3 sets, want K = 4", "plan.Sets", -1, -1},
		{Paper(), workedPlan, workedRewards[:3], Lengths{}, "spiral: rewards: len(rewards) = 3, want K = 4", "rewards", -1, -1},
		{Paper(), workedPlan, [][]float64{{1}, {}, {1}, {1}}, Lengths{}, "spiral: rewards, set 1: len(rewards[1]) = 0 outside [1, N2 = 4]", "rewards", 1, -1},
		{Paper(), workedPlan, [][]float64{{1}, {1}, {1, 1, 1, 1, 1}, {1}}, Lengths{}, "len(rewards[2]) = 5 outside", "rewards", 2, -1},
		{Paper(), workedPlan, nan, Lengths{}, "spiral: rewards, set 2, output 2 = NaN: reward is not finite", "rewards", 2, 2},
		{Paper(), workedPlan, [][]float64{{1}, {1}, {1}, {0, -2e30}}, Lengths{}, "magnitude exceeds", "rewards", 3, 1},
		{Paper(), Plan{Sets: [][]int{{0, 1, 2, 3}, {0, 1, 2, 9}, {0, 4, 6, 7}, {2, 3, 5, 6}}}, workedRewards, Lengths{}, "spiral: plan.Sets, set 1, member 3 = 9: out of range", "plan.Sets", 1, 3},
		{Paper(), Plan{Sets: [][]int{{0, 1, 2, 3}, {1, 2, 4, 5}, {3, 2, 1, 0}, {2, 3, 5, 6}}}, workedRewards, Lengths{}, "spiral: plan.Sets, set 2: identical to set 0", "plan.Sets", 2, -1},
		{gated, workedPlan, workedRewards, Lengths{Aggregation: okLengths.Aggregation}, "spiral: lengths.Search: nil, but the search gate reads it", "lengths.Search", -1, -1},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search}, "spiral: lengths.Aggregation: nil, but the aggregation gate reads it", "lengths.Aggregation", -1, -1},
		{Paper(), workedPlan, workedRewards, Lengths{Search: make([]int, 7)}, "spiral: lengths.Search: len = 7, want P*N1 = 8", "lengths.Search", -1, -1},
		{Paper(), workedPlan, workedRewards, Lengths{Search: []int{0, 0, 0, -4, 0, 0, 0, 0}}, "spiral: lengths.Search[3] = -4: length < 0", "lengths.Search", -1, 3},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: okLengths.Aggregation[:2]}, "spiral: lengths.Aggregation: len(lengths.Aggregation) = 2, want K = 4", "lengths.Aggregation", -1, -1},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: [][]int{{0, 0, 0, 0}, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}}, "spiral: lengths.Aggregation, set 1: len(lengths.Aggregation[1]) = 3, want len(rewards[1]) = 4", "lengths.Aggregation", 1, -1},
		{gated, workedPlan, workedRewards, Lengths{Search: okLengths.Search, Aggregation: [][]int{{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, -1, 0, 0}}}, "spiral: lengths.Aggregation, set 3, position 1 = -1: length < 0", "lengths.Aggregation", 3, 1},
	}
	for _, tt := range tests {
		_, err := tt.c.Credit(tt.p, tt.rewards, tt.l)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Credit: error %v, want %q", err, tt.want)
			continue
		}
		if tt.field == "" {
			continue
		}
		e, ok := errors.AsType[*InputError](err)
		if !ok || e.Field != tt.field || e.Set != tt.set || e.Output != tt.output || e.Problem != -1 || !strings.HasPrefix(err.Error(), "spiral: "+tt.field) {
			t.Errorf("Credit: error %v: want an *InputError for %s, set %d, output %d; got %+v", err, tt.field, tt.set, tt.output, e)
		}
	}
	// Lengths given for a disabled gate are fine when well formed.
	if _, err := Paper().Credit(workedPlan, workedRewards, okLengths); err != nil {
		t.Errorf("lengths with disabled gates: %v", err)
	}
}
