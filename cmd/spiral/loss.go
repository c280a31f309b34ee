package main

import (
	"errors"
	"fmt"
	"io"

	"spiral/internal/names"
	"spiral/loss"
)

const lossHelp = `usage: spiral loss -reduction NAME < lines

loss writes, for one set of rows per input line (the rows a trainer's loss
reduces together), the coefficient of every row that makes the trainer's
reduction produce the chosen update exactly, with loss.Coefficients: c_o =
u_o scale / w_o, w_o the weight the reduction gives each token of row o. A
line with "scale" is one part of a batch (a micro-batch, a rank's rows: verl's
default legacy actor and TRL's grpo, bnpo and dr_grpo reduce each micro-batch
on its own; verl's new engine and TRL's dapo divide by counts over the whole
batch, "over_sequences" and "over_tokens"), with loss.PartCoefficients: every
part at the same scale (kappa) adds up to kappa times the update. The update u (one number
per row) is what spiral credit -coefficients sum writes: SPIRAL's joint
gradient (-update joint) or the paper's (-update paper), or any other
per-sequence update. The derivation of each reduction is in
docs/findings.md#loss-coefficients.

Flags:
  -reduction NAME  the trainer's reduction, as the loss package names it
                   (required): sum, token-mean, seq-mean-token-sum,
                   seq-mean-token-mean, seq-mean-token-sum-norm (verl's
                   loss_agg_mode), trl-grpo, trl-bnpo, trl-dr-grpo, trl-dapo,
                   trl-rloo (TRL), openrlhf-token, openrlhf-sequence (OpenRLHF),
                   nemo-rl-token, nemo-rl-sequence (NeMo-RL: the rows of
                   sample_mask 1 of the global batch, every rank)

Input line (one JSON object):
  {"update": [u, ...],      required: the update's coefficient of each row,
                            |u| <= 1e200
   "lengths": [L, ...],     required: each row's length in tokens (its
                            response mask's sum), 0 <= L <= 2^29
   "terms": [t, ...],       optional: each row's loss term, 0 <= t < 8, when
                            the trainer reduces several terms separately (the
                            search rows and the aggregation rows, say)
   "scale": kappa,          optional: the rows are one part of a batch, kappa
                            the same for every part, 0 <= kappa <= 2^53 (1/R
                            of the whole batch for the means)
   "over_sequences": [n],   optional, with scale: per term, the sequences
   "over_tokens": [n]}      and tokens the trainer divides by beyond the part
                            (global_batch_size, batch_num_tokens,
                            num_items_in_batch)

Output line:
  {"coefficients": [c, ...], one per row: put it where the trainer puts the
                             row's advantage (0 for a row of no tokens)
   "scale": x,               the trainer's gradient is scale times the update
                             (1 for sums, 1/rows for the means; the trainer's
                             own constants aside)
   "outputs": B, "rows": R,  the rows, those with a token, and their tokens
   "tokens": T,
   "dropped": d}             rows of no tokens whose update is not 0 (lost)
` + streamHelp

// lossSchema lists the fields of a loss input line.
var lossSchema = schema{
	names:     []string{"update", "lengths", "terms", "scale", "over_sequences", "over_tokens"},
	required:  []bool{true, true, false, false, false, false},
	nonFinite: "an update must be a finite number",
}

// lossLine is one decoded loss input line.
type lossLine struct {
	Update        []float64 `json:"update"`
	Lengths       []int     `json:"lengths"`
	Terms         []int     `json:"terms"`
	Scale         float64   `json:"scale"`
	OverSequences []int64   `json:"over_sequences"`
	OverTokens    []int64   `json:"over_tokens"`
}

// lossOutput is one loss output line.
type lossOutput struct {
	Coefficients []float64 `json:"coefficients"`
	Scale        float64   `json:"scale"`
	Outputs      int       `json:"outputs"`
	Rows         int       `json:"rows"`
	Tokens       int64     `json:"tokens"`
	Dropped      int       `json:"dropped"`
}

// lossHandler computes the coefficients of one line.
type lossHandler struct {
	reduction loss.Reduction
	in        lossLine
	dst       []float64
	out       jsonOut
}

func (h *lossHandler) handle(line []byte) ([]byte, error) {
	in := &h.in
	present, err := lossSchema.decode(line, in)
	if err != nil {
		return nil, err
	}
	if !present[2] {
		in.Terms = nil
	}
	if !present[4] {
		in.OverSequences = nil
	}
	if !present[5] {
		in.OverTokens = nil
	}
	if cap(h.dst) < len(in.Update) || h.dst == nil { // never nil: an empty line answers []
		h.dst = make([]float64, len(in.Update))
	}
	h.dst = h.dst[:len(in.Update)]
	rows := loss.Rows{Update: in.Update, Lengths: in.Lengths, Terms: in.Terms}
	var rep loss.Report
	if present[3] {
		part := loss.Part{Scale: in.Scale}
		if present[4] || present[5] {
			part.Over, err = overDivisors(in, present[4], present[5])
			if err != nil {
				return nil, err
			}
		}
		rep, err = loss.PartCoefficients(h.dst, rows, h.reduction, part)
	} else {
		if present[4] || present[5] {
			return nil, errors.New(`over_sequences and over_tokens divide a part of a batch: give its "scale" too`)
		}
		rep, err = loss.Coefficients(h.dst, rows, h.reduction)
	}
	if err != nil {
		if e, ok := errors.AsType[*loss.InputError](err); ok {
			return nil, e.In("", names.Loss.Line(e.Field))
		}
		return nil, err
	}
	return h.out.encode(lossOutput{Coefficients: h.dst, Scale: rep.Scale, Outputs: rep.Outputs, Rows: rep.Rows, Tokens: rep.Tokens, Dropped: rep.Dropped}), nil
}

// overDivisors returns the divisors of each term a loss line gives: its
// over_sequences and over_tokens (one of them may be left out: zeros).
func overDivisors(in *lossLine, sequences, tokens bool) ([]loss.Divisors, error) {
	n := max(len(in.OverSequences), len(in.OverTokens))
	if sequences && tokens && len(in.OverSequences) != len(in.OverTokens) {
		return nil, fmt.Errorf("len(over_tokens) = %d, want len(over_sequences) = %d: one per term", len(in.OverTokens), len(in.OverSequences))
	}
	over := make([]loss.Divisors, n)
	for t := range over {
		if sequences {
			over[t].Sequences = in.OverSequences[t]
		}
		if tokens {
			over[t].Tokens = in.OverTokens[t]
		}
	}
	return over, nil
}

func runLoss(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("loss", stderr)
	reduction := fs.String("reduction", "", "")
	if code, done := parseFlags(fs, lossHelp, args, stdout, stderr); done {
		return code
	}
	if err := requireFlags(fs, "reduction"); err != nil {
		return usageError(stderr, "loss", err.Error())
	}
	r, err := parseName[loss.Reduction]("-reduction", *reduction)
	if err != nil {
		return usageError(stderr, "loss", err.Error())
	}
	h := &lossHandler{reduction: r}
	return runStream("loss", stdin, stdout, stderr, h)
}
