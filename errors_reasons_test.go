package spiral

import (
	"errors"
	"regexp"
	"testing"

	"spiral/combin"
	"spiral/loss"
)

// TestSetErrorPositions: a bad set is an ordinary *InputError, which alone
// carries the set, the member and the value; the *combin.SetError on Err
// adds only the reason and what it relates them to. Members left over
// after the last set are reported at the first of them, with its own
// value, and a reason names no quantity by a symbol its caller may not
// use (the bound of a check is the caller's, N1 or T).
func TestSetErrorPositions(t *testing.T) {
	subsets := func(N1, n int) combin.Family {
		f, err := combin.Subsets(N1, n)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name               string
		err                error
		field              string
		set, output, value int
		reason             combin.SetError
		text               string
	}{
		{"left over", combin.CheckSets(8, false, []int{2}, []int{0, 1, 5}), combin.FieldMembers, -1, 2, 5,
			combin.SetError{Reason: combin.Length, Other: -1, Traces: 8}, "combin: members[2] = 5: in no set (the sets end before it)"},
		{"left over, family", subsets(8, 4).CheckSets([]int{0, 1, 2, 3, 7}), combin.FieldMembers, -1, 4, 7,
			combin.SetError{Reason: combin.Length, Other: -1, Traces: 8}, "combin: members[4] = 7: in no set (the sets end before it)"},
		{"past the end", combin.CheckSets(8, false, []int{2, 3}, []int{0, 1, 2}), combin.FieldSizes, 1, -1, 3,
			combin.SetError{Reason: combin.Length, Other: 2, Traces: 8}, "combin: sizes, set 1: the set, from member 2, runs past the end of members"},
		{"empty", combin.CheckSets(8, false, []int{1, 0}, []int{0}), combin.FieldSizes, 1, -1, 0,
			combin.SetError{Reason: combin.Empty, Other: -1, Traces: 8}, "combin: sizes, set 1: empty set"},
		{"out of range", combin.CheckSets(3, false, []int{2}, []int{0, 3}), combin.FieldMembers, 0, 1, 3,
			combin.SetError{Reason: combin.OutOfRange, Other: -1, Traces: 3}, "combin: members, set 0, member 1 = 3: out of range [0, 3)"},
		{"repeated", combin.CheckSets(8, false, []int{3}, []int{4, 1, 4}), combin.FieldMembers, 0, 2, 4,
			combin.SetError{Reason: combin.Repeated, Other: 0, Traces: 8}, "combin: members, set 0, member 2 = 4: repeats member 0 of the set"},
		{"duplicate", combin.CheckSets(8, true, []int{2, 2}, []int{1, 2, 1, 2}), combin.FieldMembers, 1, -1, 0,
			combin.SetError{Reason: combin.Duplicate, Other: 0, Traces: 8}, "combin: members, set 1: identical to set 0"},
	} {
		var e *InputError
		var se *combin.SetError
		if !errors.As(tc.err, &e) || !errors.As(tc.err, &se) {
			t.Errorf("%s: %T %v is not an *InputError wrapping a *combin.SetError", tc.name, tc.err, tc.err)
			continue
		}
		if e.Field != tc.field || e.Problem != -1 || e.Set != tc.set || e.Output != tc.output || e.Value != float64(tc.value) {
			t.Errorf("%s: field %q, problem %d, set %d, output %d, value %v; want %q, -1, %d, %d, %d",
				tc.name, e.Field, e.Problem, e.Set, e.Output, e.Value, tc.field, tc.set, tc.output, tc.value)
		}
		if *se != tc.reason {
			t.Errorf("%s: reason %+v, want %+v", tc.name, *se, tc.reason)
		}
		if tc.err.Error() != tc.text {
			t.Errorf("%s: %q, want %q", tc.name, tc.err, tc.text)
		}
	}
}

// TestCapsInCallersWords: a reason that refuses a size beyond a cap states
// the cap's value and what it bounds, in words every caller shares (the Go
// program, the bridge, the C ABI), never the Go constant's name.
func TestCapsInCallersWords(t *testing.T) {
	half, err := combin.Subsets(combin.MaxSize, combin.MaxSize/2)
	if err != nil {
		t.Fatal(err)
	}
	second := func(_ any, err error) error { return err }
	for _, tc := range []struct {
		name  string
		err   error
		field string
		text  string
	}{
		{"family", second(combin.Subsets(combin.MaxSize+1, 1)), combin.FieldN1,
			"combin: N1: 16777217 > 16777216, the most traces a family holds"},
		{"traces", combin.CheckSets(combin.MaxSize+1, false, nil, nil), combin.FieldTraces,
			"combin: traces: 16777217 out of range [1, 16777216]"},
		{"sampler", second(combin.NewSampler(half, 3)), combin.FieldK,
			"combin: K: K*n = 3*8388608 > 16777216, the most indices a draw holds"},
		{"exact", second(half.Count()), combin.FieldFamily,
			"combin: Family: Subsets(16777216, 8388608).Count: T has about 1.678e+07 bits > 131072, the most computed exactly; use LogCount"},
		{"config", Config{SearchTraces: 1 << 30, SetSize: 1, Sets: 1, AggregationsPerSet: 1}.Validate(), "Config.SearchTraces",
			"spiral: Config.SearchTraces: 1073741824 > 16777216, the most traces a family holds"},
		{"config, K*n", Config{SearchTraces: 1 << 20, SetSize: 1 << 10, Sets: 1 << 15, AggregationsPerSet: 1}.Validate(), "Config.Sets",
			"spiral: Config.Sets: K*n = 32768*1024 > 16777216, the most members a problem's plan holds"},
		{"role weights", second(Paper().RoleWeights(LossOptions{Reduction: loss.TokenMean})), FieldReduction,
			"spiral: LossOptions.Reduction: token-mean weights each output by its length (or the batch's tokens): its role weights are not constants; the loss coefficients of each batch give its exact update"},
		{"undefined reduction", second(Paper().RoleWeights(LossOptions{Reduction: 99})), FieldReduction,
			"spiral: LossOptions.Reduction: 99 is not a defined Reduction"},
	} {
		var e *InputError
		if !errors.As(tc.err, &e) {
			t.Errorf("%s: %T %v is not an *InputError", tc.name, tc.err, tc.err)
			continue
		}
		if e.Field != tc.field || tc.err.Error() != tc.text {
			t.Errorf("%s: field %q, %q; want %q, %q", tc.name, e.Field, tc.err, tc.field, tc.text)
		}
		if goName.MatchString(tc.err.Error()) {
			t.Errorf("%s: %q names a Go identifier", tc.name, tc.err)
		}
	}
}

// goName matches a Go identifier of the module's API in a message: a
// package-qualified name or an exported Max constant.
var goName = regexp.MustCompile(`\b(combin|loss|lengthgate|advantage|eval|spiral)\.[A-Z]|\bMax[A-Z]`)
