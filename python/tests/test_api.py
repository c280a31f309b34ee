"""The package's API: configuration, constants, credit options, dtypes, errors, threads, torch."""

from __future__ import annotations

import ctypes
import threading
import unittest
from fractions import Fraction

import numpy as np

import spiral
from spiral import _native

PAPER_M = Fraction(1365, 1541)


def batch(cfg: spiral.Config, problems: int, seed: int = 1, step: int = 0):
    """A planned batch with random 0/1 rewards and random lengths."""
    rng = np.random.default_rng(seed)
    sets = np.array(cfg.plan(seed, step, problems))  # a writable copy: credited with the check
    rewards = rng.integers(0, 2, (problems, cfg.sets, cfg.aggregations_per_set)).astype(np.float64)
    sl = rng.integers(0, 200, (problems, cfg.search_traces))
    al = rng.integers(0, 200, rewards.shape)
    return sets, rewards, sl, al


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes, dtypes and bits."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def assert_same_credit(t: unittest.TestCase, a: spiral.Credit, b: spiral.Credit) -> None:
    for name in ("search", "aggregation", "set_scores", "set_advantages", "appearances", "scored_outputs", "no_signal", "out_of_range", "rejected"):
        t.assertTrue(same(getattr(a, name), getattr(b, name)), name)
    t.assertEqual((a.search_gate, a.aggregation_gate, a.overlong), (b.search_gate, b.aggregation_gate, b.overlong))


class ConfigTest(unittest.TestCase):
    def test_paper(self) -> None:
        cfg = spiral.Config.paper()
        self.assertEqual(cfg, spiral.Config(8, 4, 4, 4))
        self.assertEqual((cfg.plan_size, cfg.aggregation_outputs, cfg.generations), (16, 16, 24))
        k = cfg.constants()
        self.assertEqual((k.miss_prob, k.cover_prob, k.m), (Fraction(88, 1541), Fraction(1453, 1541), PAPER_M))
        self.assertEqual(k.m_float, float(PAPER_M))
        self.assertEqual(cfg.replace(design="balanced").m(), 1)
        self.assertEqual(cfg.replace(ordered=True).m(), Fraction(821660, 938561))

    def test_role_weights(self) -> None:
        cfg = spiral.Config.paper()
        want = {
            ("within_set", "sum", False): (PAPER_M, Fraction(12)),
            ("within_set", "seq-mean-token-sum", True): (PAPER_M / 8, Fraction(3, 4)),
            ("within_set", "seq-mean-token-sum", False): (PAPER_M / 24, Fraction(12, 24)),
            ("leave_one_out", "sum", False): (PAPER_M, Fraction(16)),
        }
        for (b, r, split), (s, a) in want.items():
            with self.subTest(baseline=b, reduction=r, split_roles=split):
                w = cfg.replace(aggregation_baseline=b).role_weights(r, split)
                self.assertEqual((w.search, w.aggregation), (s, a))
                self.assertEqual((w.search_float, w.aggregation_float), (float(s), float(a)))
                self.assertEqual(w.search_multiplier, 1 / float(s))
        with self.assertRaises(spiral.ConfigError):
            cfg.replace(aggregation_baseline="mean")
        with self.assertRaises(spiral.ConfigError):
            cfg.role_weights("mean")
        with self.assertRaises(spiral.ConfigError):  # weights outputs by their lengths: loss_coefficients
            cfg.role_weights("token-mean")
        with self.assertRaises(spiral.ConfigError):
            spiral.Config(aggregations_per_set=1, aggregation_baseline="leave_one_out")

    def test_invalid(self) -> None:
        for bad, word in (
            (dict(set_size=9), "set_size"),
            (dict(sets=71), "sets"),
            (dict(search_traces=0), "search_traces"),
            (dict(order="sorted"), "order"),
            (dict(design="random"), "design"),
            (dict(gates=spiral.Gates.shared(-1)), "arget"),
            (dict(overlong=spiral.SoftOverlong(100, 10, 0.0)), "actor"),
            (dict(reward_range=spiral.RewardRange(1.0, 0.0)), "ow"),
            (dict(ordered=True, design="balanced"), "alanced"),
        ):
            with self.subTest(**{k: str(v) for k, v in bad.items()}):
                with self.assertRaises(spiral.ConfigError) as cm:
                    spiral.Config(**bad)
                self.assertIn(word, str(cm.exception))
        with self.assertRaises(spiral.ConfigError) as cm:
            spiral.Config(set_size=9)
        self.assertEqual((cm.exception.field, cm.exception.value), ("set_size", 9.0))
        with self.assertRaises(TypeError):
            spiral.Config(sets=4.5)
        # A gate's boundary is named by its path, the reason lengthgate's.
        with self.assertRaises(spiral.ConfigError) as cm:
            spiral.Config(gates=spiral.Gates(aggregation=spiral.Gate(100, "nope")))
        self.assertEqual(cm.exception.field, "gates.aggregation.boundary")
        self.assertEqual(str(cm.exception), 'spiral: gates.aggregation.boundary: "nope" is not one of "gate", "keep"')


