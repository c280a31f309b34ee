package advantage

import (
	"fmt"

	"spiral/internal/inputerr"
)

// Preset names the group-baseline convention of a trainer, resolved by
// [Preset.Options] to the [GroupOptions] that give its formula. Its text
// form (String, MarshalText, UnmarshalText) is the name in the table; the
// zero value is DrGRPO.
//
//	name                         trainer setting                                options
//	dr-grpo                      Dr. GRPO: r - mean                             zero value
//	rloo                         RLOO: r - mean of the others                   LeaveOneOut
//	verl-grpo                    verl adv_estimator=grpo                        ScaleGroup, Bessel, Epsilon 1e-6
//	verl-dr-grpo                 verl grpo, norm_adv_by_std_in_grpo=False       zero value
//	verl-rloo                    verl adv_estimator=rloo                        LeaveOneOut
//	verl-grpo-passk              verl adv_estimator=grpo_passk                  Best, ScaleGroup, Bessel, Epsilon 1e-6
//	verl-reinforce-pp-baseline   verl adv_estimator=reinforce_plus_plus_baseline  WhitenVerl
//	trl-grpo                     TRL GRPOTrainer, scale_rewards="group"         ScaleGroup, Bessel, Epsilon 1e-4, NaNUnscorable
//	trl-grpo-batch               TRL GRPOTrainer, scale_rewards="batch"         ScaleBatch, Bessel, Epsilon 1e-4, NaNUnscorable
//	trl-dr-grpo                  TRL GRPOTrainer, scale_rewards="none"          NaNUnscorable
//	trl-rloo                     TRL RLOOTrainer (normalize_advantages=False)   LeaveOneOut, NaNUnscorable
//	trl-rloo-normalized          TRL RLOOTrainer, normalize_advantages=True     LeaveOneOut, NaNUnscorable, WhitenTRL
//	openrlhf-grpo                OpenRLHF advantage_estimator=group_norm        ScaleGroup, Bessel, Epsilon 1e-9, Clip [-10, 10]
//	openrlhf-dr-grpo             OpenRLHF advantage_estimator=dr_grpo           Clip [-10, 10]
//	openrlhf-rloo                OpenRLHF advantage_estimator=rloo              LeaveOneOut, Clip [-10, 10]
//	openrlhf-reinforce-baseline  OpenRLHF advantage_estimator=reinforce_baseline  Clip [-10, 10], WhitenOpenRLHF
//	nemo-rl-grpo                 NeMo-RL adv_estimator grpo (its defaults)      LeaveOneOut, ScaleOthers, Bessel, Epsilon 1e-6
//	nemo-rl-grpo-no-leave-one-out  NeMo-RL grpo, use_leave_one_out_baseline=False  ScaleGroup, Bessel, Epsilon 1e-6
//	nemo-rl-reinforce-pp         NeMo-RL adv_estimator reinforce_plus_plus      WhitenOpenRLHF
//
// What NeMo-RL does to a reward first, and where its presets differ from
// it, is in [NeMoRLGRPO]'s documentation.
//
// verl and OpenRLHF divide by torch.std, which is Bessel-corrected; TRL
// divides by its nanstd, Bessel-corrected over the non-NaN rewards, and
// treats a NaN reward (a completion no reward function scored) as
// unscorable. With these options [GroupRelative] gives each trainer's
// advantages for every group of two or more scored rows, up to rounding
// (the trainers compute in float32); the whitening presets take the rows'
// lengths ([GroupRelativeTokens]). A group of one scored row gets 0 and is
// reported, where verl returns the raw reward (divided by 1 + 1e-6 for
// GRPO; kept, then whitened, by REINFORCE++-baseline) and raises an error
// for grpo_passk, and OpenRLHF's GRPO and RLOO return NaN. These are the
// advantage formulas only: the trainers' loss reductions are the loss
// package's.
//
// What each trainer does to a reward before the baseline, so that a caller
// knows what to pass: verl adds a KL penalty to the token-level rewards
// only with use_kl_in_reward (off by default; its GRPO recipes put the KL
// in the loss) and sums them per row; TRL's GRPOTrainer sums the weighted
// reward functions (a completion none could score is NaN) and puts the KL
// (beta) in the loss, not the reward; TRL's RLOOTrainer clamps the summed
// reward to reward_clip_range when set and subtracts beta times the
// sequence's summed log-ratio to the reference (beta 0.05 by default)
// before the leave-one-out baseline; OpenRLHF subtracts DAPO's overlong
// penalty first, then the baseline, then clamps to --reward.clip_range
// (default (-10, 10): the Clip of its presets) and adds its per-token KL
// term (init_kl_coef, 0.01 by default; 0 makes the returns of a row
// equal), so that with a KL coefficient the advantage varies within a row,
// which one scalar per row cannot give. REINFORCE++-baseline whitens over
// every token of the batch (a row of L tokens counts L times).
type Preset int

