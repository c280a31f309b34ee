package spiral

import (
	"errors"
	"fmt"
	"slices"

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
)

// String returns "JointGradient", "PaperUpdate" or "Update(v)".
func (u Update) String() string {
	switch u {
	case JointGradient:
		return "JointGradient"
	case PaperUpdate:
		return "PaperUpdate"
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
}

// LossCoefficients are the coefficients a trainer puts in its advantage
// tensor, in the layout of the [Batch], written by
// [Config.LossCoefficients]. The zero value is ready to use; reused from
// step to step, it allocates nothing once grown.
type LossCoefficients struct {
	// Search[q*N1+y] is the coefficient of search trace y of problem q.
	Search []float64
	// Aggregation[o] is the coefficient of aggregation output o.
	Aggregation []float64
	// Report is the reduction's report: Scale is the effective learning
	// rate scale kappa, the trainer's gradient being kappa times the
	// chosen update (times the trainer's own constants).
	Report loss.Report

	update, out []float64
	lengths     []int
	terms       []int
}

// LossCoefficients writes to dst the coefficient of every search trace and
// aggregation output of the batch in, credited by c into b, so that a
// trainer reducing per-token losses -coefficient * ratio with
// opt.Reduction produces opt.Update exactly for this batch, times
// dst.Report.Scale: the advantages times the update's role multipliers
// (1/M and 1/(K a) from [Config.RoleWeights] with a sum, a following
// c.AggregationBaseline as the credit does; or 1 and 1), then
// [loss.Coefficients] over the P*N1 search traces and the outputs as one
// loss term, or as two with opt.SplitRoles. Both in.SearchLengths and
// in.AggregationLengths are required: the lengths in tokens the trainer's
// loss reads.
//
// The reduction's rows are the batch's: call it on the rows a trainer
// reduces together (for verl's token-mean, a mini-batch; for TRL's grpo,
// bnpo and dr_grpo each micro-batch, which this batch-wide call does not
// see: compute the coefficients with loss.Sum, which leaves the update as
// it is, and pass each micro-batch's rows to loss.Coefficients).
//
// It returns an error if c is invalid, opt's update, baseline or reduction
// is undefined, b does not hold c's credit of a batch of in's size, or a
// length is missing, negative or above loss.MaxLength: then a
// *loss.InputError whose Field is "SearchLengths" or "AggregationLengths"
// and Row the position in it; or, when an advantage times its multiplier
// exceeds loss.MaxUpdate (1/M beyond 1e170), the *loss.InputError about
// "Update" with Row the output (search traces first).
func (c Config) LossCoefficients(dst *LossCoefficients, b *BatchCredit, in Batch, opt LossOptions) error {
	w, err := c.RoleWeights(LossOptions{})
	if err != nil {
		return err
	}
	var ms, ma float64
	switch opt.Update {
	case JointGradient:
		ms, ma = w.SearchMultiplier, w.AggregationMultiplier
	case PaperUpdate:
		ms, ma = 1, 1
	default:
		return fmt.Errorf("spiral: LossOptions.Update = %d is neither JointGradient nor PaperUpdate", int(opt.Update))
	}
	ns, na := b.Problems*c.SearchTraces, len(b.Aggregation)
	if len(b.Search) != ns {
		return fmt.Errorf("spiral: BatchCredit holds %d search advantages, want Problems*N1 = %d*%d", len(b.Search), b.Problems, c.SearchTraces)
	}
	if len(in.SearchLengths) != ns {
		return fmt.Errorf("spiral: len(Batch.SearchLengths) = %d, want P*N1 = %d (the loss reads every length)", len(in.SearchLengths), ns)
	}
	if len(in.AggregationLengths) != na {
		return fmt.Errorf("spiral: len(Batch.AggregationLengths) = %d, want the %d aggregation outputs credited (the loss reads every length)", len(in.AggregationLengths), na)
	}
	n := ns + na
	dst.update = slices.Grow(dst.update[:0], n)[:n]
	dst.out = slices.Grow(dst.out[:0], n)[:n]
	dst.lengths = slices.Grow(dst.lengths[:0], n)[:n]
	for y, a := range b.Search {
		dst.update[y] = a * ms
	}
	for o, a := range b.Aggregation {
		dst.update[ns+o] = a * ma
	}
	copy(dst.lengths, in.SearchLengths)
	copy(dst.lengths[ns:], in.AggregationLengths)
	rows := loss.Rows{Update: dst.update, Lengths: dst.lengths}
	if opt.SplitRoles {
		dst.terms = slices.Grow(dst.terms[:0], n)[:n]
		for o := range dst.terms {
			dst.terms[o] = 0
			if o >= ns {
				dst.terms[o] = 1
			}
		}
		rows.Terms = dst.terms
	}
	rep, err := loss.Coefficients(dst.out, rows, opt.Reduction)
	if err != nil {
		if e, ok := errors.AsType[*loss.InputError](err); ok && e.Field == "Lengths" && e.Row >= 0 {
			// Rename the row to the Batch's field and position.
			renamed := *e
			renamed.Field = "SearchLengths"
			if e.Row >= ns {
				renamed.Field, renamed.Row = "AggregationLengths", e.Row-ns
			}
			return &renamed
		}
		return err
	}
	dst.Search, dst.Aggregation = dst.out[:ns:ns], dst.out[ns:n:n]
	dst.Report = rep
	return nil
}
