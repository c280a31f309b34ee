package loss

import (
	"errors"
	"fmt"
	"math"

	"spiral/internal/inputerr"
)

// Reduction is how a trainer reduces its per-token policy loss to one
// scalar, named as the trainer names it. Its text form (String,
// MarshalText, UnmarshalText) is the name in the table. Every token of an
// output o of L_o tokens gets the weight w_o; B is the number of outputs
// the trainer reduces together, R those with at least one token, T their
// tokens, S a length constant of the trainer's configuration; within a
// term (see [Rows].Terms) B, R and T are the term's own.
//
//	name                     trainer setting                          w_o              Scale
//	sum                      a plain sum (no trainer default)         1                1
//	token-mean               verl loss_agg_mode=token-mean            1/T              1/R
//	seq-mean-token-sum       verl loss_agg_mode=seq-mean-token-sum    1/R              1/R
//	seq-mean-token-mean      verl loss_agg_mode=seq-mean-token-mean   1/(R L_o)        1/R
//	seq-mean-token-sum-norm  verl loss_agg_mode=seq-mean-token-sum-norm 1/S            1 (times 1/S)
//	trl-grpo                 TRL GRPOTrainer loss_type="grpo"         1/(B L_o)        1/R
//	trl-bnpo                 TRL GRPOTrainer loss_type="bnpo"         1/T              1/R
//	trl-dr-grpo              TRL GRPOTrainer loss_type="dr_grpo"      1/(B S)          1/B (times 1/S)
//	trl-dapo                 TRL GRPOTrainer loss_type="dapo"         1/T              1/R
//	trl-rloo                 TRL RLOOTrainer (a mean over sequences)  1/B              1/R
//	openrlhf-token           OpenRLHF token_level_loss=True           1/T              1/R
//	openrlhf-sequence        OpenRLHF token_level_loss=False          1/(R L_o)        1/R
//	nemo-rl-token            NeMo-RL ClippedPGLoss token_level_loss=True  1/T          1/R
//	nemo-rl-sequence         NeMo-RL ClippedPGLoss token_level_loss=False 1/(B L_o)    1/R
//
// The rows reduced together are the trainer's: verl's legacy dp_actor
// (the default worker) and TRL's grpo, bnpo and dr_grpo reduce each
// micro-batch on its own counts; verl's new engine divides by the
// mini-batch's batch_num_tokens and global_batch_size over every rank;
// TRL's dapo by the tokens of the whole accumulated batch (for parts of a
// batch at one kappa, see [PartCoefficients]); OpenRLHF's by the
// global batch's tokens (batch_num_tokens) or, without it, the
// micro-batch's; NeMo-RL's by the global batch's valid tokens or
// sequences, over every rank and micro-batch (see [NeMoRLToken]). The
// trainers' own constants (verl's dp_size and loss_scale_factor, the division by the gradient accumulation steps, S)
// multiply every output alike and are left in the learning rate: Scale
// does not include them. verl's and OpenRLHF's per-sequence means divide
// by L_o + 1e-8 computed in float32, which is L_o for every L_o >= 1.
type Reduction int

const (
	Sum Reduction = iota
	TokenMean
	SeqMeanTokenSum
	SeqMeanTokenMean
	SeqMeanTokenSumNorm
	TRLGRPO
	TRLBNPO
	TRLDrGRPO
	TRLDAPO
	TRLRLOO
	OpenRLHFToken
	OpenRLHFSequence
)

// kind is the shape of a reduction's weight w_o.
type kind int

const (
	kindSum      kind = iota // w = 1 (or a constant), Scale 1
	kindTokens               // w = 1/T, Scale 1/R: c = u T/R
	kindRows                 // w = 1/R, Scale 1/R: c = u R_t/R
	kindRowsLen              // w = 1/(R L), Scale 1/R: c = u R_t L/R
	kindAllLen               // w = 1/(B L), Scale 1/R: c = u B_t L/R
	kindAll                  // w = 1/B, Scale 1/R: c = u B_t/R
	kindAllConst             // w = 1/(B S), Scale 1/B: c = u B_t/B
)

