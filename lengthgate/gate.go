package lengthgate

import (
	"errors"
	"fmt"
	"math"

	"spiral/internal/gating"
	"spiral/internal/inputerr"
	"spiral/internal/numeric"
)

// Float is the set of floating-point types the generic functions accept.
// (golang.org/x/exp/constraints.Float, restated so this package imports no
// module beyond the standard library.)
type Float interface{ ~float32 | ~float64 }

// Boundary says what the gate of Eq. 8 does to a positive advantage of an
// output whose length L equals the target exactly, a case the paper's two
// cases do not cover.
type Boundary int

const (
	// GateAtTarget, the default (zero value), reads Eq. 8's first case
	// literally: a positive advantage survives only when L < L_target, so an
	// output with L == L_target has its positive advantage set to 0.
	GateAtTarget Boundary = iota
	// KeepAtTarget keeps the positive advantage of an output with
	// L == L_target; only L > L_target is gated.
	KeepAtTarget
)

// String returns the constant's name, or "Boundary(v)" for an undefined value.
func (b Boundary) String() string {
	switch b {
	case GateAtTarget:
		return "GateAtTarget"
	case KeepAtTarget:
		return "KeepAtTarget"
	}
	return fmt.Sprintf("Boundary(%d)", int(b))
}

// MarshalText encodes b as "gate" (GateAtTarget) or "keep" (KeepAtTarget),
// the words the JSON bridge's -boundary flag takes. An undefined value is an
// error.
func (b Boundary) MarshalText() ([]byte, error) {
	switch b {
	case GateAtTarget:
		return []byte("gate"), nil
	case KeepAtTarget:
		return []byte("keep"), nil
	}
	return nil, inputerr.Undefined("lengthgate", FieldBoundary, int(b), "Boundary")
}

// UnmarshalText decodes "gate" or "keep"; anything else is an error naming
// the text.
func (b *Boundary) UnmarshalText(text []byte) error {
	switch string(text) {
	case "gate":
		*b = GateAtTarget
	case "keep":
		*b = KeepAtTarget
	default:
		return inputerr.Name("lengthgate", FieldBoundary, text, "gate", "keep")
	}
	return nil
}

// Gate is the asymmetric length gate of the paper's Eq. 8. For an output of
// length L (generated tokens) with advantage A,
//
//	A_mod = A   if A < 0, or A > 0 and L < L_target
//	A_mod = 0   if A > 0 and L > L_target
//
// with the choices the paper leaves open made explicit:
//
//   - L == L_target follows Boundary: gated under GateAtTarget (the default,
//     the first case read literally), kept under KeepAtTarget.
//   - A == 0 (either sign of zero) passes unchanged.
//   - L_target is Target. The paper does not disclose it; its maximum output
//     length is 4096 tokens per trace. Target == 0 is the zero-value gate,
//     which changes nothing; Target < 0 is an error.
//
// The gate is applied to advantages AFTER the baselines were computed, never
// to rewards, so a gated output does not move anyone's baseline: zeroing a
// reward would shift the mean of its set (and the set baseline), and so the
// advantages of every other output that shares that mean (the package's
// gateAfterBaselines example shows both). See the package documentation for
// the order of passes. Search and aggregation may use different gates; see
// [Gates].
type Gate struct {
	// Target is L_target in tokens. 0 disables the gate.
	Target int `json:"target"`
	// Boundary decides the case L == Target.
	Boundary Boundary `json:"boundary"`
}

// Validate reports whether g is a valid gate: Target >= 0 (0 disables it) and
// Boundary is GateAtTarget or KeepAtTarget.
func (g Gate) Validate() error { return g.validate("") }

// validate is Validate with the gate's field in Gates (e.g. "Search.") in
// front of the field names.
func (g Gate) validate(role string) error {
	if g.Target < 0 {
		return intError(role+FieldTarget, -1, g.Target, fmt.Errorf("%d < 0 (0 disables the gate)", g.Target))
	}
	if g.Boundary != GateAtTarget && g.Boundary != KeepAtTarget {
		return inputerr.Undefined("lengthgate", role+FieldBoundary, int(g.Boundary), "Boundary")
	}
	return nil
}

