// Command capi is spiral's C ABI, built as a shared library:
//
//	go build -buildmode=c-shared -o libspiral.so ./capi
//
// It lives in a module of its own (spiral/python) so that the library stays
// pure Go. The types are in spiral_abi.h, the functions in the header that go
// build writes beside the library; the Python package spiral (../spiral)
// loads it with ctypes.
//
// Every function takes arrays as pointers and lengths into the caller's
// memory (spiral_array), reads its inputs and writes its outputs there during
// the call, copies what it must keep into its own memory, and never hands
// the caller a Go pointer. It returns 0 or an error handle whose items carry
// the fields of the library's structured errors (the one InputError, the
// BatchError of its bad problems, a set's combin.SetError). Handles are
// runtime/cgo.Handle values; every function may be called from many threads
// at once.
package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
)

func main() {}

// Handles are runtime/cgo.Handle values: a number the caller holds for a Go
// value, never a Go pointer, never reused after it is released.

// newHandle stores v and returns its handle, never 0.
func newHandle(v any) C.spiral_handle {
	return C.spiral_handle(cgo.NewHandle(v))
}

// load returns the value of handle h, or false if h is 0 or not a live
// handle (never made, or released).
func load(h C.spiral_handle) (v any, ok bool) {
	if h == 0 {
		return nil, false
	}
	defer func() {
		if recover() != nil { // cgo.Handle.Value's panic on an invalid handle
			v, ok = nil, false
		}
	}()
	return cgo.Handle(h).Value(), true
}

// lookup returns the value of handle h if it is a T.
func lookup[T any](h C.spiral_handle, what string) (T, error) {
	var zero T
	v, ok := load(h)
	if !ok {
		return zero, usageError("%s handle %d is not valid (never made, or released)", what, uint64(h))
	}
	t, ok := v.(T)
	if !ok {
		return zero, usageError("handle %d is not a %s handle", uint64(h), what)
	}
	return t, nil
}

// spiral_release gives back a handle (a configuration, plans or an error).
// A zero, unknown or already released handle is ignored. A call that uses
// the handle while it is released finishes with the value it found; any
// call after gets a SPIRAL_ERR_USAGE error.
//
//export spiral_release
func spiral_release(h C.spiral_handle) {
	v, ok := load(h)
	if !ok {
		return
	}
	func() {
		defer func() { _ = recover() }() // released by another thread meanwhile
		cgo.Handle(h).Delete()
		if r, ok := v.(*plansRef); ok {
			r.release()
		}
	}()
}

// guard turns a panic of the call it is deferred in into an error handle
// in *ret, so that no input can bring down the caller's process.
func guard(ret *C.spiral_handle) {
	if r := recover(); r != nil {
		*ret = fail(fmt.Errorf("spiral: internal error: %v", r))
	}
}
