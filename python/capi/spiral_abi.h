/*
 * spiral_abi.h: the types of spiral's C ABI (libspiral.so, built from the Go
 * module spiral/python with go build -buildmode=c-shared; the functions are
 * declared in the header go build writes beside the library).
 *
 * Conventions, for every function:
 *
 *   - Arrays cross as spiral_array: a pointer to the caller's memory, a
 *     length in elements and an element type. The library reads inputs and
 *     writes outputs in place during the call and keeps no pointer to them
 *     after it returns. It never hands the caller a pointer to its own memory.
 *   - A function returns 0 on success and otherwise an error handle: read it
 *     with spiral_error_summary, spiral_error_get and spiral_error_text, then
 *     give it back with spiral_release. An error never leaves an output half
 *     written, except a SPIRAL_ERR_BATCH error of spiral_credit_batch, whose
 *     outputs hold the credit of every good problem (the bad ones rejected).
 *   - Handles (configurations, errors) are integers, valid until released;
 *     any number of threads may call any function at the same time, with the
 *     same configuration handle, as long as their output arrays differ.
 */
#ifndef SPIRAL_ABI_H
#define SPIRAL_ABI_H

#include <stdint.h>

/* A handle to a value the library keeps (a configuration, an error); 0 is
 * none. */
typedef uintptr_t spiral_handle;

/* Element types of a spiral_array. */
enum {
	SPIRAL_ABSENT = 0, /* an optional array left out (data NULL, len 0) */
	SPIRAL_F32 = 1,
	SPIRAL_F64 = 2,
	SPIRAL_I32 = 3,
	SPIRAL_I64 = 4,
	SPIRAL_BOOL = 5 /* one byte per element, 0 or 1 */
};

/* An array in the caller's memory: contiguous elements of type dtype. */
typedef struct {
	void *data;
	int64_t len;
	int64_t dtype;
} spiral_array;

/* The input of spiral_credit_batch, in the layout of the Go type
 * spiral.Batch: P problems of N1 search traces, K sets of n candidates and
 * N2 outputs per set (or reward_counts[q*K+i] outputs for set i of problem
 * q). Indices and lengths are I32 or I64, rewards F32 or F64. */
typedef struct {
	spiral_array sets;                /* P*K*n trace indices in [0, N1) */
	spiral_array rewards;             /* one per aggregation output, set after set */
	spiral_array reward_counts;       /* P*K counts in [1, N2], or ABSENT */
	spiral_array unscorable;          /* BOOL, parallel to rewards, or ABSENT */
	spiral_array search_lengths;      /* P*N1 lengths in tokens, or ABSENT */
	spiral_array aggregation_lengths; /* parallel to rewards, or ABSENT */
} spiral_credit_in;

/* The outputs of spiral_credit_batch; any may be ABSENT (not written).
 * Floating outputs are F32 or F64, counts I32 or I64, flags BOOL. */
typedef struct {
	spiral_array search;         /* P*N1: A_search of each search trace */
	spiral_array aggregation;    /* parallel to rewards: A_agg of each output */
	spiral_array set_scores;     /* P*K: f_i */
	spiral_array set_advantages; /* P*K: A_set = f_i - fbar */
	spiral_array appearances;    /* P*N1: |G(y)| */
	spiral_array scored_outputs; /* P*K: the scored outputs of each set */
	spiral_array no_signal;      /* P */
	spiral_array out_of_range;   /* P */
	spiral_array rejected;       /* P */
} spiral_credit_out;

/* What one length gate did (lengthgate.Report). */
typedef struct {
	int64_t outputs, positive, at_target, gated;
	double mass_removed;
} spiral_gate_report;

/* What the gates and the overlong punishment did to a batch. */
typedef struct {
	spiral_gate_report search, aggregation;
	int64_t overlong_outputs, overlong_penalized, overlong_overlong;
	double overlong_total;
} spiral_credit_report;

/* The input of spiral_loss_coefficients: a batch's credit, in the layout of
 * spiral_credit_out, and the lengths in tokens the trainer's loss reads. */
