package main

/*
#include "spiral_abi.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"spiral/advantage"
	"spiral/internal/names"
)

// spiral_group_presets writes the names of the group presets
// (advantage.Preset), one per line, to buf, and their length to needed.
//
//export spiral_group_presets
func spiral_group_presets(buf *C.char, capacity C.int64_t, needed *C.int64_t) {
	var names []string
	for p := advantage.Preset(0); ; p++ {
		if _, err := p.Options(); err != nil {
			break
		}
		names = append(names, p.String())
	}
	writeTexts(buf, capacity, needed, names...)
}

// spiral_group_preset writes the advantage.GroupOptions of the preset
// named name, in JSON, to buf, and its length to needed.
//
//export spiral_group_preset
func spiral_group_preset(name *C.char, n C.int64_t, buf *C.char, capacity C.int64_t, needed *C.int64_t) (ret C.spiral_handle) {
	defer guard(&ret)
	b, err := goBytes(name, n)
	if err != nil {
		return fail(err)
	}
	var p advantage.Preset
	if err := p.UnmarshalText(b); err != nil {
		return fail(&configErr{named(err, "name")})
	}
	opt, err := p.Options()
	if err != nil {
		return fail(&configErr{err})
	}
	text, err := json.Marshal(opt)
	if err != nil {
		return fail(err)
	}
	writeTexts(buf, capacity, needed, string(text))
	return 0
}

// spiral_group computes group-relative advantages with
// advantage.GroupRelativeTokens: options is an advantage.GroupOptions in
// JSON (scale, epsilon, bessel, leave_one_out, nan_unscorable, best, clip,
// whiten), rewards F32 or F64, ids I32 or I64 (the group of each row),
// lengths I32 or I64 (each row's tokens, which whitening weighs) or ABSENT
// (every row weighs 1, as advantage.GroupRelative), unscorable BOOL or ABSENT
// (rows that could not be scored: given to GroupRelative as NaN rewards
// under NaNUnscorable, the library's mark of such a row), dst the
// advantages (F32 or F64, one per row). The report's lists (singletons, zero_variance,
// unscored: the ids of those groups, in the order of their first row) are
// written to the three arrays when they are given, each long enough for
// every group; report receives their lengths.
//
//export spiral_group
func spiral_group(options *C.char, n C.int64_t, rewards, ids, lengths, unscorable, dst *C.spiral_array, report *C.spiral_group_report, singletons, zeroVariance, unscored *C.spiral_array) (ret C.spiral_handle) {
	defer guard(&ret)
	b, err := goBytes(options, n)
	if err != nil {
		return fail(err)
	}
	var opt advantage.GroupOptions
	if err := decodeStrict(b, &opt); err != nil {
		return fail(&configErr{fmt.Errorf("advantage: group options: %w", err)})
	}
	if err := opt.Validate(); err != nil {
		if e, ok := errors.AsType[*advantage.InputError](err); ok {
			// GroupOptions' field, in the JSON (and Python) name.
			err = e.In("spiral", "options."+names.Snake(e.Field))
		}
		return fail(&configErr{err})
	}
	for _, a := range []struct {
		a    *C.spiral_array
		name string
	}{{rewards, "rewards"}, {ids, "ids"}, {lengths, "lengths"}, {unscorable, "unscorable"}} {
		if err := atMost(a.a, a.name, maxElements); err != nil {
			return fail(err)
		}
	}
	r, err := readFloats(nil, rewards, "rewards", false)
	if err != nil {
		return fail(err)
	}
	idv, err := readInts(nil, ids, "ids", false)
	if err != nil {
		return fail(err)
	}
	un, err := readBools(nil, unscorable, "unscorable", true)
	if err != nil {
		return fail(err)
	}
	if un != nil && len(un) != len(r) {
		return fail(&advantage.InputError{Field: "unscorable", Problem: -1, Set: -1, Output: -1,
			Err: fmt.Errorf("len(unscorable) = %d, want len(rewards) = %d", len(un), len(r))})
	}
	for i, u := range un {
		if u {
			r[i] = math.NaN()
			opt.NaNUnscorable = true
		}
	}
	if err := checkOutputs(output{dst, "advantages", len(r), 'f'}); err != nil {
		return fail(err)
	}
	out := make([]float64, len(r))
	lv, err := readInts(nil, lengths, "lengths", true)
	if err != nil {
		return fail(err)
	}
	var rep advantage.GroupReport[int]
	if lv == nil {
		rep, err = advantage.GroupRelative(out, r, idv, opt)
	} else {
		rep, err = advantage.GroupRelativeTokens(out, r, idv, lv, opt)
	}
	if err != nil {
		return fail(err)
	}
	lists := []struct {
		a    *C.spiral_array
		name string
		ids  []int
	}{{singletons, "singletons", rep.Singletons}, {zeroVariance, "zero_variance", rep.ZeroVariance}, {unscored, "unscored", rep.Unscored}}
	for _, l := range lists {
		if l.a == nil {
			continue
		}
		if err := shape(l.a, l.name, true, C.SPIRAL_I32, C.SPIRAL_I64); err != nil {
			return fail(err)
		}
		if l.a.dtype != C.SPIRAL_ABSENT && int(l.a.len) < len(l.ids) {
			return fail(usageError("%s has length %d, want at least %d", l.name, int64(l.a.len), len(l.ids)))
		}
	}
	writeFloats(dst, out)
	for _, l := range lists {
		if l.a != nil && l.a.dtype != C.SPIRAL_ABSENT {
			writeInts(&C.spiral_array{data: l.a.data, len: C.int64_t(len(l.ids)), dtype: l.a.dtype}, l.ids)
		}
	}
	if report != nil {
		*report = C.spiral_group_report{
			groups: C.int64_t(rep.Groups), singletons: C.int64_t(len(rep.Singletons)),
			zero_variance: C.int64_t(len(rep.ZeroVariance)), unscored: C.int64_t(len(rep.Unscored)),
			unscorable: C.int64_t(rep.Unscorable),
		}
	}
	return 0
}
