"""The row layer (spiral.Rows) and the coefficients of a part of a batch (part_coefficients, reduction_scale)."""

from __future__ import annotations

import unittest

import numpy as np

import spiral

CFG = spiral.Config.paper()  # N1=8, n=4, K=4, N2=4


def flat_rows(keys: np.ndarray, rng: np.random.Generator, drop: float = 0.1) -> dict:
    """Every problem's rows, some aggregation outputs dropped, shuffled."""
    key, role, index, set_ = [], [], [], []
    for q in keys:
        for y in range(CFG.search_traces):
            key.append(q), role.append(spiral.SEARCH), index.append(y), set_.append(-1)
        for i in range(CFG.sets):
            for j in range(CFG.aggregations_per_set):
                if j == 0 or rng.random() > drop:
                    key.append(q), role.append(spiral.AGGREGATION), index.append(j), set_.append(i)
    perm = rng.permutation(len(key))
    return {name: np.array(col)[perm] for name, col in (("key", key), ("role", role), ("index", index), ("set", set_))}


class TestRows(unittest.TestCase):
    def setUp(self) -> None:
        self.rng = np.random.default_rng(1)
        self.keys = np.array([30, 10, 20], np.uint64)
        self.cols = flat_rows(self.keys, self.rng)
        self.rows = spiral.Rows(CFG, self.keys, self.cols["key"], self.cols["role"], self.cols["index"], self.cols["set"])

    def test_layout_and_back(self) -> None:
        rows, c = self.rows, self.cols
        n = len(rows)
        ident = np.arange(n, dtype=np.float64)
        s = rows.search_values(ident)
        self.assertEqual(s.shape, (3, CFG.search_traces))
        for q, key in enumerate(self.keys):
            for y in range(CFG.search_traces):
                r = int(s[q, y])
                self.assertEqual((c["key"][r], c["role"][r], c["index"][r]), (key, spiral.SEARCH, y))
        a = rows.aggregation_values(ident).astype(int)
        # Set after set (problems in keys' order), outputs in order within a set.
        got = [(int(np.flatnonzero(self.keys == c["key"][r])[0]), c["set"][r], c["index"][r]) for r in a]
        self.assertEqual(got, sorted(got))
        self.assertEqual(int(rows.reward_counts.sum()), len(a))
        np.testing.assert_array_equal(rows.to_rows(s, rows.aggregation_values(ident)), ident)
        self.assertTrue(np.all(rows.problem == np.array([np.flatnonzero(self.keys == k)[0] for k in c["key"]])))

    def test_members(self) -> None:
        plans = CFG.plan(1, 2, self.keys)
        m = self.rows.members(plans)
        self.assertEqual(m.shape, plans.sets.shape)
        c = self.cols
        for q, key in enumerate(self.keys):
            for i in range(CFG.sets):
                for j in range(CFG.set_size):
                    r = m[q, i, j]
                    self.assertEqual((c["key"][r], c["role"][r], c["index"][r]), (key, spiral.SEARCH, plans.sets[q, i, j]))

    def test_credit_update_and_keep(self) -> None:
        plans = CFG.plan(1, 2, self.keys)
        n = len(self.rows)
        reward = (self.rng.random(n) < 0.5).astype(float)
        reward[self.cols["key"] == 20] = 1.0  # no signal: skipped
        lengths = self.rng.integers(1, 50, n)
        cr = self.rows.credit(plans, reward, lengths=lengths)
        keep = self.rows.keep(cr)
        np.testing.assert_array_equal(keep, self.cols["key"] != 20)
        adv = self.rows.advantages(cr)
        np.testing.assert_array_equal(self.rows.search_values(adv), cr.search)
        # The update of the sum reduction is the joint gradient's: the advantage times the role's multiplier.
        u = self.rows.update(cr, lengths=lengths * keep)
        w = CFG.role_weights()
        mult = np.where(self.cols["role"] == spiral.SEARCH, w.search_multiplier, w.aggregation_multiplier)
        np.testing.assert_allclose(u, adv * mult * keep, rtol=1e-15)
        coef, rep = self.rows.coefficients(cr, lengths=lengths * keep, reduction="token-mean")
        np.testing.assert_allclose(coef, u * rep.tokens / rep.rows, rtol=1e-14)

    def test_errors_name_the_argument(self) -> None:
        c = self.cols
        cases = [
            (dict(key=np.where(c["key"] == 10, 11, c["key"]).astype(np.uint64)), "key"),
            (dict(key=np.where(c["key"] == 10, -1, c["key"].astype(np.int64))), "key"),
            (dict(role=np.where(c["role"] == 1, 2, c["role"])), "role"),
            (dict(index=np.where(c["role"] == 0, 8, c["index"])), "index"),
            (dict(set=np.where(c["role"] == 1, 4, c["set"])), "set"),
            (dict(index=np.where((c["role"] == 0) & (c["index"] == 1), 0, c["index"])), "index"),
            (dict(role=c["role"][:-1]), "role"),
            (dict(key=c["key"].reshape(1, -1)), "key"),
            (dict(keys=self.keys.reshape(3, 1)), "keys"),
        ]
        for change, field in cases:
            args = {**c, "keys": self.keys, **change}
            with self.assertRaises(spiral.InputError) as e:
                spiral.Rows(CFG, args["keys"], args["key"], args["role"], args["index"], args["set"])
            self.assertEqual(e.exception.field, field, str(e.exception))

    def test_methods_name_their_arguments(self) -> None:
        rows, n = self.rows, len(self.rows)
        plans = CFG.plan(1, 2, self.keys)
        reward, lengths = np.ones(n), np.full(n, 5)
        reward[:3] = 0
        cr = rows.credit(plans, reward, lengths=lengths)
        other = CFG.credit_batch(CFG.plan(1, 2, 4), np.ones((4, 4, 4)))
        sets = np.array(plans)
        bad_plans = sets.copy()
        bad_plans[1, 2, 3] = 8  # not a search trace of N1 = 8
        cases = [
            (lambda: rows.search_values(reward[:-1]), "column"),
            (lambda: rows.aggregation_values(np.ones((n, 2))), "column"),
            (lambda: rows.to_rows(cr.search.T, cr.aggregation), "search"),
            (lambda: rows.to_rows(cr.search, cr.aggregation[:-1]), "aggregation"),
            (lambda: rows.members(sets.transpose(2, 1, 0)), "plans"),
            (lambda: rows.members(bad_plans), "plans"),
            (lambda: rows.members(CFG.plan(1, 2, 4)), "plans"),
            (lambda: rows.credit(plans, reward[:-1], lengths=lengths), "reward"),
            (lambda: rows.credit(plans, reward, lengths=lengths.reshape(1, -1)), "lengths"),
            (lambda: rows.credit(plans, reward, lengths=lengths, unscorable=np.zeros(n - 1, bool)), "unscorable"),
            (lambda: rows.credit(bad_plans, reward, lengths=lengths), "plans"),
            (lambda: rows.keep(other), "credit"),
            (lambda: rows.advantages(other), "credit"),
            (lambda: rows.update(other, lengths=lengths), "credit"),
            (lambda: rows.coefficients(cr, lengths=lengths[:-1], reduction="token-mean"), "lengths"),
        ]
        for i, (call, field) in enumerate(cases):
            with self.subTest(i=i, field=field):
                with self.assertRaises(spiral.SpiralError) as e:
                    call()
                if isinstance(e.exception, spiral.BatchError):
                    self.assertEqual({p.field for p in e.exception.problems}, {field})
                    self.assertIsNotNone(e.exception.credit)
                else:
                    self.assertEqual(e.exception.field, field, str(e.exception))
                self.assertIn(field, str(e.exception))
        with self.assertRaises(TypeError) as e:
            rows.keep(cr.search)
        self.assertIn("credit", str(e.exception))

    def test_token_layout(self) -> None:
        mask = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]])
        np.testing.assert_array_equal(spiral.response_lengths(mask), [2, 0, 3])
        np.testing.assert_array_equal(spiral.per_token([2.0, 3.0, -1.0], mask), [[2, 2, 0], [0, 0, 0], [-1, -1, -1]])
        with self.assertRaises(spiral.InputError) as e:
            spiral.per_token([1.0, 2.0], mask)
        self.assertEqual(e.exception.field, "values")


