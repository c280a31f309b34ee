"""2,000 random hostile calls: every refusal is a TypeError or ValueError that names its argument.

Each call takes a public call of the package (every function, constructor
and method that takes an argument: the row layer's methods and the
indexing of Plans among them) with valid arguments and replaces one of
them by a hostile value (a wrong type, an integer beyond 64 bits, NaN or
infinity, a string that is not valid Unicode, an array of another dtype or
shape, a transposed array, ...). The call may succeed (the value is valid)
or raise; when it raises, the exception must be a TypeError or a ValueError
(the package's errors are ValueErrors; an IndexError for an index out of
range, as an ndarray gives) whose message names the replaced argument. Nothing may crash the process.
"""

from __future__ import annotations

import random
import re
import unittest
from typing import Any, Callable

import numpy as np

import spiral

CFG = spiral.Config.paper().replace(gates=spiral.Gates.shared(100))
PLAIN = spiral.Config.paper()
P = 3


def _valid() -> dict:
    rng = np.random.default_rng(0)
    plans = CFG.plan(1, 0, P)
    rewards = rng.integers(0, 2, (P, 4, 4)).astype(np.float64)
    sl = rng.integers(1, 200, (P, 8))
    al = rng.integers(1, 200, (P, 4, 4))
    credit = CFG.credit_batch(plans, rewards, search_lengths=sl, aggregation_lengths=al)
    return dict(plans=plans, rewards=rewards, sl=sl, al=al, credit=credit)


V = _valid()


def _rows() -> dict:
    key, role, index, set_ = [], [], [], []
    for q in (30, 10, 20):
        for y in range(8):
            key.append(q), role.append(spiral.SEARCH), index.append(y), set_.append(-1)
        for i in range(4):
            for j in range(4):
                key.append(q), role.append(spiral.AGGREGATION), index.append(j), set_.append(i)
    return dict(config=PLAIN, keys=np.array([30, 10, 20], np.uint64), key=np.array(key), role=np.array(role),
                index=np.array(index), set=np.array(set_))


def _row_layer() -> dict:
    rows = spiral.Rows(**_rows())
    rng = np.random.default_rng(1)
    n = len(rows)
    plans = PLAIN.plan(1, 0, rows.keys)
    reward = rng.integers(0, 2, n).astype(np.float64)
    lengths = rng.integers(1, 200, n)
    credit = rows.credit(plans, reward, lengths=lengths)
    return dict(rows=rows, plans=plans, reward=reward, lengths=lengths, credit=credit, column=rng.normal(size=n))


R = _row_layer()


def hostile_values(rng: random.Random, like: Any) -> Any:
    """A hostile value, some generic and some shaped like the valid one."""
    generic = [
        None, True, -1, 0, 2**63, 2**63 + 1, 2**64, 2**64 - 1, 2**70, -(2**64), 1.5, float("nan"), float("inf"),
        -float("inf"), 1e308, "abc", "", "\ud800", "token-mean\x00", b"x", [], [[1, 2], [3]], {}, object(), (1, 2, 3),
        np.int8(3), np.uint64(2**64 - 1), np.float32("nan"), np.array([]), np.array(["a", "b"]),
        np.zeros((2, 3), np.int8), np.zeros(5, np.complex128), np.zeros(4, np.float16), np.array([2**63 + 1], np.uint64),
        np.array([object()]), np.full(3, np.nan), np.zeros((0, 0)), np.zeros(1 << 20, np.float32), spiral.Config.paper(),
        np.zeros(3).view([("a", "f4"), ("b", "f4")]),
    ]
    if isinstance(like, np.ndarray) and like.ndim >= 1:
        shaped = [
            like.T.copy(), like.reshape(-1)[:-1], np.concatenate([like.reshape(-1), like.reshape(-1)]), like.astype(np.int8),
            like.astype(np.uint64) | np.uint64(2**63), -np.abs(like.astype(np.int64)) - 1, np.full(like.shape, np.inf, np.float32),
            like.astype(str), like[..., ::2], np.broadcast_to(like.reshape(-1)[:1], like.shape), like.astype(object),
            like.reshape(-1, 1), like[None],
        ]
        generic += shaped * 2
    return rng.choice(generic)


