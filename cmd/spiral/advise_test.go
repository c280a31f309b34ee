package main

import (
	"encoding/json"
	"strings"
	"testing"

	"spiral/internal/spiraltest"
)

const adviseSmall = `{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "max_traces": 6, "max_sets": 4}`

func TestAdviseJSONAndTable(t *testing.T) {
	stdout, stderr, code := runCmd(t, adviseSmall, "advise")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out adviseOutput
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Candidates) == 0 {
		t.Fatal("no candidates")
	}
	first := out.Candidates[0]
	// The library's own ranking (ExampleAdvise at a larger budget) puts
	// N1 = 6, n = 2, K = 3, N2 = 2 balanced first: 49,152 tokens.
	if first.SearchTraces != 6 || first.SetSize != 2 || first.Sets != 3 || first.AggregationsPerSet != 2 || first.Design != "balanced" || first.Tokens != 49152 {
		t.Errorf("first row %+v", first)
	}
	for i, r := range out.Candidates {
		if r.Tokens > 57344 || (i > 0 && r.SNRPerToken > out.Candidates[i-1].SNRPerToken) {
			t.Errorf("row %d: %+v out of budget or order", i, r)
		}
	}
	table, _, code := runCmd(t, adviseSmall, "advise", "-table", "-top", "3")
	if code != exitOK || strings.Count(table, "\n") != 5 || !strings.Contains(table, "balanced") {
		t.Errorf("table (exit %d):\n%s", code, table)
	}
}

func TestAdviseErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`{"budget": 1}`,
		`{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "extra": 1}`,
		`{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "3/4"}`,
		`{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "2", "found": "3/4", "missed": "0.1"}`,
		`{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "max_traces": 9}`,
		`{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "count": "all"}`,
		adviseSmall + adviseSmall,
	} {
		_, stderr, code := runCmd(t, in, "advise")
		if code != exitUsage || !strings.Contains(stderr, "spiral advise:") {
			t.Errorf("%s: exit %d, stderr %q", in, code, stderr)
		}
	}
	if _, _, code := runCmd(t, adviseSmall, "advise", "-top", "-1"); code != exitUsage {
		t.Errorf("-top -1: exit %d", code)
	}
}

// At the paper's budget the table shows the paper's configuration with its
// tokens and constants.
func TestAdvisePaperTable(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	in := `{"budget": 98304, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "1/10", "set_sizes": [4], "max_sets": 4}`
	table, stderr, code := runCmd(t, in, "advise", "-table")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	found := false
	for line := range strings.SplitSeq(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 8 && strings.Join(f[1:9], " ") == "8 4 4 4 uniform 1365/1541 88/1541 98304" {
			found = true
		}
	}
	if !found {
		t.Errorf("no row 8 4 4 4 uniform 1365/1541 88/1541 98304 in\n%s", table)
	}
}
