package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"spiral/advantage"
)

// dtypeName names an element type in errors.
func dtypeName(d C.int64_t) string {
	switch d {
	case C.SPIRAL_ABSENT:
		return "absent"
	case C.SPIRAL_F32:
		return "float32"
	case C.SPIRAL_F64:
		return "float64"
	case C.SPIRAL_I32:
		return "int32"
	case C.SPIRAL_I64:
		return "int64"
	case C.SPIRAL_BOOL:
		return "bool"
	}
	return "unknown"
}

// shape checks that a is a well-formed array of one of the element types
// allowed (or absent when optional).
func shape(a *C.spiral_array, name string, optional bool, allowed ...C.int64_t) error {
	if a.dtype == C.SPIRAL_ABSENT {
		if !optional {
			return usageError("%s is required", name)
		}
		return nil
	}
	ok := false
	for _, d := range allowed {
		ok = ok || a.dtype == d
	}
	if !ok {
		names := ""
		for i, d := range allowed {
			if i > 0 {
				names += " or "
			}
			names += dtypeName(d)
		}
		return usageError("%s has element type %s (%d), want %s", name, dtypeName(a.dtype), int64(a.dtype), names)
	}
	if a.len < 0 || a.len > 0 && a.data == nil {
		return usageError("%s has length %d at address %p", name, int64(a.len), a.data)
	}
	return nil
}

// maxElements caps the length of an array whose length nothing else
// bounds (the rows of spiral_group, the problems of an evaluation, a
// credit's search advantages): 2^27 elements, 1 GiB of float64.
const maxElements = 1 << 27

// atMost returns an error naming a unless it holds at most most elements:
// a length checked before anything is copied, so that no length from a
// caller makes the library allocate beyond its inputs' layout.
func atMost(a *C.spiral_array, name string, most int) error {
	if a.dtype != C.SPIRAL_ABSENT && (a.len < 0 || int64(a.len) > int64(most)) {
		return &advantage.InputError{Field: name, Problem: -1, Set: -1, Output: -1, Value: float64(a.len),
			Err: fmt.Errorf("%d elements, more than the %d its layout allows", int64(a.len), most)}
	}
	return nil
}

// readInts copies the integers of a (I32 or I64) into dst, grown to fit,
// and returns it; nil if a is absent and optional.
func readInts(dst []int, a *C.spiral_array, name string, optional bool) ([]int, error) {
	if err := shape(a, name, optional, C.SPIRAL_I32, C.SPIRAL_I64); err != nil {
		return nil, err
	}
	if a.dtype == C.SPIRAL_ABSENT {
		return nil, nil
	}
	n := int(a.len)
	dst = grow(dst, n)
	if a.dtype == C.SPIRAL_I64 {
		if intIs64 {
			copy(dst, unsafe.Slice((*int)(a.data), n)) // one memmove
			return dst, nil
		}
		src := unsafe.Slice((*int64)(a.data), n)
		for i, x := range src {
			dst[i] = int(x)
		}
	} else {
		src := unsafe.Slice((*int32)(a.data), n)
		for i, x := range src {
			dst[i] = int(x)
		}
	}
	return dst, nil
}

// readFloats copies the floats of a (F32 or F64) into dst, grown to fit,
// and returns it; nil if a is absent and optional.
func readFloats(dst []float64, a *C.spiral_array, name string, optional bool) ([]float64, error) {
	if err := shape(a, name, optional, C.SPIRAL_F32, C.SPIRAL_F64); err != nil {
		return nil, err
	}
	if a.dtype == C.SPIRAL_ABSENT {
		return nil, nil
	}
	n := int(a.len)
	dst = grow(dst, n)
	if a.dtype == C.SPIRAL_F64 {
		copy(dst, unsafe.Slice((*float64)(a.data), n))
	} else {
		src := unsafe.Slice((*float32)(a.data), n)
		for i, x := range src {
			dst[i] = float64(x)
		}
	}
	return dst, nil
}

