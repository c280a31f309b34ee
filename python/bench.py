#!/usr/bin/env python3
"""Time one training step through the Python package beside the repository's numpy peer.

    /usr/bin/python3 python/bench.py [rounds] [block]

In one Python process, interleaved in blocks of ``block`` steps (default 20;
1 alternates step by step, so that each side starts from the caches the
other left), for a batch of 256 problems
and for one problem at the paper's 8/4/4/4: the package's step (``Config.plan``
then ``Config.credit_batch`` with both length gates at 4096 tokens, numpy
arrays in and out, the Credit of the last step reused with ``out=``) and
bench/peer.py's ``step`` (the numpy peer doing the
same work: input checks, plan, NoSignal, credit, both gates with their
reports). Each step reads the next input of a pool of 4096 problems in all
(0/1 rewards, lengths in [0, 5000)), the same pool for both. It prints the
median CPU time of the calling thread (time.thread_time_ns, which other work
on a shared machine does not inflate) and the median wall-clock time, and the
ratio numpy / package: the package's time for one problem is its call
overhead (the Go step itself takes well under a microsecond).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spiral  # noqa: E402

_spec = importlib.util.spec_from_file_location("peer", os.path.join(HERE, "..", "bench", "peer.py"))
peer = importlib.util.module_from_spec(_spec)
sys.modules["peer"] = peer
_spec.loader.exec_module(peer)


def measure(problems: int, steps: int, pool: int, block: int) -> dict[str, float]:
    cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(peer.TARGET))
    inputs = peer.make(problems, pool)
    rng = np.random.default_rng(2)

    out = None

    def ours(i: int, x: peer.Inputs) -> spiral.Credit:
        nonlocal out
        sets = cfg.plan(1, i, problems)
        out = cfg.credit_batch(
            sets, x.rewards, search_lengths=x.search_lengths, aggregation_lengths=x.aggregation_lengths, out=out
        )
        return out

    def theirs(i: int, x: peer.Inputs) -> peer.Credit:
        return peer.step(rng, x)

    for i, x in enumerate(inputs):  # warm up
        ours(i, x)
        theirs(i, x)
    t = {name: [] for name in ("cpu ours", "wall ours", "cpu numpy", "wall numpy")}
    for start in range(0, steps, block):
        for name, f in (("ours", ours), ("numpy", theirs)):
            for i in range(start, min(start + block, steps)):
                x = inputs[i % pool]
                c, w = time.thread_time_ns(), time.perf_counter_ns()
                f(i, x)
                t["cpu " + name].append(time.thread_time_ns() - c)
                t["wall " + name].append(time.perf_counter_ns() - w)
    return {k: float(np.median(v)) for k, v in t.items()}


def main(argv: list[str]) -> None:
    rounds = int(argv[1]) if len(argv) > 1 else 5
    block = int(argv[2]) if len(argv) > 2 else 20
    res: dict[int, list[dict[str, float]]] = {256: [], 1: []}
    for r in range(rounds):
        for b in (256, 1):
            res[b].append(measure(b, 200 if b == 256 else 4000, 16 if b == 256 else 4096, block))
        print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    for b, runs in res.items():
        for kind in ("cpu", "wall"):
            ours = float(np.median([m[kind + " ours"] for m in runs]))
            theirs = float(np.median([m[kind + " numpy"] for m in runs]))
            print(f"problems={b:<4d} {kind:4s} package {ours / 1e3:9.1f} us  numpy {theirs / 1e3:9.1f} us  numpy/package {theirs / ours:5.1f}x")


if __name__ == "__main__":
    main(sys.argv)
