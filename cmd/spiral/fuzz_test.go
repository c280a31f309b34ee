package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/lengthgate"
)

// fuzzModes is the number of handlers fuzzHandler chooses from.
const fuzzModes = 6

// fuzzHandler returns the handler that mode selects: credit, credit with
// both gates and -boundary keep, credit -ordered with the aggregation gate,
// passk, group with the zero options, or group with verl's GRPO.
func fuzzHandler(mode uint8) handler {
	switch mode % fuzzModes {
	case 0:
		return &creditHandler{base: spiral.Config{Order: combin.Shuffled}}
	case 1:
		g := lengthgate.Gate{Target: 100, Boundary: lengthgate.KeepAtTarget}
		return &creditHandler{base: spiral.Config{Order: combin.Shuffled, Gates: lengthgate.Shared(g)}}
	case 2:
		return &creditHandler{base: spiral.Config{Ordered: true, Gates: lengthgate.Gates{Aggregation: lengthgate.Gate{Target: 5}}}}
	case 4:
		return &groupHandler{}
	case 5:
		return &groupHandler{opt: advantage.GroupOptions{Scale: advantage.ScaleGroup, Bessel: true, Epsilon: 1e-6}}
	}
	return &passkHandler{ks: []int{1, 3, 8}}
}

// FuzzLines feeds arbitrary input to a stream command (chosen by mode, with
// a line limit of 64 to 744 bytes, so that overlong lines occur) and
// checks the protocol: no panic, no read or write error, exactly one output
// line per input line, each a JSON object of the command's output schema
// or an error line {"line": k, "error": "..."} whose k is its own line
// number, and as many error lines as stream reports failed.
func FuzzLines(f *testing.F) {
	f.Add(uint8(0), []byte(workedExampleLine+"\n"))
	f.Add(uint8(3), []byte(`{"n":10,"c":3}`+"\n"+`{"n":2,"c":1}`))
	f.Add(uint8(2), []byte("\n\r\n \t\n{}\n"))
	f.Add(uint8(4), []byte(`{"ids":["a",1,"a",1],"rewards":[1,0,0.5,0.5]}`+"\n"+`{"ids":[1],"rewards":[NaN]}`))
	f.Add(uint8(5), []byte(`{"ids":[1,1,2],"rewards":[1,0,1],"unscorable":[false,true,false]}`))
	f.Add(uint8(0), []byte(`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[0]],"unscorable":[[false,true],[false]]}`))
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		maxLine := 64 + int(mode/fuzzModes)*16
		var out bytes.Buffer
		lines, failed, err := stream(bytes.NewReader(data), &out, maxLine, fuzzHandler(mode))
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			want++
		}
		got := outputLines(t, out.String())
		if len(got) != want || lines != int64(want) {
			t.Fatalf("%d input lines, %d output lines, %d counted", want, len(got), lines)
		}
		errorLines := 0
		for k, line := range got {
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if strings.HasPrefix(line, `{"line":`) {
				errorLines++
				var e lineError
				if err := dec.Decode(&e); err != nil || e.Line != int64(k+1) || e.Error == "" {
					t.Fatalf("line %d: bad error line %s (%v)", k+1, line, err)
				}
				continue
			}
			var err error
			switch mode % fuzzModes {
			case 3:
				var o struct {
					PassAtK map[string]float64 `json:"pass_at_k"`
				}
				err = dec.Decode(&o)
				if err == nil && len(o.PassAtK) != 3 {
					t.Fatalf("line %d: %s", k+1, line)
				}
			case 4, 5:
				var o groupOutput
				err = dec.Decode(&o)
			default:
				var o creditOutput
				err = dec.Decode(&o)
			}
			if err != nil || dec.More() {
				t.Fatalf("line %d: output %s does not fit the schema: %v", k+1, line, err)
			}
		}
		if int64(errorLines) != failed {
			t.Fatalf("%d error lines, %d failed", errorLines, failed)
		}
	})
}

// FuzzSizeFlags runs constants and plan (two problems) on arbitrary sizes and
// switches, and checks that each either succeeds with one line per answer
// or refuses with status 2 and a message, never panicking.
func FuzzSizeFlags(f *testing.F) {
	f.Add(int64(8), int64(4), int64(4), uint8(0), uint64(1))
	f.Add(int64(1<<20), int64(1<<19), int64(2), uint8(1), uint64(2))
	f.Add(int64(64), int64(32), int64(65536), uint8(2), uint64(3))
	f.Add(int64(16777216), int64(8), int64(9223372036854775807), uint8(4), uint64(4))
	f.Add(int64(0), int64(-1), int64(-9223372036854775808), uint8(7), uint64(0))
	f.Fuzz(func(t *testing.T, traces, size, sets int64, switches uint8, step uint64) {
		sizes := []string{"-traces", strconv.FormatInt(traces, 10), "-size", strconv.FormatInt(size, 10), "-sets", strconv.FormatInt(sets, 10)}
		var extra []string
		for i, s := range []string{"-ordered", "-balanced", "-shuffle"} {
			if switches&(1<<i) != 0 {
				extra = append(extra, s)
			}
		}
		// Plans of more than 2^16 indices are left to the tests: the
		// fuzzer checks the flags, not the sampler's speed.
		if traces >= 1 && size >= 1 && sets >= 1 && size <= 1<<16 && sets <= (1<<16)/size {
			args := slices.Concat([]string{"plan"}, sizes, extra, []string{"-seed", "1", "-step", strconv.FormatUint(step, 10), "-problems", "2"})
			checkRun(t, args, 2)
		}
		if switches&(1<<2) == 0 { // constants has no -shuffle
			checkRun(t, slices.Concat([]string{"constants"}, sizes, extra), 1)
		}
	})
}

// checkRun runs args and checks the outcome: status 0 with want lines of
// JSON objects and nothing on stderr, or status 2 with nothing on stdout
// and a message on stderr.
func checkRun(t *testing.T, args []string, want int) {
	var out, errOut bytes.Buffer
	switch code := run(args, strings.NewReader(""), &out, &errOut); code {
	case exitOK:
		lines := outputLines(t, out.String())
		if len(lines) != want || errOut.Len() != 0 {
			t.Fatalf("%v: %d lines, stderr %q", args, len(lines), errOut.String())
		}
		for _, l := range lines {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%v: %s: %v", args, l, err)
			}
		}
	case exitUsage:
		if out.Len() != 0 || errOut.Len() == 0 {
			t.Fatalf("%v: refused with stdout %q, stderr %q", args, out.String(), errOut.String())
		}
	default:
		t.Fatalf("%v: exit %d", args, code)
	}
}