class CreditTest(unittest.TestCase):
    def test_worked_example(self) -> None:
        # docs/method.md#worked-example
        cfg = spiral.Config.paper()
        sets = [[0, 1, 2, 3], [4, 5, 6, 7], [0, 2, 4, 6], [1, 3, 5, 7]]
        rewards = [[1, 1, 1, 0], [0.5] * 4, [0, 0.5, 0.5, 0], [1, 0, 1, 0]]
        cr = cfg.credit_batch([sets], np.array([rewards]))  # sets from outside: checked
        self.assertEqual(cr.set_scores.tolist(), [[0.75, 0.5, 0.25, 0.5]])
        self.assertEqual(cr.set_advantages.tolist(), [[0.25, 0, -0.25, 0]])
        self.assertEqual(cr.aggregation[0, 0].tolist(), [0.25, 0.25, 0.25, -0.75])
        self.assertEqual(cr.search.tolist(), [[0, 0.125, 0, 0.125, -0.125, 0, -0.125, 0]])
        self.assertEqual(cr.aggregation.shape, (1, 4, 4))
        self.assertFalse(cr.skip[0])

    def test_dtypes(self) -> None:
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
        sets, rewards, sl, al = batch(cfg, 64)
        rewards = rewards * np.random.default_rng(2).random(rewards.shape)
        ref = cfg.credit_batch(sets, rewards, search_lengths=sl, aggregation_lengths=al)
        # int32 indices and lengths: the same bits.
        got = cfg.credit_batch(sets.astype(np.int32), rewards, search_lengths=sl.astype(np.int32), aggregation_lengths=al.astype(np.int32))
        assert_same_credit(self, ref, got)
        # Non-contiguous inputs are copied: the same bits.
        wide = np.zeros(rewards.shape + (2,))
        wide[..., 0] = rewards
        self.assertFalse(wide[..., 0].flags.c_contiguous)
        got = cfg.credit_batch(sets, wide[..., 0], search_lengths=sl, aggregation_lengths=al)
        assert_same_credit(self, ref, got)
        # Sequences.
        got = cfg.credit_batch(sets.tolist(), rewards.tolist(), search_lengths=sl.tolist(), aggregation_lengths=al.tolist())
        assert_same_credit(self, ref, got)
        # float32 rewards: float32 results, those of the float64 rewards
        # they hold, rounded once.
        r32 = rewards.astype(np.float32)
        ref64 = cfg.credit_batch(sets, r32.astype(np.float64), search_lengths=sl, aggregation_lengths=al)
        got = cfg.credit_batch(sets, r32, search_lengths=sl, aggregation_lengths=al)
        for name in ("search", "aggregation", "set_scores", "set_advantages"):
            self.assertEqual(getattr(got, name).dtype, np.float32)
            self.assertTrue(same(getattr(got, name), getattr(ref64, name).astype(np.float32)), name)
        self.assertEqual(got.search_gate, ref64.search_gate)

    def test_zero_copy(self) -> None:
        a = np.arange(12, dtype=np.int32)
        self.assertIs(_native.ints(a, "x"), a)
        f = np.ones(12, dtype=np.float32)
        self.assertIs(_native.floats(f, "x"), f)
        b = np.ones(12, dtype=np.bool_)
        self.assertIs(_native.bools(b, "x"), b)
        self.assertIsNot(_native.floats(f[::2], "x"), f)
        self.assertIsNot(_native.ints(np.arange(3, dtype=np.int16), "x").dtype, np.int16)
        with self.assertRaises(TypeError):
            _native.ints(np.array([0.0, 1.0]), "sets")

    def test_ragged_is_each_problem_alone(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, _, _ = batch(cfg, 6)
        rng = np.random.default_rng(3)
        counts = rng.integers(1, 5, (6, 4))
        flat = np.concatenate([rewards[q, i, : counts[q, i]] for q in range(6) for i in range(4)])
        cr = cfg.credit_batch(sets, flat, reward_counts=counts)
        self.assertEqual(cr.aggregation.shape, flat.shape)
        o = 0
        for q in range(6):
            n = int(counts[q].sum())
            one = cfg.credit_batch(sets[q], flat[o : o + n], reward_counts=counts[q])
            self.assertTrue(same(one.search[0], cr.search[q]))
            self.assertTrue(same(one.aggregation, cr.aggregation[o : o + n]))
            self.assertTrue(same(one.scored_outputs[0], counts[q]))
            o += n

    def test_unscorable(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, _, _ = batch(cfg, 4)
        un = np.zeros(rewards.shape, bool)
        un[1, 2, 3] = True
        r = rewards.copy()
        r[1, 2, 3] = np.nan  # not read
        cr = cfg.credit_batch(sets, r, unscorable=un)
        self.assertEqual(cr.aggregation[1, 2, 3], 0)
        self.assertEqual(cr.scored_outputs[1, 2], 3)
        self.assertFalse(cr.rejected.any())

    def test_gates_overlong_range(self) -> None:
        base = spiral.Config.paper()
        sets, rewards, sl, al = batch(base, 32)
        cfg = base.replace(gates=spiral.Gates(spiral.Gate(100), spiral.Gate(150, "keep")))
        cr = cfg.credit_batch(sets, rewards, search_lengths=sl, aggregation_lengths=al)
        plain = base.credit_batch(sets, rewards)
        self.assertEqual(cr.search_gate.outputs, sl.size)
        self.assertEqual(cr.search_gate.positive, int((plain.search > 0).sum()))
        self.assertEqual(cr.search_gate.gated, int(((plain.search > 0) & (sl >= 100)).sum()))
        self.assertEqual(cr.aggregation_gate.gated, int(((plain.aggregation > 0) & (al > 150)).sum()))
        self.assertTrue(np.all(cr.search[(plain.search > 0) & (sl >= 100)] == 0))
        self.assertTrue(same(cr.search[sl < 100], plain.search[sl < 100]))

        over = base.replace(overlong=spiral.SoftOverlong(180, 40))
        co = over.credit_batch(sets, rewards, aggregation_lengths=al)
        self.assertEqual(co.overlong.outputs, rewards.size)
        self.assertEqual(co.overlong.penalized, int((al > 140).sum()))
        self.assertTrue(same(co.no_signal, plain.no_signal))  # decided on the raw rewards

        ranged = base.replace(reward_range=spiral.RewardRange(0.2, 0.8))
        cr = ranged.credit_batch(sets, rewards)
        mean = rewards.mean(axis=(1, 2))
        self.assertTrue(same(cr.out_of_range, ~((mean > 0.2) & (mean < 0.8))))
        self.assertTrue(np.all(cr.search[cr.out_of_range] == 0))
        self.assertTrue(same(cr.skip, cr.out_of_range | cr.no_signal))

    def test_leave_one_out(self) -> None:
        # A_agg = r minus the mean of the set's other scored rewards,
        # S/(S-1) (r - f); the search advantages do not change.
        base = spiral.Config.paper()
        loo = base.replace(aggregation_baseline="leave_one_out")
        sets, rewards, _, _ = batch(base, 16)
        rewards = rewards * np.random.default_rng(5).random(rewards.shape)
        a, b = base.credit_batch(sets, rewards), loo.credit_batch(sets, rewards)
        self.assertTrue(same(a.search, b.search))
        np.testing.assert_allclose(b.aggregation, 4 / 3 * a.aggregation, rtol=1e-14, atol=1e-16)
        w = loo.role_weights()
        lc = loo.loss_coefficients(b, search_lengths=np.ones((16, 8), int), aggregation_lengths=np.ones((16, 4, 4), int), reduction="sum")
        self.assertTrue(same(lc.aggregation, b.aggregation * w.aggregation_multiplier))
        self.assertEqual(w.aggregation, Fraction(16))

    def test_no_signal(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, _, _ = batch(cfg, 8)
        rewards[3] = 1.0
        cr = cfg.credit_batch(sets, rewards)
        self.assertTrue(cr.no_signal[3])
        self.assertTrue(cr.skip[3])


class ErrorTest(unittest.TestCase):
    cfg = spiral.Config.paper()

    def layout_error(self, field: str, **kw) -> spiral.InputError:
        sets, rewards, sl, al = batch(self.cfg, 3)
        args = dict(sets=sets, rewards=rewards)
        args.update(kw)
        with self.assertRaises(spiral.InputError) as cm:
            self.cfg.replace(**args.pop("config", {})).credit_batch(args.pop("sets"), args.pop("rewards"), **args)
        e = cm.exception
        self.assertEqual(e.field, field)
        self.assertEqual(e.problem, -1 if field != "reward_counts" else e.problem)
        return e

    def test_layout(self) -> None:
        sets, rewards, sl, al = batch(self.cfg, 3)
        e = self.layout_error("sets", sets=sets.reshape(-1)[:-1])
        self.assertIn("not a multiple of K*n", str(e))
        self.assertTrue(str(e).startswith("spiral: sets: "))
        self.layout_error("rewards", rewards=rewards[:2])
        self.layout_error("reward_counts", reward_counts=[4] * 11, rewards=rewards.reshape(-1))
        e = self.layout_error("reward_counts", reward_counts=[4] * 5 + [5] + [4] * 6, rewards=np.zeros(49))
        self.assertEqual((e.problem, e.set, e.value), (1, 1, 5.0))
        self.layout_error("unscorable", unscorable=np.zeros(5, bool))
        self.layout_error("search_lengths", config=dict(gates=spiral.Gates(spiral.Gate(10))))
        self.layout_error("search_lengths", search_lengths=sl[:2])
        self.layout_error("aggregation_lengths", config=dict(overlong=spiral.SoftOverlong(10, 1)))
        self.layout_error("aggregation_lengths", config=dict(gates=spiral.Gates(aggregation=spiral.Gate(10))))

    def bad_problem(self, q: int, **kw):
        sets, rewards, sl, al = batch(self.cfg, 5)
        args = dict(sets=sets.copy(), rewards=rewards.copy(), search_lengths=sl.copy(), aggregation_lengths=al.copy())
        for name, (index, value) in kw.items():
            args[name][index] = value
        with self.assertRaises(spiral.BatchError) as cm:
            self.cfg.credit_batch(**args)
        e = cm.exception
        self.assertEqual([p.problem for p in e.problems], [q])
        # The rest of the batch is credited, as if the bad problem were not there.
        keep = [p for p in range(5) if p != q]
        alone = self.cfg.credit_batch(
            sets[keep], rewards[keep], search_lengths=sl[keep], aggregation_lengths=al[keep]
        )
        cr = e.credit
        self.assertEqual(cr.rejected.tolist(), [p == q for p in range(5)])
        for name in ("search", "aggregation", "set_scores", "set_advantages", "appearances"):
            self.assertTrue(same(getattr(cr, name)[keep], getattr(alone, name)), name)
            self.assertTrue(np.all(getattr(cr, name)[q] == 0), name)
        return e.problems[0]

    def test_bad_rewards(self) -> None:
        e = self.bad_problem(2, rewards=((2, 1, 3), np.nan))
        self.assertEqual((e.field, e.problem, e.set, e.output, e.reason), ("rewards", 2, 1, 3, "not_finite"))
        self.assertTrue(np.isnan(e.value))
        self.assertIn("problem 2, set 1, output 3", str(e))
        e = self.bad_problem(0, rewards=((0, 0, 0), -np.inf))
        self.assertEqual((e.reason, e.value), ("not_finite", -np.inf))
        e = self.bad_problem(4, rewards=((4, 3, 2), 2e30))
        self.assertEqual((e.set, e.output, e.reason, e.value), (3, 2, "too_large", 2e30))

    def test_bad_sets(self) -> None:
        e = self.bad_problem(1, sets=((1, 2, 3), 8))
        self.assertEqual(e.field, "sets")
        self.assertEqual((e.reason, e.set_problem.reason, e.set, e.output, e.value), ("set", "out_of_range", 2, 3, 8))
        sets, _, _, _ = batch(self.cfg, 5)
        e = self.bad_problem(3, sets=((3, 0, 1), sets[3, 0, 0]))
        self.assertEqual((e.set_problem.reason, e.set_problem.other), ("repeated", 0))
        e = self.bad_problem(0, sets=((0, 1), sets[0, 0]))
        self.assertEqual((e.set_problem.reason, e.set, e.set_problem.other), ("duplicate", 1, 0))

    def test_bad_lengths(self) -> None:
        e = self.bad_problem(2, search_lengths=((2, 5), -1))
        self.assertEqual((e.field, e.output, e.value, e.reason), ("search_lengths", 5, -1.0, "negative_length"))
        e = self.bad_problem(3, aggregation_lengths=((3, 2, 1), -7))
        self.assertEqual((e.field, e.set, e.output, e.value, e.reason), ("aggregation_lengths", 2, 1, -7.0, "negative_length"))

    def test_unbalanced(self) -> None:
        cfg = spiral.Config.paper().replace(design="balanced")
        sets = np.array(cfg.plan(1, 0, 3))
        sets[1] = [[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 2, 4], [0, 5, 6, 7]]  # trace 0 in three sets, 3 in one
        with self.assertRaises(spiral.BatchError) as cm:
            cfg.credit_batch(sets, np.ones((3, 4, 4)))
        self.assertEqual(cm.exception.problems[0].problem, 1)
        self.assertIn("trace 0 is in 3 sets, want 2", str(cm.exception))

    def test_many_bad_problems(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, _, _ = batch(cfg, 300)
        rewards[::3, 0, 0] = np.nan
        with self.assertRaises(spiral.BatchError) as cm:
            cfg.credit_batch(sets, rewards)
        self.assertEqual([p.problem for p in cm.exception.problems], list(range(0, 300, 3)))
        self.assertIn("and 97 more", str(cm.exception))

    def test_arg_errors(self) -> None:
        with self.assertRaises(spiral.ArgError) as cm:
            spiral.pass_at_k(5, 1, 6)
        e = cm.exception
        self.assertEqual((e.func, e.arg, e.index, e.too_costly), ("pass@k", "k", 0, False))
        # The value once: the element in the field, eval's reason as it is.
        self.assertEqual(str(e), "eval: pass@k: k[0]: 6 > n = 5: pass@k needs at least k samples")
        with self.assertRaises(spiral.ArgError) as cm:
            spiral.pass_at_k([5, 3], [1, 1], [2, 4])
        self.assertEqual((cm.exception.arg, cm.exception.index), ("k", 1))
        self.assertEqual(str(cm.exception), "eval: pass@k: k[1]: 4 > n = 3: pass@k needs at least k samples")
        with self.assertRaises(spiral.ArgError) as cm:
            spiral.coverage([10, 3], [1, 1], 4)
        self.assertEqual((cm.exception.func, cm.exception.index), ("coverage", 1))
        with self.assertRaises(spiral.ArgError) as cm:
            spiral.coverage(np.full(1 << 15, 1 << 16), np.ones(1 << 15, int), 1 << 16)
        self.assertTrue(cm.exception.too_costly)
        with self.assertRaises(spiral.ArgError) as cm:  # refused before anything is allocated
            spiral.coverage([10], [1], 1 << 50)
        self.assertEqual(cm.exception.arg, "kmax")
        self.assertEqual(spiral.pass_at_k(10, 0, 3), 0.0)
        self.assertEqual(spiral.pass_at_k(10, 8, 3), 1.0)
        self.assertTrue(same(spiral.coverage([10, 10], [0, 10], 3), np.array([0.5, 0.5, 0.5])))

    def test_group_errors(self) -> None:
        with self.assertRaises(spiral.InputError) as cm:
            spiral.group_advantages([1.0, np.nan, 0.0], ["a", "a", "b"])
        e = cm.exception
        self.assertEqual((e.field, e.output, e.reason), ("rewards", 1, "not_finite"))
        adv, rep = spiral.group_advantages([1.0, np.nan, 0.0, 1.0], ["a", "a", "b", "b"], preset="trl-grpo")
        self.assertEqual((adv[1], rep.unscorable, rep.singletons), (0.0, 1, ["a"]))
        with self.assertRaises(spiral.ConfigError):
            spiral.group_advantages([1.0], [1], preset="grpo")
        with self.assertRaises(spiral.ConfigError) as cm:
            spiral.group_advantages([1.0], [1], spiral.GroupOptions(epsilon=-1))
        self.assertEqual((cm.exception.field, cm.exception.value), ("options.epsilon", -1.0))
        with self.assertRaises(spiral.SpiralError):
            spiral.group_advantages([1.0, 2.0], [1])

    def test_usage_errors(self) -> None:
        # The C ABI's own checks, reached directly: an output of the wrong
        # element type or length, an unknown handle.
        cfg = spiral.Config.paper()
        keys = np.arange(2, dtype=np.int64)

        def plan(out: np.ndarray, handle: int = cfg._handle.value) -> None:
            k, o = _native.array(keys), _native.array(out)
            _native.check(_native.lib.spiral_plan(handle, 1, 0, ctypes.byref(k), ctypes.byref(o), None))

        with self.assertRaises(spiral.UsageError) as cm:
            plan(np.empty((2, 4, 4), np.float64))
        self.assertIn("element type float64", str(cm.exception))
        with self.assertRaises(spiral.UsageError):
            plan(np.empty(5, np.int64))
        with self.assertRaises(spiral.UsageError):
            plan(np.empty(32, np.int64), 1 << 40)
        _native.lib.spiral_release(1 << 40)  # an unknown handle is ignored


class LossTest(unittest.TestCase):
    def test_coefficients(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, sl, al = batch(cfg, 16)
        cr = cfg.credit_batch(sets, rewards)
        w = cfg.role_weights()
        lc = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, reduction="sum")
        self.assertEqual(lc.report.scale, 1.0)
        self.assertTrue(same(lc.search, cr.search * w.search_multiplier))
        self.assertTrue(same(lc.aggregation, cr.aggregation * w.aggregation_multiplier))
        lc = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, reduction="sum", update="paper")
        self.assertTrue(same(lc.search, cr.search) and same(lc.aggregation, cr.aggregation))
        # verl's token-mean: coef = u T / R, kappa = 1/R.
        lc = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al)
        t, r = int(sl.sum() + al.sum()), int((sl > 0).sum() + (al > 0).sum())
        self.assertEqual(lc.report, spiral.LossReport(1 / r, sl.size + al.size, r, t, 0))
        np.testing.assert_allclose(lc.search, cr.search * w.search_multiplier * t / r, rtol=1e-15)
        # Two loss terms, each a token mean over its own outputs.
        lc = cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, split_roles=True)
        np.testing.assert_allclose(lc.aggregation, cr.aggregation * w.aggregation_multiplier * al.sum() / r, rtol=1e-15)
        # float32 credit: float32 coefficients.
        c32 = cfg.credit_batch(sets, rewards.astype(np.float32))
        self.assertEqual(cfg.loss_coefficients(c32, search_lengths=sl, aggregation_lengths=al).search.dtype, np.float32)
        self.assertIn("trl-dr-grpo", spiral.REDUCTIONS)

    def test_errors(self) -> None:
        cfg = spiral.Config.paper()
        sets, rewards, sl, al = batch(cfg, 4)
        cr = cfg.credit_batch(sets, rewards)
        bad = al.copy()
        bad[1, 2, 3] = -1
        with self.assertRaises(spiral.InputError) as cm:
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=bad)
        e = cm.exception
        self.assertEqual((e.field, e.output, e.value, e.reason), ("aggregation_lengths", 1 * 16 + 2 * 4 + 3, -1.0, "negative_length"))
        with self.assertRaises(spiral.ConfigError):
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, reduction="mean")
        with self.assertRaises(spiral.ConfigError):
            cfg.loss_coefficients(cr, search_lengths=sl, aggregation_lengths=al, update="plain")
        with self.assertRaises(spiral.SpiralError):
            cfg.loss_coefficients(cr, search_lengths=sl[:2], aggregation_lengths=al)


