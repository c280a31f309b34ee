package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConstantsRoleWeights: -reduction prints the role weights and
// multipliers of Config.RoleWeights at the paper's configuration; the
// reductions whose weights depend on lengths, a leave-one-out baseline
// with N2 = 1 and missing flags are refused in the flags' words.
func TestConstantsRoleWeights(t *testing.T) {
	paper := "-traces 8 -size 4 -sets 4 -aggregations 4 "
	for _, tc := range []struct {
		args              string
		search, aggregate string
		searchMul, aggMul float64
	}{
		{paper + "-reduction sum", "1365/1541", "12/1", 1541.0 / 1365, 1.0 / 12},
		{paper + "-reduction sum -baseline leave-one-out", "1365/1541", "16/1", 1541.0 / 1365, 1.0 / 16},
		{paper + "-reduction seq-mean-token-sum -split-roles", "1365/12328", "3/4", 12328.0 / 1365, 4.0 / 3},
		{paper + "-reduction seq-mean-token-sum", "455/12328", "1/2", 12328.0 / 455, 2},
		{paper + "-reduction trl-dr-grpo -split-roles", "1365/12328", "3/4", 12328.0 / 1365, 4.0 / 3},
	} {
		out, errOut, code := runCmd(t, "", strings.Fields("constants "+tc.args)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.args, code, errOut)
		}
		var got constantsOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.RoleWeights == nil {
			t.Fatalf("%s: %v %s", tc.args, err, out)
		}
		w := got.RoleWeights
		if *w.Search != tc.search || *w.Aggregation != tc.aggregate || w.SearchMultiplier != tc.searchMul || w.AggregationMultiplier != tc.aggMul {
			t.Errorf("%s: %+v (search %s, aggregation %s), want %s, %s, multipliers %v, %v", tc.args, w, *w.Search, *w.Aggregation, tc.search, tc.aggregate, tc.searchMul, tc.aggMul)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{paper + "-reduction token-mean", "-reduction token-mean weights each output by its length"},
		{paper + "-reduction trl-grpo", "spiral credit -coefficients trl-grpo"},
		{"-traces 8 -size 4 -sets 4 -aggregations 1 -reduction sum -baseline leave-one-out", "-baseline leave-one-out needs -aggregations (N2) >= 2"},
		{"-traces 8 -size 4 -sets 4 -reduction sum", "flag -aggregations is required"},
		{paper + "-reduction mean", `-reduction = "mean" is not one of "sum"`},
		{paper + "-reduction sum -baseline loo", `-baseline = "loo"`},
	} {
		_, errOut, code := runCmd(t, "", strings.Fields("constants "+tc.args)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	// Without -reduction the output has no role_weights.
	if out, _, _ := runCmd(t, "", strings.Fields("constants -traces 8 -size 4 -sets 4")...); strings.Contains(out, "role_weights") {
		t.Errorf("role_weights without -reduction: %s", out)
	}
}
