package advantage

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// The trainers' formulas, transcribed from their sources into float64 Go,
// statement by statement. rewards holds one scalar per row; the rows of a
// group are contiguous and every group has g rows (TRL and OpenRLHF reshape
// the batch to (-1, g)), which verl does not need but is given here too.

// torchMean and torchStd are torch.mean and torch.std (Bessel-corrected);
// torch.std of one element is NaN.
func torchMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func torchStd(xs []float64) float64 {
	m := torchMean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1)) // 0/0 = NaN for one element
}

// nanMean and nanStd are torch.nanmean and TRL's nanstd (trl/trainer/utils.py):
// the mean of the non-NaN values, and sqrt(nanmean((x - mean)^2) * c/(c-1))
// with c the count of non-NaN values, NaN when c <= 1.
func nanMean(xs []float64) float64 {
	var kept []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			kept = append(kept, x)
		}
	}
	return torchMean(kept) // 0/0 = NaN when empty
}

func nanStd(xs []float64) float64 {
	m := nanMean(xs)
	var sq []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			sq = append(sq, (x-m)*(x-m))
		}
	}
	c := float64(len(sq))
	if c <= 1 {
		return math.NaN()
	}
	return math.Sqrt(torchMean(sq) * c / (c - 1))
}

// verlGRPO is compute_grpo_outcome_advantage (verl/trainer/ppo/core_algos.py):
// a group of one gets mean 0 and std 1; otherwise torch.mean and torch.std;
// (r - mean)/(std + epsilon), or r - mean when norm_adv_by_std_in_grpo is
// False.
func verlGRPO(rewards []float64, index []int, epsilon float64, normByStd bool) []float64 {
	id2score := map[int][]float64{}
	for i, r := range rewards {
		id2score[index[i]] = append(id2score[index[i]], r)
	}
	out := make([]float64, len(rewards))
	for i, r := range rewards {
		scores := id2score[index[i]]
		mean, std := 0.0, 1.0
		if len(scores) > 1 {
			mean, std = torchMean(scores), torchStd(scores)
		}
		if normByStd {
			out[i] = (r - mean) / (std + epsilon)
		} else {
			out[i] = r - mean
		}
	}
	return out
}

// verlRLOO is compute_rloo_outcome_advantage: for a group of n > 1,
// r*n/(n-1) - mean*n/(n-1); a group of one keeps its raw reward.
func verlRLOO(rewards []float64, index []int) []float64 {
	id2score := map[int][]float64{}
	for i, r := range rewards {
		id2score[index[i]] = append(id2score[index[i]], r)
	}
	out := make([]float64, len(rewards))
	for i, r := range rewards {
		scores := id2score[index[i]]
		n := float64(len(scores))
		out[i] = r
		if n > 1 {
			mean := torchMean(scores)
			out[i] = r*n/(n-1) - mean*n/(n-1)
		}
	}
	return out
}

// trlGRPO is GRPOTrainer's advantage (trl/trainer/grpo_trainer.py,
// multi_objective_aggregation="sum_then_normalize"): nanmean per group;
// std per group (nanstd; zeros when g == 1), over the batch (nanstd;
// zeros for one row) or none; (r - mean)/(std + 1e-4) unless "none"; then
// nan_to_num(nan=0).
func trlGRPO(rewards []float64, g int, scaleRewards string) []float64 {
	n := len(rewards)
	out := make([]float64, n)
	std := make([]float64, n)
	switch scaleRewards {
	case "group", "none":
		for k := 0; k < n; k += g {
			for i := k; i < k+g; i++ {
				if g > 1 {
					std[i] = nanStd(rewards[k : k+g])
				}
			}
		}
	case "batch":
		for i := range std {
			if n > 1 {
				std[i] = nanStd(rewards)
			}
		}
	}
	for k := 0; k < n; k += g {
		mean := nanMean(rewards[k : k+g])
		for i := k; i < k+g; i++ {
			a := rewards[i] - mean
			if scaleRewards != "none" {
				a /= std[i] + 1e-4
			}
			if math.IsNaN(a) {
				a = 0
			}
			out[i] = a
		}
	}
	return out
}

// trlRLOO is RLOOTrainer's advantage (trl/trainer/rloo_trainer.py,
// normalize_advantages=False): baseline (nansum - r)/(count - 1) over the
// scorable rows; zeros when g == 1; nan_to_num(nan=0).
func trlRLOO(rewards []float64, g int) []float64 {
	out := make([]float64, len(rewards))
	if g == 1 {
		return out
	}
	for k := 0; k < len(rewards); k += g {
		sum, count := 0.0, 0.0
		for _, r := range rewards[k : k+g] {
			if !math.IsNaN(r) {
				sum += r
				count++
			}
		}
		for i := k; i < k+g; i++ {
			a := rewards[i] - (sum-rewards[i])/(count-1)
			if math.IsNaN(a) {
				a = 0
			}
			out[i] = a
		}
	}
	return out
}

