package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	_ "embed"
	"fmt"
	"reflect"
)

// header is spiral_abi.h as the library was built with it: a caller builds
// its structures from this text (the Python package does) and checks them
// against spiral_abi_layout.
//
//go:embed spiral_abi.h
var header string

// spiral_abi_header writes spiral_abi.h, the text of the types this library
// was built with, to buf, and its length to needed.
//
//export spiral_abi_header
func spiral_abi_header(buf *C.char, capacity C.int64_t, needed *C.int64_t) {
	writeTexts(buf, capacity, needed, header)
}

// abiStructs are the structures of spiral_abi.h, by their C names.
var abiStructs = []struct {
	name string
	typ  reflect.Type
}{
	{"spiral_array", reflect.TypeFor[C.spiral_array]()},
	{"spiral_credit_in", reflect.TypeFor[C.spiral_credit_in]()},
	{"spiral_credit_out", reflect.TypeFor[C.spiral_credit_out]()},
	{"spiral_gate_report", reflect.TypeFor[C.spiral_gate_report]()},
	{"spiral_credit_report", reflect.TypeFor[C.spiral_credit_report]()},
	{"spiral_loss_in", reflect.TypeFor[C.spiral_loss_in]()},
	{"spiral_loss_report", reflect.TypeFor[C.spiral_loss_report]()},
	{"spiral_group_report", reflect.TypeFor[C.spiral_group_report]()},
	{"spiral_error_item", reflect.TypeFor[C.spiral_error_item]()},
	{"spiral_part_in", reflect.TypeFor[C.spiral_part_in]()},
}

// spiral_abi_layout writes the layout the C compiler gave the structures of
// spiral_abi.h, one line each: "name size field:offset field:offset ...",
// to buf, and its length to needed: a caller that built its structures from
// the header checks them against it.
//
//export spiral_abi_layout
func spiral_abi_layout(buf *C.char, capacity C.int64_t, needed *C.int64_t) {
	lines := make([]string, len(abiStructs))
	for i, s := range abiStructs {
		line := fmt.Sprintf("%s %d", s.name, s.typ.Size())
		for j := range s.typ.NumField() {
			f := s.typ.Field(j)
			if f.Name == "_" {
				continue // padding cgo names _
			}
			line += fmt.Sprintf(" %s:%d", f.Name, f.Offset)
		}
		lines[i] = line
	}
	writeTexts(buf, capacity, needed, lines...)
}
