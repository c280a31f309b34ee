"""NeMo-RL through its own code: the group presets against its estimators' vectors, the reductions through its loss (torch).

NeMo-RL's code is extracted verbatim at a pinned commit into
advantage/testdata/trainers/nemo-rl/extracted.py (vectors.py there writes
it and the vectors). The loss test runs NeMo-RL's ClippedPGLossFn as its
training loop does: the global batch over data-parallel ranks, each rank's
rows in micro-batches of unequal counts, every micro-batch divided by the
global valid tokens or sequences, its loss times dp_size backpropagated and
the ranks' gradients averaged. With spiral.part_coefficients per
micro-batch in place of the advantages, the gradient on every token must be
kappa times the update within 1e-12 relative.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import unittest

import numpy as np

import spiral

try:
    import torch
except ImportError:  # python3-torch is optional
    torch = None

NEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "advantage", "testdata", "trainers", "nemo-rl")
WIDTH = 10


def _others_differ(group: list[float], r: float) -> bool:
    others = list(group)
    others.remove(r)
    return any(x != others[0] for x in others)


class TestNeMoRLPresets(unittest.TestCase):
    """group_advantages with preset= against NeMo-RL's estimators (float64 cases)."""

    def test_vectors(self) -> None:
        for preset in ("nemo-rl-grpo", "nemo-rl-grpo-no-leave-one-out", "nemo-rl-reinforce-pp"):
            self.assertIn(preset, spiral.PRESETS)
            with gzip.open(os.path.join(NEMO, preset + ".json.gz")) as f:
                v = json.load(f)
            compared = 0
            for case in v["cases"][1::8]:
                if case["dtype"] != "float64":
                    continue
                masked = np.array([r is None for r in case["rewards"]])
                rewards = np.array([0.0 if r is None else r for r in case["rewards"]])
                ids = np.array(case["ids"], np.int64)
                lengths = np.array(case["lengths"], np.int64)
                adv, rep = spiral.group_advantages(rewards, ids, preset=preset, unscorable=masked, lengths=lengths)
                self.assertTrue(np.all(adv[masked] == 0))
                whiten = preset.endswith("reinforce-pp")
                if whiten and rep.singletons:
                    continue  # NeMo-RL whitens the lone row's 0 with the others
                groups: dict[int, list[float]] = {}
                for i in np.nonzero(~masked)[0]:
                    groups.setdefault(int(ids[i]), []).append(float(rewards[i]))
                for i, want in enumerate(case["want"]):
                    if masked[i] or not _others_differ(groups[int(ids[i])], float(rewards[i])) or (whiten and lengths[i] == 0):
                        continue
                    compared += 1
                    self.assertLessEqual(abs(adv[i] - want), (1e-9 + 2**-24) * max(1.0, abs(want)), (preset, case["ids"], i))
            self.assertGreater(compared, 300, preset)

    def test_options(self) -> None:
        opt = spiral.GroupOptions.preset("nemo-rl-grpo")
        self.assertEqual(opt, spiral.GroupOptions(scale="others", epsilon=1e-6, bessel=True, leave_one_out=True))
        rewards, ids = np.array([1.0, 0.0, 0.0, 0.5]), np.zeros(4, np.int64)
        a, _ = spiral.group_advantages(rewards, ids, opt)
        b, _ = spiral.group_advantages(rewards, ids, preset="nemo-rl-grpo")
        np.testing.assert_array_equal(a, b)
        # (1 - 1/6) / (sqrt(1/12) + 1e-6): the others' mean and Bessel standard deviation.
        self.assertAlmostEqual(a[0], (5 / 6) / (np.sqrt(1 / 12) + 1e-6), places=14)
        with self.assertRaises(spiral.ConfigError):
            spiral.group_advantages(rewards, ids, spiral.GroupOptions(scale="others", epsilon=1e-6))


