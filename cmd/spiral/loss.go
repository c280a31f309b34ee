package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"spiral/loss"
)

const lossHelp = `usage: spiral loss -reduction NAME < lines

loss writes, for one set of rows per input line (the rows a trainer's loss
reduces together: a mini-batch for verl's token-mean, a micro-batch for TRL's
grpo), the coefficient of every row that makes the trainer's reduction produce
the chosen update exactly, with loss.Coefficients: c_o = u_o scale / w_o, w_o
the weight the reduction gives each token of row o. The update u (one number
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
   "terms": [t, ...]}       optional: each row's loss term, 0 <= t < 8, when
                            the trainer reduces several terms separately (the
                            search rows and the aggregation rows, say)

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
	names:     []string{"update", "lengths", "terms"},
	required:  []bool{true, true, false},
	nonFinite: "an update must be a finite number",
}

// lossLine is one decoded loss input line.
type lossLine struct {
	Update  []float64 `json:"update"`
	Lengths []int     `json:"lengths"`
	Terms   []int     `json:"terms"`
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
	if cap(h.dst) < len(in.Update) || h.dst == nil { // never nil: an empty line answers []
		h.dst = make([]float64, len(in.Update))
	}
	h.dst = h.dst[:len(in.Update)]
	rep, err := loss.Coefficients(h.dst, loss.Rows{Update: in.Update, Lengths: in.Lengths, Terms: in.Terms}, h.reduction)
	if err != nil {
		if e, ok := errors.AsType[*loss.InputError](err); ok {
			field := strings.ToLower(e.Field)
			if e.Row < 0 {
				return nil, fmt.Errorf("len(%s) = %v, want len(update) = %d: one per row", field, e.Value, len(in.Update))
			}
			return nil, fmt.Errorf("%s[%d] = %v: %v", field, e.Row, e.Value, e.Err)
		}
		return nil, err
	}
	return h.out.encode(lossOutput{Coefficients: h.dst, Scale: rep.Scale, Outputs: rep.Outputs, Rows: rep.Rows, Tokens: rep.Tokens, Dropped: rep.Dropped}), nil
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
