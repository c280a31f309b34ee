package main

import (
	"testing"

	"spiral"
	"spiral/eval"
	"spiral/internal/names"
	"spiral/loss"
)

// TestNames: in the names table (internal/names) the bridge and the C ABI
// share, every field of a Batch has a line and an ABI name, a Config
// field's ABI name is its JSON name part by part, and a field the table
// does not list keeps its name.
func TestNames(t *testing.T) {
	for _, f := range []string{spiral.FieldPlans, spiral.FieldMembers, spiral.FieldRewards, spiral.FieldRewardCounts,
		spiral.FieldUnscorable, spiral.FieldSearchLengths, spiral.FieldAggregationLengths} {
		if n := names.Spiral[f]; n.Line == "" || n.ABI == "" {
			t.Errorf("%s: %+v lacks a line or an ABI name", f, n)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{names.Spiral.ABI("Config.Gates.Search.Target"), "gates.search.target"},
		{names.Spiral.ABI("Config.AggregationsPerSet"), "aggregations_per_set"},
		{names.Spiral.ABI(spiral.FieldRewardCounts), "reward_counts"},
		{names.Spiral.Line(spiral.FieldRewardCounts), "rewards"},
		{names.Spiral.Flag("Config.SetSize"), "-size"},
		{names.Spiral.Flag("Config.Gates.Search.Target"), "Config.Gates.Search.Target"},
		{names.Loss.Line(loss.FieldOverTokens), "over_tokens"},
		{names.Eval.ABI(eval.FieldProblemsC), "c"},
		{names.Eval.ABI("kmax"), "kmax"},
		{names.Group.Flag("Epsilon"), "-epsilon"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
