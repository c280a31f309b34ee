package eval

import (
	"errors"

	"spiral/internal/inputerr"
	"spiral/internal/numeric"
)

// ErrTooCostly is the reason, wrapped in an *[InputError]'s Err, for
// arguments that are valid but would cost more memory or time than the
// function allows (errors.Is(err, ErrTooCostly) tells it). The limits are
// stated in each function's documentation.
var ErrTooCostly = inputerr.ErrTooCostly

// InputError describes an argument a function cannot use. Field is the
// argument, such as "k", "kmax" or "problems" (or a field of its elements,
// "problems[].N", printed as problems[i].N); Output is the position within a slice argument (the
// problem of a test set, the point of a grid), or -1; Value is the bad
// element's value; Err says why, and wraps [ErrTooCostly] when the
// arguments are valid but too large. Problem and Set are -1. Its message
// names the function, the argument and why, such as
//
//	eval: pass@k: k: 5 > n = 2: pass@k needs at least k samples
//
// It is the module's one input error type, also spiral.InputError; recover
// it with errors.As.
type InputError = inputerr.InputError

// The fields of PassCount elements (of a test set, "problems") an
// *InputError names.
const (
	FieldProblemsN = "problems[].N" // a problem's N, printed as problems[i].N
	FieldProblemsC = "problems[].C" // a problem's C, printed as problems[i].C
)

// argError returns the InputError about argument arg of what, at no
// position.
func argError(what, arg, reason string) *InputError {
	return inputerr.New("eval: "+what, "", InputError{Field: arg, Problem: -1, Set: -1, Output: -1, Err: errors.New(reason)})
}

// costError returns argError's InputError with a reason that wraps
// ErrTooCostly.
func costError(what, arg, reason string) *InputError {
	return inputerr.New("eval: "+what, "", InputError{Field: arg, Problem: -1, Set: -1, Output: -1, Err: inputerr.TooCostly(reason)})
}

// elementError returns the InputError about element i of argument arg of
// what, whose value is v.
func elementError(what, arg string, i int, v float64, reason string) *InputError {
	return inputerr.New("eval: "+what, "", InputError{Field: arg, Problem: -1, Set: -1, Output: i, Value: v, Err: errors.New(reason)})
}

// intElementError is elementError for an integer value.
func intElementError(what, arg string, i, v int, reason string) *InputError {
	return inputerr.Int("eval: "+what, "", InputError{Field: arg, Problem: -1, Set: -1, Output: i, Err: errors.New(reason)}, v)
}

// maxSteps bounds the inner-loop steps of one call (a rounded division or a
// multiply-add each, a few nanoseconds): calls that would take more are
// refused with ErrTooCostly, so that none runs for more than seconds. It is
// the module's cap on work, numeric.MaxWork.
const maxSteps = numeric.MaxWork

// within reports whether a*b <= limit for a, b >= 0, without overflow.
func within(a, b, limit int) bool {
	return b == 0 || a <= limit/b
}
