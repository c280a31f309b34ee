package advantage

import (
	"errors"
	"fmt"
	"strings"

	"spiral/combin"
)

// Reasons wrapped by an [InputError] for a bad reward; test with errors.Is.
var (
	// ErrNotFinite: a scored reward is NaN or infinite. Mark an output
	// that could not be scored in Batch.Unscorable instead.
	ErrNotFinite = errors.New("reward is not finite")
	// ErrTooLarge: a scored reward's magnitude exceeds MaxAbsReward.
	ErrTooLarge = fmt.Errorf("reward magnitude exceeds MaxAbsReward = %g", MaxAbsReward)
)

// An InputError describes one bad entry of a [Batch] (or of the arguments
// of [Compute]). Recover it with errors.As.
type InputError struct {
	// Field is the Batch field at fault ("Traces", "Sets", "SetSizes",
	// "Members", "RewardCounts", "Rewards", "Unscorable"), or Compute's
	// argument ("traces", "sets", "rewards").
	Field string
	// Problem is the problem's index in the batch, or -1 for a length of
	// the batch as a whole.
	Problem int
	// Set is the set's index within its problem, or -1.
	Set int
	// Output is the position within the set, or -1: of an aggregation
	// output for Rewards, of a member for Members.
	Output int
	// Value is the bad value (a reward, an index, a count), or 0.
	Value float64
	// Err says what is wrong: ErrNotFinite or ErrTooLarge for a reward, a
	// *combin.SetError for a set (an index out of range or repeated, an
	// empty set, two identical sets), a description otherwise.
	Err error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString("advantage: ")
	b.WriteString(e.Field)
	if e.Problem >= 0 {
		fmt.Fprintf(&b, ": problem %d", e.Problem)
	}
	if _, ok := e.Err.(*combin.SetError); ok { // it names the set and member
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
		return b.String()
	}
	if e.Set >= 0 {
		fmt.Fprintf(&b, ", set %d", e.Set)
	}
	if e.Output >= 0 {
		if e.Field == "Rewards" || e.Field == "rewards" {
			fmt.Fprintf(&b, ", output %d = %v", e.Output, e.Value)
		} else {
			fmt.Fprintf(&b, ", position %d", e.Output)
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// A BatchError lists every problem of a batch whose input is bad, each
// with its first error, in problem order. [ComputeBatch] returns one when
// the batch's layout is sound but some problems are not; with
// Batch.SkipBad it has credited every other problem.
type BatchError struct {
	Problems []*InputError
}

func (e *BatchError) Error() string {
	const shown = 3
	var b strings.Builder
	fmt.Fprintf(&b, "advantage: %d bad problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for i, p := range e.Problems[:min(len(e.Problems), shown)] {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" ")
		b.WriteString(strings.TrimPrefix(p.Error(), "advantage: "))
	}
	if len(e.Problems) > shown {
		fmt.Fprintf(&b, "; and %d more", len(e.Problems)-shown)
	}
	return b.String()
}

// Unwrap returns the errors of e.Problems, so that errors.As finds the
// first *InputError and errors.Is looks through all of them.
func (e *BatchError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

func layoutError(field string, format string, args ...any) *InputError {
	return &InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}
}

func problemError(field string, p, set int, value float64, format string, args ...any) *InputError {
	return &InputError{Field: field, Problem: p, Set: set, Output: -1, Value: value, Err: fmt.Errorf(format, args...)}
}
