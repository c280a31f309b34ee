package estimator

import (
	"errors"
	"math/big"
	"testing"

	"spiral"
	"spiral/combin"
)

// TestSetErrorsRenamed: combin's error about a set or a selection reaches
// the caller renamed with In to the argument (sets[h], selections[i]), its
// position and value kept and its reason, the *combin.SetError, on Err,
// not wrapped in the estimator's own text.
func TestSetErrorsRenamed(t *testing.T) {
	one := big.NewRat(1, 1)
	single := func(s []int) func(func([]int, *big.Rat) bool) {
		return func(yield func([]int, *big.Rat) bool) { yield(s, one) }
	}
	for _, tc := range []struct {
		sets   [][]int
		sel    []int
		field  string
		output int
		value  float64
		reason combin.SetErrorReason
		text   string
	}{
		{[][]int{{0, 3}}, []int{0}, "sets[0]", 1, 3, combin.OutOfRange, "estimator: sets[0][1] = 3: out of range [0, 3)"},
		{[][]int{{0, 1}, {0, 1}}, []int{0}, "sets[1]", -1, 0, combin.Duplicate, "estimator: sets[1]: identical to set 0"},
		{[][]int{{0, 1}, {1, 2}}, []int{1, 1}, "selections[0]", 1, 1, combin.Repeated, "estimator: selections[0][1] = 1: repeats member 0 of the set"},
		{[][]int{{0, 1}}, []int{}, "selections[0]", -1, 0, combin.Empty, "estimator: selections[0]: empty set"},
		// A selection's member is a set index, in [0, T), not a trace's.
		{[][]int{{0, 1}, {1, 2}}, []int{2}, "selections[0]", 0, 2, combin.OutOfRange, "estimator: selections[0][0] = 2: out of range [0, 2)"},
	} {
		for name, err := range map[string]error{
			"NewSetDistribution":  second(NewSetDistribution(3, tc.sets, single(tc.sel))),
			"DistributionWeights": second(DistributionWeights(3, tc.sets, single(tc.sel))),
		} {
			e, ok := errors.AsType[*combin.InputError](err)
			se, sok := errors.AsType[*combin.SetError](err)
			if !ok || !sok || e.Field != tc.field || e.Problem != -1 || e.Set != -1 || e.Output != tc.output ||
				e.Value != tc.value || se.Reason != tc.reason || err.Error() != tc.text {
				t.Errorf("%s(%v, %v) = %T %v, want an *InputError %q at %d = %v, %v: %q", name, tc.sets, tc.sel, err, err, tc.field, tc.output, tc.value, tc.reason, tc.text)
			}
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestArgumentErrors: the constructors' and entry points' refusals of a
// caller's argument are *InputError values naming the argument by its
// constant, the element and the value, with the text pinned; a valid
// argument beyond an exact answer's cost is ErrTooCostly.
func TestArgumentErrors(t *testing.T) {
	c := must(UniformCategorical(2))
	tab := must(CoverTable(2, 2, 2))
	d := must(FixedSets(4, [][]int{{0, 1}, {2, 3}}))
	agg := func(rew [][]*big.Rat) error {
		_, err := NewAggregator(2, 2, []*Categorical{c, c, c, c}, rew)
		return err
	}
	for _, tc := range []struct {
		name   string
		err    error
		field  string
		output int
		value  float64
		costly bool
		text   string
	}{
		{"NewCategorical nil", second(NewCategorical([]*big.Rat{big.NewRat(1, 2), nil})), FieldProbs, 1, 0, false, "estimator: p[1]: nil"},
		{"NewCategorical sum", second(NewCategorical(rats("1/3", "1/3"))), FieldProbs, -1, 0, false, "estimator: p: sum to 2/3, want exactly 1"},
		{"UniformCategorical", second(UniformCategorical(1 << 30)), FieldSymbols, -1, 1 << 30, false,
			"estimator: V: 1073741824 outside [1, 4096], the most symbols (memory grows with V)"},
		{"NewTable", second(NewTable(2, 1, rats("0", "3/2"))), FieldValues, 1, 0, false, "estimator: values[1]: 3/2 outside [0, 1]"},
		{"RandomTable", second(RandomTable(nil, 2, 2, 3)), FieldRand, -1, 0, false, "estimator: rnd: nil"},
		{"Objective", second(Objective(nil, tab, combin.IndexOrder)), FieldPolicy, -1, 0, false, "estimator: c: nil, want a *Categorical"},
		{"SelectionWeights", second(SelectionWeights(family(t, false, 5, 2), 11)), FieldK, -1, 11, false, "estimator: K: 11 outside [1, T = 10]"},
		{"SelectionWeights, costly", second(SelectionWeights(family(t, true, 8, 4), 4)), FieldK, -1, 4, true,
			"estimator: K: C(T, K) = C(1680, 4) = 330730125180 selections > 33554432, the most enumerated"},
		{"Moments", second(d.Moments(c, tab, combin.IndexOrder, -1)), FieldN2, -1, -1, false, "estimator: N2: -1 < 0 (0 for exact set scores)"},
		{"AggregationCredit", second(AggregationCredit(c, rats("0", "2"), 2, spiral.WithinSet)), FieldReward, 1, 0, false,
			"estimator: reward[1]: 2 outside [0, 1]"},
		{"NewAggregator", agg([][]*big.Rat{rats("0", "1"), rats("0", "1"), rats("0", "3"), rats("0", "1")}), "reward[2]", 1, 0, false,
			"estimator: reward[2][1]: 3 outside [0, 1]"},
		{"JointExpectation", second(JointExpectation(c, nil, family(t, false, 3, 2), 2, 2, spiral.WithinSet, combin.IndexOrder)), FieldAggregator, -1, 0, false,
			"estimator: a: nil, want an *Aggregator"},
		{"NewSetDistribution", second(NewSetDistribution(3, [][]int{{0, 1}, {2}}, nil)), FieldSelections, -1, 0, false,
			"estimator: selections: nil, want an iterator over selections and their probabilities"},
		{"FixedSets", second(FixedSets(3, [][]int{{0, 1}, {2}})), FieldSets, 1, 0, false, "estimator: sets[1]: len = 1, want 2, the size of set 0"},
	} {
		e, ok := errors.AsType[*InputError](tc.err)
		if !ok || e.Field != tc.field || e.Output != tc.output || e.Value != tc.value || tc.err.Error() != tc.text ||
			errors.Is(tc.err, ErrTooCostly) != tc.costly {
			t.Errorf("%s: %T %v, want an *InputError %q at %d = %v (too costly %v): %q", tc.name, tc.err, tc.err, tc.field, tc.output, tc.value, tc.costly, tc.text)
		}
	}
}
