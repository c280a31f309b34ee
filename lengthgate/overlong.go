package lengthgate

import (
	"fmt"

	"spiral/internal/numeric"
)

// SoftOverlong is DAPO's soft overlong punishment (Yu et al. 2025, "DAPO",
// Eq. 13), a reward-shaping pass that runs BEFORE any baseline or advantage
// is computed. With L_max = MaxLength, buffer = Buffer (DAPO's L_cache) and
// factor = Factor, the penalty of an output of length L tokens is
//
//	R_length(L) = 0                                        if L <= L_max - buffer
//	R_length(L) = factor * ((L_max - buffer) - L) / buffer  if L_max - buffer < L <= L_max
//	R_length(L) = -factor                                  if L > L_max
//
// and it is ADDED to the output's reward. With factor 1 this is DAPO's
// formula exactly (its L_cache is buffer); verl's DAPO reward manager multiplies by
// overlong_buffer.penalty_factor (1.0 in DAPO's recipe, with L_max = 20480 and
// buffer = 4096) and computes min(-(L - (L_max - buffer)) / buffer * factor, 0).
// This type evaluates that same expression, in the same order, in float64
// (verl evaluates it in float32 tensors) for every L <= L_max, the only
// lengths verl sees, since it truncates generation at L_max. Past L_max,
// verl's expression would keep falling linearly; this type follows DAPO's
// third case, -factor.
//
// Because it shapes rewards, the penalty moves the set scores and baselines
// of every output that shares them; that is intended (it is how DAPO uses it)
// and is why it must run before the baselines, unlike the gate of Eq. 8,
// which runs after them. See the package documentation for the order of
// passes. In SPIRAL only aggregation outputs carry rewards.
//
// Buffer == 0 is allowed and gives the limit of the formula: no penalty up to
// L_max and -factor beyond it. Buffer == MaxLength penalises every L > 0.
type SoftOverlong struct {
	// MaxLength is L_max in tokens, >= 1.
	MaxLength int `json:"max_length"`
	// Buffer is the length of the linear punishment interval (DAPO's
	// L_cache, verl's overlong_buffer.len), 0 <= Buffer <= MaxLength.
	Buffer int `json:"buffer"`
	// Factor scales the penalty (verl's overlong_buffer.penalty_factor); it
	// must satisfy 0 < Factor <= [MaxFactor]. There is no implicit default:
	// a zero Factor is an error, so a forgotten field cannot silently switch
	// the penalty off. [NewSoftOverlong] sets DAPO's factor 1.
	Factor float64 `json:"factor"`
}

// MaxFactor is the largest [SoftOverlong.Factor] accepted, 1e30. It keeps
// every shaped reward finite, in float32 as in float64: a penalty of at most
// 1e30 is below half an ulp of the largest finite float32 (about 1e31) and
// float64, so adding it to any finite reward rounds to a finite value, and a
// [PenaltyReport.Total] of at most 1e30 per output cannot overflow.
const MaxFactor = 1e30

// NewSoftOverlong returns DAPO's soft overlong punishment with factor 1.
func NewSoftOverlong(maxLength, buffer int) SoftOverlong {
	return SoftOverlong{MaxLength: maxLength, Buffer: buffer, Factor: 1}
}

// Validate reports whether s is valid: MaxLength >= 1,
// 0 <= Buffer <= MaxLength, and 0 < Factor <= MaxFactor.
func (s SoftOverlong) Validate() error {
	switch {
	case s.MaxLength < 1:
		return intError(FieldMaxLength, -1, s.MaxLength, fmt.Errorf("%d < 1", s.MaxLength))
	case s.Buffer < 0:
		return intError(FieldBuffer, -1, s.Buffer, fmt.Errorf("%d < 0", s.Buffer))
	case s.Buffer > s.MaxLength:
		return intError(FieldBuffer, -1, s.Buffer, fmt.Errorf("%d > L_max = %d", s.Buffer, s.MaxLength))
	case !(s.Factor > 0 && s.Factor <= MaxFactor):
		return valueError(FieldFactor, -1, s.Factor, fmt.Errorf("%v, want in (0, %g] (DAPO uses 1)", s.Factor, MaxFactor))
	}
	return nil
}

