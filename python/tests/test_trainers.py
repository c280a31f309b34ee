"""Micro-batch coefficients through the trainers' own loss code (torch): verl's legacy dp_actor and new engine, TRL's GRPOTrainer.

A SPIRAL step's rows (spiral.Rows) are split into micro-batches of unequal
counts; each micro-batch's coefficients (spiral.part_coefficients, one
kappa for the whole batch) go where the trainer's advantages go; the
trainer's extracted code (trainers/extracted.py) computes its loss per
micro-batch and calls backward. The accumulated gradient must equal kappa
times SPIRAL's update, token by token, within 1e-12 relative, times the
trainer's own constants (1/gradient_accumulation, 1/S).
"""

from __future__ import annotations

import os
import socket
import sys
import unittest

import numpy as np

import spiral

try:
    import torch
    import torch.distributed
except ImportError:  # python3-torch is optional
    torch = None

WIDTH = 12  # the padded response length (verl's response_mask.shape[-1], TRL's max_completion_length)


def spiral_step(seed: int, keys: np.ndarray, cfg: spiral.Config | None = None) -> dict:
    """A step's flat rows for the problems keys: lengths, rewards, credit, and each row's update u_o.

    Every row's data is a function of (seed, its key, role, index, set), so
    that a rank holding some of the problems sees the same rows as one
    process holding all of them.
    """
    cfg = cfg or spiral.Config.paper().replace(gates=spiral.Gates.shared(WIDTH * 6))
    n1, k, n2 = cfg.search_traces, cfg.sets, cfg.aggregations_per_set
    key, role, index, set_ = [], [], [], []
    for q in keys:
        for y in range(n1):
            key.append(q), role.append(spiral.SEARCH), index.append(y), set_.append(-1)
        for i in range(k):
            for j in range(n2):
                key.append(q), role.append(spiral.AGGREGATION), index.append(j), set_.append(i)
    key = np.array(key, np.uint64)
    role, index, set_ = np.array(role), np.array(index), np.array(set_)
    # Per-row randomness from (seed, key, role, set, index).
    u = np.array([np.random.default_rng([seed, int(a), int(b), int(c) + 1, int(d)]).random(3) for a, b, c, d in zip(key, role, set_, index)])
    lengths = (u[:, 0] * (WIDTH + 1)).astype(np.int64)
    lengths[u[:, 1] < 0.08] = 0  # truncated and masked (TRL mask_truncated_completions)
    easy = (keys % 5 == 0)[np.searchsorted(keys, key)] if len(keys) else np.zeros(0, bool)
    reward = np.where(easy, 1.0, (u[:, 2] < 0.5).astype(float))  # the easy problems give no signal: skipped
    rows = spiral.Rows(cfg, keys, key, role, index, set_)
    plans = cfg.plan(seed, 0, keys)
    credit = rows.credit(plans, reward, lengths=lengths)
    live = lengths * rows.keep(credit)  # the skipped problems' rows read no token
    update = rows.update(credit, lengths=live)
    return {
        "cfg": cfg, "rows": rows, "lengths": live, "update": update, "credit": credit, "key": key,
        "plans": plans, "reward": reward, "response_lengths": lengths,
    }


def mask_of(lengths: np.ndarray) -> "torch.Tensor":
    return torch.from_numpy((np.arange(WIDTH)[None, :] < lengths[:, None]).astype(np.int64))


def cuts_for(n: int, rng: np.random.Generator, parts: int) -> list[int]:
    """Cut points of micro-batches of unequal sizes."""
    while True:
        c = sorted(rng.choice(np.arange(1, n), parts - 1, replace=False).tolist())
        sizes = np.diff([0, *c, n])
        if len(set(sizes.tolist())) > 1:
            return c


def relative_error(grad: "torch.Tensor", want: np.ndarray) -> float:
    """max |-grad - want| / max |want|: the loss's descent direction -grad against the update."""
    w = torch.from_numpy(want)
    return float((-grad - w).abs().max() / w.abs().max())