var reductions = [...]struct {
	name string
	kind kind
}{
	Sum:                 {"sum", kindSum},
	TokenMean:           {"token-mean", kindTokens},
	SeqMeanTokenSum:     {"seq-mean-token-sum", kindRows},
	SeqMeanTokenMean:    {"seq-mean-token-mean", kindRowsLen},
	SeqMeanTokenSumNorm: {"seq-mean-token-sum-norm", kindSum},
	TRLGRPO:             {"trl-grpo", kindAllLen},
	TRLBNPO:             {"trl-bnpo", kindTokens},
	TRLDrGRPO:           {"trl-dr-grpo", kindAllConst},
	TRLDAPO:             {"trl-dapo", kindTokens},
	TRLRLOO:             {"trl-rloo", kindAll},
	OpenRLHFToken:       {"openrlhf-token", kindTokens},
	OpenRLHFSequence:    {"openrlhf-sequence", kindRowsLen},
	NeMoRLToken:         {"nemo-rl-token", kindTokens},
	NeMoRLSequence:      {"nemo-rl-sequence", kindAllLen},
}

func (r Reduction) defined() bool { return r >= 0 && int(r) < len(reductions) }

// String returns r's name, such as "token-mean", or "Reduction(v)" for an
// undefined value.
func (r Reduction) String() string {
	if !r.defined() {
		return fmt.Sprintf("Reduction(%d)", int(r))
	}
	return reductions[r].name
}

// MarshalText encodes r as its name; an undefined value is an error.
func (r Reduction) MarshalText() ([]byte, error) {
	if !r.defined() {
		return nil, reductionError(r)
	}
	return []byte(reductions[r].name), nil
}

// UnmarshalText decodes a reduction's name; anything else is an error
// naming the text.
func (r *Reduction) UnmarshalText(text []byte) error {
	for v, red := range reductions {
		if string(text) == red.name {
			*r = Reduction(v)
			return nil
		}
	}
	names := make([]string, len(reductions))
	for i, red := range reductions {
		names[i] = red.name
	}
	return inputerr.Name("loss", FieldReduction, text, names...)
}

// Names lists the reductions' names, quoted and comma-separated, for help
// texts and errors.
func Names() string {
	s := ""
	for i, red := range reductions {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", red.name)
	}
	return s
}

// PerOutput reports whether r weights an output by a function of its own
// length (the per-sequence token means), so that the coefficients depend
// on each output's length and not only on the batch's counts.
func (r Reduction) PerOutput() bool {
	return r.defined() && (reductions[r].kind == kindRowsLen || reductions[r].kind == kindAllLen)
}

// LengthWeighted reports whether r's weights depend on the outputs' lengths
// (token means divide by the batch's tokens, per-sequence token means by
// each output's length), so that with the advantages as they are the
// update's weights on the two roles are not constants.
func (r Reduction) LengthWeighted() bool {
	if !r.defined() {
		return false
	}
	switch reductions[r].kind {
	case kindTokens, kindRowsLen, kindAllLen:
		return true
	}
	return false
}

// MaxUpdate is the largest update magnitude accepted: times a ratio of at
// most 2^53, every coefficient stays finite.
const MaxUpdate = 1e200

// MaxTerms is the number of loss terms [Rows].Terms may name.
const MaxTerms = 8

// MaxLength is the largest output length accepted, in tokens.
const MaxLength = 1 << 29

// MaxRows is the largest number of outputs accepted (len(Rows.Update)):
// 2^24, so that with MaxLength every count, product and token total (at
// most 2^53) is exact in float64. More outputs get an *[InputError] about
// "Rows" whose Value is their number.
const MaxRows = 1 << 24