// openRLHF is OpenRLHF's compute_advantages_and_returns
// (openrlhf/trainer/ppo_utils/experience_maker.py) on rewards reshaped to
// (-1, g): "rloo" subtracts (sum - r)/(g - 1), "dr_grpo" the mean,
// "group_norm" divides r - mean by torch.std + 1e-9.
func openRLHF(rewards []float64, g int, estimator string) []float64 {
	out := make([]float64, len(rewards))
	for k := 0; k < len(rewards); k += g {
		grp := rewards[k : k+g]
		sum := 0.0
		for _, r := range grp {
			sum += r
		}
		mean := torchMean(grp)
		for i := k; i < k+g; i++ {
			r := rewards[i]
			switch estimator {
			case "rloo":
				zero := 0.0 // g == 1: (sum - r)/0 = 0/0 in torch, NaN
				if g > 1 {
					out[i] = r - (sum-r)/float64(g-1)
				} else {
					out[i] = r - (sum-r)/zero
				}
			case "dr_grpo":
				out[i] = r - mean
			case "group_norm":
				out[i] = (r - mean) / (torchStd(grp) + 1e-9)
			}
			// compute_reward: r.clamp(min=reward_clip_range[0],
			// max=reward_clip_range[1]), the default (-10, 10); NaN stays.
			if !math.IsNaN(out[i]) {
				out[i] = math.Min(math.Max(out[i], -10), 10)
			}
		}
	}
	return out
}

// presetCases is the table every preset is checked on: groups of one, all
// equal groups (0.1 leaves a rounding residue in a sum/n mean), 0/1 and
// continuous rewards, and (for the presets that accept them) NaN rows.
var presetCases = []struct {
	name    string
	g       int
	rewards []float64
	nan     bool
}{
	{"groups of 1", 1, []float64{0.3, 1, 0, -2.5}, false},
	{"all equal", 4, []float64{1, 1, 1, 1, 0, 0, 0, 0, 0.1, 0.1, 0.1, 0.1}, false},
	{"0/1", 4, []float64{1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1}, false},
	{"0/1 pairs", 2, []float64{1, 0, 0, 0, 0, 1, 1, 1}, false},
	{"continuous", 5, []float64{0.3, -1.2, 2.5, 0.7, 0.71, 1e-3, 2e-3, 0, 5, 4.999, -3, 7, 1e6, 1e6 + 1, 0.5}, false},
	{"unscorable", 4, []float64{1, math.NaN(), 0, 1, math.NaN(), math.NaN(), math.NaN(), math.NaN(),
		math.NaN(), 0.5, math.NaN(), math.NaN(), 0.25, 0.75, 0.5, math.NaN()}, true},
}

// trainerFormula returns the advantages of p's trainer on rewards in
// contiguous groups of g rows, and whether p's trainer scores NaN rewards.
func trainerFormula(p Preset, rewards []float64, g int) (want []float64, nan bool) {
	index := make([]int, len(rewards))
	for i := range index {
		index[i] = i / g
	}
	switch p {
	case DrGRPO, VerlDrGRPO:
		return verlGRPO(rewards, index, 1e-6, false), false
	case RLOO, VerlRLOO:
		return verlRLOO(rewards, index), false
	case VerlGRPO:
		return verlGRPO(rewards, index, 1e-6, true), false
	case TRLGRPO:
		return trlGRPO(rewards, g, "group"), true
	case TRLGRPOBatch:
		return trlGRPO(rewards, g, "batch"), true
	case TRLDrGRPO:
		return trlGRPO(rewards, g, "none"), true
	case TRLRLOO:
		return trlRLOO(rewards, g), true
	case OpenRLHFGRPO:
		return openRLHF(rewards, g, "group_norm"), false
	case OpenRLHFDrGRPO:
		return openRLHF(rewards, g, "dr_grpo"), false
	case OpenRLHFRLOO:
		return openRLHF(rewards, g, "rloo"), false
	case VerlGRPOPassK, VerlReinforcePPBaseline, TRLRLOONormalized, OpenRLHFReinforceBaseline:
		return nil, false // checked against the trainers' code in TestPresetsMatchTrainerVectors
	case NeMoRLGRPO, NeMoRLGRPONoLeaveOneOut, NeMoRLReinforcePlusPlus:
		return nil, false // checked against NeMo-RL's code in TestNeMoRLPresetsMatchVectors
	}
	panic(fmt.Sprint("no formula for ", p))
}

