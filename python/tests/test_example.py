"""The two-stage example (examples/two_stage.py): its rows get the library's credit, and it trains."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import unittest

import numpy as np

import spiral

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "two_stage.py")
_spec = importlib.util.spec_from_file_location("two_stage", _path)
two_stage = importlib.util.module_from_spec(_spec)
sys.modules["two_stage"] = two_stage
_spec.loader.exec_module(two_stage)


class TwoStageTest(unittest.TestCase):
    cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(300))

    def test_rows_get_each_problems_credit(self) -> None:
        # Gather every problem's inputs from the rows by hand, credit it
        # alone, and compare with the advantage the example gives each row.
        rng = np.random.default_rng(5)
        keys = np.arange(100, 140, dtype=np.uint64)
        batch = two_stage.generate(self.cfg, two_stage.Policy(), keys, 1, 0, rng)
        rows = batch["rows"]
        self.assertTrue(rows["unscorable"].any())
        _, adv, _ = two_stage.credit(self.cfg, batch)
        for q, key in enumerate(keys):
            mine = rows["key"] == key
            s = mine & (rows["role"] == two_stage.SEARCH)
            a = mine & (rows["role"] == two_stage.AGGREGATION)
            lengths = np.zeros(8, np.int64)
            lengths[rows["trace_index"][s]] = rows["response_length"][s]
            rewards, counts, un, al, order = [], [], [], [], []
            for i in range(4):
                idx = np.nonzero(a & (rows["set_id"] == i))[0]
                idx = idx[np.argsort(rows["output_index"][idx])]
                counts.append(len(idx))
                rewards += list(rows["reward"][idx])
                un += list(rows["unscorable"][idx])
                al += list(rows["response_length"][idx])
                order += list(idx)
            one = self.cfg.credit_batch(
                batch["sets"][q], rewards, reward_counts=counts, unscorable=un, search_lengths=lengths, aggregation_lengths=al
            )
            np.testing.assert_array_equal(adv[np.nonzero(s)[0]], one.search[0][rows["trace_index"][s]])
            np.testing.assert_array_equal(adv[order], one.aggregation)
            self.assertTrue(np.all(adv[order][np.array(un, bool)] == 0))

    def test_rows_in_any_order(self) -> None:
        # The rows are gathered by their columns, not their order: shuffled
        # rows get the same advantages.
        rng = np.random.default_rng(6)
        keys = np.arange(40, 60, dtype=np.uint64)
        batch = two_stage.generate(self.cfg, two_stage.Policy(), keys, 1, 2, rng)
        _, adv, _ = two_stage.credit(self.cfg, batch)
        perm = rng.permutation(len(adv))
        shuffled = dict(batch, rows={name: col[perm] for name, col in batch["rows"].items()})
        _, adv2, _ = two_stage.credit(self.cfg, shuffled)
        np.testing.assert_array_equal(adv2, adv[perm])

    def test_step(self) -> None:
        rng = np.random.default_rng(2)
        # A good policy: many problems have every output right (no signal),
        # and some are still without signal after the rounds of resampling.
        r = two_stage.step(self.cfg, two_stage.Policy(2.5, 2.5), 1, 0, 48, rng)
        rows, cr, coef, live = r["rows"], r["credit"], r["coefficients"], r["live"]
        self.assertEqual(len(r["batch"]["keys"]), 48)
        self.assertGreater(r["resampled"], 0)
        # Rows of problems that still have no signal, and unscorable rows,
        # carry no coefficient.
        self.assertFalse(live.all())
        self.assertTrue(np.all(coef[~live] == 0))
        self.assertTrue(np.all(coef[rows["unscorable"]] == 0))
        # verl's legacy dp_actor with token-mean, transcribed: the loss of
        # micro-batch m is sum over its rows and their tokens of -coef *
        # logp(token) / T_m / GA. Its gradient weight on a row's sequence
        # log-probability is coef / T_m / GA, which must be kappa / GA times
        # SPIRAL's joint gradient's update: the advantage divided by M
        # (search) or K (N2 - 1) (aggregation), whatever the micro-batch.
        lengths = rows["response_length"] * live
        self.assertEqual(r["kappa"], 1 / int((lengths > 0).sum()))
        bounds = r["bounds"]
        self.assertGreater(len(set(int(lengths[lo:hi].sum()) for lo, hi in zip(bounds, bounds[1:]))), 1)
        weight = np.zeros(len(coef))
        for lo, hi in zip(bounds, bounds[1:]):
            weight[lo:hi] = coef[lo:hi] / int(lengths[lo:hi].sum())
        w = self.cfg.role_weights()
        mult = np.where(rows["role"] == two_stage.SEARCH, w.search_multiplier, w.aggregation_multiplier)
        np.testing.assert_allclose(weight, r["kappa"] * r["advantages"] * mult * live, rtol=1e-12, atol=1e-15)

    def test_merge_keeps_the_plans(self) -> None:
        # Dynamic sampling plans the merged keys again: the kept problems get
        # the plans their prompts were built from.
        rng = np.random.default_rng(3)
        keys = np.arange(10, 30, dtype=np.uint64)
        batch = two_stage.generate(self.cfg, two_stage.Policy(), keys, 1, 4, rng)
        extra = two_stage.generate(self.cfg, two_stage.Policy(), np.arange(90, 95, dtype=np.uint64), 1, 4, rng)
        keep = keys[::2]
        merged = two_stage.merge(self.cfg, 1, 4, batch, keep, extra)
        for key in keep:
            np.testing.assert_array_equal(merged["sets"].sets[merged["keys"] == key], batch["sets"].sets[keys == key])
        for key in extra["keys"]:
            np.testing.assert_array_equal(merged["sets"].sets[merged["keys"] == key], extra["sets"].sets[extra["keys"] == key])

    def test_trains(self) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            log = two_stage.main(["--steps", "20", "--problems", "32"])
        first = np.mean([x["reward"] for x in log[:5]])
        last = np.mean([x["reward"] for x in log[-5:]])
        self.assertGreater(last, first + 0.2)
        self.assertGreater(log[-1]["theta_agg"], log[0]["theta_agg"])


if __name__ == "__main__":
    unittest.main()