// Rows are the outputs a trainer reduces together, in its order.
type Rows struct {
	// Update[o] is u_o, the chosen update's coefficient of
	// grad log pi(y_o): the update is sum_o u_o grad log pi(y_o).
	Update []float64
	// Multipliers, if not nil, is parallel to Update: the update's
	// coefficient is then u_o = Update[o] * Multipliers[o] (an advantage
	// times its role's multiplier, say), and [Coefficients] multiplies the
	// multiplier by the reduction's ratio before it multiplies Update[o],
	// so that a coefficient within float64's range is not flushed to 0 by
	// a subnormal intermediate product. Nil means 1 for every output.
	Multipliers []float64
	// Lengths[o] is L_o, the number of tokens of output o the loss reads
	// (its response mask's sum); 0 for an output with none.
	Lengths []int
	// Terms, if not nil, gives the loss term of each output, in
	// [0, MaxTerms): the trainer reduces each term over its own outputs
	// and adds the terms. Nil means one term.
	Terms []int
}

// Report describes a call of [Coefficients].
type Report struct {
	// Scale is kappa: the trainer's gradient is Scale times the chosen
	// update sum_o u_o grad log pi(y_o), times the trainer's own constants
	// (see [Reduction]); 0 when no output has a token.
	Scale float64
	// Outputs is B, Rows R (those with at least one token) and Tokens T,
	// over every term.
	Outputs, Rows int
	Tokens        int64
	// Dropped counts the outputs with no token whose update is not 0: no
	// coefficient can carry their part of the update, which the trainer's
	// gradient lacks.
	Dropped int
}

// InputError describes a bad entry of [Rows] or [Part]: its Field (one of
// the Field constants), its Output (the output's position in the batch, or
// the term for Over.Sequences and Over.Tokens; -1 for a length of the field
// or the number of outputs as a whole), Value (the bad value, the bad
// length of the field, or the number of outputs) and Err (why). Problem and
// Set are -1. It is the module's one input error type, also
// spiral.InputError and advantage.InputError; recover it with errors.As.
type InputError = inputerr.InputError

// The fields an *InputError of this package names.
const (
	FieldUpdate        = "Update"         // Rows.Update
	FieldMultipliers   = "Multipliers"    // Rows.Multipliers
	FieldLengths       = "Lengths"        // Rows.Lengths
	FieldTerms         = "Terms"          // Rows.Terms
	FieldRows          = "Rows"           // the number of outputs, above MaxRows
	FieldScale         = "Scale"          // Part.Scale
	FieldOver          = "Over"           // len(Part.Over)
	FieldOverSequences = "Over.Sequences" // a term's Divisors.Sequences
	FieldOverTokens    = "Over.Tokens"    // a term's Divisors.Tokens
	FieldReduction     = "r"              // the Reduction argument, undefined
)

// rowError returns the *InputError about field at output (or term) row,
// -1 for none, whose value is v.
func rowError(field string, row int, v float64, err error) *InputError {
	return inputerr.New("loss", "", InputError{Field: field, Problem: -1, Set: -1, Output: row, Value: v, Err: err})
}

// reductionError returns the *InputError about the undefined reduction r.
func reductionError(r Reduction) *InputError {
	return inputerr.Undefined("loss", FieldReduction, int(r), "Reduction")
}

// intError is rowError for an integer value.
func intError[I ~int | ~int64](field string, row int, v I, err error) *InputError {
	return inputerr.Int("loss", "", InputError{Field: field, Problem: -1, Set: -1, Output: row, Err: err}, v)
}

