package spiral

import (
	"errors"
	"fmt"
	"slices"

	"spiral/combin"
	"spiral/loss"
)

// Update is the policy-gradient update a trainer's loss is made to produce
// from SPIRAL's credit (docs/findings.md#loss-coefficients).
type Update int

const (
	// JointGradient is SPIRAL's unbiased joint gradient: every search
	// advantage divided by M and every aggregation advantage by K a (a =
	// N2 - 1 within the set, N2 leave one out), so that the expected
	// update of a problem is grad J = grad_search J + grad_agg J.
	JointGradient Update = iota
	// PaperUpdate is the paper's update, the advantages as they are, whose
	// expectation is M grad_search J + K a grad_agg J.
	PaperUpdate
	// ScoredGradient is the joint gradient with multipliers from the counts
	// actually scored (docs/findings.md#missing-outputs): a problem's search
	// advantages divided by M(K') P(K' >= 2), K' its scored sets, and a
	// set's aggregation advantages by K (S - 1) P(S >= 2) (K S P(S >= 2)
	// leave one out), S its scored outputs. When every aggregation output
	// is missing (dropped or unscorable) with probability
	// LossOptions.MissingRate, independently of its content, its expected
	// update is grad J (for a balanced design, a problem with an empty set
	// gets no search credit and P(K' = K) replaces P(K' >= 2)).
	// [Config.AdvantageCoefficients] reads the counts from the Batch's
	// RewardCounts and Unscorable.
	ScoredGradient
)

// String returns "JointGradient", "PaperUpdate", "ScoredGradient" or
// "Update(v)".
func (u Update) String() string {
	switch u {
	case JointGradient:
		return "JointGradient"
	case PaperUpdate:
		return "PaperUpdate"
	case ScoredGradient:
		return "ScoredGradient"
	}
	return fmt.Sprintf("Update(%d)", int(u))
}

// LossOptions choose the update and describe the trainer's loss for
// [Config.LossCoefficients].
type LossOptions struct {
	// Update is the update the trainer's gradient follows.
	Update Update
	// Reduction is the trainer's loss reduction, named as the trainer
	// names it.
	Reduction loss.Reduction
	// SplitRoles says the trainer reduces the search traces and the
	// aggregation outputs as two loss terms, each over its own outputs
	// (a token mean over the search tokens plus one over the aggregation
	// tokens, say), and adds them; otherwise every output of the batch is
	// reduced together.
	SplitRoles bool
	// MissingRate is delta in [0, 1), the stated probability that each of a
	// set's N2 aggregation outputs is missing (dropped or unscorable),
	// independently of its content and of the other outputs. JointGradient
	// divides by [Config.RoleWeights]' expected-count weights for it, and
	// ScoredGradient by its [ScoredConstants]; PaperUpdate does not read it.
	MissingRate float64
}

// LossCoefficients are the coefficients a trainer puts in its advantage
// tensor, in the layout of the [Batch], written by
// [Config.LossCoefficients]. The zero value is ready to use; reused from
// step to step, it allocates nothing once grown: the role multipliers of
// [Config.RoleWeights] are computed at the first call for a configuration
// and kept for the next calls of the same one.
type LossCoefficients struct {
	// Search[q*N1+y] is the coefficient of search trace y of problem q.
	Search []float64
	// Aggregation[o] is the coefficient of aggregation output o.
	Aggregation []float64
	// Report is the reduction's report: Scale is the effective learning
	// rate scale kappa, the trainer's gradient being kappa times the
	// chosen update (times the trainer's own constants).
	Report loss.Report

	joint     jointMultipliers
	scored    scoredTable
	mult, out []float64
	term1     []int // 1s, the loss term of the aggregation outputs under SplitRoles
}

// ones returns n 1s, the term of every aggregation output with SplitRoles,
// written only when d.term1 grows.
func (d *LossCoefficients) ones(n int) []int {
	if len(d.term1) < n {
		d.term1 = slices.Grow(d.term1, n-len(d.term1))
		for len(d.term1) < n {
			d.term1 = append(d.term1, 1)
		}
	}
	return d.term1[:n]
}

// creditShape is what the loss coefficients of a credit depend on besides
// its advantages: the family and design, which give M, and K, N2 and the
// aggregation baseline, which give K a. [Config.CreditBatch] records it in
// the BatchCredit it fills.
type creditShape struct {
	traces, setSize, sets, perSet int
	ordered                       bool
	design                        combin.Design
	baseline                      AggregationBaseline
}

func (c *Config) creditShape() creditShape {
	return creditShape{c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, c.Ordered, c.Design, c.AggregationBaseline}
}

func (s creditShape) String() string {
	return fmt.Sprintf("N1 = %d, n = %d, K = %d, N2 = %d, Ordered = %v, Design = %v, AggregationBaseline = %v",
		s.traces, s.setSize, s.sets, s.perSet, s.ordered, s.design, s.baseline)
}

// jointMultipliers are the JointGradient multipliers 1/M and 1/(K a) of
// one credit shape, computed once for it.
type jointMultipliers struct {
	of                  creditShape
	missingRate         float64
	search, aggregation float64
	set                 bool
}

