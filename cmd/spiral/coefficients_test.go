package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"spiral"
	"spiral/combin"
	"spiral/loss"
)

// TestCreditCoefficients: credit -coefficients writes Config.LossCoefficients
// of the line's credit, bit for bit, in the shape of the rewards; it needs
// both lengths, and -update and -split-roles need it.
func TestCreditCoefficients(t *testing.T) {
	line := `{"traces":8,"sets":[[1,2,4,7],[0,1,3,6],[1,3,6,7],[0,1,2,7]],"rewards":[[1,1,1,0],[1,0,1,0],[0,0,1,0],[0,1,1,0]],` +
		`"search_lengths":[900,1200,700,1500,800,1000,1100,600],"aggregation_lengths":[[300,350,400,450],[500,550,0,650],[700,750,800,850],[900,950,1000,1050]]}`
	out, errOut, code := runCmd(t, line, "credit", "-coefficients", "seq-mean-token-mean", "-update", "paper", "-split-roles")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got creditOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	c := spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Order: combin.Shuffled}
	var in spiral.Batch
	var lines struct {
		Sets               [][]int     `json:"sets"`
		Rewards            [][]float64 `json:"rewards"`
		SearchLengths      []int       `json:"search_lengths"`
		AggregationLengths [][]int     `json:"aggregation_lengths"`
	}
	if err := json.Unmarshal([]byte(line), &lines); err != nil {
		t.Fatal(err)
	}
	var members []int
	for i := range lines.Sets {
		members = append(members, lines.Sets[i]...)
		in.Rewards = append(in.Rewards, lines.Rewards[i]...)
		in.AggregationLengths = append(in.AggregationLengths, lines.AggregationLengths[i]...)
	}
	in.SearchLengths = lines.SearchLengths
	var plans spiral.Plans
	if err := c.CheckPlans(&plans, members); err != nil {
		t.Fatal(err)
	}
	in.Plans = &plans
	var b spiral.BatchCredit
	if err := c.CreditBatch(&b, in); err != nil {
		t.Fatal(err)
	}
	var want spiral.LossCoefficients
	if err := c.LossCoefficients(&want, &b, in, spiral.LossOptions{Update: spiral.PaperUpdate, Reduction: loss.SeqMeanTokenMean, SplitRoles: true}); err != nil {
		t.Fatal(err)
	}
	var flat []float64
	for _, row := range got.AggregationCoefficients {
		flat = append(flat, row...)
	}
	for y := range want.Search {
		if got.SearchCoefficients[y] != want.Search[y] {
			t.Fatalf("search %v, want %v", got.SearchCoefficients, want.Search)
		}
	}
	for o := range want.Aggregation {
		if flat[o] != want.Aggregation[o] {
			t.Fatalf("aggregation %v, want %v", flat, want.Aggregation)
		}
	}
	if flat[6] != 0 || got.Scale == nil || *got.Scale != want.Report.Scale {
		t.Errorf("the output of no tokens %v, scale %v; want 0 and %v", flat[6], got.Scale, want.Report.Scale)
	}
	// Without -coefficients: no coefficient fields.
	if out, _, _ := runCmd(t, line, "credit"); strings.Contains(out, "coefficients") || strings.Contains(out, "scale") {
		t.Errorf("coefficients without -coefficients: %s", out)
	}
	noLengths := `{"traces":2,"sets":[[0],[1]],"rewards":[[1],[0]]}`
	if out, _, _ := runCmd(t, noLengths, "credit", "-coefficients", "sum"); !strings.Contains(out, "-coefficients needs search_lengths and aggregation_lengths") {
		t.Errorf("missing lengths: %s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-update", "paper"}, "-update, -split-roles and -missing-rate need -coefficients"},
		{[]string{"-missing-rate", "0.1"}, "-update, -split-roles and -missing-rate need -coefficients"},
		{[]string{"-coefficients", "sum", "-missing-rate", "1"}, "-missing-rate: 1 outside [0, 1)"},
		{[]string{"-coefficients", "mean"}, `-coefficients = "mean" is not one of "sum"`},
		{[]string{"-coefficients", ""}, `-coefficients = "" is not one of "sum"`},
		{[]string{"-coefficients", "sum", "-update", "plain"}, `-update = "plain", want joint, paper or scored`},
	} {
		_, errOut, code := runCmd(t, "", append([]string{"credit"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestCreditScoredCoefficients: credit -update scored -missing-rate writes
// Config.LossCoefficients with ScoredGradient and the rate, bit for bit, on
// a line with a dropped output, an unscorable one and a set of one scored
// output; and constants -missing-rate gives RoleWeights' expected counts
// (81/32 at N1 = 2, n = 1, K = 2, N2 = 3, rate 1/4).
func TestCreditScoredCoefficients(t *testing.T) {
	line := `{"traces":4,"sets":[[0,1],[1,2],[2,3]],"rewards":[[1,0,1],[0,1],[1,0,0]],"unscorable":[[false,false,false],[false,false],[true,true,false]],` +
		`"search_lengths":[3,4,5,6],"aggregation_lengths":[[1,2,3],[4,5],[6,7,8]]}`
	for _, update := range []string{"scored", "joint"} {
		out, errOut, code := runCmd(t, line, "credit", "-coefficients", "token-mean", "-update", update, "-missing-rate", "0.25")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got creditOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		c := spiral.Config{SearchTraces: 4, SetSize: 2, Sets: 3, AggregationsPerSet: 3, Order: combin.Shuffled}
		var plans spiral.Plans
		if err := c.CheckPlans(&plans, []int{0, 1, 1, 2, 2, 3}); err != nil {
			t.Fatal(err)
		}
		in := spiral.Batch{Plans: &plans, Rewards: []float64{1, 0, 1, 0, 1, 1, 0, 0}, RewardCounts: []int{3, 2, 3},
			Unscorable:    []bool{false, false, false, false, false, true, true, false},
			SearchLengths: []int{3, 4, 5, 6}, AggregationLengths: []int{1, 2, 3, 4, 5, 6, 7, 8}}
		var b spiral.BatchCredit
		if err := c.CreditBatch(&b, in); err != nil {
			t.Fatal(err)
		}
		opt := spiral.LossOptions{Update: spiral.ScoredGradient, Reduction: loss.TokenMean, MissingRate: 0.25}
		if update == "joint" {
			opt.Update = spiral.JointGradient
		}
		var want spiral.LossCoefficients
		if err := c.LossCoefficients(&want, &b, in, opt); err != nil {
			t.Fatal(err)
		}
		var flat []float64
		for _, row := range got.AggregationCoefficients {
			flat = append(flat, row...)
		}
		if !slices.Equal(got.SearchCoefficients, want.Search) || !slices.Equal(flat, want.Aggregation) {
			t.Errorf("-update %s: %v %v, want %v %v", update, got.SearchCoefficients, flat, want.Search, want.Aggregation)
		}
	}
	out, errOut, code := runCmd(t, "", "constants", "-traces", "2", "-size", "1", "-sets", "2", "-aggregations", "3", "-reduction", "sum", "-missing-rate", "0.25")
	if code != exitOK || !strings.Contains(out, `"aggregation":"81/32"`) || !strings.Contains(out, `"search":"3969/4096"`) {
		t.Errorf("constants -missing-rate 0.25: exit %d, %s %s", code, out, errOut)
	}
	_, errOut, code = runCmd(t, "", "constants", "-traces", "8", "-size", "4", "-sets", "4", "-balanced", "-aggregations", "4", "-reduction", "sum", "-missing-rate", "0.25")
	if code != exitUsage || !strings.Contains(errOut, "-balanced") {
		t.Errorf("constants -balanced -missing-rate: exit %d, %s", code, errOut)
	}
}
