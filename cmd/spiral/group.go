package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"spiral/advantage"
	"spiral/internal/names"
)

const groupHelp = `usage: spiral group [-preset NAME | -scale none|group|batch|others -epsilon E -bessel -leave-one-out -best -clip LO,HI -whiten W] < lines

group computes the group-relative advantages of GRPO-style trainers (GRPO,
Dr. GRPO, RLOO, grpo_passk, REINFORCE++-baseline) with advantage.GroupRelative,
for one batch of rows per input line: rewards[i] belongs to the prompt group
ids[i], rows of one group may be anywhere and in any order (verl's layout: one
uid per row). For a group of G scored rewards with mean m and s the standard
deviation the options select:

    A_i = r_i - m                      -scale none (Dr. GRPO)
    A_i = (G/(G-1)) (r_i - m)          -scale none -leave-one-out (RLOO)
    A_i = (r_i - m) / (s + E)          -scale group (GRPO) or -scale batch
    A_i = (G/(G-1)) (r_i - m) / (s_-i + E)  -scale others -leave-one-out (NeMo-RL;
                                       s_-i the others' standard deviation,
                                       undivided where it is 0)
    A_best = r_max - r_second, else 0  -best (verl's grpo_passk; divided by s + E
                                       with -scale group)

then -clip clamps every advantage to [LO, HI] and -whiten whitens them over the
line, each row weighted by its length in tokens (verl, openrlhf) or by 1 (trl).
A group with one scored row, and a group whose rewards are all equal, get 0
and are reported.

Flags:
  -preset NAME      a trainer's convention (default dr-grpo):
                      dr-grpo                      r - mean
                      rloo                         r - mean of the others
                      verl-grpo                    verl adv_estimator=grpo (std with n-1, E = 1e-6)
                      verl-dr-grpo                 verl grpo, norm_adv_by_std_in_grpo=False
                      verl-rloo                    verl adv_estimator=rloo
                      verl-grpo-passk              verl adv_estimator=grpo_passk (E = 1e-6)
                      verl-reinforce-pp-baseline   verl reinforce_plus_plus_baseline: r - mean,
                                                   whitened over the line's tokens
                      trl-grpo                     TRL scale_rewards="group" (std with n-1, E = 1e-4)
                      trl-grpo-batch               TRL scale_rewards="batch"
                      trl-dr-grpo                  TRL scale_rewards="none"
                      trl-rloo                     TRL RLOOTrainer
                      trl-rloo-normalized          TRL RLOOTrainer, normalize_advantages=True
                      openrlhf-grpo                OpenRLHF group_norm (std with n-1, E = 1e-9),
                                                   clipped to [-10, 10] (--reward.clip_range)
                      openrlhf-dr-grpo             OpenRLHF dr_grpo, clipped to [-10, 10]
                      openrlhf-rloo                OpenRLHF rloo, clipped to [-10, 10]
                      openrlhf-reinforce-baseline  OpenRLHF reinforce_baseline: r - mean, clipped
                                                   to [-10, 10], whitened over the line's tokens
                      nemo-rl-grpo                 NeMo-RL grpo (its defaults): r - mean of the
                                                   others, divided by their std (n-1) + 1e-6
                                                   where it is positive
                      nemo-rl-grpo-no-leave-one-out  NeMo-RL grpo, use_leave_one_out_baseline=False
                      nemo-rl-reinforce-pp         NeMo-RL reinforce_plus_plus: r - mean,
                                                   whitened over the line's tokens
                    NeMo-RL's valid_mask 0 is "unscorable": true.
                    What each trainer does to rewards before the baseline (KL
                    terms, clipping) is in the advantage package's Preset doc.
  -scale S          instead of a preset: none, group (the group's standard
                    deviation), batch (that of every scored reward of the line) or
                    others (that of the row's group's other rewards; with
                    -leave-one-out and E > 0)
  -epsilon E        added to the standard deviation, E >= 0 (default 0)
  -bessel           the standard deviation with denominator n-1 (torch.std)
  -leave-one-out    the RLOO baseline
  -best             the best row of each group alone: r_max - r_second
  -clip LO,HI       clamp every advantage to [LO, HI] (default: no clamp)
  -whiten W         none (default), verl (masked_whiten), openrlhf or trl
                    (normalize_advantages)
  A preset and the explicit flags are not given together.

Input line (one JSON object):
  {"ids": [id, ...],              required: the group of each row, a string or an
                                  integer (1 and "1" are different groups)
   "rewards": [r, ...],           required: one reward per row, |r| <= 1e30
   "unscorable": [b, ...],        optional, one per row: true marks a row that could
                                  not be scored (its reward, any number, is not
                                  read): it is left out of its group's mean and
                                  standard deviation, and its advantage is 0
   "lengths": [L, ...]}           optional, one per row: its length in tokens, the
                                  weight of the verl and openrlhf whitening (a row
                                  of 0 tokens is left out and gets 0); without
                                  it every row weighs 1

Output line:
  {"advantages": [a, ...],        one per row
   "groups": G,                   the number of distinct ids
   "singletons": [id, ...],       groups with one scored row (advantage 0)
   "zero_variance": [id, ...],    groups of two or more scored rows, all equal
                                  (advantage 0; all wrong or all right for 0/1)
   "unscored": [id, ...],         groups with no scored row
   "unscorable": c}               the number of rows marked unscorable
  Groups are listed in the order of their first row. A dynamic-sampling
  trainer drops the listed groups.
` + streamHelp

