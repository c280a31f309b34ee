// Package inputerr defines the module's one error type for bad input from
// outside, [InputError], and [BatchError], the list of a batch's bad
// problems. Every package that checks a caller's data (combin, lengthgate,
// advantage, loss, eval, the root spiral) exports these types under its own
// name, as aliases, so that one errors.As target (*spiral.InputError, which
// is *advantage.InputError, *loss.InputError, ...) recovers any of them.
//
// Each layer creates its errors with [New], naming the field in its own
// words, and renames an error it passes on to its caller's words with
// [InputError.In]; nothing rewrites an error's text.
//
// A message names the field once, where Error prints it; the reason names
// no field, not even the field's own symbol in the paper. A value at a
// position prints after the field, and the reason then states only what is
// wrong with it: "problems[1].N = 4: fewer samples than kmax = 5: ...",
// "Lengths[0] = -1: length outside [0, L] tokens". A value of the field as a whole is stated
// bare at the start of the reason, other quantities by their symbols:
// "k: 5 > n = 2: ...", "Config.SetSize: 0 < 1", "n: 9 > N1 = 8"; a length
// or a count of the field as "len = 3, want 2". A field whose elements
// have fields of their own names the element as "[]": "problems[].N".
package inputerr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// An InputError describes one bad entry of a caller's input: which field,
// which problem, set and position, which value, and why. Recover it with
// errors.As. The same type crosses every layer of the module: each layer
// renames the field to its caller's name for it with [InputError.In], so an
// error always speaks of the caller's own fields, with one package prefix,
// and a program reads the fields rather than the text.
type InputError struct {
	// Field is the caller's name for the field or argument at fault, in
	// the words of the package that returned the error: "Batch.Rewards"
	// (spiral), "Rewards" (advantage.Batch), "Update" (loss.Rows),
	// "Search.Target" (lengthgate.Gates), "members" (an argument),
	// "problems[].N" (a field of an argument's elements, at Output), ...
	// Each package lists its names as constants.
	Field string
	// Problem is the problem's index in a batch, or -1 for an error that
	// is not about one problem.
	Problem int
	// Set is the set's index (within its problem), or -1.
	Set int
	// Output is the position within the set or the field, or -1: an
	// output of a set for a reward, a member of a set, an element of a
	// slice argument.
	Output int
	// Value is the bad value (a reward, a trace index, a length, a count,
	// a size), or 0.
	Value float64
	// Err says what is wrong, in words that name no field: a reason a
	// program can test with errors.Is or errors.As (advantage.ErrNotFinite,
	// a *combin.SetError, eval.ErrTooCostly, ...) or a description.
	Err error

	prefix  string // the package (or command) the error speaks for, "" for none
	unit    string // the word for Output when a problem or set is given
	exact   int64  // Value as an integer, when isInt
	isInt   bool
	noValue bool // Output's element has no one number to print (Element)
}

// New returns e as an error of package prefix (printed before the field;
// "" for none), Output named unit ("output", "member"; "" for
// "position") when a problem or set precedes it.
func New(prefix, unit string, e InputError) *InputError {
	e.prefix, e.unit = prefix, unit
	return &e
}

// Int returns New(prefix, unit, e) with Value the integer v, which Error
// prints exactly even beyond 2^53.
func Int[I ~int | ~int64](prefix, unit string, e InputError, v I) *InputError {
	e.Value, e.exact, e.isInt = float64(v), int64(v), true
	return New(prefix, unit, e)
}

// Element returns New(prefix, "", e) for an element (at e.Output) that
// has no one number to print, such as a struct or a slice: Error leaves
// out " = value".
func Element(prefix string, e InputError) *InputError {
	e.noValue = true
	return New(prefix, "", e)
}

// ErrTooCostly is the reason, on an InputError's Err, for arguments that
// are valid but would cost more memory or time than the function allows;
// errors.Is(err, ErrTooCostly) tells it. Packages export it as their own
// (eval.ErrTooCostly, combin.ErrTooCostly are this one value).
var ErrTooCostly = errors.New("too costly")

// TooCostly returns a reason with text why that is [ErrTooCostly] for
// errors.Is.
func TooCostly(why string) error { return tooCostly(why) }

type tooCostly string

func (e tooCostly) Error() string        { return string(e) }
func (e tooCostly) Is(target error) bool { return target == ErrTooCostly }

