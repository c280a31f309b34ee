package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"

	"spiral/combin"
	"spiral/eval"
	"spiral/internal/names"
)

// spiral_pass_at_k writes out[i] = pass@k for n[i] samples of which c[i]
// are correct and k[i] (eval.PassAtK), for every i; the four arrays have
// one length (n, c and k I32 or I64, out F32 or F64). An error names the
// argument and the element ("k[1]: 4 > n = 3: ..."), with eval's reason;
// nothing is written then.
//
//export spiral_pass_at_k
func spiral_pass_at_k(n, c, k, out *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	nv, cv, err := readCounts(n, c)
	if err != nil {
		return fail(err)
	}
	if err := atMost(k, "k", maxElements); err != nil {
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
			if e, ok := errors.AsType[*eval.InputError](err); ok {
				// eval's reason states the value, as of a whole
				// argument: the element's index folds into the field.
				return fail(&argErr{fn: "pass@k", err: e.In("eval: pass@k", fmt.Sprintf("%s[%d]", e.Field, i)), arg: e.Field, index: i})
			}
			return fail(&argErr{fn: "pass@k", err: err})
		}
		res[i] = p
	}
	writeFloats(out, res)
	return 0
}

// spiral_coverage writes the coverage curve of a test set
// (eval.CoverageCurve): out[k-1] is the mean over the problems of pass@k
// for n[i] samples of which c[i] are correct, k = 1..kmax. Arguments eval
// refuses (kmax beyond its cost bound among them) get its error before
// anything is allocated; out, kmax long, is then not read and may be
// ABSENT.
//
//export spiral_coverage
func spiral_coverage(n, c *C.spiral_array, kmax C.int64_t, out *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	nv, cv, err := readCounts(n, c)
	if err != nil {
		return fail(err)
	}
	problems := make([]eval.PassCount, len(nv))
	for i := range nv {
		problems[i] = eval.PassCount{N: nv[i], C: cv[i]}
	}
	res, err := eval.CoverageCurve(problems, int(min(int64(kmax), math.MaxInt)))
	if err != nil {
		if e, ok := errors.AsType[*eval.InputError](err); ok {
			// eval's problems[i].N and .C are the caller's n[i] and c[i].
			err = e.In("eval: coverage", names.Eval.ABI(e.Field))
		}
		return fail(&argErr{fn: "coverage", err: err})
	}
	if err := checkOutputs(output{out, "out", len(res), 'f'}); err != nil {
		return fail(err)
	}
	writeFloats(out, res)
	return 0
}

// spiral_max_size returns the library's size cap (combin.MaxSize, 2^24):
// the most members a batch's plans hold, the longest coverage curve.
//
//export spiral_max_size
func spiral_max_size() C.int64_t { return C.int64_t(combin.MaxSize) }

// readCounts copies the samples n and correct samples c of an evaluation,
// arrays of one length.
func readCounts(n, c *C.spiral_array) (nv, cv []int, err error) {
	if err := atMost(n, "n", maxElements); err != nil {
		return nil, nil, err
	}
	if err := atMost(c, "c", maxElements); err != nil {
		return nil, nil, err
	}
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