CALLS: list[tuple[str, Callable[..., Any], dict]] = [
    ("Config", spiral.Config, dict(search_traces=8, set_size=4, sets=4, aggregations_per_set=4, ordered=False, order="index",
                                   design="uniform", gates=spiral.Gates(), overlong=None, reward_range=spiral.RewardRange(),
                                   aggregation_baseline="within_set")),
    ("Gate", spiral.Gate, dict(target=100, boundary="gate")),
    ("SoftOverlong", spiral.SoftOverlong, dict(max_length=100, buffer=10, factor=1.0)),
    ("RewardRange", spiral.RewardRange, dict(low=0.0, high=1.0)),
    ("plan", CFG.plan, dict(seed=1, step=0, keys=np.arange(P), dtype=np.int64)),
    ("credit_batch", CFG.credit_batch, dict(sets=V["plans"], rewards=V["rewards"], reward_counts=None, unscorable=None,
                                            search_lengths=V["sl"], aggregation_lengths=V["al"], out=None)),
    ("credit_batch_sets", PLAIN.credit_batch, dict(sets=np.array(V["plans"]), rewards=V["rewards"])),
    ("credit_batch_ragged", PLAIN.credit_batch, dict(sets=np.array(V["plans"]), rewards=np.zeros(P * 16 - 1),
                                                   reward_counts=np.array([4] * (P * 4 - 1) + [3]),
                                                   unscorable=np.zeros(P * 16 - 1, bool))),
    ("loss_coefficients", CFG.loss_coefficients, dict(credit=V["credit"], search_lengths=V["sl"], aggregation_lengths=V["al"],
                                                      reduction="token-mean", update="joint_gradient", split_roles=False,
                                                      missing_rate=0.0)),
    ("role_weights", CFG.role_weights, dict(reduction="sum", split_roles=False, missing_rate=0.0)),
    ("group_advantages", spiral.group_advantages, dict(rewards=np.array([1.0, 0.0, 1.0, 1.0]), ids=np.array([0, 0, 1, 1]),
                                                        options=spiral.GroupOptions(), unscorable=np.zeros(4, bool),
                                                        lengths=np.array([3, 4, 5, 6]))),
    ("group_preset", spiral.group_advantages, dict(rewards=[1.0, 0.0], ids=["a", "a"], preset="verl-grpo")),
    ("GroupOptions", spiral.GroupOptions, dict(scale="group", epsilon=1e-6, bessel=True, leave_one_out=False,
                                               nan_unscorable=False, best=False, clip=(0.0, 0.0), whiten="none")),
    ("GroupOptions.preset", spiral.GroupOptions.preset, dict(name="verl-grpo")),
    ("pass_at_k", spiral.pass_at_k, dict(n=np.array([10, 8]), c=np.array([3, 0]), k=np.array([2, 1]))),
    ("coverage", spiral.coverage, dict(n=np.array([10, 8]), c=np.array([3, 0]), kmax=4)),
    ("reduction_scale", spiral.reduction_scale, dict(reduction="token-mean", outputs=10, rows=8)),
    ("part_coefficients", spiral.part_coefficients, dict(update=np.array([0.5, -0.25, 0.0]), lengths=np.array([3, 4, 5]),
                                                          reduction="token-mean", scale=0.1)),
    ("Rows", spiral.Rows, _rows()),
    ("Rows.members", R["rows"].members, dict(plans=R["plans"])),
    ("Rows.search_values", R["rows"].search_values, dict(column=R["column"])),
    ("Rows.aggregation_values", R["rows"].aggregation_values, dict(column=R["column"])),
    ("Rows.to_rows", R["rows"].to_rows, dict(search=R["credit"].search, aggregation=R["credit"].aggregation)),
    ("Rows.credit", R["rows"].credit, dict(plans=R["plans"], reward=R["reward"], lengths=R["lengths"],
                                           unscorable=np.zeros(len(R["rows"]), bool), out=None)),
    ("Rows.credit_sets", R["rows"].credit, dict(plans=np.array(R["plans"]), reward=R["reward"], lengths=R["lengths"])),
    ("Rows.keep", R["rows"].keep, dict(credit=R["credit"])),
    ("Rows.advantages", R["rows"].advantages, dict(credit=R["credit"])),
    ("Rows.update", R["rows"].update, dict(credit=R["credit"], lengths=R["lengths"], update="joint_gradient")),
    ("Rows.coefficients", R["rows"].coefficients, dict(credit=R["credit"], lengths=R["lengths"], reduction="token-mean",
                                                       update="joint_gradient", split_roles=False)),
    ("Gates", spiral.Gates, dict(search=spiral.Gate(100), aggregation=spiral.Gate(200, "keep"))),
    ("Gates.shared", spiral.Gates.shared, dict(target=100, boundary="gate")),
    ("Config.replace", CFG.replace, dict(search_traces=8, sets=4, gates=spiral.Gates.shared(100), overlong=None,
                                         reward_range=spiral.RewardRange(0.0, 1.0), aggregation_baseline="leave_one_out")),
    ("Plans.__array__", V["plans"].__array__, dict(dtype=np.int32)),
    ("Plans.__getitem__", V["plans"].__getitem__, dict(index=(1, 2))),
    ("response_lengths", spiral.response_lengths, dict(response_mask=np.ones((3, 5), bool))),
    ("per_token", spiral.per_token, dict(values=np.array([1.0, 2.0, 3.0]), response_mask=np.ones((3, 5), bool))),
]


