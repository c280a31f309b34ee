package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"unsafe"

	"spiral"
	"spiral/internal/names"
	"spiral/lengthgate"
)

// A configState is what a configuration handle stands for: a valid Config
// and a pool of scratch memory for the calls that use it.
type configState struct {
	cfg     spiral.Config
	workers sync.Pool // *worker
}

// A worker is the scratch memory of one call: the Go copies of the
// caller's arrays and the results, reused from call to call.
type worker struct {
	planner *spiral.Planner
	plans   spiral.Plans // drawn for a caller that keeps no handle
	members []int        // their members, flat
	sets    []int        // the caller's sets, copied
	checked spiral.Plans // the caller's sets, checked
	batch   spiral.Batch // the caller's batch, during a call
	// The caller's arrays converted to Go's types, where they are not read
	// in place.
	rewards                                         []float64
	rewardCounts, searchLengths, aggregationLengths []int
	unscorable                                      []bool
	credit                                          spiral.BatchCredit

	coefficients spiral.LossCoefficients
}

func (s *configState) get() *worker {
	if w, ok := s.workers.Get().(*worker); ok {
		return w
	}
	return &worker{}
}

func (s *configState) put(w *worker) { s.workers.Put(w) }

// decodeStrict decodes the JSON object text into v, refusing unknown
// fields and trailing data.
func decodeStrict(text []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("data after the JSON object")
	}
	return nil
}

// goBytes copies n bytes of C memory.
func goBytes(p *C.char, n C.int64_t) ([]byte, error) {
	if n < 0 || n > 0 && p == nil {
		return nil, usageError("text of length %d at address %p", int64(n), p)
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// spiral_config_new makes a configuration handle from a spiral.Config in
// JSON (its field names: search_traces, set_size, sets,
// aggregations_per_set, ordered, order, design, gates, overlong,
// reward_range), after checking it with Config.Validate. Release the
// handle with spiral_release.
//
//export spiral_config_new
func spiral_config_new(text *C.char, n C.int64_t, dst *C.spiral_handle) (ret C.spiral_handle) {
	defer guard(&ret)
	b, err := goBytes(text, n)
	if err != nil {
		return fail(err)
	}
	var c spiral.Config
	if err := decodeStrict(b, &c); err != nil {
		if e, ok := errors.AsType[*spiral.InputError](err); ok {
			// A value's text (Order, Design, a gate's Boundary), for
			// which encoding/json names no path: named by the Config
			// field of its type, a gate's by the gate's.
			field := "Config." + e.Field
			if e.Field == lengthgate.FieldBoundary {
				field = boundaryField(b)
			}
			return fail(&configErr{named(e, names.Spiral.ABI(field))})
		}
		return fail(&configErr{fmt.Errorf("spiral: config: %w", err)})
	}
	if err := c.Validate(); err != nil {
		return fail(&configErr{renamed(err)})
	}
	*dst = newHandle(&configState{cfg: c})
	return 0
}

// boundaryField returns the Config field of the first gate whose boundary
// in the configuration JSON b is not a Boundary's text,
// "Config.Gates.Search.Boundary" or "Config.Gates.Aggregation.Boundary",
// by decoding each gate's boundary alone.
func boundaryField(b []byte) string {
	var c struct {
		Gates struct {
			Search, Aggregation struct{ Boundary json.RawMessage }
		}
	}
	_ = json.Unmarshal(b, &c) // b failed to decode, but only at a boundary
	for _, g := range []struct {
		name string
		text json.RawMessage
	}{{"Search", c.Gates.Search.Boundary}, {"Aggregation", c.Gates.Aggregation.Boundary}} {
		var x lengthgate.Boundary
		if len(g.text) > 0 && json.Unmarshal(g.text, &x) != nil {
			return "Config.Gates." + g.name + ".Boundary"
		}
	}
	return "Config.Gates.Boundary" // unreachable: the decode failed at one
}

// ratText returns r as "p/q", or "" when r is nil (beyond the exact cost
// bound).
func ratText(r *big.Rat) string {
	if r == nil {
		return ""
	}
	return r.String()
}

// writeTexts writes the texts, one per line, to buf and their length to
// needed; only the first capacity bytes are written.
func writeTexts(buf *C.char, capacity C.int64_t, needed *C.int64_t, texts ...string) {
	var s []byte
	for i, t := range texts {
		if i > 0 {
			s = append(s, '\n')
		}
		s = append(s, t...)
	}
	if capacity > 0 && buf != nil {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity)), s)
	}
	*needed = C.int64_t(len(s))
}

// spiral_constants writes the constants of Proposition 3.1 for cfg's family
// and design (spiral.Config.Constants): floats[0..2] are the probability
// that a trace is in no set, q_K and M; buf receives the same three as exact
// fractions "p/q", one per line, a line empty where the exact value is
// beyond the library's cost bound, and needed their length.
//
//export spiral_constants
func spiral_constants(cfg C.spiral_handle, floats *C.double, buf *C.char, capacity C.int64_t, needed *C.int64_t) (ret C.spiral_handle) {
	defer guard(&ret)
	s, err := lookup[*configState](cfg, "configuration")
	if err != nil {
		return fail(err)
	}
	k, err := s.cfg.Constants()
	if err != nil {
		return fail(err)
	}
	f := unsafe.Slice(floats, 3)
	f[0], f[1], f[2] = C.double(k.MissProbFloat), C.double(k.CoverProbFloat), C.double(k.MFloat)
	writeTexts(buf, capacity, needed, ratText(k.MissProb), ratText(k.CoverProb), ratText(k.M))
	return 0
}

// spiral_role_weights writes cfg's role weights, as
// spiral.Config.RoleWeights computes them for cfg's aggregation baseline,
// under a loss reduction (its name, loss.Reduction's text: "sum",
// "seq-mean-token-sum", ...) and split_roles
// (nonzero when the trainer reduces search traces and aggregation outputs
// as two loss terms) and missing_rate (LossOptions.MissingRate: with delta
// > 0 the expected-count weights): floats[0..3] are the search and aggregation weights
// and their multipliers; buf receives the two weights as exact fractions,
// one per line (the search line empty beyond the exact cost bound).
//
//export spiral_role_weights
func spiral_role_weights(cfg C.spiral_handle, reduction *C.char, n C.int64_t, splitRoles C.int64_t, missingRate C.double, floats *C.double, buf *C.char, capacity C.int64_t, needed *C.int64_t) (ret C.spiral_handle) {
	defer guard(&ret)
	s, opt, err := lossOptions(cfg, reduction, n, 0, splitRoles)
	if err != nil {
		return fail(err)
	}
	opt.MissingRate = float64(missingRate)
	w, err := s.cfg.RoleWeights(opt)
	if err != nil {
		return fail(&configErr{renamed(err)})
	}
	f := unsafe.Slice(floats, 4)
	f[0], f[1] = C.double(w.SearchFloat), C.double(w.AggregationFloat)
	f[2], f[3] = C.double(w.SearchMultiplier), C.double(w.AggregationMultiplier)
	writeTexts(buf, capacity, needed, ratText(w.Search), ratText(w.Aggregation))
	return 0
}
