package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"fmt"

	"spiral"
	"spiral/advantage"
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
// JointGradient, 1 for PaperUpdate and 2 for ScoredGradient (the
// aggregation baseline is cfg's; in's missing_rate is
// LossOptions.MissingRate, and ScoredGradient reads in's reward_counts and
// scored_outputs), split_roles nonzero when the trainer reduces search traces
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
	for _, a := range []struct {
		a    *C.spiral_array
		name string
	}{{&in.reward_counts, "reward_counts"}, {&in.scored_outputs, "scored_outputs"}} {
		if err := atMost(a.a, a.name, p*k); err != nil {
			return fail(err)
		}
	}
	if bin.RewardCounts, err = readInts(nil, &in.reward_counts, "reward_counts", true); err != nil {
		return fail(err)
	}
	scored, err := readInts(nil, &in.scored_outputs, "scored_outputs", true)
	if err != nil {
		return fail(err)
	}
	if opt.Update == spiral.ScoredGradient {
		if bin.Unscorable, err = scoredMarks(scored, bin.RewardCounts, n2, len(aggregation)); err != nil {
			return fail(err)
		}
	}
	opt.MissingRate = float64(in.missing_rate)
	if len(search)%n1 != 0 {
		return fail(usageError("search has %d advantages, not a multiple of N1 = %d", len(search), n1))
	}
	w := s.get() // its LossCoefficients keeps the role multipliers from call to call
	defer s.put(w)
	dst := &w.coefficients
	if err := s.cfg.AdvantageCoefficients(dst, search, aggregation, bin, opt); err != nil {
		return fail(renamed(err))
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

// scoredMarks returns the Unscorable marks of a batch whose sets have
// counts (nil: n2 each) outputs and scored of them scored, outputs in all:
// ScoredGradient reads only how many outputs of each set are scored, so
// the first scored[s] outputs of set s are marked scored. It returns nil
// for nil scored, and an error naming scored_outputs for a count outside
// [0, the set's outputs] or a length that does not fit.
func scoredMarks(scored, counts []int, n2, outputs int) ([]bool, error) {
	if scored == nil {
		return nil, nil
	}
	if counts != nil && len(counts) != len(scored) {
		return nil, usageError("scored_outputs has %d counts, reward_counts %d", len(scored), len(counts))
	}
	marks := make([]bool, outputs)
	o := 0
	for s, sc := range scored {
		m := n2
		if counts != nil {
			m = counts[s]
		}
		if m < 0 || o+m > outputs {
			return nil, (&advantage.InputError{Field: "reward_counts", Problem: -1, Set: s, Output: -1, Value: float64(m),
				Err: fmt.Errorf("the sets up to %d hold more outputs than the %d aggregation advantages (ragged sets need their reward_counts)", s, outputs)}).In("spiral", "reward_counts")
		}
		if sc < 0 || sc > m {
			return nil, (&advantage.InputError{Field: "scored_outputs", Problem: -1, Set: s, Output: -1, Value: float64(sc),
				Err: fmt.Errorf("scored_outputs[%d] = %d outside [0, %d], the outputs of the set", s, sc, m)}).In("spiral", "scored_outputs")
		}
		for j := o + sc; j < o+m; j++ {
			marks[j] = true
		}
		o += m
	}
	return marks, nil
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
		return nil, opt, &configErr{named(err, "reduction")}
	}
	return s, opt, nil
}
