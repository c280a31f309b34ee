package advantage

var (
	// nemoRLGRPO is adv_estimator name "grpo" with its defaults
	// (use_leave_one_out_baseline, normalize_rewards): the baseline is the
	// mean of the group's other rows and the divisor their Bessel standard
	// deviation plus 1e-6, applied only where it is positive (ScaleOthers);
	// a group of two gets r_i - r_j undivided.
	nemoRLGRPO = GroupOptions{LeaveOneOut: true, Scale: ScaleOthers, Bessel: true, Epsilon: 1e-6}
	// nemoRLGRPONoLeaveOneOut is "grpo" with use_leave_one_out_baseline
	// False: the group's mean and Bessel standard deviation plus 1e-6,
	// verl's GRPO.
	nemoRLGRPONoLeaveOneOut = GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}
	// nemoRLReinforcePlusPlus is "reinforce_plus_plus" with minus_baseline
	// (its default) and no KL in the reward: r - group mean, then whitened
	// over every valid token of the batch with the variance over tokens
	// (no Bessel) clamped at 1e-8, OpenRLHF's whitening. With
	// use_kl_in_reward the advantage varies within a row, which one scalar
	// per row cannot give; minus_baseline False has no group baseline.
	nemoRLReinforcePlusPlus = GroupOptions{Whiten: WhitenOpenRLHF}
)

// NeMoRLGRPO, NeMoRLGRPONoLeaveOneOut and NeMoRLReinforcePlusPlus are the
// presets of NeMo-RL (github.com/NVIDIA-NeMo/RL,
// nemo_rl/algorithms/advantage_estimator.py and
// calculate_baseline_and_std_per_prompt in nemo_rl/algorithms/utils.py),
// checked against that code at commit 7ea279abfbeb698b092856d0dab61e7cf39bc909
// (testdata/trainers/nemo-rl).
//
// What NeMo-RL does to a reward first, so that a caller knows what to
// pass: the environments' rewards arrive as total_reward (with named
// components reward/<name> beside it where an environment reports
// several); with
// reward_scaling enabled each is clamped to [source_min, source_max] and
// mapped linearly to [target_min, target_max]; with reward_shaping enabled
// (DAPO's overlong penalty) the shaped reward replaces it; the KL penalty
// stays in the loss (use_kl_in_reward is False by default). After the
// estimator the advantages are clamped to [advantage_clip_low,
// advantage_clip_high] where those are set (None by default): the Clip
// option.
// Rows whose loss_multiplier (sample_mask) is 0 (truncated outputs under
// overlong_filtering) still enter the baselines and get an advantage, but
// no loss: pass them scored, with length 0 for the whitening of
// nemo-rl-reinforce-pp.
//
// valid_mask: calculate_baseline_and_std_per_prompt leaves a row of
// valid_mask 0 out of its group's baseline and standard deviation. The
// library's unscorable row (a NaN reward under NaNUnscorable, which these
// presets leave off: set it to use the mask) is left out the same way and
// gets 0, where NeMo-RL gives it r_i minus the others' baseline (a
// masked row's loss is then masked by the caller). NeMo-RL's trainer
// passes a valid_mask of ones.
//
// Where the presets differ from NeMo-RL, beside float32 rounding (its
// baselines and standard deviations are E[r^2] - E[r]^2 in the rewards'
// dtype, whose cancellation a division by a small standard deviation can
// magnify; here the arithmetic is float64 and an all-equal group gets
// exactly 0): a group of one scored row gets 0 in both, but NeMo-RL's
// Reinforce++ whitens that 0 with the other rows and gives the row
// (0 - mu)/sigma, where here it is left out of the whitening and gets 0
// (it is reported); NeMo-RL computes the GRPO baseline with a float32
// identity matrix, so its own code raises on float64 rewards unless
// torch's default dtype is float64.
//
// GDPO (adv_estimator name "gdpo") is not a preset: it takes several reward
// components per row, each with its own per-prompt baseline (NeMo-RL's GRPO
// advantage of that component), adds them with per-component weights and
// then standardises the sum over the whole batch (its mean and Bessel
// std, or only its mean where that std is 0). [GroupRelative] takes one
// reward per row, and GDPO's last step is over the whole batch, not a
// group: a caller runs it once per component with nemo-rl-grpo, adds the
// weighted results and standardises them, which is the whole of GDPO
// (checked against NeMo-RL's GDPOAdvantageEstimator on 400 cases, to
// 1.7e-8 on float64 rewards), but no option here does it in one call.
const (
	NeMoRLGRPO Preset = OpenRLHFReinforceBaseline + 1 + iota
	NeMoRLGRPONoLeaveOneOut
	NeMoRLReinforcePlusPlus
)
