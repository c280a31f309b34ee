package advantage

import (
	"errors"
	"fmt"

	"spiral/internal/inputerr"
)

// Reasons wrapped by an [InputError] for a bad reward; test with errors.Is.
var (
	// ErrNotFinite: a scored reward is NaN or infinite. Mark an output
	// that could not be scored in Batch.Unscorable instead.
	ErrNotFinite = errors.New("reward is not finite")
	// ErrTooLarge: a scored reward's magnitude exceeds MaxAbsReward.
	ErrTooLarge = fmt.Errorf("reward magnitude exceeds %g, the largest accepted", MaxAbsReward)
)

// InputError describes one bad entry of a caller's input: which field,
// which problem, set and position, which value, and why (its Field,
// Problem, Set, Output, Value and Err). It is the module's one input error
// type, which every layer renames for its caller with In (the root package
// spiral calls it spiral.InputError); recover it with errors.As. This
// package's fields are a Batch field ("Traces", "Sets", "SetSizes",
// "Members", "RewardCounts", "Rewards", "Unscorable") or an argument
// ("traces", "sets", "rewards", "ids", "lengths"), and Err is ErrNotFinite
// or ErrTooLarge for a reward, the *combin.SetError for a set, a
// description otherwise.
type InputError = inputerr.InputError

// A BatchError lists every problem of a batch whose input is bad, each
// with its first *InputError, in problem order. [ComputeBatch] returns one
// when the batch's layout is sound but some problems are not, after
// crediting every other problem. Its In renames every problem's error.
type BatchError = inputerr.BatchError

// The fields of the options this package validates, which an *InputError
// names: GroupOptions' (GroupOptions.Validate, and the text codecs of
// Scale and Whitening), RewardRange's (RewardRange.Validate) and a Preset.
const (
	FieldScale   = "Scale"
	FieldEpsilon = "Epsilon"
	FieldBest    = "Best"
	FieldClip    = "Clip"
	FieldWhiten  = "Whiten"
	FieldLow     = "Low"
	FieldHigh    = "High"
	FieldPreset  = "Preset" // a Preset value (Options, MarshalText, UnmarshalText)
)

// inputError returns e as this package's error, its Output an output of a
// set.
func inputError(e InputError) *InputError { return inputerr.New("advantage", "output", e) }

// argError returns the *InputError about argument field, whose value is
// the integer v.
func argError(field string, v int, format string, args ...any) *InputError {
	return inputerr.Int("advantage", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}, v)
}

func layoutError(field string, format string, args ...any) *InputError {
	return inputError(InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)})
}

func problemError(field string, p, set int, value float64, format string, args ...any) *InputError {
	return inputError(InputError{Field: field, Problem: p, Set: set, Output: -1, Value: value, Err: fmt.Errorf(format, args...)})
}