// LossCoefficients writes to dst the coefficient of every search trace and
// aggregation output of the batch in, credited by c into credit, so that
// a trainer reducing per-token losses -coefficient * ratio with
// opt.Reduction produces opt.Update exactly for this batch, times
// dst.Report.Scale: the advantages times the update's role multipliers
// (1/M and 1/(K a) from [Config.RoleWeights] with a sum and
// opt.MissingRate, a following c.AggregationBaseline as the credit does;
// ScoredGradient's from each problem's and set's scored counts; or 1 and
// 1), then [loss.JoinedCoefficients] over the P*N1 search traces and the
// outputs, two parts of one batch read where they are, reduced as one loss
// term, or as two with opt.SplitRoles; each multiplier meets the
// reduction's ratio before the advantage ([loss.Rows].Multipliers), so
// that a subnormal advantage does not flush a representable coefficient
// to 0.
// Both in.SearchLengths and in.AggregationLengths are required: the
// lengths in tokens the trainer's loss reads.
//
// The reduction's rows are the batch's: call it when the trainer reduces
// the batch's rows together. A trainer that reduces them in parts (verl's
// legacy dp_actor and TRL's grpo, bnpo and dr_grpo each micro-batch,
// verl's new engine and TRL's dapo over counts summed over the ranks)
// needs each part's coefficients at one kappa: compute the update with
// loss.Sum, which leaves it as it is, and pass each part's rows to
// loss.PartCoefficients with the whole batch's loss.ScaleOf.
//
// The multipliers are computed at the first call for c's N1, n, K, N2,
// Ordered, Design and AggregationBaseline and opt.MissingRate (with
// big.Rat: up to a tenth of a second for a large family) and kept in dst;
// later calls of the same shape allocate nothing once dst has grown.
//
// Errors, before anything is written to dst, are *[InputError] values
// naming the caller's field: [FieldDst] if dst is nil; [FieldCredit] if
// credit is nil or was not filled by [Config.CreditBatch] under a Config
// of c's N1, n, K, N2, Ordered, Design and AggregationBaseline;
// [FieldBatch] if the batch holds more than loss.MaxRows = 2^24 outputs
// (P*N1 search traces and the aggregation outputs, Value their number);
// [FieldUpdate] or [FieldReduction] if the update or the reduction is
// undefined; [FieldSearchLengths] or [FieldAggregationLengths] if one does
// not have the credit's length (Value its length), or for a length that
// is negative or above loss.MaxLength (Output its position in the slice);
// [FieldCreditSearch] or [FieldCreditAggregation] for an advantage whose
// product with its multiplier exceeds loss.MaxUpdate in magnitude (1/M
// beyond 1e170; Output its position); a Config field if c is invalid.
func (c Config) LossCoefficients(dst *LossCoefficients, credit *BatchCredit, in Batch, opt LossOptions) error {
	if credit == nil {
		return argumentError(FieldCredit, 0, "nil *BatchCredit")
	}
	if want := c.creditShape(); credit.made != want {
		if credit.made == (creditShape{}) {
			return argumentError(FieldCredit, 0, "filled by no Config.CreditBatch call")
		}
		return argumentError(FieldCredit, 0, "made by a Config of %v; this Config has %v", credit.made, want)
	}
	return c.coefficients(dst, credit, credit.Search, credit.Aggregation, &in, opt)
}

// AdvantageCoefficients is [Config.LossCoefficients] for advantages held
// outside a [BatchCredit] (the C ABI's, say): search (P*N1 entries) and
// aggregation (one per aggregation output) are taken to be c's credit of
// in, with the lengths of in.SearchLengths and in.AggregationLengths.
// Nothing can check that c made them; a trainer holding the BatchCredit
// calls LossCoefficients, which does. The errors are LossCoefficients',
// with [FieldSearch] and [FieldAggregation] for the advantages, and an
// *InputError about FieldSearch if len(search) is not a multiple of N1.
func (c Config) AdvantageCoefficients(dst *LossCoefficients, search, aggregation []float64, in Batch, opt LossOptions) error {
	if n1 := c.SearchTraces; n1 >= 1 && len(search)%n1 != 0 {
		return argumentError(FieldSearch, float64(len(search)), "len(search) = %d is not a multiple of N1 = %d", len(search), n1)
	}
	return c.coefficients(dst, nil, search, aggregation, &in, opt)
}

