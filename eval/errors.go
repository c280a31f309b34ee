package eval

import (
	"errors"
	"strconv"

	"spiral/internal/numeric"
)

// ErrTooCostly is the error, wrapped in an [*ArgError], for arguments that
// are valid but would cost more memory or time than the function allows.
// The limits are stated in each function's documentation.
var ErrTooCostly = errors.New("too costly")

// An ArgError reports an argument a function cannot use. Its message names
// the function, the argument, its value and why, such as
//
//	eval: pass@k: k = 5 > n = 2: pass@k needs at least k samples
//
// Index is the position within a slice argument (the problem of a test
// set, the point of a grid), or -1. Err is [ErrTooCostly] when the
// arguments are valid but too large, nil otherwise.
type ArgError struct {
	Func   string // the computation, such as "pass@k" or "coverage"
	Arg    string // the argument, such as "k", "kmax" or "problems"
	Index  int    // position within Arg, or -1
	Reason string // the value and what is wrong with it
	Err    error  // ErrTooCostly or nil
}

func (e *ArgError) Error() string {
	s := "eval: " + e.Func + ": "
	if e.Index >= 0 {
		s += e.Arg + "[" + strconv.Itoa(e.Index) + "]: "
	}
	return s + e.Reason
}

// Unwrap returns Err.
func (e *ArgError) Unwrap() error { return e.Err }

// argError returns an ArgError for argument arg of what, at no position.
func argError(what, arg, reason string) *ArgError {
	return &ArgError{Func: what, Arg: arg, Index: -1, Reason: reason}
}

// costError returns an ArgError wrapping ErrTooCostly.
func costError(what, arg, reason string) *ArgError {
	return &ArgError{Func: what, Arg: arg, Index: -1, Reason: reason, Err: ErrTooCostly}
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