// InputError describes an invalid field of a [Gate], [Gates],
// [SoftOverlong] or [OverlongFilter] (Validate's error), or a bad entry of
// an argument: its Field (one of the Field constants, a role's prefixed as
// "Search.Target", or an argument such as "lengths"), Output (the
// position in an argument, or -1), Value and Err (why). Problem and Set
// are -1. It is the module's one input error type, also
// spiral.InputError; recover it with errors.As, so that a caller can say
// which of its own fields holds the value.
type InputError = inputerr.InputError

// The fields of the values this package validates, which an *InputError
// names (a gate of [Gates] with its role in front: "Search.Target").
const (
	FieldTarget    = "Target"    // Gate.Target
	FieldBoundary  = "Boundary"  // Gate.Boundary
	FieldMaxLength = "MaxLength" // SoftOverlong.MaxLength, OverlongFilter.MaxLength
	FieldBuffer    = "Buffer"    // SoftOverlong.Buffer
	FieldFactor    = "Factor"    // SoftOverlong.Factor
)

// errNegativeLength and errNotFinite are the reasons for a bad entry.
var (
	errNegativeLength = errors.New("length < 0")
	errNotFinite      = errors.New("not finite")
)

// intError returns the *InputError about field at position i (-1 for
// none), whose value is the integer v.
func intError(field string, i, v int, err error) *InputError {
	return inputerr.Int("lengthgate", "", InputError{Field: field, Problem: -1, Set: -1, Output: i, Err: err}, v)
}

// valueError returns the *InputError about field at position i (-1 for
// none), whose value is v.
func valueError(field string, i int, v float64, err error) *InputError {
	return inputerr.New("lengthgate", "", InputError{Field: field, Problem: -1, Set: -1, Output: i, Value: v, Err: err})
}

// Enabled reports whether g changes anything, that is whether Target > 0.
func (g Gate) Enabled() bool { return g.Target > 0 }

// KeepsPositive reports whether a positive advantage of an output of the given
// length survives the gate: always when the gate is disabled; otherwise when
// length < Target, or length == Target under KeepAtTarget. It does not
// validate g or length.
func (g Gate) KeepsPositive(length int) bool {
	target, keepAt := g.cut()
	return keeps(length, target, keepAt)
}

// cut returns the target that g compares lengths with and whether a length
// equal to it is kept: (math.MaxInt, true) when g is disabled, so that
// every length is kept.
func (g Gate) cut() (target int, keepAt bool) {
	if g.Target == 0 {
		return math.MaxInt, true
	}
	return g.Target, g.Boundary == KeepAtTarget
}

// keeps reports whether a positive advantage of an output of the given
// length survives a gate of cut (target, keepAt): Eq. 8 with the boundary
// rule.
func keeps(length, target int, keepAt bool) bool {
	return length < target || length == target && keepAt
}

// Report says what one application of a gate did, for logging. Reports of
// several problems accumulate with [Report.Add].
type Report struct {
	// Outputs is the number of advantages examined.
	Outputs int
	// Positive is how many of them were > 0 before the gate.
	Positive int
	// AtTarget is how many positive advantages had L == Target exactly: the
	// outputs on which the Boundary rule decided (0 when the gate is
	// disabled).
	AtTarget int
	// Gated is how many positive advantages were set to 0.
	Gated int
	// MassRemoved is the sum, in float64 (for float32 advantages too), of
	// the positive advantages set to 0, rounded once: the sum is kept with
	// the exact error of every addition, so that it does not depend on the
	// order of the terms or on how reports are added up (for instance over
	// the shards of a batch) whenever the exact sum fits in 106 bits, as
	// sums of rewards on a common grid do. It is >= 0 and finite: a sum
	// that would exceed math.MaxFloat64 stops there.
	MassRemoved float64

	low float64 // the exact sum less MassRemoved
}

