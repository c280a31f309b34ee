package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"math/rand/v2"

	"spiral/advantage"
	"spiral/lengthgate"
)

// spiral_plan draws the plans of a batch into out (I32 or I64, P*K*n
// entries: candidate j of set i of problem q at (q*K+i)*n+j), as Go's
// Planner.PlanTo does with rand.New(rand.NewPCG(seed, step)), and as
// `spiral plan -seed seed -step step` writes them.
//
//export spiral_plan
func spiral_plan(cfg C.spiral_handle, seed, step C.uint64_t, problems C.int64_t, out *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return fail(err)
	}
	size := s.cfg.PlanSize()
	if problems < 0 || int64(problems) > int64(maxInt/size) {
		return fail(usageError("problems = %d out of range [0, %d]", int64(problems), maxInt/size))
	}
	if err := checkOutputs(output{out, "plans", int(problems) * size, 'i'}); err != nil {
		return fail(err)
	}
	w := s.get()
	defer s.put(w)
	if w.planner == nil {
		if w.planner, err = s.cfg.NewPlanner(); err != nil {
			return fail(err)
		}
	}
	if err := w.planner.PlanTo(&w.plans, int(problems), rand.New(rand.NewPCG(uint64(seed), uint64(step)))); err != nil {
		return fail(err)
	}
	writeInts(out, w.plans.Sets)
	return 0
}

const maxInt = int(^uint(0) >> 1)

// spiral_credit_batch computes the credit of a batch with cfg's
// Config.CreditBatch: the inputs are copied from in, the results written to
// out and report. On a SPIRAL_ERR_BATCH error (bad problems of a sound
// layout) the outputs hold the credit of every other problem and the bad
// ones are marked rejected, as Go's CreditBatch leaves them; on any other
// error nothing is written.
//
//export spiral_credit_batch
func spiral_credit_batch(cfg C.spiral_handle, in *C.spiral_credit_in, out *C.spiral_credit_out, report *C.spiral_credit_report) (ret C.spiral_handle) {
	defer guard(&ret)
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return fail(err)
	}
	w := s.get()
	defer s.put(w)
	b := &w.batch
	if b.Sets, err = readInts(b.Sets, &in.sets, "sets", false); err != nil {
		return fail(err)
	}
	if b.Rewards, err = readFloats(b.Rewards, &in.rewards, "rewards", false); err != nil {
		return fail(err)
	}
	if b.RewardCounts, err = readInts(b.RewardCounts, &in.reward_counts, "reward_counts", true); err != nil {
		return fail(err)
	}
	if b.Unscorable, err = readBools(b.Unscorable, &in.unscorable, "unscorable", true); err != nil {
		return fail(err)
	}
	if b.SearchLengths, err = readInts(b.SearchLengths, &in.search_lengths, "search_lengths", true); err != nil {
		return fail(err)
	}
	if b.AggregationLengths, err = readInts(b.AggregationLengths, &in.aggregation_lengths, "aggregation_lengths", true); err != nil {
		return fail(err)
	}
	c := &s.cfg
	d := &w.credit
	err = c.CreditBatch(d, *b)
	if _, ok := errors.AsType[*advantage.BatchError](err); err != nil && !ok {
		return fail(err)
	}
	p, n1, k := d.Problems, c.SearchTraces, c.Sets
	if err := checkOutputs(
		output{&out.search, "search", p * n1, 'f'},
		output{&out.aggregation, "aggregation", len(b.Rewards), 'f'},
		output{&out.set_scores, "set_scores", p * k, 'f'},
		output{&out.set_advantages, "set_advantages", p * k, 'f'},
		output{&out.appearances, "appearances", p * n1, 'i'},
		output{&out.scored_outputs, "scored_outputs", p * k, 'i'},
		output{&out.no_signal, "no_signal", p, 'b'},
		output{&out.out_of_range, "out_of_range", p, 'b'},
		output{&out.rejected, "rejected", p, 'b'},
	); err != nil {
		return fail(err)
	}
	writeFloats(&out.search, d.Search)
	writeFloats(&out.aggregation, d.Aggregation)
	writeFloats(&out.set_scores, d.SetScores)
	writeFloats(&out.set_advantages, d.SetAdvantages)
	writeInts(&out.appearances, d.Appearances)
	writeInts(&out.scored_outputs, d.ScoredOutputs)
	writeBools(&out.no_signal, d.NoSignal)
	writeBools(&out.out_of_range, d.OutOfRange)
	writeBools(&out.rejected, d.Rejected)
	if report != nil {
		report.search = gateReport(d.Gates.Search)
		report.aggregation = gateReport(d.Gates.Aggregation)
		o := d.Overlong
		report.overlong_outputs, report.overlong_penalized, report.overlong_overlong = C.int64_t(o.Outputs), C.int64_t(o.Penalized), C.int64_t(o.Overlong)
		report.overlong_total = C.double(o.Total)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func gateReport(r lengthgate.Report) C.spiral_gate_report {
	return C.spiral_gate_report{
		outputs: C.int64_t(r.Outputs), positive: C.int64_t(r.Positive), at_target: C.int64_t(r.AtTarget),
		gated: C.int64_t(r.Gated), mass_removed: C.double(r.MassRemoved),
	}
}
