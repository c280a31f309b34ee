package loss

import "math/big"

// This file transcribes each trainer's loss reduction, line by line, into
// exact arithmetic on a padded (B, Lmax) loss matrix and its 0/1 mask, as
// the trainers hold them. Tensor dtypes matter in one place: the
// per-sequence token means add 1e-8 to an integer token count in float32
// (torch's default dtype), modelled by f32add. Sources (read at):
//   verl verl/trainer/ppo/core_algos.py agg_loss, verl/utils/torch_functional.py
//     masked_sum (commit b178a3cd56f58b2d502255daba591e92833930a7);
//   TRL trl/trainer/grpo_trainer.py _compute_loss, trl/trainer/rloo_trainer.py
//     _compute_loss (commit f2cd57710ae345ea6428ae95363267fcf38a3dc8);
//   OpenRLHF openrlhf/models/loss.py aggregate_loss, openrlhf/models/utils.py
//     masked_mean (commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7).

type mat [][]*big.Rat

func rat(x int64) *big.Rat { return big.NewRat(x, 1) }

// f32add returns float32(float32(n) + float32(eps)) exactly: an integer
// tensor plus a Python float, in torch's default dtype.
func f32add(n *big.Rat, eps float64) *big.Rat {
	f, _ := n.Float32()
	return new(big.Rat).SetFloat64(float64(f + float32(eps)))
}

// rowSum is x.sum(-1) for one row.
func rowSum(x []*big.Rat) *big.Rat {
	s := new(big.Rat)
	for _, v := range x {
		s.Add(s, v)
	}
	return s
}

// mul is x * y elementwise.
func mul(x, y mat) mat {
	out := make(mat, len(x))
	for i := range x {
		out[i] = make([]*big.Rat, len(x[i]))
		for j := range x[i] {
			out[i][j] = new(big.Rat).Mul(x[i][j], y[i][j])
		}
	}
	return out
}

// sumAll is x.sum().
func sumAll(x mat) *big.Rat {
	s := new(big.Rat)
	for _, row := range x {
		s.Add(s, rowSum(row))
	}
	return s
}

// sumRows is x.sum(dim=-1).
func sumRows(x mat) []*big.Rat {
	out := make([]*big.Rat, len(x))
	for i, row := range x {
		out[i] = rowSum(row)
	}
	return out
}

func quo(x, y *big.Rat) *big.Rat { return new(big.Rat).Quo(x, y) }

func maxRat(x, y *big.Rat) *big.Rat {
	if x.Cmp(y) >= 0 {
		return x
	}
	return y
}

// verlAggLoss is verl's agg_loss with dp_size = 1 and its defaults
// (batch_num_tokens, global_batch_size and loss_scale_factor None):
//
//	token-mean:              masked_sum(loss_mat, loss_mask) / loss_mask.sum() * dp_size
//	seq-mean-token-sum:      seq_losses = sum(loss_mat * loss_mask, -1); seq_mask = (sum(loss_mask, -1) > 0)
//	                         masked_sum(seq_losses, seq_mask) / seq_mask.sum() * dp_size
//	seq-mean-token-mean:     seq_mask = sum(loss_mask, -1); seq_losses = sum(loss_mat * loss_mask, -1) / (seq_mask + 1e-8)
//	                         seq_mask = (seq_mask > 0); masked_sum(seq_losses, seq_mask) / seq_mask.sum() * dp_size
//	seq-mean-token-sum-norm: seq_losses = sum(loss_mat * loss_mask, -1); sum(seq_losses) / loss_mask.shape[-1]
//
// masked_sum(v, m) is (where(m, v, 0) * m).sum().
func verlAggLoss(lossMat, lossMask mat, mode string) *big.Rat {
	maskedSum := func(values, mask []*big.Rat) *big.Rat {
		s := new(big.Rat)
		for i, v := range values {
			if mask[i].Sign() != 0 {
				s.Add(s, new(big.Rat).Mul(v, mask[i]))
			}
		}
		return s
	}
	flat := func(x mat) []*big.Rat {
		var out []*big.Rat
		for _, row := range x {
			out = append(out, row...)
		}
		return out
	}
	dpSize := rat(1)
	switch mode {
	case "token-mean":
		batchNumTokens := sumAll(lossMask)
		return new(big.Rat).Mul(quo(maskedSum(flat(lossMat), flat(lossMask)), batchNumTokens), dpSize)
	case "seq-mean-token-sum":
		seqLosses := sumRows(mul(lossMat, lossMask))
		seqMask := make([]*big.Rat, len(lossMask))
		globalBatchSize := new(big.Rat)
		for i, s := range sumRows(lossMask) {
			seqMask[i] = rat(0)
			if s.Sign() > 0 {
				seqMask[i] = rat(1)
			}
			globalBatchSize.Add(globalBatchSize, seqMask[i])
		}
		return new(big.Rat).Mul(quo(maskedSum(seqLosses, seqMask), globalBatchSize), dpSize)
	case "seq-mean-token-mean":
		counts := sumRows(lossMask)
		seqLosses := sumRows(mul(lossMat, lossMask))
		seqMask := make([]*big.Rat, len(lossMask))
		globalBatchSize := new(big.Rat)
		for i := range seqLosses {
			seqLosses[i] = quo(seqLosses[i], f32add(counts[i], 1e-8))
			seqMask[i] = rat(0)
			if counts[i].Sign() > 0 {
				seqMask[i] = rat(1)
			}
			globalBatchSize.Add(globalBatchSize, seqMask[i])
		}
		return new(big.Rat).Mul(quo(maskedSum(seqLosses, seqMask), globalBatchSize), dpSize)
	case "seq-mean-token-sum-norm":
		seqLosses := sumRows(mul(lossMat, lossMask))
		lossScaleFactor := rat(int64(len(lossMask[0])))
		return quo(rowSum(seqLosses), lossScaleFactor)
	}
	panic("verl: unknown loss_agg_mode " + mode)
}