def want_grad(update: np.ndarray, lengths: np.ndarray, factor: float) -> np.ndarray:
    """factor * u_o on each of row o's tokens, 0 on padding."""
    return factor * update[:, None] * (np.arange(WIDTH)[None, :] < lengths[:, None])


VERL_MODES = {
    "token-mean": "token-mean",
    "seq-mean-token-sum": "seq-mean-token-sum",
    "seq-mean-token-mean": "seq-mean-token-mean",
    "seq-mean-token-sum-norm": "seq-mean-token-sum-norm",
}
TRL_TYPES = {"grpo": "trl-grpo", "bnpo": "trl-bnpo", "dr_grpo": "trl-dr-grpo", "dapo": "trl-dapo"}


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def single_process_group() -> bool:
    """A gloo group of this process alone (the new engine all-reduces its token count); True if made here."""
    if torch.distributed.is_initialized():
        return False
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    return True


def counts(step: dict) -> tuple[int, int, int]:
    ln = step["lengths"]
    return len(ln), int((ln > 0).sum()), int(ln.sum())


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TestMicroBatches(unittest.TestCase):
    """Sums over micro-batches of unequal counts equal kappa x the update, through each trainer's loss code."""

    @classmethod
    def setUpClass(cls) -> None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from trainers import harness

        cls.h = harness
        cls.owns_group = single_process_group()
        cls.step = spiral_step(7, np.arange(100, 112, dtype=np.uint64))
        cls.rng = np.random.default_rng(11)
        cls.errors = {}

    @classmethod
    def tearDownClass(cls) -> None:
        if os.environ.get("SPIRAL_VERBOSE"):
            print("\n" + "\n".join(f"{case}: {err:.1e}" for case, err in sorted(cls.errors.items())))
        if cls.owns_group:
            torch.distributed.destroy_process_group()

    def assertSmall(self, err: float, case: str) -> None:
        self.errors[case] = err
        self.assertLess(err, 1e-12, case)

    def theta(self, n: int) -> "torch.Tensor":
        return torch.zeros(n, WIDTH, dtype=torch.float64, requires_grad=True)

    def parts(self, step: dict, reduction: str, bounds: list[int], scale_of=None, over: dict | None = None) -> np.ndarray:
        b, r, _ = counts(step)
        kappa = spiral.reduction_scale(reduction, b, r)
        coef = np.zeros(len(step["update"]))
        for lo, hi in zip(bounds, bounds[1:]):
            s = kappa if scale_of is None else scale_of(kappa, hi - lo)
            coef[lo:hi], rep = spiral.part_coefficients(step["update"][lo:hi], step["lengths"][lo:hi], reduction, scale=s, **(over or {}))
            self.assertEqual(rep.scale, s)
        return coef

    def test_verl_legacy(self) -> None:
        step = self.step
        n = len(step["update"])
        mask = mask_of(step["lengths"])
        b, r, _ = counts(step)
        for mode, reduction in VERL_MODES.items():
            kappa = spiral.reduction_scale(reduction, b, r)
            extra = 1 / WIDTH if mode == "seq-mean-token-sum-norm" else 1.0
            # Fixed micro-batches: ppo_micro_batch_size_per_gpu rows (unequal tokens, the last shorter).
            micro = 37
            bounds = list(range(0, n, micro)) + [n]
            ga = n // micro
            coef = self.parts(step, reduction, bounds)
            g = self.h.verl_legacy_grad(self.theta(n), torch.from_numpy(coef), mask, mode, micro, None)
            err = relative_error(g, want_grad(step["update"], step["lengths"], kappa * extra / ga))
            self.assertSmall(err, f"verl legacy {mode}, fixed micro-batches")
            # use_dynamic_bsz: unequal rows, loss_scale_factor = rows / ppo_mini_batch_size.
            cuts = cuts_for(n, self.rng, 4)
            coef = self.parts(step, reduction, [0, *cuts, n], scale_of=lambda k, rows: k * n / rows)
            g = self.h.verl_legacy_grad(self.theta(n), torch.from_numpy(coef), mask, mode, micro, cuts)
            err = relative_error(g, want_grad(step["update"], step["lengths"], kappa * extra))
            self.assertSmall(err, f"verl legacy {mode}, use_dynamic_bsz")
            if mode != "seq-mean-token-sum-norm":
                # The control: coefficients computed once for the mini-batch are off per micro-batch.
                whole, rep = step["rows"].coefficients(step["credit"], lengths=step["lengths"], reduction=reduction)
                g = self.h.verl_legacy_grad(self.theta(n), torch.from_numpy(whole), mask, mode, micro, None)
                self.assertGreater(relative_error(g, want_grad(step["update"], step["lengths"], rep.scale / ga)), 1e-3, mode)

    def test_verl_new_engine(self) -> None:
        step = self.step
        n = len(step["update"])
        mask = mask_of(step["lengths"])
        b, r, t = counts(step)
        for mode, reduction in VERL_MODES.items():
            kappa = spiral.reduction_scale(reduction, b, r)
            extra = 1 / WIDTH if mode == "seq-mean-token-sum-norm" else 1.0
            cuts = cuts_for(n, self.rng, 3)
            # global_batch_size: every row of the mini-batch, empty ones included.
            coef = self.parts(step, reduction, [0, *cuts, n], over=dict(over_sequences=[n], over_tokens=[t]))
            theta = self.theta(n)
            self.h.verl_engine_grad(theta, torch.arange(n), torch.from_numpy(coef), mask, mode, n, cuts)
            err = relative_error(theta.grad, want_grad(step["update"], step["lengths"], kappa * extra))
            self.assertSmall(err, f"verl new engine {mode}")
            if mode in ("seq-mean-token-sum", "seq-mean-token-mean"):
                # The control: dividing by the rows with tokens overstates kappa by B/R.
                whole, rep = step["rows"].coefficients(step["credit"], lengths=step["lengths"], reduction=reduction)
                theta = self.theta(n)
                self.h.verl_engine_grad(theta, torch.arange(n), torch.from_numpy(whole), mask, mode, n, cuts)
                self.assertGreater(relative_error(theta.grad, want_grad(step["update"], step["lengths"], rep.scale)), 1e-3, mode)

    def test_trl(self) -> None:
        step = self.step
        n = len(step["update"])
        mask = mask_of(step["lengths"])
        b, r, t = counts(step)
        for loss_type, reduction in TRL_TYPES.items():
            kappa = spiral.reduction_scale(reduction, b, r)
            cuts = cuts_for(n, self.rng, 4)
            ga = len(cuts) + 1
            over = dict(over_tokens=[t]) if loss_type == "dapo" else None
            factor = {"grpo": 1 / ga, "bnpo": 1 / ga, "dr_grpo": 1 / (ga * WIDTH), "dapo": 1.0}[loss_type]
            coef = self.parts(step, reduction, [0, *cuts, n], over=over)
            theta = self.theta(n)
            self.h.trl_grad(theta, torch.arange(n), torch.from_numpy(coef), mask, loss_type, cuts)
            err = relative_error(theta.grad, want_grad(step["update"], step["lengths"], kappa * factor))
            self.assertSmall(err, f"trl {loss_type}")
            if loss_type in ("grpo", "bnpo"):
                whole, rep = step["rows"].coefficients(step["credit"], lengths=step["lengths"], reduction=reduction)
                theta = self.theta(n)
                self.h.trl_grad(theta, torch.arange(n), torch.from_numpy(whole), mask, loss_type, cuts)
                self.assertGreater(relative_error(theta.grad, want_grad(step["update"], step["lengths"], rep.scale / ga)), 1e-3, loss_type)


if __name__ == "__main__":
    unittest.main()