// Coefficients writes to dst[o] the coefficient c_o = u_o Scale / w_o of
// every output, w_o being r's weight (see [Reduction]), so that a trainer
// reducing per-token losses -c_o rho_{o,t} with r has the gradient Scale
// times sum_o u_o grad log pi(y_o) on policy. Per term t, with B_t outputs,
// R_t of them with a token, T_t tokens, and R = sum_t R_t, B = sum_t B_t:
//
//	sum, seq-mean-token-sum-norm          c_o = u_o
//	token-mean, trl-bnpo, trl-dapo,
//	openrlhf-token, nemo-rl-token         c_o = u_o T_t/R
//	seq-mean-token-sum                    c_o = u_o R_t/R
//	seq-mean-token-mean, openrlhf-sequence c_o = u_o R_t L_o/R
//	trl-grpo, nemo-rl-sequence            c_o = u_o B_t L_o/R
//	trl-rloo                              c_o = u_o B_t/R
//	trl-dr-grpo                           c_o = u_o B_t/B
//
// With one term, token-mean's c_o = u_o T/R is the update times the mean
// length; a per-sequence mean multiplies each output by its own length
// (undoing the 1/L_o); the sequence means leave the update as it is.
// An output with no token gets 0 (counted in Report.Dropped if its update
// is not 0). Each c_o is rounded at most twice (the ratio, the product),
// or three times with [Rows].Multipliers: c_o = Update[o] * (Multipliers[o]
// * ratio), the ratio being one of the fractions above.
//
// Coefficients returns an *[InputError], before writing anything, if the
// fields' lengths differ, a length is negative or above [MaxLength], a
// term is outside [0, MaxTerms), an update, a multiplier or their product
// is not finite or above [MaxUpdate] in magnitude, or there are more than
// [MaxRows] outputs (Field "Rows"); an error if r is undefined. It panics
// if len(dst) != len(in.Update), a programmer's error. It allocates
// nothing.
func Coefficients(dst []float64, in Rows, r Reduction) (Report, error) {
	return JoinedCoefficients([][]float64{dst}, []Rows{in}, r)
}

// JoinedCoefficients is [Coefficients] of rows given in parts: the outputs
// of in[0], in[1], ... are reduced together, as one batch laid end to end,
// and dst[i] receives the coefficients of in[i]: bit for bit what
// Coefficients writes for the concatenation, without copying the parts
// into one. Its errors are Coefficients', with Row the output's position
// in the concatenation, and "Rows" for more than [MaxRows] outputs in all.
// It panics if len(dst) != len(in) or len(dst[i]) != len(in[i].Update), a
// programmer's error. It allocates nothing.
func JoinedCoefficients(dst [][]float64, in []Rows, r Reduction) (Report, error) {
	if !r.defined() {
		return Report{}, reductionError(r)
	}
	n := 0
	for i := range in {
		n += len(in[i].Update)
	}
	if n > MaxRows {
		return Report{}, intError(FieldRows, -1, n, fmt.Errorf("%d outputs > %d, the most one call reduces", n, MaxRows))
	}
	var c counts
	offset := 0
	for i := range in {
		if err := c.add(&in[i], offset); err != nil {
			return Report{}, err
		}
		offset += len(in[i].Update)
	}
	if len(dst) != len(in) {
		panic(fmt.Sprintf("loss: len(dst) = %d, want len(in) = %d", len(dst), len(in)))
	}
	for i := range in {
		if len(dst[i]) != len(in[i].Update) {
			panic(fmt.Sprintf("loss: len(dst[%d]) = %d, want len(Update) = %d", i, len(dst[i]), len(in[i].Update)))
		}
	}
	rep := Report{Outputs: n}
	for t := range MaxTerms {
		rep.Rows += c.rows[t]
		rep.Tokens += c.tokens[t]
	}
	k := reductions[r].kind
	denominator := float64(rep.Rows) // of Scale and of the ratios
	switch {
	case rep.Rows == 0:
	case k == kindSum:
		rep.Scale = 1
	case k == kindAllConst:
		denominator = float64(n)
		rep.Scale = 1 / denominator
	default:
		rep.Scale = 1 / denominator
	}
	for i := range in {
		rep.Dropped += c.write(dst[i], &in[i], k, rep.Rows, denominator)
	}
	return rep, nil
}

// counts are the outputs (all), those with a token (rows) and the tokens
// of each term.
type counts struct {
	all, rows [MaxTerms]int
	tokens    [MaxTerms]int64 // up to 2^53: int64 on 32-bit machines too
}

