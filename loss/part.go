package loss

import (
	"errors"
	"fmt"
	"math"
)

// Divisors are what a trainer's reduction of one loss term divides by,
// when those are not the counts of the outputs it is given (see [Part]).
type Divisors struct {
	// Sequences is the count its mean over sequences divides by: the
	// outputs with a token (R) for verl's and OpenRLHF's sequence means,
	// every output (B) for TRL's grpo, dr_grpo and rloo. verl's new engine
	// (use_legacy_worker_impl=disable) divides by global_batch_size, every
	// row of the mini-batch on every rank, empty rows included. Unused by
	// the token means and the sums.
	Sequences int64
	// Tokens is the count its token mean divides by: verl's new engine's
	// batch_num_tokens and TRL's dapo num_items_in_batch, the tokens of
	// the mini-batch (or accumulated batch) summed over the ranks. Unused
	// by the sequence means and the sums.
	Tokens int64
}

// Part says how the outputs given to [PartCoefficients] sit in the batch
// whose update is chosen: they are one micro-batch, one rank's share, or
// both, and the trainer's gradient adds up over the parts.
type Part struct {
	// Scale is kappa, the same for every part of the batch: each part's
	// gradient is Scale times its outputs' share of the update, so the
	// parts' gradients add up to Scale times the whole update. [ScaleOf]
	// gives the kappa [Coefficients] would give for the whole batch.
	Scale float64
	// Over, if not nil, holds the divisors of each term (Over[t] for term
	// t, len(Over) at least the highest term + 1): the trainer divides by
	// counts of rows beyond this part (global totals). Nil means the part
	// is reduced on its own, divided by its own counts, as verl's legacy
	// dp_actor and TRL's grpo, bnpo and dr_grpo reduce each micro-batch.
	Over []Divisors
}

// MaxScale is the largest Part.Scale accepted.
const MaxScale = 1 << 53

// ScaleOf returns the kappa [Coefficients] reports for a batch of outputs
// outputs, rows of them with at least one token: 1 for the sums, 1/outputs
// for trl-dr-grpo, 1/rows for every other reduction; 0 when rows is 0 or r
// is undefined. In data-parallel training the counts are the sums over
// every rank.
func ScaleOf(r Reduction, outputs, rows int64) float64 {
	if !r.defined() || rows <= 0 {
		return 0
	}
	switch reductions[r].kind {
	case kindSum:
		return 1
	case kindAllConst:
		return 1 / float64(outputs)
	}
	return 1 / float64(rows)
}