// Add accumulates o into r, field by field (MassRemoved stopping at
// math.MaxFloat64).
func (r *Report) Add(o Report) {
	r.Outputs += o.Outputs
	r.Positive += o.Positive
	r.AtTarget += o.AtTarget
	r.Gated += o.Gated
	s, e := numeric.TwoSum(r.MassRemoved, o.MassRemoved)
	if s > math.MaxFloat64 {
		r.MassRemoved, r.low = math.MaxFloat64, 0
		return
	}
	r.MassRemoved, r.low = massOf(s, e+r.low+o.low)
}

// String formats r as %+v formats its exported fields.
func (r Report) String() string {
	return fmt.Sprintf("{Outputs:%d Positive:%d AtTarget:%d Gated:%d MassRemoved:%v}", r.Outputs, r.Positive, r.AtTarget, r.Gated, r.MassRemoved)
}

// Equal reports whether r and o are the same report, the error term of
// MassRemoved included (go-cmp uses it).
func (r Report) Equal(o Report) bool { return r == o }

// massOf returns the sum s + c of a mass (s >= |c|) rounded, and what the
// rounding left out; math.MaxFloat64 and 0 where the sum overflows.
func massOf(s, c float64) (mass, low float64) {
	m := s + c
	if m > math.MaxFloat64 {
		return math.MaxFloat64, 0
	}
	return renormalize(s, c)
}

// renormalize returns s + c (|s| >= |c|) rounded, and what the rounding
// left out, exactly.
func renormalize(s, c float64) (sum, low float64) {
	m := s + c
	return m, c - (m - s)
}

// GatedFraction returns Gated/Positive, the fraction of positive advantages
// the gate removed, or 0 when there were none.
func (r Report) GatedFraction() float64 {
	if r.Positive == 0 {
		return 0
	}
	return float64(r.Gated) / float64(r.Positive)
}

// Apply gates adv in place: adv[i] is the advantage of an output of length
// lengths[i] tokens. It validates g and every input first and, on error,
// leaves adv untouched. Errors: an invalid gate, len(adv) != len(lengths), a
// negative length, a NaN or infinite advantage (the error names the position
// and the value). A disabled gate (Target 0) validates the same way and
// changes nothing, so switching the gate on or off never changes which inputs
// are accepted.
func (g Gate) Apply(adv []float64, lengths []int) (Report, error) {
	return ApplyGate(g, adv, adv, lengths)
}

// ApplyGate is the dst-first form of [Gate.Apply], for any floating-point
// type (such as the float32 advantages of a mixed-precision trainer): it
// writes the gated advantages to dst and leaves adv unchanged (dst may be
// adv itself but must not otherwise overlap it). On error dst is
// untouched. It panics if len(dst) != len(adv), a programmer error.
func ApplyGate[F Float](g Gate, dst, adv []F, lengths []int) (Report, error) {
	if len(dst) != len(adv) {
		panic(fmt.Sprintf("lengthgate: len(dst) = %d != len(adv) = %d", len(dst), len(adv)))
	}
	if err := g.Validate(); err != nil {
		return Report{}, err
	}
	if err := checkValues("adv", adv, "lengths", lengths); err != nil {
		return Report{}, err
	}
	return gate(g, dst, adv, lengths), nil
}

// gate applies a valid g to checked inputs with len(dst) == len(adv) ==
// len(lengths), by the loop of package internal/gating.
func gate[F Float](g Gate, dst, adv []F, lengths []int) Report {
	var r Report
	t := gating.Apply(g.bounds(), dst, adv, lengths)
	r.of(len(adv), &t)
	return r
}

// bounds returns g in the form of package internal/gating's loop.
func (g Gate) bounds() gating.Gate { return gating.Bounds(g.Target, g.Boundary == KeepAtTarget) }

func init() { gating.SetReport(reportsOf) }

// reportsOf writes to r the reports of the tallies of a search gate of
// searchOutputs entries and an aggregation gate of aggOutputs.
func reportsOf(r *GatesReport, searchOutputs int, search gating.Tally, aggOutputs int, agg gating.Tally) {
	r.Search.of(searchOutputs, &search)
	r.Aggregation.of(aggOutputs, &agg)
}

