package estimator

import (
	"errors"
	"math/big"
	"testing"

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