class GroupTest(unittest.TestCase):
    def test_presets(self) -> None:
        self.assertIn("verl-grpo", spiral.PRESETS)
        self.assertEqual(spiral.GroupOptions.preset("verl-grpo"), spiral.GroupOptions("group", 1e-6, True, False, False))
        self.assertEqual(spiral.GroupOptions.preset("openrlhf-grpo").clip, (-10.0, 10.0))
        r = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
        ids = np.array([3, 3, 3, 5, 5, 5])
        adv, rep = spiral.group_advantages(r, ids, preset="rloo")
        m = r[:3].mean()
        self.assertAlmostEqual(adv[0], 1.5 * (1 - m), places=15)
        self.assertEqual(rep.groups, 2)
        # verl's uid column: an object array of strings; and numpy strings.
        uids = np.array(["u3", "u3", "u3", "u5", "u5", "u5"], dtype=object)
        for col in (uids, uids.astype(str), list(uids)):
            a2, rep2 = spiral.group_advantages(r, col, preset="rloo")
            self.assertTrue(same(a2, adv))
            self.assertEqual(rep2.groups, 2)
        _, rep3 = spiral.group_advantages([1.0, 1.0, 0.0], np.array(["b", "b", "a"], dtype=object))
        self.assertEqual((rep3.zero_variance, rep3.singletons), (["b"], ["a"]))
        adv32, _ = spiral.group_advantages(r.astype(np.float32), ids.astype(np.int32), preset="rloo")
        self.assertEqual(adv32.dtype, np.float32)
        self.assertTrue(same(adv32, adv.astype(np.float32)))