class TestPartCoefficients(unittest.TestCase):
    def test_micro_batches_add_up(self) -> None:
        # verl's legacy token-mean on micro-batches [0, 2) and [2, 5).
        u = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
        ln = np.array([3, 1, 0, 4, 2])
        kappa = spiral.reduction_scale("token-mean", 5, 4)
        self.assertEqual(kappa, 0.25)
        total = np.zeros(5)
        for lo, hi in ((0, 2), (2, 5)):
            c, rep = spiral.part_coefficients(u[lo:hi], ln[lo:hi], "token-mean", scale=kappa)
            self.assertEqual((rep.scale, rep.outputs, rep.tokens), (kappa, hi - lo, int(ln[lo:hi].sum())))
            total[lo:hi] = c / ln[lo:hi].sum()  # each token's weight in the micro-batch's token mean
        np.testing.assert_allclose(total, kappa * u * (ln > 0))

    def test_over(self) -> None:
        # The new engine's seq-mean-token-mean over global_batch_size = 10 rows.
        c, _ = spiral.part_coefficients([1.0, 2.0], [3, 5], "seq-mean-token-mean", scale=0.1, over_sequences=[10])
        np.testing.assert_allclose(c, [1.0 * 0.1 * 10 * 3, 2.0 * 0.1 * 10 * 5])
        c, _ = spiral.part_coefficients([1.0, 2.0], [3, 5], "trl-dapo", scale=0.5, over_tokens=[100])
        np.testing.assert_allclose(c, [50.0, 100.0])

    def test_terms(self) -> None:
        c, _ = spiral.part_coefficients([1.0, 1.0, 1.0], [2, 4, 6], "token-mean", scale=1.0, terms=[0, 1, 1])
        np.testing.assert_allclose(c, [2.0, 10.0, 10.0])

    def test_errors(self) -> None:
        cases = [
            (dict(scale=-1.0), "scale"),
            (dict(scale=float("nan")), "scale"),
            (dict(over_tokens=[1]), "over_tokens"),
            (dict(lengths=[2, -1]), "lengths"),
            (dict(update=[1.0, float("inf")]), "update"),
            (dict(terms=[0, 9]), "terms"),
        ]
        for change, field in cases:
            args = {**dict(update=[1.0, 2.0], lengths=[2, 3], reduction="token-mean", scale=1.0), **change}
            with self.assertRaises(spiral.SpiralError) as e:
                spiral.part_coefficients(**args)
            self.assertEqual(getattr(e.exception, "field", None), field, str(e.exception))
        with self.assertRaises(spiral.InputError) as e:
            spiral.part_coefficients([1.0, 2.0], [2], "token-mean", scale=1.0)
        self.assertEqual(e.exception.field, "lengths")
        self.assertIn("(1,)", str(e.exception))
        with self.assertRaises(spiral.InputError) as e:
            spiral.part_coefficients([[1.0, 2.0]], [[2, 3]], "token-mean", scale=1.0)
        self.assertEqual(e.exception.field, "update")
        with self.assertRaises(TypeError) as e:
            spiral.part_coefficients([1.0], [2], "token-mean", scale="1")
        self.assertIn("scale", str(e.exception))
        with self.assertRaises(spiral.ConfigError):
            spiral.part_coefficients([1.0], [2], "token_mean", scale=1.0)
        with self.assertRaises(spiral.InputError) as e:
            spiral.reduction_scale("token-mean", -1, 0)
        self.assertEqual(e.exception.field, "outputs")
        with self.assertRaises(spiral.InputError) as e:
            spiral.reduction_scale("token-mean", 3, 4)
        self.assertEqual(e.exception.field, "rows")