def _load_nemo_rl() -> dict:
    spec = importlib.util.spec_from_file_location("nemo_rl_vectors", os.path.join(NEMO, "vectors.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.load()


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TestNeMoRLLoss(unittest.TestCase):
    """nemo-rl-token and nemo-rl-sequence through NeMo-RL's ClippedPGLossFn, over ranks and micro-batches of unequal counts."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.ns = _load_nemo_rl()

    def batch(self, rng: np.random.Generator) -> dict:
        ranks = [[3, 1, 4], [2, 5], [1, 1, 3]]  # micro-batch counts per rank
        n = sum(sum(r) for r in ranks)
        token_mask = np.zeros((n, WIDTH), np.int64)
        for i in range(n):
            start = int(rng.integers(1, WIDTH))
            token_mask[i, start : int(rng.integers(start, WIDTH + 1))] = 1
        token_mask[5] = 0  # a row of sample_mask 1 and no token
        sample_mask = np.ones(n, np.float32)
        sample_mask[[2, 9]] = 0
        update = rng.normal(0, 1, n)
        return {"ranks": ranks, "token_mask": token_mask, "sample_mask": sample_mask, "update": update}

    def coefficients(self, b: dict, reduction: str, global_counts: bool) -> tuple[np.ndarray, float]:
        """part_coefficients per micro-batch over the rows of sample_mask 1, at the global batch's kappa."""
        live = b["sample_mask"] == 1
        lengths = b["token_mask"][:, 1:].sum(1)
        seqs, toks = int(live.sum()), int(lengths[live].sum())
        kappa = spiral.reduction_scale(reduction, seqs, int((lengths[live] > 0).sum()))
        over = dict(over_sequences=[seqs], over_tokens=[toks]) if global_counts else {}
        coef = np.zeros(len(lengths))
        first = 0
        for counts in b["ranks"]:
            for c in counts:
                idx = np.arange(first, first + c)
                idx = idx[live[idx]]
                if len(idx):
                    coef[idx], rep = spiral.part_coefficients(b["update"][idx], lengths[idx], reduction, scale=kappa, **over)
                    self.assertEqual(rep.scale, kappa)
                first += c
        return coef, kappa

    def gradient(self, b: dict, coef: np.ndarray, token_level: bool) -> "torch.Tensor":
        """NeMo-RL's step: data.py's global counts, ClippedPGLossFn per micro-batch, loss * dp_size, FSDP's mean over ranks."""
        ns = self.ns
        fn = ns["ClippedPGLossFn"](ns["ClippedPGLossConfig"](token_level_loss=token_level))
        tm, sm = torch.from_numpy(b["token_mask"]), torch.from_numpy(b["sample_mask"])
        dp = len(b["ranks"])
        to_reduce, first = torch.zeros(2), 0
        for counts in b["ranks"]:
            sl = slice(first, first + sum(counts))
            first += sum(counts)
            to_reduce = to_reduce + torch.tensor([torch.sum(sm[sl]), torch.sum(tm[sl, 1:] * sm[sl].unsqueeze(-1))])
        gseqs, gtoks = to_reduce[0], to_reduce[1]
        theta = torch.zeros(len(coef), WIDTH - 1, dtype=torch.float64)
        grad = torch.zeros_like(theta)
        first = 0
        for counts in b["ranks"]:
            rank = torch.zeros_like(theta)
            for c in counts:
                mb = slice(first, first + c)
                first += c
                x = theta.clone().requires_grad_(True)
                cur = x[mb]
                full = torch.cat([torch.zeros(c, 1, dtype=torch.float64), cur.detach()], dim=1)
                data = {
                    "token_mask": tm[mb],
                    "sample_mask": sm[mb],
                    "advantages": torch.from_numpy(np.repeat(coef[mb, None], WIDTH, axis=1)),
                    "prev_logprobs": full,
                    "generation_logprobs": full,
                    "reference_policy_logprobs": full,
                }
                loss, _ = fn(cur, data, gseqs, gtoks)
                (loss * dp).backward()
                rank += x.grad
            grad += rank / dp
        return grad

    def test_reductions(self) -> None:
        rng = np.random.default_rng(37)
        for reduction, token_level in (("nemo-rl-token", True), ("nemo-rl-sequence", False)):
            self.assertIn(reduction, spiral.REDUCTIONS)
            for _ in range(3):
                b = self.batch(rng)
                mask = b["token_mask"][:, 1:] * b["sample_mask"][:, None]
                coef, kappa = self.coefficients(b, reduction, True)
                g = self.gradient(b, coef, token_level).numpy()
                want = kappa * b["update"][:, None] * mask
                err = np.abs(-g - want).max() / np.abs(want).max()
                self.assertLess(err, 1e-12, reduction)
                # The control: each micro-batch over its own counts is off.
                own, _ = self.coefficients(b, reduction, False)
                g = self.gradient(b, own, token_level).numpy()
                self.assertGreater(np.abs(-g - want).max() / np.abs(want).max(), 1e-3, reduction)


if __name__ == "__main__":
    unittest.main()