// Penalty returns R_length(length), the value in [-Factor, 0] added to the
// reward of an output of the given length. Errors: an invalid s, or a
// negative length.
func (s SoftOverlong) Penalty(length int) (float64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if length < 0 {
		return 0, intError("length", -1, length, fmt.Errorf("%d < 0", length))
	}
	return s.penalty(length), nil
}

// penalty is R_length for a valid s and length >= 0.
func (s SoftOverlong) penalty(length int) float64 {
	exceed := length - (s.MaxLength - s.Buffer)
	switch {
	case exceed <= 0:
		return 0
	case length > s.MaxLength:
		return -s.Factor
	default: // 0 < exceed <= Buffer, so Buffer > 0
		// verl's order of operations: -exceed / buffer * factor.
		return -float64(exceed) / float64(s.Buffer) * s.Factor
	}
}

// PenaltyReport says what one application of [SoftOverlong] did, for logging.
// Reports accumulate with [PenaltyReport.Add].
type PenaltyReport struct {
	// Outputs is the number of rewards examined.
	Outputs int
	// Penalized is how many received a penalty < 0 (L > L_max - buffer).
	Penalized int
	// Overlong is how many had L > L_max and so the full penalty -Factor.
	Overlong int
	// Total is the sum of the penalties added (<= 0), rounded once as
	// [Report.MassRemoved] is: it does not depend on the order of the terms
	// or of the reports added up whenever the exact sum fits in 106 bits.
	// It is at least -MaxFactor times Outputs, so it is finite.
	Total float64

	low float64 // the exact sum less Total
}

// Add accumulates o into r, field by field.
func (r *PenaltyReport) Add(o PenaltyReport) {
	r.Outputs += o.Outputs
	r.Penalized += o.Penalized
	r.Overlong += o.Overlong
	s, e := numeric.TwoSum(r.Total, o.Total)
	r.Total, r.low = renormalize(s, e+r.low+o.low)
}

// Equal reports whether r and o are the same report, the error term of
// Total included (go-cmp uses it).
func (r PenaltyReport) Equal(o PenaltyReport) bool { return r == o }

// String formats r as %+v formats its exported fields.
func (r PenaltyReport) String() string {
	return fmt.Sprintf("{Outputs:%d Penalized:%d Overlong:%d Total:%v}", r.Outputs, r.Penalized, r.Overlong, r.Total)
}

// Apply adds R_length(lengths[i]) to rewards[i] in place. It validates s and
// every input first and, on error, leaves rewards untouched. Errors: an
// invalid s, len(rewards) != len(lengths), a negative length, a NaN or
// infinite reward (the error names the position and the value). A reward
// whose penalty is 0 is left bit for bit as it was.
func (s SoftOverlong) Apply(rewards []float64, lengths []int) (PenaltyReport, error) {
	return ApplySoftOverlong(s, rewards, rewards, lengths)
}

// ApplySoftOverlong is the dst-first form of [SoftOverlong.Apply], for any
// floating-point type: it writes the shaped rewards to dst and leaves
// rewards unchanged (dst may be rewards itself); on error dst is
// untouched. The penalty is computed in float64 and the sum rounded once to F, which
// is finite for every finite reward (see [MaxFactor]). It panics if
// len(dst) != len(rewards).
func ApplySoftOverlong[F Float](s SoftOverlong, dst, rewards []F, lengths []int) (PenaltyReport, error) {
	if len(dst) != len(rewards) {
		panic(fmt.Sprintf("lengthgate: len(dst) = %d != len(rewards) = %d", len(dst), len(rewards)))
	}
	if err := s.Validate(); err != nil {
		return PenaltyReport{}, err
	}
	if err := checkValues("rewards", rewards, "lengths", lengths); err != nil {
		return PenaltyReport{}, err
	}
	r := PenaltyReport{Outputs: len(rewards)}
	var low float64 // the sum of the penalties is r.Total + low
	lengths = lengths[:len(rewards)]
	dst = dst[:len(rewards)]
	for i, x := range rewards {
		p := s.penalty(lengths[i])
		if p < 0 {
			r.Penalized++
			if lengths[i] > s.MaxLength {
				r.Overlong++
			}
			var e float64
			r.Total, e = numeric.TwoSum(r.Total, p)
			low += e
			x = F(float64(x) + p)
		}
		dst[i] = x
	}
	r.Total, r.low = renormalize(r.Total, low)
	return r, nil
}

