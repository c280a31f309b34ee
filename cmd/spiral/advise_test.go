package main

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"spiral/advise"
	"spiral/combin"
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
	// At the default step, 256 problems of the budget's 57,344 tokens, the
	// library's own ranking puts N1 = 6, n = 3, K = 4, N2 = 2 balanced
	// first: 57,344 tokens (first in ExampleAdvise's smaller step too).
	if out.Rule != advise.FindOne || out.Needs != 0 || out.Order != combin.IndexOrder || first.Needed != 1 {
		t.Errorf("rule %v, needs %d, first row needs %d; want find-one, 0, 1", out.Rule, out.Needs, first.Needed)
	}
	if first.SearchTraces != 6 || first.SetSize != 3 || first.Sets != 4 || first.AggregationsPerSet != 2 || first.Design != "balanced" || first.Tokens != 57344 {
		t.Errorf("first row %+v", first)
	}
	if out.StepTokens != 256*57344 || out.StepProblems != 0 || len(out.Refused) != 0 {
		t.Errorf("step %d tokens, %d problems; refused %+v", out.StepTokens, out.StepProblems, out.Refused)
	}
	for i, r := range out.Candidates {
		if r.Tokens > 57344 || (i > 0 && r.ImprovementPerTok > out.Candidates[i-1].ImprovementPerTok) {
			t.Errorf("row %d: %+v out of budget or order", i, r)
		}
	}
	table, _, code := runCmd(t, adviseSmall, "advise", "-table", "-top", "3")
	if code != exitOK || strings.Count(table, "\n") != 6 || !strings.HasPrefix(table, "rule find-one, order index, step 14680064 tokens\n") || !strings.Contains(table, "balanced") {
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
		strings.Replace(adviseSmall, `"max_sets"`, `"rule": "most", "max_sets"`, 1),
		strings.Replace(adviseSmall, `"max_sets"`, `"order": "sorted", "max_sets"`, 1),
		strings.Replace(adviseSmall, `"max_sets"`, `"rule": "needs", "max_sets"`, 1),
		strings.Replace(adviseSmall, `"max_sets"`, `"rule": "needs", "needs": 6, "max_sets"`, 1),
		strings.Replace(adviseSmall, `"max_sets"`, `"rule": "majority", "needs": 2, "max_sets"`, 1),
		strings.Replace(adviseSmall, `"max_sets"`, `"rule": "needs", "needs": 3, "set_sizes": [2], "max_sets"`, 1),
	} {
		_, stderr, code := runCmd(t, in, "advise")
		if code != exitUsage || !strings.Contains(stderr, "spiral advise:") {
			t.Errorf("%s: exit %d, stderr %q", in, code, stderr)
		}
	}
	for _, args := range [][]string{{"-top", "-1"}, {"-step-tokens", "-1"}, {"-step-problems", "-2"}, {"-step-tokens", "5", "-step-problems", "5"}} {
		if _, _, code := runCmd(t, adviseSmall, append([]string{"advise"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// With "deploy_set_size" the rows are ranked by the improvement of the
// deployment objective per token, as advise.Advise ranks them.
func TestAdviseDeploy(t *testing.T) {
	in := strings.Replace(adviseSmall, `"max_sets"`, `"deploy_set_size": 3, "max_sets"`, 1)
	out := decodeAdvise(t, in)
	req, _, err := adviseRequest([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	res, err := advise.Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	f := func(r *big.Rat) float64 { v, _ := r.Float64(); return v }
	for i, r := range out.Candidates {
		c := res.Candidates[i]
		if r.SetSize != c.Config.SetSize || r.Sets != c.Config.Sets || r.DeployImprovementPerTok == nil || *r.DeployImprovementPerTok != f(c.DeployImprovementPerToken) ||
			*r.Alignment != f(c.Alignment) || *r.DeployImprovement != f(c.DeployImprovement) {
			t.Fatalf("row %d: %+v, advise.Advise %+v", i, r, c)
		}
	}
	if _, stderr, code := runCmd(t, strings.Replace(in, `"deploy_set_size": 3`, `"deploy_set_size": 8`, 1), "advise"); code != exitUsage || !strings.Contains(stderr, "advise: deploy_set_size: 8 outside [1, 7]") {
		t.Errorf("deploy_set_size 8: exit %d, stderr %q", code, stderr)
	}
}

// The step flags set the step budget the rows are ranked at, and every
// figure of a row is advise.Advise's at that step: B, rho, the
// improvement per token and its limits.
func TestAdviseStepFlags(t *testing.T) {
	req, _, err := adviseRequest([]byte(adviseSmall))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		args []string
		step advise.Step
	}{
		{[]string{"-step-problems", "8"}, advise.Step{Problems: 8}},
		{[]string{"-step-tokens", "1000000"}, advise.Step{Tokens: 1_000_000}},
	} {
		out := decodeAdvise(t, adviseSmall, x.args...)
		req.Step = x.step
		res, err := advise.Advise(req)
		if err != nil {
			t.Fatal(err)
		}
		if out.StepTokens != x.step.Tokens || out.StepProblems != x.step.Problems || len(out.Candidates) != len(res.Candidates) {
			t.Fatalf("%v: step %d tokens, %d problems, %d rows; advise.Advise %d", x.args, out.StepTokens, out.StepProblems, len(out.Candidates), len(res.Candidates))
		}
		f := func(r *big.Rat) float64 { v, _ := r.Float64(); return v }
		for i, r := range out.Candidates {
			c := res.Candidates[i]
			if r.Alignment != nil || r.DeployImprovementPerTok != nil {
				t.Fatalf("%v row %d: deployment figures without deploy_set_size", x.args, i)
			}
			if r.SetSize != c.Config.SetSize || r.Sets != c.Config.Sets || r.Problems != f(c.Problems) || r.Rho == nil || *r.Rho != f(c.Rho) ||
				r.ImprovementPerTok != f(c.ImprovementPerToken) || r.Improvement != f(c.Improvement) || r.Signal != f(c.Signal) ||
				r.Variance != f(c.Noise) || r.TokenLimited == nil || *r.TokenLimited != f(c.TokenLimited) || r.LargeBatch != f(c.LargeBatch) {
				t.Fatalf("%v row %d: %+v, advise.Advise %+v", x.args, i, r, c)
			}
		}
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
	var row string
	for line := range strings.SplitSeq(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && strings.Join(f[1:10], " ") == "8 4 4 4 uniform 1 1365/1541 88/1541 98304" {
			row = strings.Join(f[1:], " ")
		}
	}
	if row == "" {
		t.Fatalf("no row 8 4 4 4 uniform 1 1365/1541 88/1541 98304 in\n%s", table)
	}
	// The paper's configuration alone gives the same row.
	one := strings.Replace(in, `"set_sizes"`, `"config": {"search_traces": 8, "set_size": 4, "sets": 4, "aggregations_per_set": 4}, "set_sizes"`, 1)
	alone, stderr, code := runCmd(t, one, "advise", "-table")
	lines := strings.Split(alone, "\n")
	if code != exitOK || len(lines) != 4 {
		t.Fatalf("config: exit %d: %s\n%s", code, stderr, alone)
	}
	if f := strings.Fields(lines[2]); f[0] != "-" || strings.Join(f[1:], " ") != row {
		t.Errorf("config row %q, the ranking's %q", lines[2], row)
	}
}

// With "config" the answer is that configuration's row alone, the row the
// ranking gives it (rule majority, shuffled order, the prefill counted),
// budget optional and the search's bounds unused; in JSON and as a table.
func TestAdviseConfig(t *testing.T) {
	rank := `{"budget": 131072, "count": "prefill", "prompt": 100, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "rule": "majority", "order": "shuffled", "max_traces": 6, "max_sets": 3, "max_aggregations": 3}`
	step := []string{"-step-tokens", "1048576"} // the same step for the ranking and the row
	ranked := decodeAdvise(t, rank, step...)
	one := `{"count": "prefill", "prompt": 100, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "rule": "majority", "order": "shuffled", "max_traces": 3, ` +
		`"config": {"search_traces": 6, "set_size": 3, "sets": 3, "aggregations_per_set": 2, "design": "balanced"}}`
	got := decodeAdvise(t, one, step...)
	if got.Rule != advise.Majority || got.Order != combin.Shuffled || len(got.Refused) != 0 || len(got.Candidates) != 1 {
		t.Fatalf("config: rule %v, order %v, %d refused, %d rows", got.Rule, got.Order, len(got.Refused), len(got.Candidates))
	}
	row := got.Candidates[0]
	i := slices.IndexFunc(ranked.Candidates, func(r adviseRow) bool {
		return r.SearchTraces == 6 && r.SetSize == 3 && r.Sets == 3 && r.AggregationsPerSet == 2 && r.Design == "balanced"
	})
	if i < 0 {
		t.Fatalf("6/3/3/2 balanced not among %d ranked rows", len(ranked.Candidates))
	}
	if d := cmp.Diff(ranked.Candidates[i], row); d != "" {
		t.Errorf("config row differs from the ranking's (-ranked +config):\n%s", d)
	}
	table, stderr, code := runCmd(t, one, append([]string{"advise", "-table"}, step...)...)
	lines := strings.Split(table, "\n")
	if code != exitOK || len(lines) != 4 || lines[0] != "rule majority, order shuffled, step 1048576 tokens" || lines[3] != "" {
		t.Fatalf("table (exit %d): %s\n%s", code, stderr, table)
	}
	if f := strings.Fields(lines[2]); len(f) != 26 || strings.Join(f[:7], " ") != "- 6 3 3 2 balanced 2" || f[9] != strconv.FormatInt(row.Tokens, 10) {
		t.Errorf("table row %q", lines[2])
	}
}

func decodeAdvise(t *testing.T, in string, args ...string) adviseOutput {
	t.Helper()
	stdout, stderr, code := runCmd(t, in, append([]string{"advise"}, args...)...)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", in, code, stderr)
	}
	var out adviseOutput
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A configuration the advisor does not evaluate, or an incomplete one, is
// a request error that names the field.
func TestAdviseConfigErrors(t *testing.T) {
	base := `{"search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "config": `
	for cfg, want := range map[string]string{
		`{"search_traces": 6, "sets": 3, "aggregations_per_set": 2}`:                                      `field "config.set_size" is required`,
		`{"search_traces": 9, "set_size": 3, "sets": 3, "aggregations_per_set": 2}`:                       "advise: config.search_traces: 9 outside [3, 8]",
		`{"search_traces": 6, "set_size": 3, "sets": 3, "aggregations_per_set": 1}`:                       "advise: config.aggregations_per_set: 1 outside [2, 16]",
		`{"search_traces": 6, "set_size": 6, "sets": 1, "aggregations_per_set": 2}`:                       "advise: config.set_size: 6 outside [2, 5], N1 - 1",
		`{"search_traces": 6, "set_size": 3, "sets": 3, "aggregations_per_set": 2, "ordered": true}`:      `unknown field "ordered"`,
		`{"search_traces": 6, "set_size": 3, "sets": 3, "aggregations_per_set": 2, "design": "tuples"}`:   "tuples",
		`{"search_traces": 6, "set_size": 3, "sets": 30, "aggregations_per_set": 2, "design": "uniform"}`: "advise: config.sets: 30 > C(6, 3) = 20",
	} {
		_, stderr, code := runCmd(t, base+cfg+"}", "advise")
		if code != exitUsage || !strings.HasPrefix(stderr, "spiral advise:") || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", cfg, code, stderr, want)
		}
	}
	// Without config the budget is required.
	if _, stderr, code := runCmd(t, strings.TrimSuffix(base, `, "config": `)+"}", "advise"); code != exitUsage || !strings.Contains(stderr, `field "budget" is required`) {
		t.Errorf("no budget: exit %d, stderr %q", code, stderr)
	}
}

// The rules "needs" and "majority", and the order "shuffled", are read,
// echoed and applied: every row lists the correct candidates its n needs (m
// under "needs", where no n < m is ranked; floor(n/2) + 1 under
// "majority"), in JSON and in the table; the rows and their numbers are
// advise.Advise's for the same request.
func TestAdviseRules(t *testing.T) {
	for _, x := range []struct {
		fields string
		rule   advise.Rule
		needs  int
		order  combin.Order
		table  string
	}{
		{`"rule": "needs", "needs": 3`, advise.NeedsPieces, 3, combin.IndexOrder, "rule needs 3, order index, step 14680064 tokens\n"},
		{`"rule": "majority", "order": "shuffled"`, advise.Majority, 0, combin.Shuffled, "rule majority, order shuffled, step 14680064 tokens\n"},
	} {
		in := `{"budget": 57344, "search_length": 4096, "aggregation_length": 4096, "correct": "1/4", "found": "3/4", "missed": "0.1", "max_traces": 5, "max_sets": 4, "max_aggregations": 4, ` + x.fields + `}`
		stdout, stderr, code := runCmd(t, in, "advise")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", x.fields, code, stderr)
		}
		var out adviseOutput
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			t.Fatal(err)
		}
		if out.Rule != x.rule || out.Needs != x.needs || out.Order != x.order || len(out.Candidates) == 0 {
			t.Fatalf("%s: rule %v, needs %d, order %v, %d rows", x.fields, out.Rule, out.Needs, out.Order, len(out.Candidates))
		}
		req, _, err := adviseRequest([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		res, err := advise.Advise(req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Candidates) != len(out.Candidates) {
			t.Fatalf("%s: %d rows, advise.Advise %d", x.fields, len(out.Candidates), len(res.Candidates))
		}
		for i, r := range out.Candidates {
			want := 3
			if x.rule == advise.Majority {
				want = r.SetSize/2 + 1
			}
			if r.Needed != want || r.SetSize < x.needs {
				t.Errorf("%s row %d: n = %d needs %d, want %d", x.fields, i, r.SetSize, r.Needed, want)
			}
			if c := res.Candidates[i]; r.SNRPerToken != c.SNRPerToken || r.SetSize != c.Config.SetSize || r.Sets != c.Config.Sets {
				t.Errorf("%s row %d: %+v, advise.Advise %+v", x.fields, i, r, c.Config)
			}
		}
		table, _, code := runCmd(t, in, "advise", "-table", "-top", "2")
		lines := strings.Split(table, "\n")
		if code != exitOK || len(lines) != 6 || lines[0]+"\n" != x.table {
			t.Fatalf("%s table (exit %d):\n%s", x.fields, code, table)
		}
		// The column after the design is the rows' need.
		for i, line := range lines[2:4] {
			f := strings.Fields(line)
			if len(f) < 7 || f[6] != strconv.Itoa(out.Candidates[i].Needed) {
				t.Errorf("%s table row %d: %q, want need %d", x.fields, i, line, out.Candidates[i].Needed)
			}
		}
	}
}
