package loss

// NeMoRLToken and NeMoRLSequence are NeMo-RL's ClippedPGLoss
// (nemo_rl/algorithms/loss/loss_functions.py, read
// at commit 7ea279abfbeb698b092856d0dab61e7cf39bc909), as [NeMoRLToken] and
// [NeMoRLSequence] reduce it. Its mask is token_mask * sample_mask, the
// token mask shifted by one (token_mask[:, 1:], the tokens whose
// log-probability the model predicts). Each data-parallel rank sums
// sample_mask (local_valid_seqs) and token_mask[:, 1:] * sample_mask
// (local_valid_toks) over its share of the global batch, all_reduce adds
// them over the ranks (nemo_rl/models/automodel/data.py:
// global_valid_seqs, global_valid_toks), and every micro-batch is reduced
// over those global counts:
//
//	token_level_loss=True   sum over the micro-batch's masked tokens of ell / global_valid_toks
//	token_level_loss=False  sum over its rows of sample_mask * (row's token sum / row's tokens) / global_valid_seqs
//
// Each micro-batch's loss times dp_size is backpropagated and FSDP
// averages the ranks' gradients (nemo_rl/models/automodel/train.py), so
// the step's gradient is the sum over every rank and micro-batch, whatever
// their counts: one reduction of the global batch. The 1e-8 NeMo-RL adds
// to each count (masked_mean) is float32 arithmetic on an integer and
// changes no count from 1 to 2^24.
//
// So the rows are the global batch's rows of sample_mask 1, on every rank
// (leave out the rows NeMo-RL masks: their coefficient is not read), with
// Lengths their token counts: [Coefficients] over all of them, or
// [PartCoefficients] per rank or micro-batch with Over the global counts
// (Tokens global_valid_toks, Sequences global_valid_seqs) and Scale
// [ScaleOf] of the global batch. A row of sample_mask 1 and no token
// counts in global_valid_seqs, as it counts in B here. With the default
// reference_policy_kl_penalty the KL term's gradient is 0 on policy (the
// reference log-probabilities equal the policy's), and the clipped ratio
// is 1 there.
const (
	NeMoRLToken Reduction = OpenRLHFSequence + 1 + iota
	NeMoRLSequence
)
