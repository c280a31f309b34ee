package main

import (
	"encoding/json"
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
		{[]string{"-update", "paper"}, "-update and -split-roles need -coefficients"},
		{[]string{"-coefficients", "mean"}, `-coefficients = "mean" is not one of "sum"`},
		{[]string{"-coefficients", ""}, `-coefficients = "" is not one of "sum"`},
		{[]string{"-coefficients", "sum", "-update", "plain"}, `-update = "plain", want joint or paper`},
	} {
		_, errOut, code := runCmd(t, "", append([]string{"credit"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}