typedef struct {
	spiral_array search;              /* P*N1 search advantages, F32 or F64 */
	spiral_array aggregation;         /* the aggregation advantages */
	spiral_array search_lengths;      /* P*N1, I32 or I64 */
	spiral_array aggregation_lengths; /* parallel to aggregation */
	spiral_array reward_counts;       /* P*K outputs of each set in [1, N2], I32 or I64, or ABSENT (N2 each) */
	spiral_array scored_outputs;      /* P*K scored outputs of each set (spiral_credit_out's), I32 or I64,
	                                   * or ABSENT (every output scored); the scored update reads them */
	double missing_rate;              /* delta in [0, 1): the stated probability that each aggregation output
	                                   * is missing, independently of its content (LossOptions.MissingRate) */
} spiral_loss_in;

/* What loss.Coefficients reports: the effective learning-rate scale kappa
 * and the counts of outputs, outputs with a token, tokens, and outputs
 * dropped (no token, nonzero update). */
typedef struct {
	double scale;
	int64_t outputs, rows, tokens, dropped;
} spiral_loss_report;

/* What advantage.GroupRelative reports: the counts of its lists. */
/* The outputs of one part of a batch (a micro-batch, a rank's share) for
 * spiral_part_coefficients (loss.PartCoefficients). */
typedef struct {
	spiral_array update;         /* u_o, F32 or F64 */
	spiral_array lengths;        /* L_o in tokens, I32 or I64, parallel to update */
	spiral_array terms;          /* the loss term of each output, I32 or I64, or ABSENT (one term) */
	spiral_array over_sequences; /* I64, one per term: the divisors beyond the part, or ABSENT (its own counts) */
	spiral_array over_tokens;    /* I64, parallel to over_sequences (ABSENT with it) */
} spiral_part_in;

typedef struct {
	int64_t groups, singletons, zero_variance, unscored, unscorable;
} spiral_group_report;

/* Kinds of error (spiral_error_summary) and of error item. */
enum {
	SPIRAL_ERR_OTHER = 0,  /* a message only */
	SPIRAL_ERR_INPUT = 1,  /* bad input data: field, problem, set, output, value */
	SPIRAL_ERR_BATCH = 2,  /* bad problems of a batch, one item each; the rest credited */
	SPIRAL_ERR_ARG = 3,    /* a bad argument of an evaluation function (eval.ArgError) */
	SPIRAL_ERR_CONFIG = 4, /* an invalid configuration or option */
	SPIRAL_ERR_USAGE = 5   /* a misuse of the ABI: a bad handle, element type or output length */
};

/* Why an entry is bad. */
enum {
	SPIRAL_REASON_NONE = 0,
	SPIRAL_REASON_NOT_FINITE = 1,      /* a reward is NaN or infinite */
	SPIRAL_REASON_TOO_LARGE = 2,       /* |reward| > 1e30 */
	SPIRAL_REASON_SET = 3,             /* a bad set: see set_reason */
	SPIRAL_REASON_NEGATIVE_LENGTH = 4, /* a length < 0 */
	SPIRAL_REASON_TOO_COSTLY = 5       /* valid, but beyond the function's cost bound */
};

/* One item of an error. Indices are -1 where they do not apply. */
typedef struct {
	int64_t kind;    /* SPIRAL_ERR_* */
	int64_t problem; /* the problem within the batch */
	int64_t set;     /* the set within the problem */
	int64_t output;  /* the position within the set (or within the argument) */
	double value;    /* the bad value, or 0 */
	int64_t reason;  /* SPIRAL_REASON_* */
	/* combin.SetError, when reason is SPIRAL_REASON_SET: its Reason (1 empty,
	 * 2 length, 3 out of range, 4 repeated, 5 duplicate) and Other (the
	 * earlier member or set, the set's start, or -1); set, output and value
	 * give the set, the member and the trace index or size. */
	int64_t set_reason, set_other;
} spiral_error_item;

/* Texts of spiral_error_text. */
enum {
	SPIRAL_TEXT_MESSAGE = 0, /* the error's message, as Go's Error() */
	SPIRAL_TEXT_FIELD = 1,   /* the field or argument at fault */
	SPIRAL_TEXT_FUNC = 2     /* the evaluation function that refused its arguments */
};

#endif
