package advise

import (
	"errors"
	"testing"

	"spiral"
	"spiral/combin"
)

// TestInputErrors: a request's or a configuration's field that Advise or
// Evaluate refuses is an *InputError naming the field by its constant (the
// Request's JSON name), the position and the value, with the text pinned.
func TestInputErrors(t *testing.T) {
	advise := func(f func(*Request)) error {
		req := paperRequest()
		f(&req)
		_, err := Advise(req)
		return err
	}
	evaluate := func(f func(*spiral.Config)) error {
		c := spiral.Paper()
		f(&c)
		_, err := Evaluate(c, paperRequest())
		return err
	}
	var rule Rule
	f, err := combin.Subsets(8, 4)
	if err != nil {
		t.Fatal(err)
	}
	_, _, coverErr := CoverMoments(f, 71)
	for _, tc := range []struct {
		name   string
		err    error
		field  string
		output int
		value  float64
		text   string
	}{
		{"budget", advise(func(r *Request) { r.Budget = 0 }), FieldBudget, -1, 0, "advise: budget: 0 < 1"},
		{"set size", advise(func(r *Request) { r.SetSizes = []int{3, 9} }), FieldSetSizes, 1, 9, "advise: set_sizes[1] = 9: outside [2, 7]"},
		{"max sets", advise(func(r *Request) { r.MaxSets = 9 }), FieldMaxSets, -1, 9, "advise: max_sets: 9 outside [0, 8]"},
		{"deploy", advise(func(r *Request) { r.DeploySetSize, r.Reward.Rule, r.Reward.Needs = 1, NeedsPieces, 2 }), FieldDeploySetSize, -1, 1,
			"advise: deploy_set_size: 1 below the 2 correct candidates the reward needs"},
		{"found", advise(func(r *Request) { r.Reward.Found = nil }), FieldFound, -1, 0, "advise: reward.found: missing, want a probability in [0, 1]"},
		{"rule", rule.UnmarshalText([]byte("most")), FieldRule, -1, 0, `advise: reward.rule: "most" is not one of "find-one", "needs", "majority"`},
		{"CoverMoments", coverErr, FieldK, -1, 71, "advise: K: 71 outside [1, T = 70]"},
		{"config sets", evaluate(func(c *spiral.Config) { c.Sets = 9 }), FieldConfigSets, -1, 9, "advise: config.sets: 9 outside [2, 8]"},
		{"config invalid", evaluate(func(c *spiral.Config) { c.SetSize = 9 }), "config.set_size", -1, 9, "advise: config.set_size: 9 > N1 = 8"},
		{"config ordered", evaluate(func(c *spiral.Config) { c.Ordered = true }), FieldConfigOrdered, -1, 0,
			"advise: config.ordered: true: the advisor evaluates subsets, not tuples"},
	} {
		e, ok := errors.AsType[*InputError](tc.err)
		if !ok || e.Field != tc.field || e.Output != tc.output || e.Value != tc.value || tc.err.Error() != tc.text {
			t.Errorf("%s: %T %v, want an *InputError %q at %d = %v: %q", tc.name, tc.err, tc.err, tc.field, tc.output, tc.value, tc.text)
		}
	}
}