const (
	DrGRPO Preset = iota
	RLOO
	VerlGRPO
	VerlDrGRPO
	VerlRLOO
	TRLGRPO
	TRLGRPOBatch
	TRLDrGRPO
	TRLRLOO
	OpenRLHFGRPO
	OpenRLHFDrGRPO
	OpenRLHFRLOO
	VerlGRPOPassK
	VerlReinforcePPBaseline
	TRLRLOONormalized
	OpenRLHFReinforceBaseline
)

// openRLHFClip is OpenRLHF's default --reward.clip_range.
var openRLHFClip = Range{Low: -10, High: 10}

// presets holds each preset's text and options, indexed by Preset.
var presets = [...]struct {
	name string
	opt  GroupOptions
}{
	DrGRPO:         {"dr-grpo", GroupOptions{}},
	RLOO:           {"rloo", GroupOptions{LeaveOneOut: true}},
	VerlGRPO:       {"verl-grpo", GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}},
	VerlDrGRPO:     {"verl-dr-grpo", GroupOptions{}},
	VerlRLOO:       {"verl-rloo", GroupOptions{LeaveOneOut: true}},
	TRLGRPO:        {"trl-grpo", GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-4, NaNUnscorable: true}},
	TRLGRPOBatch:   {"trl-grpo-batch", GroupOptions{Scale: ScaleBatch, Bessel: true, Epsilon: 1e-4, NaNUnscorable: true}},
	TRLDrGRPO:      {"trl-dr-grpo", GroupOptions{NaNUnscorable: true}},
	TRLRLOO:        {"trl-rloo", GroupOptions{LeaveOneOut: true, NaNUnscorable: true}},
	OpenRLHFGRPO:   {"openrlhf-grpo", GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-9, Clip: openRLHFClip}},
	OpenRLHFDrGRPO: {"openrlhf-dr-grpo", GroupOptions{Clip: openRLHFClip}},
	OpenRLHFRLOO:   {"openrlhf-rloo", GroupOptions{LeaveOneOut: true, Clip: openRLHFClip}},

	VerlGRPOPassK:             {"verl-grpo-passk", GroupOptions{Best: true, Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}},
	VerlReinforcePPBaseline:   {"verl-reinforce-pp-baseline", GroupOptions{Whiten: WhitenVerl}},
	TRLRLOONormalized:         {"trl-rloo-normalized", GroupOptions{LeaveOneOut: true, NaNUnscorable: true, Whiten: WhitenTRL}},
	OpenRLHFReinforceBaseline: {"openrlhf-reinforce-baseline", GroupOptions{Clip: openRLHFClip, Whiten: WhitenOpenRLHF}},

	NeMoRLGRPO:              {"nemo-rl-grpo", nemoRLGRPO},
	NeMoRLGRPONoLeaveOneOut: {"nemo-rl-grpo-no-leave-one-out", nemoRLGRPONoLeaveOneOut},
	NeMoRLReinforcePlusPlus: {"nemo-rl-reinforce-pp", nemoRLReinforcePlusPlus},
}

func (p Preset) defined() bool { return p >= 0 && int(p) < len(presets) }

// Options returns the options of p; an undefined p is an error.
func (p Preset) Options() (GroupOptions, error) {
	if !p.defined() {
		return GroupOptions{}, inputerr.Undefined("advantage", FieldPreset, int(p), "Preset")
	}
	return presets[p].opt, nil
}

// String returns p's name, such as "verl-grpo", or "Preset(v)" for an
// undefined value.
func (p Preset) String() string {
	if !p.defined() {
		return fmt.Sprintf("Preset(%d)", int(p))
	}
	return presets[p].name
}

// MarshalText encodes p as its name; an undefined value is an error.
func (p Preset) MarshalText() ([]byte, error) {
	if !p.defined() {
		return nil, inputerr.Undefined("advantage", FieldPreset, int(p), "Preset")
	}
	return []byte(presets[p].name), nil
}

// UnmarshalText decodes a preset's name; anything else is an error naming
// the text.
func (p *Preset) UnmarshalText(text []byte) error {
	for v, pr := range presets {
		if string(text) == pr.name {
			*p = Preset(v)
			return nil
		}
	}
	return inputerr.Name("advantage", FieldPreset, text, presetNames()...)
}

// presetNames lists the names, for error messages.
func presetNames() []string {
	s := make([]string, len(presets))
	for i, pr := range presets {
		s[i] = pr.name
	}
	return s
}
