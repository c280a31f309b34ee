package advise

import (
	"fmt"

	"spiral/internal/inputerr"
	"spiral/internal/names"
)

// InputError describes a bad field of a Request or of the configuration
// Evaluate is given: which one (Field, one of the constants below, in the
// Request's JSON names), the position within it (Output, -1 for none), the
// value and why. It is the module's one input error type, also
// spiral.InputError; recover it with errors.As.
type InputError = inputerr.InputError

// The fields an *InputError of this package names: a Request's, in its
// JSON names, and the configuration's given to Evaluate, as "config."
// and the JSON name of the spiral.Config field.
const (
	FieldBudget          = "budget"
	FieldMaxTraces       = "max_traces"
	FieldMaxSets         = "max_sets"
	FieldMaxAggregations = "max_aggregations"
	FieldSetSizes        = "set_sizes" // set_sizes[i]
	FieldCount           = "count"
	FieldOrder           = "order"
	FieldStep            = "step"
	FieldDeploySetSize   = "deploy_set_size"
	FieldLengths         = "lengths"
	FieldReward          = "reward" // the reward model as a whole
	FieldRule            = "reward.rule"
	FieldNeeds           = "reward.needs"
	FieldCorrect         = "reward.correct"
	FieldFound           = "reward.found"
	FieldMissed          = "reward.missed"
	FieldSetSize         = "n" // Needed's argument
	FieldConfig          = "config"
	FieldConfigOrdered   = "config.ordered"
	FieldConfigOrder     = "config.order"
	FieldConfigTraces    = "config.search_traces"
	FieldConfigSetSize   = "config.set_size"
	FieldConfigSets      = "config.sets"
	FieldConfigN2        = "config.aggregations_per_set"
	FieldConfigGates     = "config.gates"
	FieldConfigOverlong  = "config.overlong"
	FieldConfigRange     = "config.reward_range"

	// The arguments of the decompositions (DecomposeSearch,
	// DecomposeAggregation, NoiseClosedForm, CoverMoments).
	FieldN2      = "N2"
	FieldTable   = "t"
	FieldSuccess = "success"
	FieldFamily  = "f"
	FieldK       = "K"
)

// argError returns the *InputError about field, at position i (-1 for
// none), whose value is the integer v, with the reason format.
func argError(field string, i, v int, format string, args ...any) *InputError {
	return inputerr.Int("advise", "", InputError{Field: field, Problem: -1, Set: -1, Output: i, Err: fmt.Errorf(format, args...)}, v)
}

// fieldError returns the *InputError about field, which has no one
// number to print (a rational, a struct): the reason states it.
func fieldError(field string, format string, args ...any) *InputError {
	return inputerr.New("advise", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)})
}

// configError returns err, the errors of spiral.Config.Validate, each
// *InputError renamed with In to the configuration's field in this
// package's words, "config." and its JSON name ("Config.SetSize" is
// "config.set_size").
func configError(err error) error {
	return inputerr.Rename(err, "advise", func(field string) string { return FieldConfig + "." + names.Spiral.ABI(field) })
}
