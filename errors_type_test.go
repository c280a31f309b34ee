package spiral

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"spiral/advantage"
	"spiral/combin"
	"spiral/eval"
	"spiral/lengthgate"
	"spiral/loss"
)

// TestOneInputErrorType: an error about a caller's input from any layer
// (combin, lengthgate, advantage, loss, eval, the root's LossCoefficients) is
// recovered by one errors.As target, *InputError, naming the layer's
// field (a constant) and position; the reason a program acts on stays
// testable on Err.
func TestOneInputErrorType(t *testing.T) {
	var se *combin.SetError
	for _, tc := range []struct {
		name   string
		err    error
		field  string
		output int
		text   string
		reason func(error) bool
	}{
		{"combin", combin.CheckSets(8, false, []int{2, 2}, []int{0, 1, 1, 0}), combin.FieldMembers, -1,
			"combin: members, set 1: identical to set 0",
			func(err error) bool { return errors.As(err, &se) && se.Reason == combin.Duplicate }},
		{"combin, exact index", combin.CheckSets(8, false, []int{2}, []int{0, math.MinInt}), combin.FieldMembers, 1,
			"combin: members, set 0, member 1 = " + strconv.Itoa(math.MinInt) + ": out of range [0, 8)",
			func(err error) bool { return errors.As(err, &se) && se.Reason == combin.OutOfRange }},
		{"combin, family", familyError(), combin.FieldN, -1, "combin: n: 9 > N1 = 8", nil},
		{"lengthgate", lengthgate.Gates{Search: lengthgate.Gate{Target: -1}}.Validate(), "Search." + lengthgate.FieldTarget, -1,
			"lengthgate: Search.Target: -1 < 0 (0 disables the gate)", nil},
		{"lengthgate, entry", gateError(), "lengths", 1, "lengthgate: lengths[1] = " + strconv.Itoa(math.MinInt) + ": length < 0", nil},
		{"advantage", groupError(), "rewards", 1, "advantage: rewards[1] = NaN: group 0: reward is not finite",
			func(err error) bool { return errors.Is(err, advantage.ErrNotFinite) }},
		{"loss", lossRowsError(), loss.FieldLengths, 0, "loss: Lengths[0] = 536870913: length outside [0, 536870912] tokens", nil},
		{"loss, reduction", lossReductionError(), loss.FieldReduction, -1, "loss: r: 99 is not a defined Reduction", nil},
		{"eval", evalError(), eval.FieldProblemsC, 1,
			"eval: coverage: problems[1].C = " + strconv.Itoa(math.MaxInt) + ": more correct samples than N = 8", nil},
		{"eval, too costly", evalCostError(), "kmax", -1,
			"eval: coverage: kmax: 1073741824 > 16777216, the longest curve (memory: the curve takes 8·kmax bytes)",
			func(err error) bool { return errors.Is(err, eval.ErrTooCostly) }},
		{"LossCoefficients, reduction", coefficientsReductionError(t), FieldReduction, -1,
			"spiral: LossOptions.Reduction: 99 is not a defined Reduction", nil},
		{"LossCoefficients", coefficientsLengthError(t), FieldSearchLengths, 3,
			"spiral: Batch.SearchLengths[3] = 536870913: length outside [0, 536870912] tokens", nil},
	} {
		var e *InputError
		if !errors.As(tc.err, &e) {
			t.Errorf("%s: %T %v is not an *InputError", tc.name, tc.err, tc.err)
			continue
		}
		if e.Field != tc.field || e.Output != tc.output || tc.err.Error() != tc.text {
			t.Errorf("%s: field %q, output %d, %q; want %q, %d, %q", tc.name, e.Field, e.Output, tc.err, tc.field, tc.output, tc.text)
		}
		if tc.reason != nil && !tc.reason(e.Err) {
			t.Errorf("%s: the reason %v is not recognized on Err", tc.name, e.Err)
		}
	}
}

func evalError() error {
	_, err := eval.CoverageCurve([]eval.PassCount{{N: 8, C: 1}, {N: 8, C: math.MaxInt}}, 1)
	return err
}

func evalCostError() error {
	_, err := eval.CoverageCurve([]eval.PassCount{{N: 8, C: 1}}, 1<<30)
	return err
}

func familyError() error {
	_, err := combin.Subsets(8, 9)
	return err
}

func gateError() error {
	_, err := lengthgate.Gate{Target: 10}.Apply([]float64{1, 1}, []int{1, math.MinInt})
	return err
}

func groupError() error {
	_, err := advantage.GroupRelative(make([]float64, 2), []float64{1, math.NaN()}, []int{0, 0}, advantage.GroupOptions{})
	return err
}

func lossRowsError() error {
	_, err := loss.Coefficients(make([]float64, 1), loss.Rows{Update: []float64{1}, Lengths: []int{loss.MaxLength + 1}}, loss.Sum)
	return err
}

func lossReductionError() error {
	_, err := loss.Coefficients(nil, loss.Rows{}, 99)
	return err
}

// coefficientsReductionError returns LossCoefficients' error for an
// undefined reduction.
func coefficientsReductionError(t *testing.T) error {
	c, in, b := smallCredit(t)
	in.SearchLengths, in.AggregationLengths = []int{1, 1, 1, 1}, []int{1, 1}
	var dst LossCoefficients
	return c.LossCoefficients(&dst, b, in, LossOptions{Reduction: 99})
}

// smallCredit returns a Config, a batch of one problem and its credit.
func smallCredit(t *testing.T) (Config, Batch, *BatchCredit) {
	c := Config{SearchTraces: 4, SetSize: 2, Sets: 2, AggregationsPerSet: 1}
	plans := new(Plans)
	if err := c.CheckPlans(plans, []int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	in := Batch{Plans: plans, Rewards: []float64{1, 0}}
	b := new(BatchCredit)
	if err := c.CreditBatch(b, in); err != nil {
		t.Fatal(err)
	}
	return c, in, b
}

// coefficientsLengthError returns LossCoefficients' error for search
// trace 3's length above loss.MaxLength.
func coefficientsLengthError(t *testing.T) error {
	c, in, b := smallCredit(t)
	in.SearchLengths = []int{1, 1, 1, loss.MaxLength + 1}
	in.AggregationLengths = []int{1, 1}
	var dst LossCoefficients
	return c.LossCoefficients(&dst, b, in, LossOptions{Reduction: loss.TokenMean})
}
