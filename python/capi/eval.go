package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"

	"spiral/eval"
)

// spiral_pass_at_k writes out[i] = pass@k for n[i] samples of which c[i]
// are correct and k[i] (eval.PassAtK), for every i; the four arrays have
// one length (n, c and k I32 or I64, out F32 or F64). An error names the
// argument and the element, as eval.ArgError's Index; nothing is written
// then.
//
//export spiral_pass_at_k
func spiral_pass_at_k(n, c, k, out *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	nv, cv, err := readCounts(n, c)
	if err != nil {
		return fail(err)
	}
	kv, err := readInts(nil, k, "k", false)
	if err != nil {
		return fail(err)
	}
	if len(kv) != len(nv) {
		return fail(usageError("n and k have lengths %d and %d, want one length", len(nv), len(kv)))
	}
	if err := checkOutputs(output{out, "out", len(nv), 'f'}); err != nil {
		return fail(err)
	}
	res := make([]float64, len(nv))
	for i := range nv {
		p, err := eval.PassAtK(nv[i], cv[i], kv[i])
		if err != nil {
			if ae, ok := errors.AsType[*eval.ArgError](err); ok && ae.Index < 0 {
				at := *ae
				at.Index = i
				err = &at
			}
			return fail(err)
		}
		res[i] = p
	}
	writeFloats(out, res)
	return 0
}

// spiral_coverage writes the coverage curve of a test set
// (eval.CoverageCurveTo): out[k-1] is the mean over the problems of pass@k
// for n[i] samples of which c[i] are correct, k = 1..len(out).
//
//export spiral_coverage
func spiral_coverage(n, c, out *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	nv, cv, err := readCounts(n, c)
	if err != nil {
		return fail(err)
	}
	if err := shape(out, "out", false, C.SPIRAL_F32, C.SPIRAL_F64); err != nil {
		return fail(err)
	}
	problems := make([]eval.PassCount, len(nv))
	for i := range nv {
		problems[i] = eval.PassCount{N: nv[i], C: cv[i]}
	}
	res := make([]float64, int(out.len))
	if err := eval.CoverageCurveTo(res, problems); err != nil {
		return fail(err)
	}
	writeFloats(out, res)
	return 0
}

// readCounts copies the samples n and correct samples c of an evaluation,
// arrays of one length.
func readCounts(n, c *C.spiral_array) (nv, cv []int, err error) {
	if nv, err = readInts(nil, n, "n", false); err != nil {
		return nil, nil, err
	}
	if cv, err = readInts(nil, c, "c", false); err != nil {
		return nil, nil, err
	}
	if len(cv) != len(nv) {
		return nil, nil, usageError("n and c have lengths %d and %d, want one length", len(nv), len(cv))
	}
	return nv, cv, nil
}
