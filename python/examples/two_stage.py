#!/usr/bin/env python3
"""A complete SPIRAL step in the flat row layout of verl and TRL, with a toy policy.

One row per generated sequence, as a verl DataProto's non_tensor_batch or a
TRL batch holds them: the problem's key, the role (search or aggregation),
the set of an aggregation output, the trace index of a search trace or the
output index of an aggregation output, the response's length and, for
aggregation outputs, the reward. A step:

1. search: N1 traces per problem;
2. plan: K sets of n traces per problem, from (seed, step, problem key);
3. aggregation: one prompt per set, built from its traces; N2 outputs each;
4. rewards (some outputs unscorable, some generations dropped);
5. credit: the advantage of every row;
6. dynamic sampling: problems whose rewards give no signal are replaced by
   fresh problems (their own keys, hence their own plans; the others' plans
   do not move) until the batch is full or the rounds run out;
7. loss coefficients: per row and micro-batch, for verl's default actor
   (the legacy dp_actor, loss_agg_mode="token-mean", each micro-batch
   reduced over its own tokens), so that the trainer's own reduction gives
   the update chosen;
8. the update: here a REINFORCE step of the toy policy's two parameters.

The toy: a problem's answer is one of 10 digits. The search policy answers
right with probability sigmoid(theta_search), else a uniform wrong digit. The
aggregation policy reads its set's candidate answers and, with probability
sigmoid(theta_agg), answers their majority (ties broken uniformly), else one
of the candidates picked uniformly. A trace's length grows when it is wrong.

    python3 python/examples/two_stage.py [--steps 30] [--problems 64] [--seed 1]

prints, per step, the mean reward of the aggregation outputs, the problems
resampled and the two parameters: both grow (the aggregator learns to vote).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

import numpy as np

try:
    import spiral
except ImportError:  # not installed: the package of this clone, built in place (python/build.py)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import spiral

SEARCH, AGGREGATION = spiral.SEARCH, spiral.AGGREGATION
DIGITS = 10
MICRO_BATCHES = 4  # verl's gradient_accumulation = ppo_mini_batch_size / ppo_micro_batch_size_per_gpu


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass
class Policy:
    """The toy policy: two parameters, one per role."""

    theta_search: float = -1.0
    theta_agg: float = -1.0

    def search(self, truth: np.ndarray, n1: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Sample n1 answers per problem; return (answers (P, n1), d log pi / d theta_search)."""
        s = sigmoid(self.theta_search)
        right = rng.random((len(truth), n1)) < s
        wrong = (truth[:, None] + rng.integers(1, DIGITS, (len(truth), n1))) % DIGITS
        answers = np.where(right, truth[:, None], wrong)
        return answers, np.where(right, 1.0 - s, -s)

    def aggregate(self, candidates: np.ndarray, n2: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Answer each prompt (a row of candidates) n2 times; return (answers, d log pi / d theta_agg)."""
        s = sigmoid(self.theta_agg)
        m, n = candidates.shape
        counts = np.zeros((m, DIGITS))
        np.add.at(counts, (np.arange(m)[:, None], candidates), 1.0)
        top = counts == counts.max(axis=1, keepdims=True)
        p_vote = top / top.sum(axis=1, keepdims=True)  # the majority, ties uniform
        p_pick = counts / n  # a candidate picked uniformly
        p = s * p_vote + (1 - s) * p_pick  # (m, DIGITS)
        cum = np.cumsum(p, axis=1)
        u = rng.random((m, n2, 1))
        answers = np.minimum((u > cum[:, None, :]).sum(axis=2), DIGITS - 1)
        pv = np.take_along_axis(p_vote, answers, axis=1)
        pp = np.take_along_axis(p_pick, answers, axis=1)
        pa = np.take_along_axis(p, answers, axis=1)
        return answers, s * (1 - s) * (pv - pp) / pa


def generate(cfg: spiral.Config, policy: Policy, keys: np.ndarray, seed: int, step: int, rng: np.random.Generator) -> dict:
    """Run both stages for the problems named by keys and return their rows."""
    n1, k, n, n2 = cfg.search_traces, cfg.sets, cfg.set_size, cfg.aggregations_per_set
    p = len(keys)
    truth = (keys % DIGITS).astype(np.int64)  # the toy problem with key q has answer q mod 10

    # 1. Search: N1 traces per problem.
    answers, dsearch = policy.search(truth, n1, rng)
    search_len = np.where(answers == truth[:, None], rng.integers(40, 120, answers.shape), rng.integers(80, 400, answers.shape))

    # 2. Plan: the sets of every problem, from (seed, step, key).
    plans = cfg.plan(seed, step, keys)
    sets = plans.sets  # (P, K, n) trace indices

    # 3. Aggregation prompts: the answers of each set's traces, in the
    # set's presentation order (a real trainer puts the traces' texts in
    # the prompt); N2 outputs per prompt.
    prompts = np.take_along_axis(answers[:, None, :], sets, axis=2).reshape(p * k, n)
    out, dagg = policy.aggregate(prompts, n2, rng)
    agg_len = rng.integers(20, 120, out.shape)

    # 4. Rewards: 1 for the right digit. One output in 50 could not be
    # scored (a reward model's timeout: NaN, marked unscorable), and one
    # set in 20 lost its last generation (a dropped sequence).
    reward = (out == np.repeat(truth, k)[:, None]).astype(np.float64)
    unscorable = rng.random(out.shape) < 0.02
    reward[unscorable] = np.nan
    kept = np.ones(out.shape, bool)
    kept[rng.random(p * k) < 0.05, n2 - 1] = False

    # The flat rows: search rows first, then aggregation rows, as a rollout
    # would append them (any order works: the credit is gathered by index).
    q_s, y_s = np.divmod(np.arange(p * n1), n1)
    qi, j = np.nonzero(kept)
    q_a, i_a = np.divmod(qi, k)
    rows = {
        "key": np.concatenate([keys[q_s], keys[q_a]]),
        "role": np.concatenate([np.full(p * n1, SEARCH), np.full(len(qi), AGGREGATION)]).astype(np.int8),
        "set_id": np.concatenate([np.full(p * n1, -1), i_a]),
        "trace_index": np.concatenate([y_s, np.full(len(qi), -1)]),
        "output_index": np.concatenate([np.full(p * n1, -1), j]),
        "response_length": np.concatenate([search_len.reshape(-1), agg_len[qi, j]]),
        "reward": np.concatenate([np.full(p * n1, np.nan), reward[qi, j]]),
        "unscorable": np.concatenate([np.zeros(p * n1, bool), unscorable[qi, j]]),
        "dlogp": np.concatenate([dsearch.reshape(-1), dagg[qi, j]]),
    }
    return {"keys": keys, "sets": plans, "rows": rows}


def credit(cfg: spiral.Config, batch: dict) -> tuple[spiral.Credit, np.ndarray, spiral.Rows]:
    """Credit the batch from its rows; return (credit, advantage per row, the rows' layout)."""
    r = batch["rows"]
    index = np.where(r["role"] == SEARCH, r["trace_index"], r["output_index"])
    rows = spiral.Rows(cfg, batch["keys"], r["key"], r["role"], index, r["set_id"])
    cr = rows.credit(batch["sets"], r["reward"], lengths=r["response_length"], unscorable=r["unscorable"])
    return cr, rows.advantages(cr), rows


def step(cfg: spiral.Config, policy: Policy, seed: int, t: int, problems: int, rng: np.random.Generator, lr: float = 20.0) -> dict:
    """One training step: generate, credit, resample the problems with no signal, weight, update."""
    next_key = t * 1_000_000  # the data loader's problem keys for this step
    keys = np.arange(next_key, next_key + problems, dtype=np.uint64)
    next_key += problems
    batch = generate(cfg, policy, keys, seed, t, rng)
    cr, adv, lay = credit(cfg, batch)

    # Dynamic sampling: keep the problems with signal; draw fresh problems
    # for the others, a few rounds at most.
    resampled = 0
    for _ in range(3):
        skip = cr.skip
        if not skip.any():
            break
        keep = batch["keys"][~skip]
        fresh = np.arange(next_key, next_key + int(skip.sum()), dtype=np.uint64)
        next_key += len(fresh)
        resampled += len(fresh)
        extra = generate(cfg, policy, fresh, seed, t, rng)
        batch = merge(cfg, seed, t, batch, keep, extra)
        cr, adv, lay = credit(cfg, batch)
    rows = batch["rows"]
    # The rows of problems that still have no signal leave the batch: they
    # read no token in the loss.
    live = lay.keep(cr)
    lengths = rows["response_length"] * live

    # Loss coefficients for verl's default actor (the legacy dp_actor) with
    # loss_agg_mode="token-mean": it reduces each micro-batch over its own
    # tokens, so each micro-batch gets its own coefficients, all at the
    # whole batch's kappa, for SPIRAL's unbiased joint gradient.
    update = lay.update(cr, lengths=lengths)
    kappa = spiral.reduction_scale("token-mean", len(lengths), int((lengths > 0).sum()))
    bounds = micro_batches(len(lengths), MICRO_BATCHES)
    coef = np.zeros(len(lengths))
    g = np.zeros(len(lengths))
    for lo, hi in zip(bounds, bounds[1:]):
        coef[lo:hi], _ = spiral.part_coefficients(update[lo:hi], lengths[lo:hi], "token-mean", scale=kappa)
        # The trainer's loss of the micro-batch, token-mean times
        # loss_scale_factor = 1/gradient_accumulation: -sum_rows sum_tokens
        # coef * log pi(token) / T_micro / GA. On policy its gradient is
        # -kappa/GA times the update's part of these rows.
        g[lo:hi] = coef[lo:hi] / max(int(lengths[lo:hi].sum()), 1) / MICRO_BATCHES * rows["dlogp"][lo:hi]
    policy.theta_search += lr * g[lay.search].sum()
    policy.theta_agg += lr * g[lay.aggregation].sum()
    scored = lay.aggregation & ~rows["unscorable"]
    return {
        "reward": float(np.mean(rows["reward"][scored])),
        "resampled": resampled,
        "skipped": int(cr.skip.sum()),
        "credit": cr,
        "rows": rows,
        "live": live,
        "advantages": adv,
        "coefficients": coef,
        "bounds": bounds,
        "kappa": kappa,
        "batch": batch,
    }


def micro_batches(n: int, parts: int) -> list[int]:
    """The bounds of verl's micro-batches of the rows: ``parts`` of ceil(n / parts) rows, the last shorter."""
    size = -(-n // parts)
    return [*range(0, n, size), n]


def merge(cfg: spiral.Config, seed: int, step: int, batch: dict, keep: np.ndarray, extra: dict) -> dict:
    """The rows of the kept problems and of the fresh ones, the problems in key order."""
    rows = batch["rows"]
    mask = np.isin(rows["key"], keep)
    keys = np.sort(np.concatenate([keep, extra["keys"]]))
    merged = {name: np.concatenate([col[mask], extra["rows"][name]]) for name, col in rows.items()}
    # A problem's plan is a function of (seed, step, key) alone: planning the
    # merged keys gives the kept problems the plans their prompts were built
    # from, and the batch's Plans stay the library's own.
    return {"keys": keys, "sets": cfg.plan(seed, step, keys), "rows": merged}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(300))
    policy = Policy()
    rng = np.random.default_rng(args.seed)
    log = []
    for t in range(args.steps):
        r = step(cfg, policy, args.seed, t, args.problems, rng)
        log.append({"step": t, "reward": r["reward"], "resampled": r["resampled"], **vars(policy)})
        print(
            f"step {t:3d}  reward {r['reward']:.3f}  resampled {r['resampled']:3d}  "
            f"theta_search {policy.theta_search:+.3f}  theta_agg {policy.theta_agg:+.3f}"
        )
    return log


if __name__ == "__main__":
    main()
