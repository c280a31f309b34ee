"""The verl and TRL snippets of python/README.md, run against the trainers' own loss code (torch).

Each snippet is read from the README and executed; its coefficients go
through the extracted trainer code (trainers/extracted.py): verl's legacy
dp_actor on each rank's micro-batches and the new engine's ppo_loss; TRL's
shuffle, split into steps_per_generation micro-batches and _compute_loss.
The gradient must be kappa times SPIRAL's update within 1e-12 relative
(times the trainers' constants).
"""

from __future__ import annotations

import os
import re
import sys
import types
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_trainers import WIDTH, mask_of, relative_error, single_process_group, spiral_step, want_grad  # noqa: E402

try:
    import torch
    import torch.distributed
except ImportError:  # python3-torch is optional
    torch = None

README = os.path.join(HERE, "..", "README.md")


def snippet(name: str) -> str:
    """The python code block after <!-- snippet: name --> in the README."""
    with open(README) as f:
        text = f.read()
    m = re.search(rf"<!-- snippet: {name} -->\s*```python\n(.*?)```", text, re.S)
    if m is None:
        raise AssertionError(f"README.md has no snippet {name!r}")
    return m.group(1)


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TestReadmeSnippets(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        from trainers import extracted, harness

        cls.h, cls.x = harness, extracted
        cls.step = spiral_step(3, np.arange(200, 212, dtype=np.uint64))
        cls.owns_group = single_process_group()

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.owns_group:
            torch.distributed.destroy_process_group()

    def test_verl(self) -> None:
        ns: dict = {}
        exec(snippet("verl"), ns)
        st = self.step
        raw = st["response_lengths"]
        n = len(raw)
        mask = mask_of(raw)
        for legacy in ("auto", "disable"):
            for mode in ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"):
                dp, micro = (2, 40) if legacy == "auto" else (1, 0)
                config = types.SimpleNamespace(
                    actor_rollout_ref=types.SimpleNamespace(actor=types.SimpleNamespace(loss_agg_mode=mode, ppo_micro_batch_size_per_gpu=micro)),
                    trainer=types.SimpleNamespace(use_legacy_worker_impl=legacy, n_gpus_per_node=dp, nnodes=1),
                )
                batch = types.SimpleNamespace(batch={"response_mask": mask})
                kappa = ns["spiral_advantages"](batch, st["rows"], st["plans"], st["reward"], None, config)
                adv = batch.batch["advantages"].to(torch.float64)
                theta = torch.zeros(n, WIDTH, dtype=torch.float64, requires_grad=True)
                extra = 1 / WIDTH if mode == "seq-mean-token-sum-norm" else 1.0
                if legacy == "auto":
                    # Each rank's chunk (DataProto.chunk), its micro-batches of 40 rows (the last shorter);
                    # FSDP averages the ranks' gradients.
                    share = n // dp
                    grad = torch.zeros_like(theta)
                    for first in range(0, n, share):
                        r = torch.arange(first, first + share)
                        grad += self.h.verl_legacy_grad(theta, adv[r], mask[r], mode, micro, None, rows=r)
                    grad /= dp
                    factor = 1 / (share // micro) / dp  # loss_scale_factor = 1/gradient_accumulation
                else:
                    self.h.verl_engine_grad(theta, torch.arange(n), adv, mask, mode, n, [n // 3, n // 2])
                    grad, factor = theta.grad, 1.0
                err = relative_error(grad, want_grad(st["update"], raw, kappa * factor * extra))
                self.assertLess(err, 1e-12, f"{legacy} {mode}")
                if os.environ.get("SPIRAL_VERBOSE"):
                    print(f"\nverl snippet, use_legacy_worker_impl={legacy}, {mode}: {err:.1e}")

    def test_trl(self) -> None:
        st = self.step
        raw = st["response_lengths"]
        n = len(raw)
        h, x = self.h, self.x

        class GRPOTrainer(h.TRLTrainer):
            """The stand-in base: TRL's _compute_loss (extracted) and a generation batch of the step's rows."""

            def _generate_and_score_completions(self, inputs: dict) -> dict:
                mask = mask_of(raw)
                return {
                    "prompt_ids": torch.zeros(n, 0, dtype=torch.int64),
                    "prompt_mask": torch.zeros(n, 0, dtype=torch.int64),
                    "completion_ids": torch.arange(n).unsqueeze(1).expand(n, WIDTH),
                    "completion_mask": mask,
                    "advantages": torch.zeros(n, dtype=torch.float64),
                    "num_items_in_batch": self.accelerator.gather(mask.sum()).sum(),
                }

        sys.modules["trl"] = types.SimpleNamespace(GRPOTrainer=GRPOTrainer)
        try:
            ns: dict = {}
            exec(snippet("trl"), ns)
        finally:
            del sys.modules["trl"]

        class Trainer(ns["SpiralGRPOTrainer"]):
            def spiral_rows(self, inputs: dict, out: dict) -> tuple:
                return st["rows"], st["plans"], st["reward"], None

        torch.manual_seed(0)
        for loss_type in ("dapo", "grpo", "bnpo", "dr_grpo"):
            steps = 4  # steps_per_generation = gradient_accumulation_steps
            theta = torch.zeros(n, WIDTH, dtype=torch.float64, requires_grad=True)
            trainer = Trainer(theta, loss_type, steps, WIDTH)
            batch = x.shuffle_sequence_dict(trainer._generate_and_score_completions({}))
            for part in x.split_tensor_dict(batch, steps):
                trainer._compute_loss(None, part).backward()
            factor = {"dapo": 1.0, "grpo": 1 / steps, "bnpo": 1 / steps, "dr_grpo": 1 / (steps * WIDTH)}[loss_type]
            err = relative_error(theta.grad, want_grad(st["update"], raw, trainer.spiral_kappa * factor))
            self.assertLess(err, 1e-12, loss_type)
            if os.environ.get("SPIRAL_VERBOSE"):
                print(f"\nTRL snippet, loss_type={loss_type}: {err:.1e}")


if __name__ == "__main__":
    unittest.main()
