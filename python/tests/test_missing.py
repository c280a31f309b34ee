"""The scored update: multipliers from the counts actually scored, and the missing rate."""

from __future__ import annotations

import unittest

import numpy as np

import spiral


def ragged_batch(cfg: spiral.Config, problems: int, seed: int):
    """Planned sets, flat rewards of ragged sets, unscorable marks and counts."""
    rng = np.random.default_rng(seed)
    sets = np.array(cfg.plan(seed, 0, problems))
    counts = rng.integers(1, cfg.aggregations_per_set + 1, problems * cfg.sets)
    rewards = rng.integers(0, 2, counts.sum()).astype(np.float64)
    unscorable = rng.random(counts.sum()) < 0.3
    return sets, rewards, unscorable, counts


class ScoredUpdate(unittest.TestCase):
    def test_formula(self) -> None:
        # Every coefficient under loss "sum" is the advantage over
        # M(K') P(K' >= 2) (search) or K (S-1) P(S >= 2) (aggregation),
        # computed here from the credit's scored counts and the Configs'
        # own M, for ragged sets with unscorable outputs.
        delta = 0.25
        for baseline in ("within_set", "leave_one_out"):
            cfg = spiral.Config(search_traces=8, set_size=4, sets=4, aggregations_per_set=4, aggregation_baseline=baseline)
            k, n2 = cfg.sets, cfg.aggregations_per_set
            sets, rewards, un, counts = ragged_batch(cfg, 50, 3)
            cr = cfg.credit_batch(sets, rewards, reward_counts=counts, unscorable=un)
            lc = cfg.loss_coefficients(
                cr,
                search_lengths=np.ones(cr.search.size, np.int64),
                aggregation_lengths=np.ones(rewards.size, np.int64),
                reduction="sum",
                update="scored",
                missing_rate=delta,
                reward_counts=counts,
            )
            e = delta**n2
            p_sets = 1 - e ** (k - 1) * (e + k * (1 - e))
            p_set = 1 - delta ** (n2 - 1) * (delta + n2 * (1 - delta))
            o = 0
            for q in range(50):
                scored = cr.scored_outputs[q]
                kk = int((scored > 0).sum())
                ms = 0.0
                if kk >= 2:
                    sub = spiral.Config(search_traces=8, set_size=4, sets=kk, aggregations_per_set=4)
                    ms = 1 / (sub.constants().m_float * p_sets)
                np.testing.assert_allclose(lc.search[q], cr.search[q] * ms, rtol=1e-14, atol=0)
                for i in range(k):
                    s, m = int(scored[i]), int(counts[q * k + i])
                    a = s if baseline == "leave_one_out" else s - 1
                    ma = 1 / (k * a * p_set) if s >= 2 else 0.0
                    np.testing.assert_allclose(lc.aggregation[o : o + m], cr.aggregation[o : o + m] * ma, rtol=1e-14, atol=0)
                    o += m

    def test_without_missing_is_joint(self) -> None:
        cfg = spiral.Config(search_traces=8, set_size=4, sets=4, aggregations_per_set=4)
        rng = np.random.default_rng(5)
        rewards = rng.integers(0, 2, (20, 4, 4)).astype(np.float64)
        cr = cfg.credit_batch(cfg.plan(5, 0, 20), rewards)
        sl, al = rng.integers(1, 50, (20, 8)), rng.integers(1, 50, (20, 4, 4))
        joint = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al)
        scored = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, update="scored")
        np.testing.assert_allclose(scored.search, joint.search, rtol=1e-15)
        np.testing.assert_allclose(scored.aggregation, joint.aggregation, rtol=1e-15)

    def test_missing_rate_joint(self) -> None:
        # joint_gradient with a missing rate divides by the expected counts:
        # at N1 = 2, n = 1, K = 2, N2 = 3 and delta = 1/4, K E[(S-1)+] = 81/32.
        cfg = spiral.Config(search_traces=2, set_size=1, sets=2, aggregations_per_set=3)
        cr = cfg.credit_batch(np.array([[[0], [1]]]), np.array([[[1.0, 0, 1], [0, 0, 1]]]))
        ones = np.ones((1, 2), np.int64), np.ones((1, 2, 3), np.int64)
        lc = cfg.loss_coefficients(cr, search_lengths=ones[0], aggregation_lengths=ones[1], reduction="sum", missing_rate=0.25)
        np.testing.assert_allclose(lc.aggregation, cr.aggregation * 32 / 81, rtol=1e-15)

    def test_role_weights(self) -> None:
        # The expected-count weights (Go's RoleWeights with MissingRate).
        from fractions import Fraction

        small = spiral.Config(search_traces=2, set_size=1, sets=2, aggregations_per_set=3)
        self.assertEqual(small.role_weights(missing_rate=0.25).aggregation, Fraction(81, 32))
        loo = spiral.Config(search_traces=2, set_size=1, sets=2, aggregations_per_set=3, aggregation_baseline="leave_one_out")
        self.assertEqual(loo.role_weights(missing_rate=0.25).aggregation, Fraction(135, 32))
        paper = spiral.Config(search_traces=8, set_size=4, sets=4, aggregations_per_set=4)
        w = paper.role_weights(missing_rate=0.25)
        self.assertEqual((w.search, w.aggregation), (Fraction(5849633719125, 6618544603136), Fraction(513, 64)))
        self.assertEqual(paper.role_weights().aggregation, 12)
        with self.assertRaises(spiral.ConfigError):
            paper.role_weights(reduction="seq-mean-token-sum", missing_rate=0.25)

    def test_errors(self) -> None:
        cfg = spiral.Config(search_traces=8, set_size=4, sets=4, aggregations_per_set=4)
        sets, rewards, un, counts = ragged_batch(cfg, 3, 7)
        cr = cfg.credit_batch(sets, rewards, reward_counts=counts, unscorable=un)
        sl, al = np.ones(24, np.int64), np.ones(rewards.size, np.int64)
        with self.assertRaises(spiral.InputError) as e:
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, update="scored", missing_rate=1.0, reward_counts=counts)
        self.assertEqual(e.exception.field, "missing_rate")
        with self.assertRaises(spiral.ConfigError):
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, update="scored", missing_rate=float("nan"))
        with self.assertRaises(spiral.InputError) as e:  # ragged sets without their counts
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, update="scored")
        self.assertEqual(e.exception.field, "reward_counts")


if __name__ == "__main__":
    unittest.main()