// groupSchema lists the fields of a group input line.
var groupSchema = schema{
	names:     []string{"ids", "rewards", "unscorable", "lengths"},
	required:  []bool{true, true, false, false},
	nonFinite: `write any number in its place and mark the row unscorable ("unscorable": [false, true, ...], one per row)`,
}

// groupLine is one decoded group input line.
type groupLine struct {
	IDs        []json.RawMessage `json:"ids"`
	Rewards    []float64         `json:"rewards"`
	Unscorable []bool            `json:"unscorable"`
	Lengths    []int             `json:"lengths"`
}

// groupOutput is one group output line.
type groupOutput struct {
	Advantages   []float64         `json:"advantages"`
	Groups       int               `json:"groups"`
	Singletons   []json.RawMessage `json:"singletons"`
	ZeroVariance []json.RawMessage `json:"zero_variance"`
	Unscored     []json.RawMessage `json:"unscored"`
	Unscorable   int               `json:"unscorable"`
}

// groupHandler computes the group baselines of one line with opt.
type groupHandler struct {
	opt     advantage.GroupOptions
	in      groupLine
	ids     []string // the ids as keys (idKey)
	rewards []float64
	adv     []float64
	out     jsonOut
}

// idKey returns the key of one id of a line, a JSON string or integer:
// its canonical JSON (a string as json.Marshal writes it, an integer in
// decimal), so that equal ids give equal keys, 1 and "1" differ, and the
// library's errors, which print a group's id, quote the line's JSON.
func idKey(raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		s, err := unquote(raw)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(s)
		return string(b), err
	}
	i, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", fmt.Errorf("%s is neither a string nor an integer", raw)
	}
	return strconv.FormatInt(i, 10), nil
}

// idJSON returns the JSON of the id whose key is k.
func idJSON(k string) json.RawMessage { return json.RawMessage(k) }

func idList(keys []string) []json.RawMessage {
	l := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		l[i] = idJSON(k)
	}
	return l
}

func (h *groupHandler) handle(line []byte) ([]byte, error) {
	in := &h.in
	present, err := groupSchema.decode(line, in)
	if err != nil {
		return nil, err
	}
	if !present[2] {
		in.Unscorable = nil
	}
	if !present[3] {
		in.Lengths = nil
	}
	n := len(in.Rewards)
	if len(in.IDs) != n {
		return nil, fmt.Errorf("len(ids) = %d, want len(rewards) = %d: one id per row", len(in.IDs), n)
	}
	if in.Unscorable != nil && len(in.Unscorable) != n {
		return nil, fmt.Errorf("len(unscorable) = %d, want len(rewards) = %d: one mark per row", len(in.Unscorable), n)
	}
	if in.Lengths != nil && len(in.Lengths) != n {
		return nil, fmt.Errorf("len(lengths) = %d, want len(rewards) = %d: one length per row", len(in.Lengths), n)
	}
	h.ids = h.ids[:0]
	for i, raw := range in.IDs {
		k, err := idKey(bytes.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("ids[%d]: %v", i, err)
		}
		h.ids = append(h.ids, k)
	}
	opt := h.opt
	h.rewards = append(h.rewards[:0], in.Rewards...)
	for i, u := range in.Unscorable {
		if u {
			// The library's mark of an unscorable row: a NaN reward
			// under NaNUnscorable.
			h.rewards[i] = math.NaN()
			opt.NaNUnscorable = true
		}
	}
	if h.adv == nil || cap(h.adv) < n { // never nil: an empty batch answers []
		h.adv = make([]float64, n)
	}
	h.adv = h.adv[:n]
	var rep advantage.GroupReport[string]
	if in.Lengths != nil {
		rep, err = advantage.GroupRelativeTokens(h.adv, h.rewards, h.ids, in.Lengths, opt)
	} else {
		rep, err = advantage.GroupRelative(h.adv, h.rewards, h.ids, opt)
	}
	if err != nil {
		if e, ok := errors.AsType[*advantage.InputError](err); ok {
			// GroupRelative's arguments are the line's fields, by the
			// same names.
			return nil, e.In("", e.Field)
		}
		// The layout (ids, unscorable and lengths one per row) was
		// checked above; nothing else is refused.
		return nil, err
	}
	return h.out.encode(groupOutput{
		Advantages:   h.adv,
		Groups:       rep.Groups,
		Singletons:   idList(rep.Singletons),
		ZeroVariance: idList(rep.ZeroVariance),
		Unscored:     idList(rep.Unscored),
		Unscorable:   rep.Unscorable,
	}), nil
}

