"""Data-parallel SPIRAL with torch.distributed (gloo on 127.0.0.1), as the trainers run it.

2 and 4 processes; each rank plans and credits only its own problems (by
key), computes its rows' coefficients with the kappa the whole batch needs
(the counts all-reduced, as verl's new engine all-reduces batch_num_tokens
and TRL's dapo gathers num_items_in_batch), runs the trainer's extracted
loss code on its micro-batches and averages the gradients across ranks, as
DDP and FSDP do. The averaged gradient must equal the single-process
update, kappa times SPIRAL's update of every problem, within 1e-12
relative (times the trainer's constants: 1/(accumulation steps x ranks)
for the trainers that reduce each micro-batch on its own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spiral  # noqa: E402
from test_trainers import WIDTH, free_port, mask_of, relative_error, spiral_step, want_grad  # noqa: E402

try:
    import torch
    import torch.distributed as dist
except ImportError:  # python3-torch is optional
    torch = None

SEED = 5
KEYS = np.arange(1000, 1016, dtype=np.uint64)  # the batch's problems: rank r holds every world-th


def worker(rank: int, world: int, port: int, out: str) -> None:
    """One rank: its problems, its rows' coefficients, the trainers' losses, the averaged gradients."""
    from trainers import harness

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        mine = KEYS[rank::world]
        step = spiral_step(SEED, mine)  # planned and credited here, from this rank's keys alone
        ln, u = step["lengths"], step["update"]
        per_problem = len(ln) // len(mine)
        # Each row's position in the whole batch (problems in key order), to compare with one process.
        where = np.searchsorted(KEYS, step["key"])
        rows = torch.from_numpy(where * per_problem + np.tile(np.arange(per_problem), len(mine)))
        total_rows = len(KEYS) * per_problem
        # The whole batch's counts: B and R all-reduced; T as the trainers gather it.
        bt = torch.tensor([len(ln), int((ln > 0).sum())], dtype=torch.int64)
        dist.all_reduce(bt)
        b_all, r_all = int(bt[0]), int(bt[1])
        mask = mask_of(ln)
        t_all = int(harness._Accelerator().gather(mask.sum()).sum())  # TRL's num_items_in_batch
        n = len(ln)
        cuts = [n // 5, n // 2]  # unequal micro-batches
        bounds = [0, *cuts, n]
        got = {}
        for case, reduction, over in [
            ("verl-engine token-mean", "token-mean", dict(over_tokens=[t_all])),
            ("verl-engine seq-mean-token-sum", "seq-mean-token-sum", dict(over_sequences=[b_all])),
            ("verl-engine seq-mean-token-mean", "seq-mean-token-mean", dict(over_sequences=[b_all])),
            ("trl dapo", "trl-dapo", dict(over_tokens=[t_all])),
            ("trl grpo", "trl-grpo", {}),
            ("verl-legacy token-mean", "token-mean", {}),
            # The control: this rank's own counts instead of the whole batch's.
            ("control: trl dapo, local counts", "trl-dapo", dict(over_tokens=[int(ln.sum())])),
        ]:
            kappa = spiral.reduction_scale(reduction, b_all, r_all)
            if case.startswith("control"):
                kappa = spiral.reduction_scale(reduction, n, int((ln > 0).sum()))
            coef = np.zeros(n)
            for lo, hi in zip(bounds, bounds[1:]):
                coef[lo:hi], _ = spiral.part_coefficients(u[lo:hi], ln[lo:hi], reduction, scale=kappa, **over)
            theta = torch.zeros(total_rows, WIDTH, dtype=torch.float64, requires_grad=True)
            c = torch.from_numpy(coef)
            if case.startswith("verl-engine"):
                harness.verl_engine_grad(theta, rows, c, mask, reduction, b_all, cuts)
                factor = 1.0
            elif "trl" in case:
                loss_type = "dapo" if "dapo" in case else "grpo"
                harness.trl_grad(theta, rows, c, mask, loss_type, cuts)
                factor = 1.0 if loss_type == "dapo" else 1 / (len(bounds) - 1) / world
            else:  # legacy dp_actor, use_dynamic_bsz: loss_scale_factor = rows / ppo_mini_batch_size
                coef = np.zeros(n)
                for lo, hi in zip(bounds, bounds[1:]):
                    coef[lo:hi], _ = spiral.part_coefficients(u[lo:hi], ln[lo:hi], reduction, scale=kappa * n / (hi - lo))
                local = torch.zeros(n, WIDTH, dtype=torch.float64, requires_grad=True)
                g = harness.verl_legacy_grad(local, torch.from_numpy(coef), mask, reduction, n, cuts)
                with torch.no_grad():
                    theta.grad = torch.zeros_like(theta)
                    theta.grad[rows] = g
                factor = 1 / world
            grad = theta.grad.clone()
            dist.all_reduce(grad)
            grad /= world  # DDP's and FSDP's average over ranks
            got[case] = (grad, reduction, kappa, factor)
        if rank == 0:
            # One process, every problem.
            whole = spiral_step(SEED, KEYS)
            errors = {}
            ln_w = whole["lengths"]
            for case, (grad, reduction, kappa, factor) in got.items():
                single = spiral.reduction_scale(reduction, len(ln_w), int((ln_w > 0).sum()))
                if not case.startswith("control"):
                    assert single == kappa, (case, single, kappa)  # the ranks' kappa is the single process's
                errors[case] = relative_error(grad, want_grad(whole["update"], ln_w, single * factor))
            with open(out, "w") as f:
                json.dump({"errors": errors, "rows": b_all, "tokens": t_all, "spiral": spiral.__file__}, f)
    finally:
        dist.destroy_process_group()


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TestDataParallel(unittest.TestCase):
    def run_world(self, world: int) -> dict:
        port = free_port()
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "result.json")
            # The workers import the spiral this process imported (installed,
            # or the source tree's on PYTHONPATH), not whatever their own
            # sys.path finds first.
            where = os.path.dirname(os.path.dirname(os.path.abspath(spiral.__file__)))
            env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(filter(None, (where, os.environ.get("PYTHONPATH")))))
            procs = [
                subprocess.Popen([sys.executable, __file__, "--worker", str(r), str(world), str(port), out], env=env, stderr=subprocess.PIPE, text=True)
                for r in range(world)
            ]
            errs = []
            for p in procs:
                try:
                    _, err = p.communicate(timeout=180)
                except subprocess.TimeoutExpired:
                    for q in procs:
                        q.kill()
                    self.fail(f"{world} processes did not finish in 180 s")
                errs.append(err)
            for p, err in zip(procs, errs):
                self.assertEqual(p.returncode, 0, err[-3000:])
            with open(out) as f:
                return json.load(f)

    def check(self, world: int) -> None:
        res = self.run_world(world)
        self.assertEqual(res["spiral"], spiral.__file__)  # the package under test, in every process
        self.assertEqual(len(res["errors"]), 7)
        for case, err in res["errors"].items():
            if case.startswith("control"):
                self.assertGreater(err, 1e-3, f"{world} ranks, {case}")
            else:
                self.assertLess(err, 1e-12, f"{world} ranks, {case}")
        if os.environ.get("SPIRAL_VERBOSE"):
            print(f"\n{world} ranks, {res['rows']} rows, {res['tokens']} tokens: " + ", ".join(f"{c} {e:.1e}" for c, e in res["errors"].items()))

    def test_two_ranks(self) -> None:
        self.check(2)

    def test_four_ranks(self) -> None:
        self.check(4)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        unittest.main()
