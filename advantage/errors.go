package advantage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"spiral/combin"
	"spiral/internal/numeric"
)

// Reasons wrapped by an [InputError] for a bad reward; test with errors.Is.
var (
	// ErrNotFinite: a scored reward is NaN or infinite. Mark an output
	// that could not be scored in Batch.Unscorable instead.
	ErrNotFinite = errors.New("reward is not finite")
	// ErrTooLarge: a scored reward's magnitude exceeds MaxAbsReward.
	ErrTooLarge = fmt.Errorf("reward magnitude exceeds MaxAbsReward = %g", MaxAbsReward)
)

// An InputError describes one bad entry of a caller's input: which field,
// which problem, set and position, which value, and why. Recover it with
// errors.As. The same type crosses every layer of the module (the root
// package spiral calls it spiral.InputError): each layer renames the field
// to its caller's name for it with [InputError.In], so an error always
// speaks of the caller's own fields, with one package prefix, and a
// program reads the fields rather than the text.
type InputError struct {
	// Field is the caller's name for the field or argument at fault: a
	// Batch field ("Traces", "Sets", "SetSizes", "Members",
	// "RewardCounts", "Rewards", "Unscorable") or Compute's argument
	// ("traces", "sets", "rewards") from this package; the root package's
	// own names from it ("Batch.Rewards", "Config.SetSize", ...).
	Field string
	// Problem is the problem's index in the batch, or -1 for a length of
	// the batch as a whole or an argument that is not per problem.
	Problem int
	// Set is the set's index within its problem, or -1.
	Set int
	// Output is the position within the set, or -1: of an aggregation
	// output for rewards, of a member for sets; of a trace for search
	// lengths.
	Output int
	// Value is the bad value (a reward, a trace index, a count, a size),
	// or 0.
	Value float64
	// Err says what is wrong, in words that name no field: ErrNotFinite or
	// ErrTooLarge for a reward, a *combin.SetError for a set (an index out
	// of range or repeated, an empty set, two identical sets), a
	// description otherwise.
	Err error

	prefix  string // the package (or command) the error speaks for
	renamed bool   // prefix is set (an empty prefix prints none)
}

// In returns a copy of e as seen by the caller one layer up: prefix is the
// package (or command) that caller called, "" for none, and field the
// caller's name for the field that held e.Field's data. Problem, Set,
// Output, Value and Err are kept; the caller may change them on the copy
// (for example to fold the position into field, as "rewards[2][3]", and
// set Set and Output to -1).
func (e *InputError) In(prefix, field string) *InputError {
	c := *e
	c.prefix, c.renamed, c.Field = prefix, true, field
	return &c
}

// Error returns "prefix: Field: problem q, set i, output j = value:
// reason", leaving out what does not apply (without a problem, the set
// follows the field after a comma). An integral value prints as an
// integer, exactly.
func (e *InputError) Error() string {
	var b strings.Builder
	writePrefix(&b, e.renamed, e.prefix)
	b.WriteString(e.Field)
	if e.Problem >= 0 {
		fmt.Fprintf(&b, ": problem %d", e.Problem)
	}
	if e.Set >= 0 {
		fmt.Fprintf(&b, ", set %d", e.Set)
	}
	if e.Output >= 0 {
		fmt.Fprintf(&b, ", %s %d = %s", unit(e.Err), e.Output, value(e))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(reason(e.Err))
	}
	return b.String()
}

// value returns e.Value as Error prints it: a set's bad trace index exactly
// from its *combin.SetError (Value holds it rounded to float64), any other
// integer in decimal digits (numeric.FormatValue).
func value(e *InputError) string {
	if se, ok := e.Err.(*combin.SetError); ok && (se.Reason == combin.OutOfRange || se.Reason == combin.Repeated) {
		return strconv.Itoa(se.Index)
	}
	return numeric.FormatValue(e.Value)
}

// unit returns the word for an InputError's Output, from its reason: an
// output of a set for a bad reward, a member for a bad set, a position
// otherwise.
func unit(err error) string {
	switch {
	case errors.Is(err, ErrNotFinite) || errors.Is(err, ErrTooLarge):
		return "output"
	case errors.As(err, new(*combin.SetError)):
		return "member"
	}
	return "position"
}

// reason returns what err says, without a package prefix or a position
// that the InputError already gives.
func reason(err error) string {
	se, ok := err.(*combin.SetError)
	if !ok {
		return err.Error()
	}
	switch se.Reason {
	case combin.Empty:
		return "empty set"
	case combin.OutOfRange:
		return fmt.Sprintf("trace index out of range [0, N1 = %d)", se.Traces)
	case combin.Repeated:
		return fmt.Sprintf("trace index repeats member %d of the set", se.Other)
	case combin.Duplicate:
		return fmt.Sprintf("identical to set %d", se.Other)
	}
	return strings.TrimPrefix(se.Error(), "combin: ")
}

func (e *InputError) Unwrap() error { return e.Err }

// A BatchError lists every problem of a batch whose input is bad, each
// with its first error, in problem order. [ComputeBatch] returns one when
// the batch's layout is sound but some problems are not, after crediting
// every other problem.
type BatchError struct {
	Problems []*InputError

	prefix  string
	renamed bool
}

// In returns a copy of e for the caller one layer up, as [InputError.In]
// does, each problem's error renamed by field (which maps a Field of this
// layer to the caller's name).
func (e *BatchError) In(prefix string, field func(string) string) *BatchError {
	c := &BatchError{Problems: make([]*InputError, len(e.Problems)), prefix: prefix, renamed: true}
	for i, p := range e.Problems {
		c.Problems[i] = p.In(prefix, field(p.Field))
	}
	return c
}

func (e *BatchError) Error() string {
	const shown = 3
	var b strings.Builder
	writePrefix(&b, e.renamed, e.prefix)
	fmt.Fprintf(&b, "%d bad problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for i, p := range e.Problems[:min(len(e.Problems), shown)] {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" ")
		q := *p
		q.prefix, q.renamed = "", true
		b.WriteString(q.Error())
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

// writePrefix writes an error's package prefix and ": ": "advantage" unless
// a layer above renamed the error (In), then that layer's prefix, or none
// if it is "".
func writePrefix(b *strings.Builder, renamed bool, prefix string) {
	if !renamed {
		prefix = "advantage"
	}
	if prefix != "" {
		b.WriteString(prefix)
		b.WriteString(": ")
	}
}