// of sets r to the Report of a gate's tally t of outputs entries. The
// terms of the mass are >= 0, so a sum that overflowed stayed +Inf:
// stopping it at MaxFloat64 once is stopping every partial sum there.
func (r *Report) of(outputs int, t *gating.Tally) {
	r.Outputs, r.Positive, r.AtTarget, r.Gated = outputs, t.Positive, t.AtTarget, t.Gated
	if t.Mass > math.MaxFloat64 {
		r.MassRemoved, r.low = math.MaxFloat64, 0
		return
	}
	r.MassRemoved, r.low = massOf(t.Mass, t.Low)
}

// checkValues checks that values and lengths (named vname and lname in
// errors) have equal lengths, every length is >= 0 and every value finite.
func checkValues[F Float](vname string, values []F, lname string, lengths []int) error {
	if len(values) != len(lengths) {
		return intError(lname, -1, len(lengths), fmt.Errorf("len = %d, want %d, one per value", len(lengths), len(values)))
	}
	if allValid(values, lengths) {
		return nil
	}
	for i, v := range values {
		if l := lengths[i]; l < 0 {
			return intError(lname, i, l, errNegativeLength)
		}
		if v-v != 0 { // NaN or ±Inf
			return valueError(vname, i, float64(v), errNotFinite)
		}
	}
	panic("lengthgate: checkValues: a bad entry that allValid found is gone") // unreachable
}

// allValid reports whether every length is >= 0 and every value finite,
// for len(lengths) >= len(values). It ORs the lengths (negative when one
// is) and the bits of v - v (+0 for a finite v, NaN otherwise), with no
// branch on the data.
func allValid[F Float](values []F, lengths []int) bool {
	lengths = lengths[:len(values)]
	var ls int
	var bits uint64
	for i, v := range values {
		ls |= lengths[i]
		bits |= math.Float64bits(float64(v - v))
	}
	return ls >= 0 && bits == 0
}

// Gates holds one gate per role. The paper gates both the search and the
// aggregation advantages but does not say whether they share L_target; a
// zero-value Gates does nothing.
type Gates struct {
	Search      Gate `json:"search"`      // gate for search traces' advantages A_search
	Aggregation Gate `json:"aggregation"` // gate for aggregation outputs' advantages A_agg
}

// Shared returns Gates that use g for both roles.
func Shared(g Gate) Gates { return Gates{Search: g, Aggregation: g} }

// Validate reports whether both gates are valid; the error names the role.
func (gs Gates) Validate() error {
	if err := gs.Search.validate("Search."); err != nil {
		return err
	}
	return gs.Aggregation.validate("Aggregation.")
}

// GatesReport holds one [Report] per role.
type GatesReport struct {
	Search, Aggregation Report
}

// Add accumulates o into r, role by role.
func (r *GatesReport) Add(o GatesReport) {
	r.Search.Add(o.Search)
	r.Aggregation.Add(o.Aggregation)
}

// Apply gates both roles' advantages in place: searchAdv[i] belongs to a
// search trace of length searchLengths[i], aggAdv[j] to an aggregation output
// of length aggLengths[j]. Everything (both gates, all four slices) is
// validated before anything is written, so on error neither slice is
// changed. Errors are those of [Gate.Apply], naming the role's argument.
func (gs Gates) Apply(searchAdv []float64, searchLengths []int, aggAdv []float64, aggLengths []int) (GatesReport, error) {
	if err := gs.Validate(); err != nil {
		return GatesReport{}, err
	}
	if err := checkValues("searchAdv", searchAdv, "searchLengths", searchLengths); err != nil {
		return GatesReport{}, err
	}
	if err := checkValues("aggAdv", aggAdv, "aggLengths", aggLengths); err != nil {
		return GatesReport{}, err
	}
	return GatesReport{
		Search:      gate(gs.Search, searchAdv, searchAdv, searchLengths),
		Aggregation: gate(gs.Aggregation, aggAdv, aggAdv, aggLengths),
	}, nil
}
