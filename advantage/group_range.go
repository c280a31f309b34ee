package advantage

import (
	"fmt"
	"math"

	"golang.org/x/exp/constraints"
)

// RewardRange is the dynamic-sampling filter of OpenRLHF
// (--algo.dynamic_filtering_range low high): a prompt group is kept for
// training only when the mean of its raw rewards lies strictly inside
// (Low, High), and resampled otherwise. With 0/1 rewards and OpenRLHF's
// default (0, 1), it drops the groups that are all wrong or all right,
// which get no gradient from a group baseline. The decision is made on the
// raw rewards, before any reward shaping (such as a length penalty) and
// before any baseline.
//
// The zero value is disabled: it keeps every group. Otherwise Low and High
// must be finite with Low < High.
type RewardRange struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Enabled reports whether r filters anything: whether it is not the zero
// value.
func (r RewardRange) Enabled() bool { return r != RewardRange{} }

// Validate reports whether r is valid: the zero value, or finite bounds
// with Low < High.
func (r RewardRange) Validate() error {
	if !r.Enabled() {
		return nil
	}
	bad := func(field string, v float64) error {
		return inputError(InputError{Field: field, Problem: -1, Set: -1, Output: -1, Value: v,
			Err: fmt.Errorf("reward range (%v, %v), want finite bounds with Low < High (or the zero value, disabled)", r.Low, r.High)})
	}
	switch {
	case math.IsNaN(r.Low) || math.IsInf(r.Low, 0) || !(r.Low < r.High) && !math.IsNaN(r.High) && !math.IsInf(r.High, 0):
		return bad(FieldLow, r.Low)
	case math.IsNaN(r.High) || math.IsInf(r.High, 0):
		return bad(FieldHigh, r.High)
	}
	return nil
}

// Contains reports whether Low < mean < High, or true when r is disabled.
// It does not validate r.
func (r RewardRange) Contains(mean float64) bool {
	return !r.Enabled() || r.Low < mean && mean < r.High
}

// InRewardRange reports whether one prompt group, whose raw rewards are
// given, is kept by r: whether the mean of its scored rewards lies strictly
// inside (r.Low, r.High). unscorable is empty or parallel to rewards; a row
// marked true is left out of the mean (its reward is not checked). A group
// with no scored reward is not kept (it has no mean), unless r is
// disabled, which keeps every group.
//
// The mean is the package's one mean (a compensated sum, rounded once), and
// a group whose scored rewards are all equal has exactly that value as its
// mean, so that (1, 1, 1, 1) is dropped by the range (0, 1) and
// (0.1, 0.1, 0.1) by (0.1, 1), without rounding deciding.
//
// Errors, checked before anything is decided: an invalid r,
// len(unscorable) not 0 or len(rewards), or a scored reward that is NaN,
// infinite or larger in magnitude than [MaxAbsReward]: then an
// *[InputError] with Field "rewards" and Output its position, wrapping
// [ErrNotFinite] or [ErrTooLarge].
func InRewardRange[F constraints.Float](r RewardRange, rewards []F, unscorable []bool) (bool, error) {
	if err := r.Validate(); err != nil {
		return false, err
	}
	if len(unscorable) != 0 && len(unscorable) != len(rewards) {
		return false, argError("unscorable", len(unscorable), "len = %d, want 0 or len(rewards) = %d", len(unscorable), len(rewards))
	}
	scored := func(i int) bool { return len(unscorable) == 0 || !unscorable[i] }
	var acc meanAcc
	for i, x := range rewards {
		if !scored(i) {
			continue
		}
		if err := checkReward(float64(x)); err != nil {
			return false, inputError(InputError{Field: "rewards", Problem: -1, Set: -1, Output: i, Value: float64(x), Err: err})
		}
		acc.add(float64(x))
	}
	if !r.Enabled() {
		return true, nil
	}
	if acc.n == 0 {
		return false, nil
	}
	return r.Contains(acc.mean()), nil
}
