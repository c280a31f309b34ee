#!/usr/bin/env python3
"""The numpy peer of one SPIRAL training step's bookkeeping.

It does the work of the Go step that ``BenchmarkStep`` times (the root
package's ``Planner.PlanTo`` and ``Config.CreditBatch`` at the paper's
configuration, N1 = 8 search traces, K = 4 sets of n = 4, N2 = 4
aggregation outputs per set, both length gates at target 4096), vectorised
with numpy the fastest way we know:

1. the input checks: every reward finite and at most ``MAX_ABS_REWARD`` in
   magnitude, every length >= 0; a problem that fails is rejected (zero
   credit) and the others are credited;
2. the plan: K distinct sets of the 70 subsets of size 4, drawn as 4
   uniform indices per problem with the problems holding a repeat redrawn
   (exactly uniform over ordered sequences of distinct sets);
3. NoSignal: a problem whose raw rewards give every advantage 0 (all its
   rewards equal) gets zero search and aggregation advantages;
4. the credit: set scores f_i, A_set = f_i - mean f, A_search(y) = the
   mean of A_set over the sets holding y (0 in none), A_agg = r_ij - f_i,
   and the appearances of each trace;
5. both length gates (Eq. 8, L == target gated): a positive advantage of
   an output at least ``TARGET`` tokens long is set to 0, with each gate's
   report (outputs, positive, at target, gated, mass removed).

Run ``bench/compare.sh`` to time it beside the Go step; run this file with
``--check`` to compare it with a plain-Python reference of the same step.
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import NamedTuple

import numpy as np

N1, SET_SIZE, K, N2 = 8, 4, 4, 4
TARGET = 4096
MAX_ABS_REWARD = 1e30

COMBOS = np.array(list(itertools.combinations(range(N1), SET_SIZE)), dtype=np.int64)  # (T, n)
T = len(COMBOS)
MEMBER = np.zeros((T, N1))
MEMBER[np.arange(T)[:, None], COMBOS] = 1.0  # (T, N1): 1 where the set holds the trace


class Inputs(NamedTuple):
    """One batch of B problems, as a trainer hands it over."""

    rewards: np.ndarray  # (B, K, N2) float64
    search_lengths: np.ndarray  # (B, N1) int64
    aggregation_lengths: np.ndarray  # (B, K, N2) int64


class Report(NamedTuple):
    """What one length gate did, added up over the batch."""

    outputs: int
    positive: int
    at_target: int
    gated: int
    mass_removed: float


class Credit(NamedTuple):
    sets: np.ndarray  # (B, K, n) trace indices
    set_scores: np.ndarray  # (B, K)
    set_advantages: np.ndarray  # (B, K)
    appearances: np.ndarray  # (B, N1)
    search: np.ndarray  # (B, N1)
    aggregation: np.ndarray  # (B, K, N2)
    rejected: np.ndarray  # (B,) bool
    no_signal: np.ndarray  # (B,) bool
    search_gate: Report
    aggregation_gate: Report


def make(problems: int, pool: int, seed: int = 1) -> list[Inputs]:
    """Return ``pool`` batches of random inputs: 0/1 rewards, lengths in [0, 5000)."""
    rng = np.random.default_rng(seed)
    return [
        Inputs(
            rng.integers(0, 2, size=(problems, K, N2)).astype(np.float64),
            rng.integers(0, 5000, size=(problems, N1)),
            rng.integers(0, 5000, size=(problems, K, N2)),
        )
        for _ in range(pool)
    ]


def plan(rng: np.random.Generator, problems: int) -> np.ndarray:
    """Draw K distinct set indices per problem: 4 uniform draws of 70, problems with a repeat redrawn.

    Returns a (K, problems) array: row i holds set i of every problem.
    """
    pick = rng.integers(0, T, size=(K, problems))
    while True:
        p0, p1, p2, p3 = pick
        bad = (p0 == p1) | (p0 == p2) | (p0 == p3) | (p1 == p2) | (p1 == p3) | (p2 == p3)
        nbad = np.count_nonzero(bad)
        if nbad == 0:
            return pick
        pick[:, bad] = rng.integers(0, T, size=(K, nbad))


def gate(adv: np.ndarray, lengths: np.ndarray) -> Report:
    """Zero, in place, the positive advantages of outputs at least TARGET long; report."""
    pos = adv > 0
    hit = pos & (lengths >= TARGET)
    gated = np.count_nonzero(hit)
    removed = 0.0
    if gated:
        removed = float(adv[hit].sum())
        adv[hit] = 0.0
    return Report(adv.size, np.count_nonzero(pos), np.count_nonzero(pos & (lengths == TARGET)), gated, removed)


def step(rng: np.random.Generator, x: Inputs) -> Credit:
    """Plan and credit one batch (see the module docstring)."""
    r = x.rewards
    B = r.shape[0]
    # |r| <= MAX_ABS_REWARD is false for NaN and infinities too.
    ok = (np.abs(r.reshape(B, K * N2)) <= MAX_ABS_REWARD).all(axis=1)
    ok &= (x.search_lengths >= 0).all(axis=1)
    ok &= (x.aggregation_lengths.reshape(B, K * N2) >= 0).all(axis=1)
    rejected = ~ok
    pick = plan(rng, B).T  # (B, K)
    mem = MEMBER[pick]  # (B, K, N1)
    if rejected.any():
        r = np.where(ok[:, None, None], r, 0.0)
    rf = r.reshape(B, K * N2)
    no_signal = (rf == rf[:, :1]).all(axis=1) & ok
    f = np.einsum("bkj->bk", r) * (1.0 / N2)  # set scores (B, K)
    aset = f - (np.einsum("bk->b", f) * (1.0 / K))[:, None]
    cnt = np.einsum("bkn->bn", mem)  # appearances (B, N1)
    search = np.einsum("bk,bkn->bn", aset, mem) / np.maximum(cnt, 1.0)
    agg = r - f[:, :, None]
    skip = rejected | no_signal
    if skip.any():
        search[skip] = 0.0
        agg[skip] = 0.0
    sg = gate(search, x.search_lengths)
    ag = gate(agg, x.aggregation_lengths)
    return Credit(COMBOS[pick], f, aset, cnt, search, agg, rejected, no_signal, sg, ag)


def reference(pick: np.ndarray, x: Inputs) -> tuple[np.ndarray, np.ndarray, Report, Report]:
    """The same credit for a given plan by plain Python loops, for --check."""
    B = x.rewards.shape[0]
    search = np.zeros((B, N1))
    agg = np.zeros((B, K, N2))
    reports = [[0, 0, 0, 0, 0.0], [0, 0, 0, 0, 0.0]]
    for q in range(B):
        r = x.rewards[q].tolist()
        ok = all(abs(v) <= MAX_ABS_REWARD for row in r for v in row)
        ok = ok and min(x.search_lengths[q]) >= 0 and x.aggregation_lengths[q].min() >= 0
        flat = [v for row in r for v in row]
        if ok and any(v != flat[0] for v in flat):
            f = [sum(row) / N2 for row in r]
            fbar = sum(f) / K
            for y in range(N1):
                holds = [f[i] - fbar for i in range(K) if y in COMBOS[pick[q, i]]]
                search[q, y] = sum(holds) / len(holds) if holds else 0.0
            for i in range(K):
                for j in range(N2):
                    agg[q, i, j] = r[i][j] - f[i]
        for rep, adv, lengths in ((reports[0], search[q], x.search_lengths[q]), (reports[1], agg[q].ravel(), x.aggregation_lengths[q].ravel())):
            for a_index in range(adv.size):
                a, length = adv[a_index], lengths[a_index]
                rep[0] += 1
                if a > 0:
                    rep[1] += 1
                    rep[2] += int(length == TARGET)
                    if length >= TARGET:
                        rep[3] += 1
                        rep[4] += a
                        adv[a_index] = 0.0
    return search, agg, Report(*reports[0]), Report(*reports[1])


def check() -> None:
    """Compare step with the loop reference on random batches, with rejected and silent problems."""
    for seed in range(5):
        x = make(64, 1, seed)[0]
        x.rewards[3] = 1.0  # no signal
        x.rewards[5, 1, 2] = np.nan  # rejected
        x.search_lengths[7, 0] = -1  # rejected
        x.search_lengths[8, :] = TARGET  # at target
        rng = np.random.default_rng(seed)
        got = step(rng, x)
        pick = np.array([[int(np.flatnonzero((COMBOS == s).all(axis=1))[0]) for s in row] for row in got.sets])
        assert (np.sort(pick, axis=1)[:, 1:] != np.sort(pick, axis=1)[:, :-1]).all(), "repeated set"
        search, agg, sr, ar = reference(pick, x)
        np.testing.assert_allclose(got.search, search, atol=1e-15)
        np.testing.assert_allclose(got.aggregation, agg, atol=1e-15)
        assert got.search_gate[:4] == sr[:4] and got.aggregation_gate[:4] == ar[:4], (got.search_gate, sr, got.aggregation_gate, ar)
        assert abs(got.search_gate.mass_removed - sr.mass_removed) < 1e-12
        assert got.no_signal[3] and got.rejected[5] and got.rejected[7]
    # The plan is uniform: each of the 70 sets in each position 1/70 of the time.
    rng = np.random.default_rng(7)
    counts = np.bincount(plan(rng, 70 * 2000).ravel(), minlength=T)
    pairs = plan(rng, 70 * 69 * 40)
    pair_counts = np.bincount(pairs[0] * T + pairs[1], minlength=T * T)
    pair_counts = pair_counts[np.arange(T * T) // T != np.arange(T * T) % T]
    pe = 70 * 69 * 40 / (T * (T - 1))
    pchi2 = float(((pair_counts - pe) ** 2 / pe).sum())
    assert abs(pchi2 - (T * (T - 1) - 1)) < 5 * (2 * (T * (T - 1) - 1)) ** 0.5, pchi2
    expect = 70 * 2000 * K / T
    chi2 = float(((counts - expect) ** 2 / expect).sum())
    assert abs(chi2 - (T - 1)) < 5 * (2 * (T - 1)) ** 0.5, chi2
    print("ok")


def main(argv: list[str]) -> None:
    """peer.py B R POOL: print, one line per step, the step's thread CPU and wall time in ns."""
    if argv[1:2] == ["--check"]:
        check()
        return
    problems, repeats, pool = int(argv[1]), int(argv[2]), int(argv[3])
    inputs = make(problems, pool)
    rng = np.random.default_rng(2)
    for x in inputs:
        step(rng, x)
    out = []
    for i in range(repeats):
        x = inputs[i % pool]
        c, w = time.thread_time_ns(), time.perf_counter_ns()
        step(rng, x)
        out.append(f"{time.thread_time_ns() - c} {time.perf_counter_ns() - w}")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv)