// viewFloats returns the floats of a: the caller's memory itself when a is
// F64 and aligned (only read, and only during the call: the library keeps
// no pointer into it), else a copy in *own, grown to fit and kept for the
// next call. It returns nil if a is absent and optional.
func viewFloats(own *[]float64, a *C.spiral_array, name string, optional bool) ([]float64, error) {
	if a.dtype == C.SPIRAL_F64 && a.len > 0 && a.data != nil && uintptr(a.data)%unsafe.Alignof(float64(0)) == 0 {
		return unsafe.Slice((*float64)(a.data), int(a.len)), nil
	}
	s, err := readFloats(*own, a, name, optional)
	if s != nil {
		*own = s
	}
	return s, err
}

// viewInts returns the integers of a as viewFloats does: the caller's
// memory itself when a is I64 (where int is 64 bits) and aligned, else a
// copy in *own.
func viewInts(own *[]int, a *C.spiral_array, name string, optional bool) ([]int, error) {
	if intIs64 && a.dtype == C.SPIRAL_I64 && a.len > 0 && a.data != nil && uintptr(a.data)%unsafe.Alignof(int(0)) == 0 {
		return unsafe.Slice((*int)(a.data), int(a.len)), nil
	}
	s, err := readInts(*own, a, name, optional)
	if s != nil {
		*own = s
	}
	return s, err
}

// readBools copies the flags of a (BOOL: a byte each, nonzero is true)
// into dst, grown to fit, and returns it; nil if a is absent and optional.
func readBools(dst []bool, a *C.spiral_array, name string, optional bool) ([]bool, error) {
	if err := shape(a, name, optional, C.SPIRAL_BOOL); err != nil {
		return nil, err
	}
	if a.dtype == C.SPIRAL_ABSENT {
		return nil, nil
	}
	n := int(a.len)
	dst = grow(dst, n)
	for i, x := range unsafe.Slice((*byte)(a.data), n) {
		dst[i] = x != 0
	}
	return dst, nil
}

// An output is an array to write and the length it must have.
type output struct {
	a    *C.spiral_array
	name string
	want int
	kind byte // 'f' floating, 'i' integer, 'b' bool
}

// checkOutputs checks every output before anything is written: absent, or
// of the right length and a type of its kind.
func checkOutputs(outs ...output) error {
	for _, o := range outs {
		var err error
		switch o.kind {
		case 'f':
			err = shape(o.a, o.name, true, C.SPIRAL_F32, C.SPIRAL_F64)
		case 'i':
			err = shape(o.a, o.name, true, C.SPIRAL_I32, C.SPIRAL_I64)
		default:
			err = shape(o.a, o.name, true, C.SPIRAL_BOOL)
		}
		if err != nil {
			return err
		}
		if o.a.dtype != C.SPIRAL_ABSENT && int(o.a.len) != o.want {
			return usageError("%s has length %d, want %d", o.name, int64(o.a.len), o.want)
		}
	}
	return nil
}

// writeFloats writes src to a checked output a (F32 values rounded once).
func writeFloats(a *C.spiral_array, src []float64) {
	switch a.dtype {
	case C.SPIRAL_F64:
		copy(unsafe.Slice((*float64)(a.data), len(src)), src)
	case C.SPIRAL_F32:
		dst := unsafe.Slice((*float32)(a.data), len(src))
		for i, x := range src {
			dst[i] = float32(x)
		}
	}
}

// writeInts writes src to a checked output a.
func writeInts(a *C.spiral_array, src []int) {
	switch a.dtype {
	case C.SPIRAL_I64:
		if intIs64 {
			copy(unsafe.Slice((*int)(a.data), len(src)), src)
			return
		}
		dst := unsafe.Slice((*int64)(a.data), len(src))
		for i, x := range src {
			dst[i] = int64(x)
		}
	case C.SPIRAL_I32:
		dst := unsafe.Slice((*int32)(a.data), len(src))
		for i, x := range src {
			dst[i] = int32(x)
		}
	}
}

// writeBools writes src to a checked output a: a Go bool is one byte, 0
// or 1.
func writeBools(a *C.spiral_array, src []bool) {
	if a.dtype != C.SPIRAL_BOOL {
		return
	}
	copy(unsafe.Slice((*bool)(a.data), len(src)), src)
}

// intIs64 reports whether int is int64, whose arrays are copied with one
// memmove.
const intIs64 = unsafe.Sizeof(int(0)) == 8

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