if __name__ == "__main__":
    unittest.main()


class TestHostileArguments(unittest.TestCase):
    """Random bad arguments: every refusal is a TypeError or ValueError that names the argument."""

    BAD = [
        None,
        "x",
        "\ud800",
        [[1, 2], [3]],
        np.array([[1.0, 2.0]]),
        np.zeros((2, 2, 2)),
        np.array([1, 2], dtype=np.int8),
        np.array(["a", "b"]),
        np.array([None, None], dtype=object),
        np.array([np.nan, 1.0]),
        np.array([-1, 2]),
        np.array([2**63 - 1, 2], dtype=np.uint64),
        2**64,
        -1,
        float("inf"),
        float("nan"),
        True,
        object(),
    ]

    def check(self, fn, names: tuple, args: dict) -> None:
        try:
            fn(**args)
        except (TypeError, ValueError) as e:
            msg = str(e)
            self.assertTrue(any(n in msg for n in names), f"{fn.__name__}({args!r}): {type(e).__name__}: {msg}")
        except Exception as e:  # noqa: BLE001
            self.fail(f"{fn.__name__}({args!r}) raised {type(e).__name__}: {e}")

    def test_part_coefficients(self) -> None:
        rng = np.random.default_rng(4)
        good = dict(update=[1.0, 2.0], lengths=[2, 3], reduction="token-mean", scale=0.5)
        names = ("update", "lengths", "reduction", "scale", "terms", "over_sequences", "over_tokens")
        for _ in range(400):
            args = dict(good)
            for name in rng.choice(names, rng.integers(1, 3), replace=False):
                args[name] = self.BAD[rng.integers(len(self.BAD))]
            self.check(spiral.part_coefficients, names, args)

    def test_reduction_scale(self) -> None:
        for bad in self.BAD:
            for name in ("reduction", "outputs", "rows"):
                args = dict(reduction="trl-dapo", outputs=4, rows=3)
                args[name] = bad
                self.check(spiral.reduction_scale, ("reduction", "outputs", "rows"), args)

    def test_rows(self) -> None:
        rng = np.random.default_rng(5)
        keys = np.array([3, 1], np.uint64)
        cols = flat_rows(keys, rng)
        good = dict(config=CFG, keys=keys, key=cols["key"], role=cols["role"], index=cols["index"], set=cols["set"])
        names = ("keys", "key", "role", "index", "set")
        for _ in range(300):
            args = dict(good)
            for name in rng.choice(names, rng.integers(1, 3), replace=False):
                args[name] = self.BAD[rng.integers(len(self.BAD))]
            self.check(spiral.Rows, names, args)