class PlanTest(unittest.TestCase):
    def test_plans_are_credited_as_checked_sets(self) -> None:
        # The library's own plans are credited without a check, with the
        # credit of the same sets given as an array (checked).
        for cfg in (spiral.Config.paper(), spiral.Config.paper().replace(design="balanced"), spiral.Config(6, 3, 5, 3, ordered=True)):
            plans = cfg.plan(3, 1, 40)
            self.assertFalse(plans.sets.flags.writeable)
            rewards = np.random.default_rng(4).integers(0, 2, (40, cfg.sets, cfg.aggregations_per_set)).astype(np.float64)
            assert_same_credit(self, cfg.credit_batch(plans, rewards), cfg.credit_batch(plans.sets.copy(), rewards))
            assert_same_credit(self, cfg.credit_batch(plans, rewards), cfg.credit_batch(np.asarray(plans), rewards))
        with self.assertRaises(spiral.InputError) as cm:  # plans of another shape
            spiral.Config.paper().credit_batch(spiral.Config(6, 3, 4, 4).plan(1, 0, 2), np.zeros((2, 4, 4)))
        self.assertEqual(cm.exception.field, "sets")

    def test_out(self) -> None:
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
        sets, rewards, sl, al = batch(cfg, 8)
        first = cfg.credit_batch(sets, rewards, search_lengths=sl, aggregation_lengths=al)
        keep = {name: getattr(first, name).copy() for name in ("search", "aggregation", "no_signal")}
        _, r2, sl2, al2 = batch(cfg, 8, seed=9)
        again = cfg.credit_batch(sets, r2, search_lengths=sl2, aggregation_lengths=al2, out=first)
        self.assertIs(again, first)
        assert_same_credit(self, again, cfg.credit_batch(sets, r2, search_lengths=sl2, aggregation_lengths=al2))
        self.assertFalse(same(again.search, keep["search"]))
        with self.assertRaises(ValueError):
            cfg.credit_batch(sets[:4], rewards[:4], search_lengths=sl[:4], aggregation_lengths=al[:4], out=first)
        with self.assertRaises(ValueError):
            cfg.credit_batch(sets, rewards.astype(np.float32), search_lengths=sl, aggregation_lengths=al, out=first)

    def test_plans(self) -> None:
        cfg = spiral.Config.paper()
        a = np.asarray(cfg.plan(7, 3, 100))
        self.assertEqual(a.shape, (100, 4, 4))
        self.assertTrue(same(a, cfg.plan(7, 3, 100).sets))
        self.assertFalse(same(a, cfg.plan(7, 4, 100).sets))
        for q in range(100):
            self.assertEqual(len({tuple(s) for s in a[q]}), 4)
            self.assertTrue(all(list(s) == sorted(set(s)) for s in a[q]))
        self.assertEqual(cfg.plan(1, 0, 0).shape, (0, 4, 4))
        self.assertEqual(cfg.plan(1, 0, 5, np.int32).sets.dtype, np.int32)
        with self.assertRaises(ValueError):
            cfg.plan(1, 0, -1)
        with self.assertRaises(spiral.InputError) as cm:  # refused before anything is allocated
            cfg.plan(1, 0, 1 << 40)
        self.assertEqual(cm.exception.field, "keys")
        with self.assertRaises(spiral.InputError) as cm:  # Go's own refusal
            cfg.plan(1, 0, np.arange((1 << 20) + 1))
        self.assertEqual(cm.exception.field, "keys")


