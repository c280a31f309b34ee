package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/eval"
	"spiral/internal/inputerr"
	"spiral/internal/names"
)

// An errorValue is what an error handle stands for: the error's kind and
// message, and its items (the bad problems of a batch, or the error itself).
type errorValue struct {
	kind    int64
	message string
	items   []errorItem
}

// An errorItem is one structured error, flattened for C.
type errorItem struct {
	c                  C.spiral_error_item
	field, message, fn string
}

// A usageErr is a misuse of the ABI by its caller.
type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &usageErr{"spiral: " + fmt.Sprintf(format, args...)}
}

// An argErr is an error of an evaluation function (package eval), which
// the ABI reports as SPIRAL_ERR_ARG with the function's name.
type argErr struct {
	fn  string // the computation, such as "pass@k" or "coverage"
	err error
	// The argument and the position within it, when err's field has the
	// position folded in ("k[1]" for the argument k at 1); arg is "" when
	// err's Field and Output are the argument and the position.
	arg   string
	index int
}

func (e *argErr) Error() string { return e.err.Error() }
func (e *argErr) Unwrap() error { return e.err }

// A configErr is an invalid configuration or option.
type configErr struct{ err error }

func (e *configErr) Error() string { return e.err.Error() }
func (e *configErr) Unwrap() error { return e.err }

// renamed returns err as the ABI's caller sees it: each *spiral.InputError
// in it (alone, joined, or the problems of a *spiral.BatchError) renamed
// with InputError.In to the caller's field, under the prefix "spiral".
func renamed(err error) error {
	return inputerr.Rename(err, "spiral", names.Spiral.ABI)
}

// named returns err, an error about the value of the ABI's argument arg
// (a name it decodes, such as a reduction's), renamed to arg with In when it
// is an *InputError; any other error as it is.
func named(err error, arg string) error {
	if e, ok := errors.AsType[*spiral.InputError](err); ok {
		return e.In("spiral", arg)
	}
	return err
}

// fail returns a handle to err, flattened: a *advantage.BatchError gives
// one item per bad problem, any other error one item.
func fail(err error) C.spiral_handle {
	return newHandle(flatten(err))
}

func flatten(err error) *errorValue {
	v := &errorValue{message: err.Error()}
	if be, ok := errors.AsType[*advantage.BatchError](err); ok {
		v.kind = C.SPIRAL_ERR_BATCH
		for _, p := range be.Problems {
			v.items = append(v.items, item(p))
		}
		return v
	}
	it := item(err)
	v.kind = int64(it.c.kind)
	v.items = []errorItem{it}
	return v
}

// item flattens one error.
func item(err error) errorItem {
	it := errorItem{message: err.Error()}
	c := &it.c
	c.problem, c.set, c.output = -1, -1, -1
	if u, ok := errors.AsType[*usageErr](err); ok {
		c.kind = C.SPIRAL_ERR_USAGE
		it.message = u.msg
		return it
	}
	_, config := errors.AsType[*configErr](err)
	arg, isArg := errors.AsType[*argErr](err)
	if ie, ok := errors.AsType[*advantage.InputError](err); ok {
		c.kind = C.SPIRAL_ERR_INPUT
		switch {
		case config:
			c.kind = C.SPIRAL_ERR_CONFIG
		case isArg:
			c.kind, it.fn = C.SPIRAL_ERR_ARG, arg.fn
		}
		it.field = ie.Field
		c.problem, c.set, c.output = C.int64_t(ie.Problem), C.int64_t(ie.Set), C.int64_t(ie.Output)
		if isArg && arg.arg != "" {
			it.field, c.output = arg.arg, C.int64_t(arg.index)
		}
		c.value = C.double(ie.Value)
		setReason(c, err)
		if c.reason == C.SPIRAL_REASON_NONE && ie.Output >= 0 && ie.Value < 0 &&
			(ie.Field == "search_lengths" || ie.Field == "aggregation_lengths") {
			c.reason = C.SPIRAL_REASON_NEGATIVE_LENGTH
		}
		return it
	}
	if config {
		c.kind = C.SPIRAL_ERR_CONFIG
		return it
	}
	c.kind = C.SPIRAL_ERR_OTHER
	return it
}

// setReason sets c's reason from the error err wraps.
func setReason(c *C.spiral_error_item, err error) {
	switch {
	case errors.Is(err, advantage.ErrNotFinite):
		c.reason = C.SPIRAL_REASON_NOT_FINITE
	case errors.Is(err, advantage.ErrTooLarge):
		c.reason = C.SPIRAL_REASON_TOO_LARGE
	case errors.Is(err, eval.ErrTooCostly):
		c.reason = C.SPIRAL_REASON_TOO_COSTLY
	}
	if se, ok := errors.AsType[*combin.SetError](err); ok {
		c.reason = C.SPIRAL_REASON_SET
		c.set_reason, c.set_other = C.int64_t(se.Reason), C.int64_t(se.Other)
	}
}

// spiral_error_summary writes the kind of error e (SPIRAL_ERR_*) and its
// number of items. It returns an error handle if e is not an error handle.
//
//export spiral_error_summary
func spiral_error_summary(e C.spiral_handle, kind, items *C.int64_t) C.spiral_handle {
	v, err := lookup[*errorValue](e, "error")
	if err != nil {
		return fail(err)
	}
	*kind, *items = C.int64_t(v.kind), C.int64_t(len(v.items))
	return 0
}

// spiral_error_get writes item i of error e to dst.
//
//export spiral_error_get
func spiral_error_get(e C.spiral_handle, i C.int64_t, dst *C.spiral_error_item) C.spiral_handle {
	v, err := lookup[*errorValue](e, "error")
	if err != nil {
		return fail(err)
	}
	if i < 0 || int64(i) >= int64(len(v.items)) {
		return fail(usageError("error item %d out of range [0, %d)", int64(i), len(v.items)))
	}
	*dst = v.items[i].c
	return 0
}

// spiral_error_text copies a text of error e (SPIRAL_TEXT_*) into buf, as
// UTF-8 without a terminating NUL, and returns its length in bytes: when it
// is larger than capacity, only the first capacity bytes were written. Item
// -1 is the error as a whole (its message); items from 0 are those of
// spiral_error_get. It returns -1 if e or i is not valid.
//
//export spiral_error_text
func spiral_error_text(e C.spiral_handle, i, which C.int64_t, buf *C.char, capacity C.int64_t) C.int64_t {
	v, err := lookup[*errorValue](e, "error")
	if err != nil || i < -1 || int64(i) >= int64(len(v.items)) {
		return -1
	}
	var s string
	switch {
	case i == -1 && which == C.SPIRAL_TEXT_MESSAGE:
		s = v.message
	case i == -1:
	case which == C.SPIRAL_TEXT_MESSAGE:
		s = v.items[i].message
	case which == C.SPIRAL_TEXT_FIELD:
		s = v.items[i].field
	case which == C.SPIRAL_TEXT_FUNC:
		s = v.items[i].fn
	default:
		return -1
	}
	if capacity > 0 && buf != nil {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity)), s)
	}
	return C.int64_t(len(s))
}
