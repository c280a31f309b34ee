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
// the fields of the library's structured errors (advantage.InputError and
// advantage.BatchError, combin.SetError, eval.ArgError). Handles are numbers
// in a table; every function may be called from many threads at once.
package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
)

func main() {}

// handles maps the handles given to the caller to the values they stand for.
var (
	handles    sync.Map // uint64 -> any
	lastHandle atomic.Uint64
)

// newHandle stores v and returns its handle, never 0.
func newHandle(v any) C.spiral_handle {
	h := lastHandle.Add(1)
	handles.Store(h, v)
	return C.spiral_handle(h)
}

// lookup returns the value of handle h if it is a T.
func lookup[T any](h C.spiral_handle, what string) (T, error) {
	var zero T
	v, ok := handles.Load(uint64(h))
	if !ok {
		return zero, usageError("%s handle %d is not valid (never made, or released)", what, uint64(h))
	}
	t, ok := v.(T)
	if !ok {
		return zero, usageError("handle %d is not a %s handle", uint64(h), what)
	}
	return t, nil
}

// spiral_release gives back a handle (a configuration or an error). A zero
// or unknown handle is ignored; a handle must not be used after it is
// released.
//
//export spiral_release
func spiral_release(h C.spiral_handle) {
	if v, ok := handles.LoadAndDelete(uint64(h)); ok {
		if ps, ok := v.(*plansState); ok {
			plansPool.Put(ps)
		}
	}
}

// guard turns a panic of the call it is deferred in into an error handle
// in *ret, so that no input can bring down the caller's process.
func guard(ret *C.spiral_handle) {
	if r := recover(); r != nil {
		*ret = fail(fmt.Errorf("spiral: internal error: %v", r))
	}
}