// coefficients is LossCoefficients of the advantages search and
// aggregation, credit's when credit is not nil.
func (c Config) coefficients(dst *LossCoefficients, credit *BatchCredit, search, aggregation []float64, in *Batch, opt LossOptions) error {
	if dst == nil {
		return argumentError(FieldDst, 0, "nil *LossCoefficients")
	}
	if err := c.validateShape(); err != nil {
		return err
	}
	ns, na := len(search), len(aggregation)
	if len(in.SearchLengths) != ns {
		return argumentError(FieldSearchLengths, float64(len(in.SearchLengths)), "len = %d, want P*N1 = %d (the loss reads every length)", len(in.SearchLengths), ns)
	}
	if len(in.AggregationLengths) != na {
		return argumentError(FieldAggregationLengths, float64(len(in.AggregationLengths)), "len = %d, want the %d aggregation outputs credited (the loss reads every length)", len(in.AggregationLengths), na)
	}
	n := ns + na
	if n > loss.MaxRows {
		return argumentError(FieldBatch, float64(n), "%d search traces and %d aggregation outputs: %d outputs > %d, the most one call reduces (credit and reduce fewer problems at a time)", ns, na, n, loss.MaxRows)
	}
	mult, err := c.multipliers(dst, credit, in, ns, n, opt)
	if err != nil {
		return err
	}
	// The two roles are two parts of one batch: the loss reads the
	// advantages and lengths where they are.
	parts := [2]loss.Rows{
		{Update: search, Lengths: in.SearchLengths},
		{Update: aggregation, Lengths: in.AggregationLengths},
	}
	if mult != nil {
		parts[0].Multipliers, parts[1].Multipliers = mult[:ns], mult[ns:]
	}
	if opt.SplitRoles {
		parts[1].Terms = dst.ones(na)
	}
	dst.out = slices.Grow(dst.out[:0], n)[:n]
	rep, err := loss.JoinedCoefficients([][]float64{dst.out[:ns], dst.out[ns:]}, parts[:], opt.Reduction)
	if err != nil {
		return lossError(err, credit != nil, ns)
	}
	dst.Search, dst.Aggregation = dst.out[:ns:ns], dst.out[ns:n:n]
	dst.Report = rep
	return nil
}

// multipliers returns the multiplier of every output's advantage under
// update u, search traces (ns of them) first, n outputs in all, in dst's
// memory; nil means 1 for every output. credit, when not nil, is the
// credit whose advantages they multiply.
func (c Config) multipliers(dst *LossCoefficients, credit *BatchCredit, in *Batch, ns, n int, opt LossOptions) ([]float64, error) {
	switch u := opt.Update; u {
	case ScoredGradient:
		dst.mult = slices.Grow(dst.mult[:0], n)[:n]
		return dst.mult, c.scoredMultipliers(dst.mult, &dst.scored, credit, in, ns, opt.MissingRate)
	case JointGradient:
		if err := dst.joint.compute(c, opt.MissingRate); err != nil {
			return nil, err
		}
		dst.mult = slices.Grow(dst.mult[:0], n)[:n]
		fill(dst.mult[:ns], dst.joint.search)
		fill(dst.mult[ns:], dst.joint.aggregation)
		return dst.mult, nil
	case PaperUpdate:
		return nil, nil
	}
	return nil, argumentError(FieldUpdate, float64(opt.Update), "%d is not JointGradient, PaperUpdate or ScoredGradient", int(opt.Update))
}

// compute sets j to c's multipliers unless it holds them already.
func (j *jointMultipliers) compute(c Config, missingRate float64) error {
	shape := c.creditShape()
	if j.set && j.of == shape && j.missingRate == missingRate {
		return nil
	}
	w, err := c.RoleWeights(LossOptions{MissingRate: missingRate})
	if err != nil {
		return err
	}
	*j = jointMultipliers{of: shape, missingRate: missingRate, search: w.SearchMultiplier, aggregation: w.AggregationMultiplier, set: true}
	return nil
}

// fill sets every element of s to v.
func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}

// lossError returns loss's error err about the two parts of
// LossCoefficients' rows (ns search traces first) in the caller's fields:
// a length as Batch.SearchLengths or Batch.AggregationLengths, an update
// as the advantage of the credit (credit.Search or credit.Aggregation) or
// of AdvantageCoefficients' argument (search or aggregation), at its
// position there; the reduction as LossOptions.Reduction.
func lossError(err error, ofCredit bool, ns int) error {
	e, ok := errors.AsType[*loss.InputError](err)
	if !ok {
		return err
	}
	search, aggregation := FieldSearch, FieldAggregation
	if ofCredit {
		search, aggregation = FieldCreditSearch, FieldCreditAggregation
	}
	var field string
	switch e.Field {
	case loss.FieldLengths:
		field = FieldSearchLengths
		if e.Output >= ns {
			field = FieldAggregationLengths
		}
	case loss.FieldUpdate, loss.FieldMultipliers:
		field = search
		if e.Output >= ns {
			field = aggregation
		}
	case loss.FieldReduction:
		field = FieldReduction
	default:
		field = e.Field
	}
	c := e.In("spiral", field)
	if c.Output >= ns && field != e.Field {
		c.Output -= ns
	}
	return c
}

// argumentError returns the *InputError about an argument (or a whole
// value) of the caller: field names it, value is its bad value or size.
func argumentError(field string, value float64, format string, args ...any) error {
	return (&InputError{Field: field, Problem: -1, Set: -1, Output: -1, Value: value, Err: fmt.Errorf(format, args...)}).In("spiral", field)
}