// OverlongFilter is DAPO's overlong filtering: truncated outputs are removed
// from the loss. It is a mask, not a reward or advantage change. It can be
// computed from lengths before any advantage, but it is applied only to the
// per-output loss terms: a filtered output's reward still takes part in its
// group's baseline (DAPO masks the loss of truncated samples; trainers that
// implement it keep their rewards in the advantage normalisation). See the
// package documentation for the order of passes.
//
// From lengths alone an output is taken as truncated when L >= MaxLength:
// a generator capped at L_max tokens cannot tell "stopped exactly at L_max"
// from "cut off at L_max" by length, so the boundary counts as truncated.
// When the generator says whether each output ended with its end-of-sequence
// token, [MaskTruncated] uses that flag instead.
type OverlongFilter struct {
	// MaxLength is L_max in tokens, >= 1.
	MaxLength int `json:"max_length"`
}

// Validate reports whether f is valid: MaxLength >= 1.
func (f OverlongFilter) Validate() error {
	if f.MaxLength < 1 {
		return intError(FieldMaxLength, -1, f.MaxLength, fmt.Errorf("%d < 1", f.MaxLength))
	}
	return nil
}

// Truncated reports whether an output of the given length counts as
// truncated: length >= MaxLength. It does not validate f.
func (f OverlongFilter) Truncated(length int) bool { return length >= f.MaxLength }

// Mask sets keep[i] to whether output i stays in the loss (it is not
// truncated) and returns how many were dropped. Errors: an invalid f or a
// negative length; on error keep is untouched. It panics if
// len(keep) != len(lengths), a programmer error (keep is the caller's
// destination).
func (f OverlongFilter) Mask(keep []bool, lengths []int) (dropped int, err error) {
	if len(keep) != len(lengths) {
		panic(fmt.Sprintf("lengthgate: len(keep) = %d != len(lengths) = %d", len(keep), len(lengths)))
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	for i, l := range lengths {
		if l < 0 {
			return 0, intError("lengths", i, l, errNegativeLength)
		}
	}
	for i, l := range lengths {
		keep[i] = !f.Truncated(l)
		if !keep[i] {
			dropped++
		}
	}
	return dropped, nil
}

// MaskTruncated is overlong filtering keyed on the end-of-sequence flag, as
// TRL's mask_truncated_completions: an output is truncated when it did not
// end with the end-of-sequence token (TRL: its last token is neither EOS nor
// padding), whatever its length. It sets keep[i] = ended[i], so that output
// i stays in the loss only if it ended with EOS, and returns how many were
// dropped. Unlike [OverlongFilter], it keeps an output that ended with EOS
// at exactly L_max tokens and drops one cut short of L_max by a stop that
// was not EOS. Like it, it is a mask on the per-output loss terms only: a
// dropped output's reward still takes part in its baseline. It panics if
// len(keep) != len(ended), a programmer error (keep is the caller's
// destination).
func MaskTruncated(keep, ended []bool) (dropped int) {
	if len(keep) != len(ended) {
		panic(fmt.Sprintf("lengthgate: len(keep) = %d != len(ended) = %d", len(keep), len(ended)))
	}
	for i, e := range ended {
		keep[i] = e
		if !e {
			dropped++
		}
	}
	return dropped
}
