package names

import (
	"testing"

	"spiral"
	"spiral/eval"
	"spiral/loss"
)

// TestNames: every field of a Batch has a line and an ABI name, a Config
// field's ABI name is its JSON name part by part, and a field the table
// does not list keeps its name.
func TestNames(t *testing.T) {
	for _, f := range []string{spiral.FieldPlans, spiral.FieldMembers, spiral.FieldRewards, spiral.FieldRewardCounts,
		spiral.FieldUnscorable, spiral.FieldSearchLengths, spiral.FieldAggregationLengths} {
		if n := Spiral[f]; n.Line == "" || n.ABI == "" {
			t.Errorf("%s: %+v lacks a line or an ABI name", f, n)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{Spiral.ABI("Config.Gates.Search.Target"), "gates.search.target"},
		{Spiral.ABI("Config.AggregationsPerSet"), "aggregations_per_set"},
		{Spiral.ABI(spiral.FieldRewardCounts), "reward_counts"},
		{Spiral.Line(spiral.FieldRewardCounts), "rewards"},
		{Spiral.Flag("Config.SetSize"), "-size"},
		{Spiral.Flag("Config.Gates.Search.Target"), "Config.Gates.Search.Target"},
		{Loss.Line(loss.FieldOverTokens), "over_tokens"},
		{Eval.ABI(eval.FieldProblemsC), "c"},
		{Eval.ABI("kmax"), "kmax"},
		{Group.Flag("Epsilon"), "-epsilon"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
