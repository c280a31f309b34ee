package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"spiral/internal/names"
	"spiral/loss"
)

// spiral_part_coefficients writes to out the coefficients of the outputs
// of one part of a batch (a micro-batch, a rank's share) with
// loss.PartCoefficients: reduction names the trainer's loss reduction
// (loss.Reduction's text), scale is kappa, the same for every part of the
// batch; in holds the outputs' updates, lengths and terms and, optionally,
// the divisors of each term beyond the part (over_sequences and
// over_tokens, both or neither; the one the reduction does not read may
// be 0). out is F32 or F64 of update's length; the
// part's report goes to report (may be NULL). On error nothing is written.
//
//export spiral_part_coefficients
func spiral_part_coefficients(reduction *C.char, n C.int64_t, scale C.double, in *C.spiral_part_in,
	out *C.spiral_array, report *C.spiral_loss_report) (ret C.spiral_handle) {
	defer guard(&ret)
	r, err := reductionNamed(reduction, n)
	if err != nil {
		return fail(err)
	}
	// Sizes before any copy.
	if in.update.len > loss.MaxRows {
		return fail(usageError("update has %d outputs, more than %d, the most one call reduces", int64(in.update.len), loss.MaxRows))
	}
	for _, a := range []struct {
		a    *C.spiral_array
		name string
	}{{&in.lengths, "lengths"}, {&in.terms, "terms"}} {
		if a.a.dtype != C.SPIRAL_ABSENT && a.a.len != in.update.len {
			return fail(usageError("%s has length %d, want update's %d", a.name, int64(a.a.len), int64(in.update.len)))
		}
	}
	var rows loss.Rows
	if rows.Update, err = readFloats(nil, &in.update, "update", false); err != nil {
		return fail(err)
	}
	if rows.Lengths, err = readInts(nil, &in.lengths, "lengths", false); err != nil {
		return fail(err)
	}
	if rows.Terms, err = readInts(nil, &in.terms, "terms", true); err != nil {
		return fail(err)
	}
	part := loss.Part{Scale: float64(scale)}
	if (in.over_sequences.dtype == C.SPIRAL_ABSENT) != (in.over_tokens.dtype == C.SPIRAL_ABSENT) {
		return fail(usageError("over_sequences and over_tokens go together: give both or neither"))
	}
	if in.over_sequences.dtype != C.SPIRAL_ABSENT {
		seq, err := readDivisors(&in.over_sequences, "over_sequences")
		if err != nil {
			return fail(err)
		}
		tok, err := readDivisors(&in.over_tokens, "over_tokens")
		if err != nil {
			return fail(err)
		}
		if len(seq) != len(tok) {
			return fail(usageError("over_tokens has length %d, want over_sequences' %d", len(tok), len(seq)))
		}
		part.Over = make([]loss.Divisors, len(seq))
		for t := range seq {
			part.Over[t] = loss.Divisors{Sequences: seq[t], Tokens: tok[t]}
		}
	}
	if err := checkOutputs(output{out, "out", len(rows.Update), 'f'}); err != nil {
		return fail(err)
	}
	if out.dtype == C.SPIRAL_ABSENT {
		return fail(usageError("out is required"))
	}
	dst := make([]float64, len(rows.Update))
	rep, err := loss.PartCoefficients(dst, rows, r, part)
	if err != nil {
		if e, ok := errors.AsType[*loss.InputError](err); ok {
			return fail(e.In("loss", names.Loss.ABI(e.Field)))
		}
		return fail(err)
	}
	writeFloats(out, dst)
	if report != nil {
		*report = C.spiral_loss_report{scale: C.double(rep.Scale), outputs: C.int64_t(rep.Outputs), rows: C.int64_t(rep.Rows),
			tokens: C.int64_t(rep.Tokens), dropped: C.int64_t(rep.Dropped)}
	}
	return 0
}

// spiral_reduction_scale writes to scale the kappa loss.ScaleOf gives the
// reduction named for a batch of outputs outputs, rows of them with a
// token (the sums over every rank in data-parallel training).
//
//export spiral_reduction_scale
func spiral_reduction_scale(reduction *C.char, n C.int64_t, outputs, rows C.int64_t, scale *C.double) (ret C.spiral_handle) {
	defer guard(&ret)
	r, err := reductionNamed(reduction, n)
	if err != nil {
		return fail(err)
	}
	if outputs < 0 || rows < 0 || rows > outputs {
		return fail(&loss.InputError{Field: "rows", Problem: -1, Set: -1, Output: -1, Value: float64(rows),
			Err: errors.New("counts must satisfy 0 <= rows <= outputs")})
	}
	*scale = C.double(loss.ScaleOf(r, int64(outputs), int64(rows)))
	return 0
}

// reductionNamed returns the loss.Reduction a text names, as the C ABI
// passes it.
func reductionNamed(reduction *C.char, n C.int64_t) (loss.Reduction, error) {
	var r loss.Reduction
	name, err := goBytes(reduction, n)
	if err != nil {
		return r, err
	}
	if err := r.UnmarshalText(name); err != nil {
		return r, &configErr{named(err, "reduction")}
	}
	return r, nil
}

// readDivisors reads an I64 array of at most loss.MaxTerms counts.
func readDivisors(a *C.spiral_array, name string) ([]int64, error) {
	if err := shape(a, name, false, C.SPIRAL_I64); err != nil {
		return nil, err
	}
	if a.len > loss.MaxTerms {
		return nil, usageError("%s has length %d, more than %d, the most loss terms", name, int64(a.len), loss.MaxTerms)
	}
	return append([]int64(nil), unsafe.Slice((*int64)(a.data), int(a.len))...), nil
}