// add checks the rows in, whose first output is output offset of the
// batch, and adds their counts to c.
func (c *counts) add(in *Rows, offset int) error {
	n := len(in.Update)
	if len(in.Lengths) != n {
		return intError(FieldLengths, -1, len(in.Lengths), fmt.Errorf("len = %d, want %d, one per output", len(in.Lengths), n))
	}
	if in.Multipliers != nil && len(in.Multipliers) != n {
		return intError(FieldMultipliers, -1, len(in.Multipliers), fmt.Errorf("len = %d, want %d, one per output", len(in.Multipliers), n))
	}
	if in.Terms != nil && len(in.Terms) != n {
		return intError(FieldTerms, -1, len(in.Terms), fmt.Errorf("len = %d, want %d, one per output", len(in.Terms), n))
	}
	for o, u := range in.Update {
		// One comparison each on the way through: NaN and infinities
		// fail it too, and the error says which.
		if !(math.Abs(u) <= MaxUpdate) {
			return updateError(u, offset+o)
		}
		if in.Multipliers != nil {
			if m := in.Multipliers[o]; !(math.Abs(m) <= MaxUpdate) || !(math.Abs(u*m) <= MaxUpdate) {
				return multiplierError(u, m, offset+o)
			}
		}
		l := in.Lengths[o]
		if l < 0 || l > MaxLength {
			return intError(FieldLengths, offset+o, l, errLength)
		}
		t := 0
		if in.Terms != nil {
			t = in.Terms[o]
			if t < 0 || t >= MaxTerms {
				return intError(FieldTerms, offset+o, t, errTerm)
			}
		}
		c.all[t]++
		if l > 0 {
			c.rows[t]++
			c.tokens[t] += int64(l)
		}
	}
	return nil
}

// write writes to dst the coefficients of the checked rows in, of a batch
// of c's counts, rows outputs with a token in all and the reduction kind k
// whose ratios divide by denominator, and returns the number of outputs
// dropped.
func (c *counts) write(dst []float64, in *Rows, k kind, rows int, denominator float64) (dropped int) {
	for o, u := range in.Update {
		m := 1.0
		if in.Multipliers != nil {
			m = in.Multipliers[o]
		}
		l := in.Lengths[o]
		if l == 0 || rows == 0 {
			if u != 0 && m != 0 {
				dropped++
			}
			dst[o] = 0
			continue
		}
		t := 0
		if in.Terms != nil {
			t = in.Terms[o]
		}
		var numerator int64 // at most 2^53: exact in float64
		switch k {
		case kindSum:
			dst[o] = u * m
			continue
		case kindTokens:
			numerator = c.tokens[t]
		case kindRows:
			numerator = int64(c.rows[t])
		case kindRowsLen:
			numerator = int64(c.rows[t]) * int64(l)
		case kindAllLen:
			numerator = int64(c.all[t]) * int64(l)
		case kindAll, kindAllConst:
			numerator = int64(c.all[t])
		}
		ratio := float64(numerator) / denominator
		if in.Multipliers != nil {
			ratio *= m
		}
		dst[o] = u * ratio
	}
	return dropped
}

// updateError returns the *InputError about update u of output o, which
// is not finite or above MaxUpdate in magnitude.
func updateError(u float64, o int) error {
	if math.IsNaN(u) || math.IsInf(u, 0) {
		return rowError(FieldUpdate, o, u, errNotFinite)
	}
	return rowError(FieldUpdate, o, u, errTooLarge)
}

// multiplierError returns the *InputError about output o's multiplier m,
// not finite or above MaxUpdate in magnitude, or else about its update u
// times m, above MaxUpdate in magnitude (an overflow included: |u| and |m|
// are at most MaxUpdate, so u*m is not NaN).
func multiplierError(u, m float64, o int) error {
	switch {
	case math.IsNaN(m) || math.IsInf(m, 0):
		return rowError(FieldMultipliers, o, m, errNotFinite)
	case math.Abs(m) > MaxUpdate:
		return rowError(FieldMultipliers, o, m, errTooLarge)
	}
	return rowError(FieldUpdate, o, u, fmt.Errorf("times its multiplier %v: magnitude above %g", m, MaxUpdate))
}

var (
	errNotFinite = errors.New("not finite")
	errTooLarge  = fmt.Errorf("magnitude above %g", MaxUpdate)
	errLength    = fmt.Errorf("length outside [0, %d] tokens", MaxLength)
	errTerm      = fmt.Errorf("term outside [0, %d)", MaxTerms)
)
