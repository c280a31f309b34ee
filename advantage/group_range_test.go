package advantage

import (
	"errors"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// openRLHFKeeps is OpenRLHF's dynamic filter
// (openrlhf/trainer/ppo_utils/samples_generator.py): avg_reward =
// sum(scores)/len(scores); keep when min_r < avg_reward < max_r.
func openRLHFKeeps(scores []float64, low, high float64) bool {
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	avg := sum / float64(len(scores))
	return low < avg && avg < high
}

// TestRewardRangeMatchesOpenRLHF: on 0/1 groups and on rewards on a grid
// (whose sums are exact, so sum/n is the correctly rounded mean), the
// decision is OpenRLHF's, for its default range (0, 1) and others.
func TestRewardRangeMatchesOpenRLHF(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 16).Draw(t, "n")
		reward := rapid.Map(rapid.IntRange(0, 1), func(i int) float64 { return float64(i) })
		if rapid.Bool().Draw(t, "grid") {
			reward = rapid.Map(rapid.IntRange(-64, 64), func(i int) float64 { return float64(i) / 16 })
		}
		rewards := rapid.SliceOfN(reward, n, n).Draw(t, "rewards")
		r := RewardRange{0, 1}
		if rapid.Bool().Draw(t, "other range") {
			lo := float64(rapid.IntRange(-64, 63).Draw(t, "low")) / 16
			r = RewardRange{lo, lo + float64(rapid.IntRange(1, 64).Draw(t, "width"))/16}
		}
		got, err := InRewardRange(r, rewards, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := openRLHFKeeps(rewards, r.Low, r.High); got != want {
			t.Fatalf("%+v on %v: kept %v, OpenRLHF %v", r, rewards, got, want)
		}
	})
}

func TestRewardRangeCases(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name       string
		r          RewardRange
		rewards    []float64
		unscorable []bool
		want       bool
	}{
		{"all wrong", RewardRange{0, 1}, []float64{0, 0, 0, 0}, nil, false},
		{"all right", RewardRange{0, 1}, []float64{1, 1, 1, 1}, nil, false},
		{"mixed", RewardRange{0, 1}, []float64{1, 0, 0, 0}, nil, true},
		{"lone correct", RewardRange{0, 1}, []float64{1}, nil, false},
		{"mean on the low bound", RewardRange{0.25, 1}, []float64{1, 0, 0, 0}, nil, false},
		{"mean on the high bound", RewardRange{0, 0.75}, []float64{1, 1, 1, 0}, nil, false},
		// sum/n gives 0.30000000000000004/3 = 0.10000000000000002 > 0.1,
		// which OpenRLHF would keep; the exact mean 0.1 is not inside.
		{"equal 0.1", RewardRange{0.1, 1}, []float64{0.1, 0.1, 0.1}, nil, false},
		{"disabled keeps all right", RewardRange{}, []float64{1, 1, 1, 1}, nil, true},
		{"disabled keeps empty", RewardRange{}, nil, nil, true},
		{"empty dropped", RewardRange{0, 1}, nil, nil, false},
		{"unscorable left out", RewardRange{0, 1}, []float64{1, nan, 1, 0}, []bool{false, true, false, false}, true},
		{"unscorable leaves all right", RewardRange{0, 1}, []float64{1, 0, 1}, []bool{false, true, false}, false},
		{"all unscorable", RewardRange{0, 1}, []float64{nan, nan}, []bool{true, true}, false},
		{"continuous", RewardRange{-1, 0}, []float64{-0.5, 0.25, -1.5}, nil, true},
		{"empty unscorable", RewardRange{0, 1}, []float64{1, 0}, []bool{}, true},
		{"large", RewardRange{-1, 1}, []float64{MaxAbsReward, -MaxAbsReward}, nil, true},
	} {
		got, err := InRewardRange(tc.r, tc.rewards, tc.unscorable)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		r32 := make([]float32, len(tc.rewards))
		for i, x := range tc.rewards {
			r32[i] = float32(x)
		}
		if tc.name == "large" || tc.name == "equal 0.1" {
			continue // not representable, or rounded differently, in float32
		}
		if got32, err := InRewardRange(tc.r, r32, tc.unscorable); err != nil || got32 != tc.want {
			t.Errorf("%s (float32): %v, %v; want %v", tc.name, got32, err, tc.want)
		}
	}
}

func TestRewardRangeErrors(t *testing.T) {
	for _, tc := range []struct {
		r          RewardRange
		rewards    []float64
		unscorable []bool
		want       string
	}{
		{RewardRange{1, 0}, []float64{1}, nil, "reward range (1, 0), want finite bounds with Low < High"},
		{RewardRange{0.5, 0.5}, []float64{1}, nil, "reward range (0.5, 0.5)"},
		{RewardRange{math.NaN(), 1}, []float64{1}, nil, "reward range (NaN, 1)"},
		{RewardRange{0, math.Inf(1)}, []float64{1}, nil, "reward range (0, +Inf)"},
		{RewardRange{0, 1}, []float64{1, math.NaN()}, nil, "advantage: rewards[1] = NaN: reward is not finite"},
		{RewardRange{}, []float64{1, math.NaN()}, nil, "[1] = NaN"},
		{RewardRange{0, 1}, []float64{2e30}, nil, "[0] = 2e+30: reward magnitude exceeds 1e+30"},
		{RewardRange{0, 1}, []float64{1, 0}, []bool{true}, "unscorable: len = 1, want 0 or len(rewards) = 2"},
	} {
		if _, err := InRewardRange(tc.r, tc.rewards, tc.unscorable); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %v: error %v, want one containing %q", tc.r, tc.rewards, err, tc.want)
		}
	}
}

func TestRewardRangeInputError(t *testing.T) {
	_, err := InRewardRange(RewardRange{0, 1}, []float32{0, 1, float32(math.Inf(-1))}, nil)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "rewards" || ie.Output != 2 || !math.IsInf(ie.Value, -1) || !errors.Is(err, ErrNotFinite) {
		t.Errorf("%#v, want an *InputError for position 2 wrapping ErrNotFinite", err)
	}
}