// Name returns the error of a text codec (UnmarshalText) of package prefix
// given a text that is none of names, about field: `field: "text" is not
// one of "a", "b"`.
func Name(prefix, field string, text []byte, names ...string) *InputError {
	var b strings.Builder
	fmt.Fprintf(&b, "%q is not one of ", text)
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return New(prefix, "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: errors.New(b.String())})
}

// Undefined returns the error of package prefix about field, whose value
// v is no defined value of its type typ (a MarshalText of an undefined
// enum value, a conversion such as Preset.Options).
func Undefined(prefix, field string, v int, typ string) *InputError {
	return Int(prefix, "", InputError{Field: field, Problem: -1, Set: -1, Output: -1,
		Err: fmt.Errorf("%d is not a defined %s", v, typ)}, v)
}

// In returns a copy of e as seen by the caller one layer up: prefix is the
// package (or command) that caller called, "" for none, and field the
// caller's name for the field that held e.Field's data. Problem, Set,
// Output, Value and Err are kept; the caller may change them on the copy
// (for example to fold the problem and set into field, as "rewards[2]",
// and set Problem and Set to -1). Like every method of InputError, it
// panics on a nil *InputError, which no function of the module returns.
func (e *InputError) In(prefix, field string) *InputError {
	c := *e
	c.prefix, c.Field = prefix, field
	return &c
}

// Error returns "prefix: Field: problem q, set i, output j = value:
// reason", leaving out what does not apply (without a problem, the set
// follows the field after a comma: "Field, set i"); without a problem or
// a set, a position prints as an index, "prefix: Field[j] = value:
// reason", in place of a "[]" in Field ("problems[].N" prints as
// "problems[j].N"). An integral value prints as an integer, exactly.
func (e *InputError) Error() string {
	var b strings.Builder
	e.write(&b, true)
	return b.String()
}

func (e *InputError) write(b *strings.Builder, prefixed bool) {
	if prefixed && e.prefix != "" {
		b.WriteString(e.prefix)
		b.WriteString(": ")
	}
	switch {
	case e.Problem < 0 && e.Set < 0 && e.Output >= 0:
		// The index goes where the field says, "problems[].N" as
		// "problems[1].N", else after it.
		head, tail, found := strings.Cut(e.Field, "[]")
		if !found {
			head, tail = e.Field, ""
		}
		fmt.Fprintf(b, "%s[%d]%s", head, e.Output, tail)
		if !e.noValue {
			b.WriteString(" = ")
			b.WriteString(e.value())
		}
	default:
		b.WriteString(e.Field)
		if e.Problem >= 0 {
			fmt.Fprintf(b, ": problem %d", e.Problem)
		}
		if e.Set >= 0 {
			fmt.Fprintf(b, ", set %d", e.Set)
		}
		if e.Output >= 0 {
			unit := e.unit
			if unit == "" {
				unit = "position"
			}
			fmt.Fprintf(b, ", %s %d = %s", unit, e.Output, e.value())
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
}

// value returns e.Value as Error prints it: the exact integer Int gave,
// unless Value was changed since, any other integer in exact decimal digits.
func (e *InputError) value() string {
	if e.isInt && float64(e.exact) == e.Value {
		return strconv.FormatInt(e.exact, 10)
	}
	return formatValue(e.Value)
}

// formatValue formats a value for an error message: an integral float64
// of magnitude at most 2^63 (a count, an index, a length) in exact decimal
// digits, as %d would print the integer, anything else as %v would.
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) <= 0x1p63 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// A BatchError lists every problem of a batch whose input is bad, each
// with its first error, in problem order.
type BatchError struct {
	Problems []*InputError

	prefix string
}

// Rename returns err for the caller one layer up: each *InputError and
// *BatchError in it, alone or joined (errors.Join, at any depth), renamed
// by its In with prefix and field (which maps a Field of this layer to the
// caller's name); any other error is returned as it is.
func Rename(err error, prefix string, field func(string) string) error {
	switch e := err.(type) {
	case *BatchError:
		return e.In(prefix, field)
	case *InputError:
		return e.In(prefix, field(e.Field))
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		out := make([]error, len(errs))
		for i, x := range errs {
			out[i] = Rename(x, prefix, field)
		}
		return errors.Join(out...)
	}
	return err
}

// NewBatch returns the BatchError of package prefix listing problems.
func NewBatch(prefix string, problems []*InputError) *BatchError {
	return &BatchError{Problems: problems, prefix: prefix}
}

// In returns a copy of e for the caller one layer up, as [InputError.In]
// does, each problem's error renamed by field (which maps a Field of this
// layer to the caller's name).
func (e *BatchError) In(prefix string, field func(string) string) *BatchError {
	c := &BatchError{Problems: make([]*InputError, len(e.Problems)), prefix: prefix}
	for i, p := range e.Problems {
		c.Problems[i] = p.In(prefix, field(p.Field))
	}
	return c
}

// Error returns "prefix: P bad problems: " and the first three problems'
// errors, without their prefix.
func (e *BatchError) Error() string {
	const shown = 3
	var b strings.Builder
	if e.prefix != "" {
		b.WriteString(e.prefix)
		b.WriteString(": ")
	}
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
		p.write(&b, false)
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
