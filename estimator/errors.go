package estimator

import (
	"errors"
	"fmt"

	"spiral/combin"
	"spiral/internal/inputerr"
)

// InputError describes a bad argument or field of a caller: which one
// (Field, one of the constants below, or a MonteCarlo field's name), the
// position within it (Output, -1 for none), the value and why. It is the
// module's one input error type, also spiral.InputError and
// combin.InputError; recover it with errors.As. An argument that is the
// wrong size for an exact answer has [ErrTooCostly] as its reason.
type InputError = inputerr.InputError

// ErrTooCostly is the reason, on an *InputError's Err, for arguments that
// are valid but whose exact answer would cost more time or memory than the
// function allows (errors.Is). It is combin.ErrTooCostly too.
var ErrTooCostly = inputerr.ErrTooCostly

// The arguments an *InputError of this package names, for a program that
// tells them apart.
const (
	FieldSets       = "sets"       // a set of NewSetDistribution or DistributionWeights: sets[h][j]
	FieldSelections = "selections" // a selection's set indices: selections[i][j]
	FieldProbs      = "p"          // NewCategorical's probabilities: p[v]
	FieldSymbols    = "V"          // a number of symbols
	FieldArity      = "n"          // a table's arity
	FieldValues     = "values"     // a table's values: values[i]
	FieldDenom      = "denom"      // RandomTable's denominator
	FieldRand       = "rnd"        // a random generator, nil
	FieldCovered    = "m"          // CoverTable's number of symbols to cover
	FieldTraces     = "N1"         // the number of traces of a design's sets
	FieldN          = "N"          // RelabelledSets' number of traces
	FieldFamily     = "f"          // a family of sets
	FieldK          = "K"          // a number of sets drawn
	FieldN2         = "N2"         // a number of aggregation outputs
	FieldBaseline   = "b"          // an aggregation baseline
	FieldOrder      = "p"          // a presentation order (combin.Order or SortedBySymbol)
	FieldPolicy     = "c"          // a policy, *Categorical
	FieldAgg        = "agg"        // an aggregation policy, *Categorical
	FieldTable      = "t"          // a table, *Table
	FieldReward     = "reward"     // a reward per output: reward[z]
	FieldAggregator = "a"          // an *Aggregator
	FieldPolicies   = "policy"     // NewAggregator's policy per context: policy[ctx]
)

// argError returns the *InputError about argument field, at position i
// (-1 for none), whose value is the integer v, with the reason format.
func argError(field string, i, v int, format string, args ...any) *InputError {
	return inputerr.Int("estimator", "", InputError{Field: field, Problem: -1, Set: -1, Output: i, Err: fmt.Errorf(format, args...)}, v)
}

// costError is argError with a reason that is ErrTooCostly.
func costError(field string, v int, format string, args ...any) *InputError {
	return inputerr.Int("estimator", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: inputerr.TooCostly(fmt.Sprintf(format, args...))}, v)
}

// elementError returns the *InputError about element i of argument field
// (the argument as a whole for i = -1), which has no one number to print
// (nil, a rational): the reason states it.
func elementError(field string, i int, format string, args ...any) *InputError {
	e := InputError{Field: field, Problem: -1, Set: -1, Output: i, Err: fmt.Errorf(format, args...)}
	if i < 0 {
		return inputerr.New("estimator", "", e)
	}
	return inputerr.Element("estimator", e)
}

// setsError returns err, an error of combin.CheckSets, renamed with In for
// the argument field: a set's index, when the error names one, folds into
// the field as field[h] (each selection is checked alone, as one set, so
// its field is already "selections[i]" and its set 0). Any other error,
// nil included, is returned as it is.
func setsError(err error, field string) error {
	e, ok := errors.AsType[*combin.InputError](err)
	if !ok {
		return err
	}
	if e.Set >= 0 && field == FieldSets {
		field = fmt.Sprintf("%s[%d]", field, e.Set)
	}
	r := e.In("estimator", field)
	r.Set = -1
	return r
}

// undefinedError returns the *InputError about argument field, whose
// value v is no defined value of its type typ.
func undefinedError(field string, v int, typ string) *InputError {
	return inputerr.Undefined("estimator", field, v, typ)
}