// TestPresetsMatchTrainers: every preset, on every case of the table, gives
// its trainer's advantages to 1e-12 (relative to max(1, |A|)), except where
// the documentation says it differs: a row whose group has one scored
// reward gets 0 (verl: the raw reward, divided by 1 + 1e-6 for GRPO;
// OpenRLHF's GRPO and RLOO: NaN; TRL: 0 as here), and an all-equal group
// gets exactly 0 where a trainer's sum/n mean may leave a residue (here
// under 1e-7 after its division).
func TestPresetsMatchTrainers(t *testing.T) {
	for p := range Preset(len(presets)) {
		opt, err := p.Options()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range presetCases {
			want, nan := trainerFormula(p, tc.rewards, tc.g)
			if want == nil {
				continue
			}
			ids := make([]int, len(tc.rewards))
			for i := range ids {
				ids[i] = i / tc.g
			}
			got := make([]float64, len(tc.rewards))
			rep, err := GroupRelative(got, tc.rewards, ids, opt)
			if tc.nan && !nan {
				if err == nil || !strings.Contains(err.Error(), "NaN") {
					t.Errorf("%v on %s: error %v, want one naming the NaN", p, tc.name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v on %s: %v", p, tc.name, err)
			}
			single := map[int]bool{}
			for _, id := range rep.Singletons {
				single[id] = true
			}
			equal := map[int]bool{}
			for _, id := range rep.ZeroVariance {
				equal[id] = true
			}
			for i, a := range got {
				r, w := tc.rewards[i], want[i]
				switch {
				case math.IsNaN(r) || single[ids[i]]:
					if a != 0 {
						t.Errorf("%v on %s: row %d = %g, want 0 (trainer: %g)", p, tc.name, i, a, w)
					}
					if trainerRaw := (p == VerlGRPO && w == r/(1+1e-6)) || (p == RLOO || p == VerlRLOO || p == DrGRPO || p == VerlDrGRPO) && w == r ||
						(p == OpenRLHFGRPO || p == OpenRLHFRLOO) && math.IsNaN(w); !trainerRaw && w != 0 && !math.IsNaN(r) {
						t.Errorf("%v on %s: row %d: the trainer gives %g to a lone row, not a documented value", p, tc.name, i, w)
					}
				case equal[ids[i]]:
					if a != 0 || math.Abs(w) > 1e-7 {
						t.Errorf("%v on %s: row %d = %g (trainer %g), want exactly 0 (trainer within 1e-7)", p, tc.name, i, a, w)
					}
				default:
					if math.Abs(a-w) > 1e-12*max(1, math.Abs(w)) {
						t.Errorf("%v on %s: row %d = %.17g, trainer %.17g", p, tc.name, i, a, w)
					}
				}
			}
		}
	}
}

// TestPresetText: every preset round-trips through its text and JSON; the
// names are the documented ones; bad text and undefined values are errors.
func TestPresetText(t *testing.T) {
	names := []string{"dr-grpo", "rloo", "verl-grpo", "verl-dr-grpo", "verl-rloo", "trl-grpo", "trl-grpo-batch",
		"trl-dr-grpo", "trl-rloo", "openrlhf-grpo", "openrlhf-dr-grpo", "openrlhf-rloo",
		"verl-grpo-passk", "verl-reinforce-pp-baseline", "trl-rloo-normalized", "openrlhf-reinforce-baseline",
		"nemo-rl-grpo", "nemo-rl-grpo-no-leave-one-out", "nemo-rl-reinforce-pp"}
	if len(names) != len(presets) {
		t.Fatalf("%d names for %d presets", len(names), len(presets))
	}
	for i, name := range names {
		p := Preset(i)
		if p.String() != name {
			t.Errorf("Preset(%d).String() = %q, want %q", i, p, name)
		}
		b, err := json.Marshal(p)
		if err != nil || string(b) != `"`+name+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v", p, b, err)
		}
		var q Preset
		if err := json.Unmarshal(b, &q); err != nil || q != p {
			t.Errorf("json.Unmarshal(%s) = %v, %v", b, q, err)
		}
	}
	var q Preset
	if err := q.UnmarshalText([]byte("grpo")); err == nil || !strings.Contains(err.Error(), `advantage: Preset: "grpo" is not one of "dr-grpo", "rloo", "verl-grpo"`) {
		t.Errorf("bad name: %v", err)
	}
	bad := Preset(len(presets))
	if _, err := bad.MarshalText(); err == nil {
		t.Errorf("undefined preset marshalled")
	}
	if _, err := bad.Options(); err == nil || bad.String() != "Preset(19)" {
		t.Errorf("undefined preset: Options error %v, String %q", err, bad)
	}

	for _, s := range []Scale{ScaleNone, ScaleGroup, ScaleBatch, ScaleOthers} {
		b, err := s.MarshalText()
		var u Scale
		if err != nil || u.UnmarshalText(b) != nil || u != s || string(b) != s.String() {
			t.Errorf("scale %v: %s %v -> %v", s, b, err, u)
		}
	}
	var u Scale
	if err := u.UnmarshalText([]byte("std")); err == nil || Scale(5).String() != "Scale(5)" {
		t.Errorf("bad scale text accepted or undefined String wrong")
	}
	var opt GroupOptions
	if err := json.Unmarshal([]byte(`{"scale":"batch","epsilon":1e-4,"bessel":true,"nan_unscorable":true}`), &opt); err != nil {
		t.Fatal(err)
	}
	if want, _ := TRLGRPOBatch.Options(); opt != want {
		t.Errorf("JSON options %+v, want trl-grpo-batch %+v", opt, want)
	}
}