// optionError says what GroupOptions.Validate's error means in the flags'
// words: the *advantage.InputError renamed to the flag (names.Group).
func optionError(err error) error {
	if e, ok := errors.AsType[*advantage.InputError](err); ok {
		return e.In("", names.Group.Flag(e.Field))
	}
	return err
}

// groupFlags are group's explicit flags.
type groupFlags struct {
	scale, clip, whiten string
	epsilon             float64
	bessel, leaveOneOut bool
	best                bool
}

// groupOptions returns the options the flags of group select.
func groupOptions(preset string, explicit bool, f groupFlags) (advantage.GroupOptions, error) {
	if preset != "" {
		if explicit {
			return advantage.GroupOptions{}, errors.New("-preset with -scale, -epsilon, -bessel, -leave-one-out, -best, -clip or -whiten: give a preset or the explicit flags, not both")
		}
		p, err := parseName[advantage.Preset]("-preset", preset)
		if err != nil {
			return advantage.GroupOptions{}, err
		}
		return p.Options()
	}
	opt := advantage.GroupOptions{Epsilon: f.epsilon, Bessel: f.bessel, LeaveOneOut: f.leaveOneOut, Best: f.best}
	var err error
	if opt.Scale, err = parseName[advantage.Scale]("-scale", f.scale); err != nil {
		return advantage.GroupOptions{}, err
	}
	if opt.Whiten, err = parseName[advantage.Whitening]("-whiten", f.whiten); err != nil {
		return advantage.GroupOptions{}, err
	}
	if f.clip != "" {
		lo, hi, ok := strings.Cut(f.clip, ",")
		var err1, err2 error
		opt.Clip.Low, err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
		opt.Clip.High, err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || err1 != nil || err2 != nil || !(opt.Clip.Low <= opt.Clip.High) || math.IsInf(opt.Clip.Low, 0) || math.IsInf(opt.Clip.High, 0) {
			return advantage.GroupOptions{}, fmt.Errorf("-clip = %q, want LO,HI: two finite numbers with LO <= HI", f.clip)
		}
	}
	if err := opt.Validate(); err != nil {
		return advantage.GroupOptions{}, optionError(err)
	}
	return opt, nil
}

func runGroup(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("group", stderr)
	preset := fs.String("preset", "", "")
	var f groupFlags
	fs.StringVar(&f.scale, "scale", "none", "")
	fs.Float64Var(&f.epsilon, "epsilon", 0, "")
	fs.BoolVar(&f.bessel, "bessel", false, "")
	fs.BoolVar(&f.leaveOneOut, "leave-one-out", false, "")
	fs.BoolVar(&f.best, "best", false, "")
	fs.StringVar(&f.clip, "clip", "", "")
	fs.StringVar(&f.whiten, "whiten", "none", "")
	if code, done := parseFlags(fs, groupHelp, args, stdout, stderr); done {
		return code
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name != "preset" })
	opt, err := groupOptions(*preset, explicit, f)
	if err != nil {
		return usageError(stderr, "group", err.Error())
	}
	return runStream("group", stdin, stdout, stderr, &groupHandler{opt: opt})
}
