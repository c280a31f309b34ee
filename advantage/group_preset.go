package advantage

import "fmt"

// Preset names the group-baseline convention of a trainer, resolved by
// [Preset.Options] to the [GroupOptions] that give its formula. Its text
// form (String, MarshalText, UnmarshalText) is the name in the table; the
// zero value is DrGRPO.
//
//	name              trainer setting                               options
//	dr-grpo           Dr. GRPO: r - mean                            zero value
//	rloo              RLOO: r - mean of the others                  LeaveOneOut
//	verl-grpo         verl adv_estimator=grpo                       ScaleGroup, Bessel, Epsilon 1e-6
//	verl-dr-grpo      verl grpo, norm_adv_by_std_in_grpo=False      zero value
//	verl-rloo         verl adv_estimator=rloo                       LeaveOneOut
//	trl-grpo          TRL GRPOTrainer, scale_rewards="group"        ScaleGroup, Bessel, Epsilon 1e-4, NaNUnscorable
//	trl-grpo-batch    TRL GRPOTrainer, scale_rewards="batch"        ScaleBatch, Bessel, Epsilon 1e-4, NaNUnscorable
//	trl-dr-grpo       TRL GRPOTrainer, scale_rewards="none"         NaNUnscorable
//	trl-rloo          TRL RLOOTrainer (normalize_advantages=False)  LeaveOneOut, NaNUnscorable
//	openrlhf-grpo     OpenRLHF advantage_estimator=group_norm       ScaleGroup, Bessel, Epsilon 1e-9
//	openrlhf-dr-grpo  OpenRLHF advantage_estimator=dr_grpo          zero value
//	openrlhf-rloo     OpenRLHF advantage_estimator=rloo             LeaveOneOut
//
// verl and OpenRLHF divide by torch.std, which is Bessel-corrected; TRL
// divides by its nanstd, Bessel-corrected over the non-NaN rewards, and
// treats a NaN reward (a completion no reward function scored) as
// unscorable. With these options [GroupRelative] gives each trainer's
// advantages for every group of two or more scored rows, up to rounding;
// a group of one scored row gets 0 and is reported, where verl returns the
// raw reward (divided by 1 + 1e-6 for GRPO) and OpenRLHF's GRPO and RLOO
// return NaN. These are the advantage formulas only: the trainers' loss
// aggregation (Dr. GRPO's constant normaliser, for one) is not part of them.
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
)

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
	OpenRLHFGRPO:   {"openrlhf-grpo", GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-9}},
	OpenRLHFDrGRPO: {"openrlhf-dr-grpo", GroupOptions{}},
	OpenRLHFRLOO:   {"openrlhf-rloo", GroupOptions{LeaveOneOut: true}},
}

func (p Preset) defined() bool { return p >= 0 && int(p) < len(presets) }

// Options returns the options of p; an undefined p is an error.
func (p Preset) Options() (GroupOptions, error) {
	if !p.defined() {
		return GroupOptions{}, fmt.Errorf("advantage: preset = %d is not a defined Preset", int(p))
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
		return nil, fmt.Errorf("advantage: preset = %d is not a defined Preset", int(p))
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
	return fmt.Errorf("advantage: preset = %q is not one of %s", text, presetNames())
}

// presetNames lists the names, for error messages.
func presetNames() string {
	s := ""
	for i, pr := range presets {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", pr.name)
	}
	return s
}
