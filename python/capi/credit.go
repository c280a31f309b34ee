package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"spiral"
	"spiral/combin"
	"spiral/lengthgate"
)

// A plansState holds plans a Planner drew, kept by the library (the caller
// gets a copy), so that crediting them needs no check of the sets. It is
// reused through plansPool once its handle is released and no call uses it.
type plansState struct {
	plans spiral.Plans
	// state packs the generation of the plans (high 32 bits: one per
	// spiral_plan that filled them) and their references (low 32 bits: the
	// handle's, and one per call crediting them).
	state atomic.Uint64
}

var plansPool sync.Pool // *plansState whose references are all dropped

// A plansRef is what a plans handle stands for: plans of one generation.
type plansRef struct {
	ps  *plansState
	gen uint64
}

// newPlansRef returns plans from the pool (or new ones) in a new
// generation, referenced once (by the handle about to be made).
func newPlansRef() *plansRef {
	ps, _ := plansPool.Get().(*plansState)
	if ps == nil {
		ps = new(plansState)
	}
	gen := ps.state.Load()>>32 + 1
	ps.state.Store(gen<<32 | 1)
	return &plansRef{ps, gen}
}

// acquire adds a reference for a call, or reports false if the plans of
// r's generation were released.
func (r *plansRef) acquire() bool {
	for {
		s := r.ps.state.Load()
		if s>>32 != r.gen || s&(1<<32-1) == 0 {
			return false
		}
		if r.ps.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release drops a reference; the last one gives the plans back to the pool.
func (r *plansRef) release() {
	if r.ps.state.Add(^uint64(0))&(1<<32-1) == 0 {
		plansPool.Put(r.ps)
	}
}

// spiral_plan draws the plans of the problems named by keys (I64, each an
// unsigned 64-bit key as its bits) into out (I32 or I64, P*K*n entries:
// candidate j of set i of problem q at (q*K+i)*n+j), as Go's
// Planner.PlanTo draws them for the seed and step, and as `spiral plan
// -seed seed -step step` writes them: the plan of a problem is a function
// of (seed, step, key) alone. When plans is not NULL it also receives a
// handle to the plans as drawn, which spiral_credit_batch credits without
// checking them; release it with spiral_release.
//
//export spiral_plan
func spiral_plan(cfg C.spiral_handle, seed, step C.uint64_t, keys, out *C.spiral_array, plans *C.spiral_handle) (ret C.spiral_handle) {
	defer guard(&ret)
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return fail(err)
	}
	if err := shape(keys, "keys", false, C.SPIRAL_I64); err != nil {
		return fail(err)
	}
	ks := unsafe.Slice((*uint64)(keys.data), int(keys.len))
	w := s.get()
	defer s.put(w)
	if w.planner == nil {
		if w.planner, err = s.cfg.NewPlanner(); err != nil {
			return fail(err)
		}
	}
	dst := &w.plans
	var ref *plansRef
	if plans != nil {
		ref = newPlansRef()
		dst = &ref.ps.plans
	}
	if err := w.planner.PlanTo(dst, uint64(seed), uint64(step), ks); err != nil {
		if ref != nil {
			ref.release()
		}
		return fail(renamed(err))
	}
	if err := checkOutputs(output{out, "plans", dst.Problems() * s.cfg.PlanSize(), 'i'}); err != nil {
		if ref != nil {
			ref.release()
		}
		return fail(err)
	}
	if out.dtype == C.SPIRAL_I64 && intIs64 {
		// Appended straight into the caller's array, whose capacity is
		// exactly the members': no copy of Go's.
		dst.AppendMembers(unsafe.Slice((*int)(out.data), int(out.len))[:0])
	} else {
		w.members = dst.AppendMembers(w.members[:0])
		writeInts(out, w.members)
	}
	if plans != nil {
		*plans = newHandle(ref)
	}
	return 0
}

// spiral_credit_batch computes the credit of a batch with cfg's
// Config.CreditBatch: the inputs are copied from in, the results written to
// out and report. The plans are those of the plans handle, drawn by
// spiral_plan, when it is not 0 (in->sets is then not read); otherwise
// in->sets, checked by Config.CheckPlans (a problem whose sets are bad is
// rejected, the others credited). On a SPIRAL_ERR_BATCH error (bad problems
// of a sound layout) the outputs hold the credit of every other problem and
// the bad ones are marked rejected, as Go's CreditBatch leaves them; on any
// other error nothing is written.
//
//export spiral_credit_batch
func spiral_credit_batch(cfg C.spiral_handle, plans C.spiral_handle, in *C.spiral_credit_in, out *C.spiral_credit_out, report *C.spiral_credit_report) (ret C.spiral_handle) {
	defer guard(&ret)
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return fail(err)
	}
	w := s.get()
	defer s.put(w)
	b := &w.batch
	defer func() { *b = spiral.Batch{} }() // the worker keeps no plans and no caller's memory
	if plans != 0 {
		ref, err := lookup[*plansRef](plans, "plans")
		if err != nil {
			return fail(err)
		}
		if !ref.acquire() {
			return fail(usageError("plans handle %d is not valid (released)", uint64(plans)))
		}
		defer ref.release()
		b.Plans = &ref.ps.plans
	} else {
		if err := atMost(&in.sets, "sets", combin.MaxSize); err != nil {
			return fail(err)
		}
		if w.sets, err = readInts(w.sets, &in.sets, "sets", false); err != nil {
			return fail(err)
		}
		// Bad sets are rejected by CreditBatch with the same error.
		if err := s.cfg.CheckPlans(&w.checked, w.sets); err != nil {
			if _, ok := errors.AsType[*spiral.BatchError](err); !ok {
				return fail(renamed(err))
			}
		}
		b.Plans = &w.checked
	}
	// Every length bounded by the plans' problems before anything is copied.
	kn := s.cfg.PlanSize()
	p := (len(w.sets) + kn - 1) / kn
	if plans != 0 {
		p = b.Plans.Problems()
	}
	most := p * s.cfg.Sets * s.cfg.AggregationsPerSet
	if in.reward_counts.dtype != C.SPIRAL_ABSENT {
		most *= 2 // room for a count beyond N2, which CreditBatch names
	}
	for _, l := range []struct {
		a    *C.spiral_array
		name string
		most int
	}{
		{&in.rewards, "rewards", most}, {&in.reward_counts, "reward_counts", p * s.cfg.Sets},
		{&in.unscorable, "unscorable", most}, {&in.search_lengths, "search_lengths", p * s.cfg.SearchTraces},
		{&in.aggregation_lengths, "aggregation_lengths", most},
	} {
		if err := atMost(l.a, l.name, l.most); err != nil {
			return fail(err)
		}
	}
	// float64 and int64 inputs are read in place (CreditBatch does not
	// write its Batch); the others are converted into the worker's memory.
	if b.Rewards, err = viewFloats(&w.rewards, &in.rewards, "rewards", false); err != nil {
		return fail(err)
	}
	if b.RewardCounts, err = viewInts(&w.rewardCounts, &in.reward_counts, "reward_counts", true); err != nil {
		return fail(err)
	}
	if w.unscorable, err = readBools(w.unscorable, &in.unscorable, "unscorable", true); err != nil {
		return fail(err)
	}
	b.Unscorable = w.unscorable
	if b.SearchLengths, err = viewInts(&w.searchLengths, &in.search_lengths, "search_lengths", true); err != nil {
		return fail(err)
	}
	if b.AggregationLengths, err = viewInts(&w.aggregationLengths, &in.aggregation_lengths, "aggregation_lengths", true); err != nil {
		return fail(err)
	}
	c := &s.cfg
	d := &w.credit
	err = c.CreditBatch(d, *b)
	if _, ok := errors.AsType[*spiral.BatchError](err); err != nil && !ok {
		return fail(renamed(err))
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
		return fail(renamed(err))
	}
	return 0
}

func gateReport(r lengthgate.Report) C.spiral_gate_report {
	return C.spiral_gate_report{
		outputs: C.int64_t(r.Outputs), positive: C.int64_t(r.Positive), at_target: C.int64_t(r.AtTarget),
		gated: C.int64_t(r.Gated), mass_removed: C.double(r.MassRemoved),
	}
}
