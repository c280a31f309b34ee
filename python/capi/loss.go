package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"spiral"
	"spiral/loss"
)

// spiral_loss_reductions writes the names of the loss reductions
// (loss.Reduction: "sum", "token-mean", ...), one per line, to buf, and
// their length to needed.
//
//export spiral_loss_reductions
func spiral_loss_reductions(buf *C.char, capacity C.int64_t, needed *C.int64_t) {
	var names []string
	for r := loss.Reduction(0); ; r++ {
		b, err := r.MarshalText()
		if err != nil {
			break
		}
		names = append(names, string(b))
	}
	writeTexts(buf, capacity, needed, names...)
}

// spiral_loss_coefficients writes the per-output loss coefficients of a
// credited batch with cfg's Config.LossCoefficients: reduction names the
// trainer's loss reduction (loss.Reduction's text), update is 0 for
// JointGradient and 1 for PaperUpdate (the aggregation baseline is cfg's),
// split_roles nonzero when the trainer reduces search traces
// and aggregation outputs as two loss terms. The coefficients go to
// search_out (P*N1) and aggregation_out (one per aggregation output), F32 or
// F64, and the reduction's report to report; on error nothing is written.
//
//export spiral_loss_coefficients
func spiral_loss_coefficients(cfg C.spiral_handle, reduction *C.char, n C.int64_t, update, splitRoles C.int64_t,
	in *C.spiral_loss_in, searchOut, aggregationOut *C.spiral_array, report *C.spiral_loss_report) (ret C.spiral_handle) {
	defer guard(&ret)
	s, opt, err := lossOptions(cfg, reduction, n, update, splitRoles)
	if err != nil {
		return fail(err)
	}
	var bin spiral.Batch
	n1, k, n2 := s.cfg.SearchTraces, s.cfg.Sets, s.cfg.AggregationsPerSet
	if err := atMost(&in.search, "search", maxElements); err != nil {
		return fail(err)
	}
	p := (int(in.search.len) + n1 - 1) / n1
	for _, l := range []struct {
		a    *C.spiral_array
		name string
		most int
	}{{&in.aggregation, "aggregation", p * k * n2}, {&in.search_lengths, "search_lengths", p * n1}, {&in.aggregation_lengths, "aggregation_lengths", p * k * n2}} {
		if err := atMost(l.a, l.name, l.most); err != nil {
			return fail(err)
		}
	}
	search, err := readFloats(nil, &in.search, "search", false)
	if err != nil {
		return fail(err)
	}
	aggregation, err := readFloats(nil, &in.aggregation, "aggregation", false)
	if err != nil {
		return fail(err)
	}
	if bin.SearchLengths, err = readInts(nil, &in.search_lengths, "search_lengths", false); err != nil {
		return fail(err)
	}
	if bin.AggregationLengths, err = readInts(nil, &in.aggregation_lengths, "aggregation_lengths", false); err != nil {
		return fail(err)
	}
	if len(search)%n1 != 0 {
		return fail(usageError("search has %d advantages, not a multiple of N1 = %d", len(search), n1))
	}
	var dst spiral.LossCoefficients
	if err := s.cfg.AdvantageCoefficients(&dst, search, aggregation, bin, opt); err != nil {
		if e, ok := errors.AsType[*loss.InputError](err); ok {
			at := *e // in the caller's words: "search_lengths", not "SearchLengths"
			at.Field = argumentName(e.Field)
			return fail(&at)
		}
		return fail(err)
	}
	if err := checkOutputs(
		output{searchOut, "search_out", len(dst.Search), 'f'},
		output{aggregationOut, "aggregation_out", len(dst.Aggregation), 'f'},
	); err != nil {
		return fail(err)
	}
	writeFloats(searchOut, dst.Search)
	writeFloats(aggregationOut, dst.Aggregation)
	if report != nil {
		r := dst.Report
		*report = C.spiral_loss_report{scale: C.double(r.Scale), outputs: C.int64_t(r.Outputs), rows: C.int64_t(r.Rows),
			tokens: C.int64_t(r.Tokens), dropped: C.int64_t(r.Dropped)}
	}
	return 0
}

// lossOptions returns the configuration of handle cfg and the
// spiral.LossOptions of a reduction named by its text, an update and
// split_roles, as the C ABI passes them.
func lossOptions(cfg C.spiral_handle, reduction *C.char, n C.int64_t, update, splitRoles C.int64_t) (*configState, spiral.LossOptions, error) {
	opt := spiral.LossOptions{Update: spiral.Update(update), SplitRoles: splitRoles != 0}
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return nil, opt, err
	}
	name, err := goBytes(reduction, n)
	if err != nil {
		return nil, opt, err
	}
	if err := opt.Reduction.UnmarshalText(name); err != nil {
		return nil, opt, &configErr{err}
	}
	return s, opt, nil
}
