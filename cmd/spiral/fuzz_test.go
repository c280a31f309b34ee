package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"spiral"
	"spiral/combin"
	"spiral/lengthgate"
)

// fuzzHandler returns the handler that mode selects: credit, credit with
// both gates and -boundary keep, credit -ordered with the aggregation gate,
// or passk.
func fuzzHandler(mode uint8) handler {
	switch mode % 4 {
	case 0:
		return &creditHandler{base: spiral.Config{Order: combin.Shuffled}}
	case 1:
		g := lengthgate.Gate{Target: 100, Boundary: lengthgate.KeepAtTarget}
		return &creditHandler{base: spiral.Config{Order: combin.Shuffled, Gates: lengthgate.Shared(g)}}
	case 2:
		return &creditHandler{base: spiral.Config{Ordered: true, Gates: lengthgate.Gates{Aggregation: lengthgate.Gate{Target: 5}}}}
	}
	return &passkHandler{ks: []int{1, 3, 8}}
}

// FuzzLines feeds arbitrary input to a stream command (chosen by mode, with
// a line limit of 64 to 1072 bytes, so that overlong lines occur) and
// checks the protocol: no panic, no read or write error, exactly one output
// line per input line, each a JSON object of the command's output schema
// or an error line {"line": k, "error": "..."} whose k is its own line
// number, and as many error lines as stream reports failed.
func FuzzLines(f *testing.F) {
	f.Add(uint8(0), []byte(workedExampleLine+"\n"))
	f.Add(uint8(3), []byte(`{"n":10,"c":3}`+"\n"+`{"n":2,"c":1}`))
	f.Add(uint8(5), []byte("\n\r\n \t\n{}\n"))
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		maxLine := 64 + int(mode/4)*16
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
			if mode%4 == 3 {
				var o struct {
					PassAtK map[string]float64 `json:"pass_at_k"`
				}
				err = dec.Decode(&o)
				if err == nil && len(o.PassAtK) != 3 {
					t.Fatalf("line %d: %s", k+1, line)
				}
			} else {
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
