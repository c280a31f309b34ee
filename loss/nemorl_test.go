package loss

import (
	"math"
	"math/big"
	"testing"

	"spiral/internal/spiraltest"
)

// TestNeMoRLGradient reads testdata/nemo-rl-loss.json.gz: NeMo-RL's own
// ClippedPGLossFn (extracted at a pinned commit by
// advantage/testdata/trainers/nemo-rl/vectors.py) run on per-token
// log-probabilities for 300 global batches per reduction, split over one
// to three data-parallel ranks and each rank's rows into micro-batches of
// unequal counts, with the trainer's global_valid_seqs and
// global_valid_toks, the loss times dp_size backpropagated and the ranks'
// gradients averaged; per row, the advantage it was given and autograd's
// gradient on each of its tokens (one value; 0 on masked tokens). The
// gradient is linear in the advantages, so NeMo-RL's weight of row o is
// w_o = -grad_o/advantage_o. With the coefficients of [Coefficients] over
// the rows of sample_mask 1, and of [PartCoefficients] per micro-batch
// over the global counts, -w_o c_o must equal kappa u_o within 1e-12
// relative, for random updates u; a row of sample_mask 0 gets no gradient.
// The control: coefficients of each micro-batch over its own counts are
// off.
func TestNeMoRLGradient(t *testing.T) {
	var v struct {
		Commit     string
		Reductions map[string][]struct {
			Ranks      [][]int   `json:"ranks"`
			Lengths    []int     `json:"lengths"`
			SampleMask []int     `json:"sample_mask"`
			Advantages []float64 `json:"advantages"`
			Gradient   []float64 `json:"gradient"`
		}
	}
	spiraltest.ReadJSONGz(t, "testdata/nemo-rl-loss.json.gz", &v)
	if len(v.Reductions) != 2 {
		t.Fatalf("%d reductions in the vectors", len(v.Reductions))
	}
	for name, cases := range v.Reductions {
		var r Reduction
		if err := r.UnmarshalText([]byte(name)); err != nil {
			t.Fatal(err)
		}
		worst, controlWorst := 0.0, 0.0
		for n, c := range cases {
			// The rows of sample_mask 1, in order, and NeMo-RL's weights.
			var rows []int
			var w []float64
			var seqs, toks int64
			for o, m := range c.SampleMask {
				if m == 0 {
					if c.Gradient[o] != 0 {
						t.Fatalf("%s case %d: row %d of sample_mask 0 has gradient %v", name, n, o, c.Gradient[o])
					}
					continue
				}
				rows = append(rows, o)
				w = append(w, -c.Gradient[o]/c.Advantages[o])
				seqs++
				toks += int64(c.Lengths[o])
			}
			in := Rows{Update: make([]float64, len(rows)), Lengths: make([]int, len(rows))}
			for k, o := range rows {
				in.Update[k] = math.Sin(float64(7*n + 3*o + 1)) // an update of mixed signs
				in.Lengths[k] = c.Lengths[o]
			}
			check := func(coef []float64, kappa float64) float64 {
				e := 0.0
				for k := range rows {
					if in.Lengths[k] == 0 {
						continue // no token carries the row's update
					}
					got, want := w[k]*coef[k], kappa*in.Update[k]
					e = max(e, math.Abs(got-want)/math.Abs(want))
				}
				return e
			}
			whole := make([]float64, len(rows))
			rep, err := Coefficients(whole, in, r)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rows == 0 {
				continue
			}
			e := check(whole, rep.Scale)
			// Per micro-batch, over the global counts, at the global kappa.
			kappa := ScaleOf(r, seqs, int64(rep.Rows))
			part := make([]float64, len(rows))
			own := make([]float64, len(rows))
			first, k0 := 0, 0
			for _, counts := range c.Ranks {
				for _, cnt := range counts {
					k1 := k0
					for k1 < len(rows) && rows[k1] < first+cnt {
						k1++
					}
					sub := Rows{Update: in.Update[k0:k1], Lengths: in.Lengths[k0:k1]}
					if _, err := PartCoefficients(part[k0:k1], sub, r, Part{Scale: kappa, Over: []Divisors{{Sequences: seqs, Tokens: toks}}}); err != nil {
						t.Fatalf("%s case %d: %v", name, n, err)
					}
					if _, err := PartCoefficients(own[k0:k1], sub, r, Part{Scale: kappa}); err != nil {
						t.Fatalf("%s case %d: %v", name, n, err)
					}
					first += cnt
					k0 = k1
				}
			}
			e = max(e, check(part, kappa))
			if e > 1e-12 {
				t.Fatalf("%s case %d: NeMo-RL's gradient is off kappa x the update by %.2g (relative)", name, n, e)
			}
			worst = max(worst, e)
			controlWorst = max(controlWorst, check(own, kappa))
		}
		if controlWorst < 1e-3 {
			t.Errorf("%s: the micro-batches' own counts give NeMo-RL's gradient too (%.2g): the test cannot tell", name, controlWorst)
		}
		t.Logf("%s (NeMo-RL %.8s): %d global batches; largest relative error %.2g (micro-batches over their own counts: %.2g)", name, v.Commit, len(cases), worst, controlWorst)
	}
}

// nemoRLLoss is NeMo-RL's ClippedPGLossFn reduction of one global batch on
// one rank in one micro-batch, every row of sample_mask 1
// (nemo_rl/algorithms/utils.py masked_mean, whose 1e-8 is added to a
// float32 count):
//
//	token_level_loss=True:  (loss * mask).sum() / (global_valid_toks + 1e-8)
//	token_level_loss=False: seq = (loss * mask).sum(-1) / (mask.sum(-1) + 1e-8)
//	                        seq.sum() / (global_valid_seqs + 1e-8)
func nemoRLLoss(lossMat, mask mat, tokenLevel bool) *big.Rat {
	if tokenLevel {
		return quo(sumAll(mul(lossMat, mask)), f32add(sumAll(mask), 1e-8))
	}
	counts := sumRows(mask)
	seqLoss := sumRows(mul(lossMat, mask))
	num := new(big.Rat)
	for i := range seqLoss {
		num.Add(num, quo(seqLoss[i], f32add(counts[i], 1e-8)))
	}
	return quo(num, f32add(rat(int64(len(seqLoss))), 1e-8))
}