class ThreadTest(unittest.TestCase):
    def test_threads(self) -> None:
        # Several threads credit different batches at once with one Config:
        # every result is the one a lone call gives.
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(120))
        plain = spiral.Config.paper()
        inputs = [batch(cfg, 16 + t, seed=t) for t in range(8)]
        for t in range(0, 8, 3):  # some batches with a bad problem
            inputs[t][1][t % 5, 1, 1] = np.nan

        def run(t: int) -> tuple:
            sets, rewards, sl, al = inputs[t]
            try:
                return ("ok", cfg.credit_batch(sets, rewards, search_lengths=sl, aggregation_lengths=al))
            except spiral.BatchError as e:
                return ("bad", e.credit, [p.problem for p in e.problems])

        want = [run(t) for t in range(8)]
        got: dict = {}
        errors: list = []

        def worker(w: int) -> None:
            try:
                for i in range(40):
                    t = (w + i) % 8
                    r = run(t)
                    if r[0] != want[t][0] or (r[0] == "bad" and r[2] != want[t][2]):
                        errors.append((w, i, t))
                    got.setdefault(t, []).append(r[1])
                    plans = plain.plan(w, i, 8)
                    r8 = np.random.default_rng(i).random((8, 4, 4))
                    if not same(plans.sets, plain.plan(w, i, 8).sets) or not same(
                        plain.credit_batch(plans, r8).search, plain.credit_batch(plans.sets, r8).search
                    ):
                        errors.append(("plan", w, i))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        for t, results in got.items():
            for r in results:
                assert_same_credit(self, r, want[t][1])


try:
    import torch
except ImportError:  # python3-torch is optional
    torch = None


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TorchTest(unittest.TestCase):
    def test_tensors(self) -> None:
        cfg = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
        sets, rewards, sl, al = batch(cfg, 16)
        ref = cfg.credit_batch(sets, rewards.astype(np.float32), search_lengths=sl, aggregation_lengths=al)
        got = cfg.credit_batch(
            torch.from_numpy(sets),
            torch.tensor(rewards, dtype=torch.float32, requires_grad=True),
            search_lengths=torch.from_numpy(sl),
            aggregation_lengths=torch.from_numpy(al).to(torch.int32),
            unscorable=torch.zeros(rewards.shape, dtype=torch.bool),
        )
        assert_same_credit(self, ref, got)
        adv = torch.from_numpy(got.search)  # back to torch without a copy
        self.assertEqual(adv.dtype, torch.float32)
        r, _ = spiral.group_advantages(torch.tensor([1.0, 0.0, 1.0]), torch.tensor([0, 0, 1]), preset="verl-grpo")
        self.assertEqual(r.dtype, np.float32)


if __name__ == "__main__":
    unittest.main()