// trlLoss is the reduction of TRL GRPOTrainer._compute_loss (one process,
// no gradient accumulation, the last step's division by
// current_gradient_accumulation_steps being 1):
//
//	grpo:    ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
//	bnpo:    (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
//	dr_grpo: (per_token_loss * mask).sum() / (per_token_loss.size(0) * self.max_completion_length)
//	dapo:    normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / num_processes
//	         (per_token_loss * mask).sum() / normalizer
//
// with num_items_in_batch the batch's mask.sum() (one process), and of
// RLOOTrainer._compute_loss: logps = (per_token_logps * completion_mask).sum(1),
// per_sequence_loss from logps, loss = per_sequence_loss.mean(), whose
// dependence on the per-token terms is (x * mask).sum(1).mean().
func trlLoss(perTokenLoss, mask mat, lossType string, maxCompletionLength int64) *big.Rat {
	one := rat(1)
	switch lossType {
	case "grpo":
		num := sumRows(mul(perTokenLoss, mask))
		den := sumRows(mask)
		mean := new(big.Rat)
		for i := range num {
			mean.Add(mean, quo(num[i], maxRat(den[i], one)))
		}
		return quo(mean, rat(int64(len(num))))
	case "bnpo":
		return quo(sumAll(mul(perTokenLoss, mask)), maxRat(sumAll(mask), one))
	case "dr_grpo":
		return quo(sumAll(mul(perTokenLoss, mask)), rat(int64(len(perTokenLoss))*maxCompletionLength))
	case "dapo":
		numProcesses := rat(1)
		normalizer := quo(maxRat(sumAll(mask), one), numProcesses)
		return quo(sumAll(mul(perTokenLoss, mask)), normalizer)
	case "rloo":
		logps := sumRows(mul(perTokenLoss, mask))
		return quo(rowSum(logps), rat(int64(len(logps))))
	}
	panic("trl: unknown loss_type " + lossType)
}

// openrlhfAggregateLoss is OpenRLHF's aggregate_loss without the global
// totals (batch_num_tokens, global_batch_size None):
//
//	token_level_loss=True:  masked_mean(loss, loss_mask, dim=None) = (loss * mask).sum() / mask.sum()
//	token_level_loss=False: token_counts = loss_mask.sum(dim=-1)
//	                        seq_loss = (loss * loss_mask).sum(dim=-1) / (token_counts + 1e-8)
//	                        seq_mask = (token_counts > 0); masked_mean(seq_loss, seq_mask, dim=None)
func openrlhfAggregateLoss(lossMat, lossMask mat, tokenLevel bool) *big.Rat {
	if tokenLevel {
		return quo(sumAll(mul(lossMat, lossMask)), sumAll(lossMask))
	}
	counts := sumRows(lossMask)
	seqLoss := sumRows(mul(lossMat, lossMask))
	num, den := new(big.Rat), new(big.Rat)
	for i := range seqLoss {
		seqLoss[i] = quo(seqLoss[i], f32add(counts[i], 1e-8))
		if counts[i].Sign() > 0 {
			num.Add(num, seqLoss[i])
			den.Add(den, rat(1))
		}
	}
	return quo(num, den)
}

// trainerLoss reduces a loss matrix with the trainer's reduction that r
// names; maxLen is S (verl's loss_mask.shape[-1], TRL's
// max_completion_length).
func trainerLoss(r Reduction, lossMat, mask mat, maxLen int64) *big.Rat {
	switch r {
	case Sum:
		return sumAll(mul(lossMat, mask))
	case TokenMean, SeqMeanTokenSum, SeqMeanTokenMean, SeqMeanTokenSumNorm:
		return verlAggLoss(lossMat, mask, r.String())
	case TRLGRPO:
		return trlLoss(lossMat, mask, "grpo", maxLen)
	case TRLBNPO:
		return trlLoss(lossMat, mask, "bnpo", maxLen)
	case TRLDrGRPO:
		return trlLoss(lossMat, mask, "dr_grpo", maxLen)
	case TRLDAPO:
		return trlLoss(lossMat, mask, "dapo", maxLen)
	case TRLRLOO:
		return trlLoss(lossMat, mask, "rloo", maxLen)
	case OpenRLHFToken:
		return openrlhfAggregateLoss(lossMat, mask, true)
	case OpenRLHFSequence:
		return openrlhfAggregateLoss(lossMat, mask, false)
	case NeMoRLToken, NeMoRLSequence:
		return nemoRLLoss(lossMat, mask, r == NeMoRLToken)
	}
	panic("unknown reduction")
}