// PartCoefficients writes to dst[o] the coefficient of every output of a
// part of a batch (a micro-batch, a rank's share), for a trainer that
// reduces the part with r over the divisors part.Over (or the part's own
// counts) and adds the parts' gradients: c_o = u_o kappa / w_o, w_o being
// r's weight (see [Reduction]) with the term's divisors, so that the
// part's gradient is kappa times sum_{o in part} u_o grad log pi(y_o) and
// the parts add up to kappa times the whole update, for micro-batches of
// any counts. With D_t = Over[t] (or, without Over, the part's own: R_t for
// the verl and OpenRLHF sequence means, B_t for TRL's, and T_t tokens):
//
//	sum, seq-mean-token-sum-norm             c_o = u_o kappa
//	token-mean, trl-bnpo, trl-dapo,
//	openrlhf-token, nemo-rl-token            c_o = u_o kappa D_t.Tokens
//	seq-mean-token-sum, trl-rloo,
//	trl-dr-grpo                              c_o = u_o kappa D_t.Sequences
//	seq-mean-token-mean, openrlhf-sequence,
//	trl-grpo, nemo-rl-sequence               c_o = u_o kappa D_t.Sequences L_o
//
// Which call is right is the trainer's setting. verl's legacy dp_actor
// (use_legacy_worker_impl auto or enable, the default) reduces each
// micro-batch on its own and multiplies it by loss_scale_factor =
// 1/gradient_accumulation, a constant left in the learning rate: Over nil,
// one call per micro-batch; with use_dynamic_bsz its loss_scale_factor is
// the micro-batch's rows over ppo_mini_batch_size, which varies: pass
// Scale = kappa ppo_mini_batch_size / rows. verl's new engine
// (use_legacy_worker_impl=disable) divides by the mini-batch's
// batch_num_tokens and global_batch_size over every rank: Over those.
// TRL's grpo, bnpo and dr_grpo reduce each micro-batch (one per gradient
// accumulation step; steps_per_generation of them share one generation)
// and divide by the accumulation steps, a constant: Over nil. TRL's dapo
// (the default loss_type) divides by num_items_in_batch, the tokens of the
// whole generation batch gathered from every process: Over{Tokens: it}.
// NeMo-RL divides every micro-batch by global_valid_toks or
// global_valid_seqs, summed over the ranks: Over those (see [NeMoRLToken]).
// The trainers' constants (dp_size, the processes, the accumulation steps,
// S) multiply every part alike and are left in the learning rate.
//
// An output with no token gets 0 (counted in Report.Dropped if its update
// is not 0). Report.Scale is part.Scale; Outputs, Rows and Tokens count
// the part.
//
// PartCoefficients returns the errors of [Coefficients] for in, and an
// *[InputError] before writing anything if part.Scale is not in [0,
// MaxScale] (Field "Scale"), part.Over lacks a term in.Terms names (Field
// "Over", Row -1), or a divisor r reads (Tokens for the token means,
// Sequences for the sequence means, neither for the sums) is below the
// part's own count, above [MaxRows] sequences or 2^53 tokens (Field
// "Over.Sequences" or "Over.Tokens", Row the term). It panics if len(dst) != len(in.Update).
// It allocates nothing.
func PartCoefficients(dst []float64, in Rows, r Reduction, part Part) (Report, error) {
	if !r.defined() {
		return Report{}, reductionError(r)
	}
	if s := part.Scale; math.IsNaN(s) || s < 0 || s > MaxScale {
		return Report{}, rowError(FieldScale, -1, s, fmt.Errorf("%v outside [0, 2^53]", s))
	}
	// The part's counts per term. An entry Coefficients refuses (a length
	// of a field, a length, a term) stops the count: Coefficients then
	// returns its error, before anything is written.
	var all, rows [MaxTerms]int64
	var tokens [MaxTerms]int64
	terms := 0
	n := len(in.Update)
	malformed := n > MaxRows || len(in.Lengths) != n || in.Terms != nil && len(in.Terms) != n
	for o := 0; o < n && !malformed; o++ {
		l, t := in.Lengths[o], 0
		if in.Terms != nil {
			t = in.Terms[o]
		}
		if l < 0 || l > MaxLength || t < 0 || t >= MaxTerms {
			malformed = true
			break
		}
		terms = max(terms, t+1)
		all[t]++
		if l > 0 {
			rows[t]++
			tokens[t] += int64(l)
		}
	}
	if malformed {
		if _, err := Coefficients(dst, in, Sum); err != nil {
			return Report{}, err
		}
		return Report{}, errors.New("loss: Rows refused without a reason") // not reached: Coefficients refuses what stops the count
	}
	k := reductions[r].kind
	var seq [MaxTerms]int64
	for t := range MaxTerms {
		seq[t] = rows[t]
		if k == kindAllLen || k == kindAll || k == kindAllConst {
			seq[t] = all[t]
		}
	}
	if part.Over != nil {
		if len(part.Over) < terms {
			return Report{}, intError(FieldOver, -1, len(part.Over), fmt.Errorf("len = %d, want the %d terms the rows name", len(part.Over), terms))
		}
		// Only the divisor r reads is checked and used.
		useSeq := k != kindSum && k != kindTokens
		for t := range terms {
			d := part.Over[t]
			if useSeq {
				if d.Sequences < seq[t] || d.Sequences > MaxRows {
					return Report{}, intError(FieldOverSequences, t, d.Sequences, fmt.Errorf("outside [%d (the part's own), %d]", seq[t], MaxRows))
				}
				seq[t] = d.Sequences
			} else if k == kindTokens {
				if d.Tokens < tokens[t] || d.Tokens > 1<<53 {
					return Report{}, intError(FieldOverTokens, t, d.Tokens, fmt.Errorf("outside [%d (the part's own), 2^53]", tokens[t]))
				}
				tokens[t] = d.Tokens
			}
		}
	}
	// Every other check of in (the updates), then c_o = u_o (0 for an
	// output with no token), from Coefficients with the sum.
	rep, err := Coefficients(dst, in, Sum)
	if err != nil {
		return Report{}, err
	}
	rep.Scale = part.Scale
	for o, u := range in.Update {
		if in.Lengths[o] == 0 {
			continue // 0 from Coefficients
		}
		t := 0
		if in.Terms != nil {
			t = in.Terms[o]
		}
		var divisor int64 // 1/w_o up to the trainer's constants: at most 2^53, exact
		switch k {
		case kindSum:
			divisor = 1
		case kindTokens:
			divisor = tokens[t]
		case kindRows, kindAll, kindAllConst:
			divisor = seq[t]
		case kindRowsLen, kindAllLen:
			divisor = seq[t] * int64(in.Lengths[o])
		}
		ratio := part.Scale * float64(divisor)
		if in.Multipliers != nil {
			ratio *= in.Multipliers[o] // before the update, as Coefficients does
		}
		dst[o] = u * ratio
	}
	return rep, nil
}