class HostileTest(unittest.TestCase):
    def test_valid_calls(self) -> None:
        for name, fn, kw in CALLS:
            with self.subTest(name):
                fn(**kw)

    def test_every_refusal_names_its_argument(self) -> None:
        rng = random.Random(33)
        calls, raised, bad = 0, 0, []
        while calls < 2000:
            name, fn, kw = rng.choice(CALLS)
            arg = rng.choice(sorted(kw))
            value = hostile_values(rng, kw[arg])
            args = dict(kw, **{arg: value})
            calls += 1
            try:
                fn(**args)
            except (TypeError, ValueError, IndexError) as e:
                raised += 1
                if isinstance(e, IndexError) and arg != "index":  # only an index may be out of range
                    bad.append(f"{name}({arg}={_short(value)}): {type(e).__name__}: {e}")
                    continue
                if not names(str(e), arg):
                    bad.append(f"{name}({arg}={_short(value)}): {type(e).__name__}: {e}")
            except Exception as e:  # noqa: BLE001 - any other class is a finding
                raised += 1
                bad.append(f"{name}({arg}={_short(value)}): {type(e).__name__}: {e}")
        self.assertGreater(raised, 1000)
        if bad and __name__ == "__main__":
            print("\n".join(sorted(bad)))
        self.assertEqual(bad[:20], [], f"{len(bad)} of {raised} exceptions in {calls} calls do not name their argument")


# A relation between fields of a Config ("n = 4 > N1 = 3") names the other
# field by the paper's symbol, which Config's docstring gives each.
SYMBOLS = {"search_traces": "N1", "set_size": "n", "sets": "K", "aggregations_per_set": "N2"}


def names(message: str, arg: str) -> bool:
    """Whether an exception's message names the argument arg."""
    if arg in message or (arg == "name" and "preset" in message):
        return True
    return arg in SYMBOLS and re.search(rf"\b{SYMBOLS[arg]} = ", message) is not None


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"ndarray{v.shape}:{v.dtype}"
    r = repr(v)
    return r if len(r) < 40 else r[:37] + "..."


if __name__ == "__main__":
    unittest.main()
