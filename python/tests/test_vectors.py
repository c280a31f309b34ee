"""The conformance vectors (cmd/spiral/testdata/vectors) through the Python API, bit for bit.

Every case of index.json is run through the package: a credit line as a
batch of one problem (its sets ragged as the bridge lays them out), a group
line through group_advantages, pass@k, constants and plans. Every number must
be the reference's float64, bit for bit (the sign of zero included); a line
the reference answers with an error must raise.
"""

from __future__ import annotations

import json
import math
import os
import struct
import unittest
from fractions import Fraction
from typing import Any, Optional

import numpy as np

import spiral

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cmd", "spiral", "testdata", "vectors")


def lines(name: str) -> list[str]:
    with open(os.path.join(VECTORS, name)) as f:
        return f.read().split("\n")[:-1]


def cases(command: str) -> list[dict]:
    with open(os.path.join(VECTORS, "index.json")) as f:
        return [c for c in json.load(f)["cases"] if c["command"][0] == command]


def parse(text: str) -> Any:
    """Parse a JSON line strictly: -0 is the float -0.0, a repeated key is an error."""

    def pairs(kv: list) -> dict:
        d = dict(kv)
        if len(d) != len(kv):
            raise ValueError("a key appears twice")
        return d

    return json.loads(text, parse_int=lambda s: -0.0 if s == "-0" else int(s), object_pairs_hook=pairs)


def bridge_only(error: str) -> bool:
    """Whether a reference error is a rule of the bridge's lines (their size bounds), not of the library."""
    return "a line may" in error


def bits(x: Any) -> list[bytes]:
    return [struct.pack("<d", float(v)) for v in np.asarray(x, dtype=np.float64).reshape(-1)]


def flags(command: list[str]) -> dict[str, Optional[str]]:
    out: dict[str, Optional[str]] = {}
    i = 1
    while i < len(command):
        name = command[i].lstrip("-")
        if i + 1 < len(command) and not command[i + 1].startswith("-"):
            out[name] = command[i + 1]
            i += 2
        else:
            out[name] = None
            i += 1
    return out


class _Malformed(Exception):
    """A line that is not a credit input at all (the bridge's JSON errors)."""


def credit_line(text: str, fl: dict[str, Optional[str]]) -> tuple[spiral.Credit, Optional[spiral.LossCoefficients]]:
    """Credit one bridge input line as a batch of one problem, as the bridge lays it out."""
    try:
        line = parse(text)
    except ValueError as e:
        raise _Malformed(str(e)) from e
    if not isinstance(line, dict) or set(line) - {"traces", "sets", "rewards", "unscorable", "search_lengths", "aggregation_lengths"}:
        raise _Malformed("not a credit line")
    try:
        traces, sets, rewards = line["traces"], line["sets"], line["rewards"]
    except KeyError as e:
        raise _Malformed(str(e)) from e
    if not isinstance(traces, int) or isinstance(traces, bool) or not isinstance(sets, list) or not isinstance(rewards, list):
        raise _Malformed("bad types")
    if not sets or len(rewards) != len(sets) or any(not isinstance(r, list) or not isinstance(s, list) for r, s in zip(rewards, sets)):
        raise _Malformed("bad shapes")
    if any(len(s) != len(sets[0]) for s in sets):
        raise _Malformed("ragged sets")
    un, al = line.get("unscorable"), line.get("aggregation_lengths")
    for extra in (un, al):
        if extra is not None and (len(extra) != len(rewards) or any(len(e) != len(r) for e, r in zip(extra, rewards))):
            raise _Malformed("marks or lengths not in the shape of rewards")
    if un is not None and any(not isinstance(b, bool) for row in un for b in row):
        raise _Malformed("unscorable holds a non-boolean")
    if any(v is None for row in rewards for v in row) or any(isinstance(v, (str, bool)) for row in rewards for v in row):
        raise _Malformed("bad reward")
    gates = spiral.Gates()
    boundary = fl.get("boundary") or "gate"
    if "search-target" in fl or "aggregation-target" in fl:
        gates = spiral.Gates(
            spiral.Gate(int(fl.get("search-target") or 0), boundary),
            spiral.Gate(int(fl.get("aggregation-target") or 0), boundary),
        )
    cfg = spiral.Config(
        search_traces=traces,
        set_size=len(sets[0]),
        sets=len(sets),
        aggregations_per_set=max([1] + [len(r) for r in rewards]),
        ordered="ordered" in fl,
        gates=gates,
    )
    flat = lambda rows: [v for row in rows for v in row]  # noqa: E731
    credit = cfg.credit_batch(
        flat(sets),
        np.array(flat(rewards), dtype=np.float64),
        reward_counts=[len(r) for r in rewards],
        unscorable=None if un is None else flat(un),
        search_lengths=line.get("search_lengths"),
        aggregation_lengths=None if al is None else flat(al),
    )
    coefficients = None
    if "coefficients" in fl:
        # The loss coefficients (-coefficients R [-update paper] [-split-roles]).
        coefficients = cfg.loss_coefficients(
            credit,
            search_lengths=line.get("search_lengths"),
            aggregation_lengths=None if al is None else flat(al),
            reduction=fl["coefficients"] or "",
            update="paper" if fl.get("update") == "paper" else "joint_gradient",
            split_roles="split-roles" in fl,
        )
    return credit, coefficients


class CreditVectors(unittest.TestCase):
    def test_credit(self) -> None:
        checked = coefficient_lines = 0
        for case in cases("credit"):
            fl = flags(case["command"])
            for i, (text, want_text) in enumerate(zip(lines(case["input"]), lines(case["output"]))):
                want = parse(want_text)
                with self.subTest(case=case["name"], line=i + 1):
                    if "error" in want:
                        if bridge_only(want["error"]):
                            continue
                        with self.assertRaises((spiral.SpiralError, _Malformed, TypeError, OverflowError, ValueError)):
                            credit_line(text, fl)
                        continue
                    got, coefficients = credit_line(text, fl)
                    self.assertEqual(bits(got.search), bits(want["search"]))
                    self.assertEqual(bits(got.aggregation), bits([v for row in want["aggregation"] for v in row]))
                    self.assertEqual(bits(got.set_scores), bits(want["set_scores"]))
                    self.assertEqual(bits(got.set_advantages), bits(want["set_advantages"]))
                    self.assertEqual(got.appearances.reshape(-1).tolist(), want["appearances"])
                    self.assertEqual(int(np.sum(got.appearances == 0)), want["in_no_set"])
                    self.assertEqual(got.scored_outputs.reshape(-1).tolist(), want["scored_outputs"])
                    self.assertEqual(bool(got.no_signal[0]), want["no_signal"])
                    for role, rep in (("search_gate", got.search_gate), ("aggregation_gate", got.aggregation_gate)):
                        w = want[role]
                        if rep.outputs:  # a gate that is off reports what the bridge counts itself
                            self.assertEqual(
                                (rep.outputs, rep.positive, rep.at_target, rep.gated), (w["outputs"], w["positive"], w["at_target"], w["gated"])
                            )
                            self.assertEqual(bits([rep.mass_removed]), bits([w["mass_removed"]]))
                    if coefficients is not None:
                        self.assertEqual(bits(coefficients.search), bits(want["search_coefficients"]))
                        self.assertEqual(
                            bits(coefficients.aggregation), bits([v for row in want["aggregation_coefficients"] for v in row])
                        )
                        self.assertEqual(bits([coefficients.report.scale]), bits([want["scale"]]))
                        coefficient_lines += 1
                    checked += 1
        self.assertGreater(checked, 100)
        self.assertGreater(coefficient_lines, 10)

    def test_errors_name_what_the_reference_names(self) -> None:
        # The library's own errors for a reward, as fields: the reference's
        # message names rewards[i][j] and its value.
        cfg = spiral.Config(search_traces=8, set_size=2, sets=2, aggregations_per_set=2)
        for bad, reason in ((math.nan, "not_finite"), (math.inf, "not_finite"), (1.5e30, "too_large")):
            with self.subTest(value=bad):
                with self.assertRaises(spiral.BatchError) as cm:
                    cfg.credit_batch([0, 1, 2, 3], np.array([1.0, 0.0, 0.0, bad]))
                e = cm.exception.problems[0]
                self.assertEqual((e.field, e.problem, e.set, e.output, e.reason), ("rewards", 0, 1, 1, reason))


class GroupVectors(unittest.TestCase):
    def test_group(self) -> None:
        checked = 0
        for case in cases("group"):
            fl = flags(case["command"])
            options = spiral.GroupOptions.preset(fl.get("preset") or "dr-grpo")
            for i, (text, want_text) in enumerate(zip(lines(case["input"]), lines(case["output"]))):
                want = parse(want_text)
                with self.subTest(case=case["name"], line=i + 1):
                    try:
                        line = parse(text)
                        ids, rewards = line["ids"], line["rewards"]
                        ok = set(line) <= {"ids", "rewards", "unscorable", "lengths"} and isinstance(ids, list) and isinstance(rewards, list) and all(
                            isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool)) for x in ids
                        )
                    except (ValueError, KeyError, TypeError):
                        ok = False
                    if "error" in want:
                        if ok:
                            with self.assertRaises((spiral.SpiralError, TypeError, ValueError)):
                                spiral.group_advantages(rewards, ids, options, unscorable=line.get("unscorable"), lengths=line.get("lengths"))
                        continue
                    self.assertTrue(ok)
                    adv, rep = spiral.group_advantages(rewards, ids, options, unscorable=line.get("unscorable"), lengths=line.get("lengths"))
                    self.assertEqual(bits(adv), bits(want["advantages"]))
                    self.assertEqual(rep.groups, want["groups"])
                    self.assertEqual(rep.singletons, want["singletons"])
                    self.assertEqual(rep.zero_variance, want["zero_variance"])
                    self.assertEqual(rep.unscored, want["unscored"])
                    self.assertEqual(rep.unscorable, want["unscorable"])
                    checked += 1
        self.assertGreater(checked, 20)


class PassAtKVectors(unittest.TestCase):
    def test_pass_at_k(self) -> None:
        for case in cases("passk"):
            ks = [int(k) for k in flags(case["command"])["k"].split(",")]
            for i, (text, want_text) in enumerate(zip(lines(case["input"]), lines(case["output"]))):
                want = parse(want_text)
                with self.subTest(case=case["name"], line=i + 1):
                    try:
                        line = parse(text)
                        n, c = line["n"], line["c"]
                        ok = set(line) == {"n", "c"} and all(isinstance(x, int) and not isinstance(x, bool) for x in (n, c))
                    except (ValueError, KeyError, TypeError):
                        ok = False
                    if "error" in want:
                        if ok and not bridge_only(want["error"]):
                            with self.assertRaises(spiral.ArgError) as cm:
                                spiral.pass_at_k(n, c, ks)
                            # The same reason, the element named: k[1] for -k 1,4.
                            e = cm.exception
                            reason = want["error"].removeprefix(f"eval: pass@k: {e.arg}: ")
                            self.assertEqual(str(e), f"eval: pass@k: {e.arg}[{e.index}]: {reason}")
                        continue
                    got = spiral.pass_at_k(n, c, ks)
                    self.assertEqual(bits(got), bits([want["pass_at_k"][str(k)] for k in ks]))


class ConstantsVectors(unittest.TestCase):
    def test_constants(self) -> None:
        role_lines = 0
        for case in cases("constants"):
            fl = flags(case["command"])
            n2 = int(fl.get("aggregations") or 4)
            for i, (text, want_text) in enumerate(zip(lines(case["input"]), lines(case["output"]))):
                line, want = parse(text), parse(want_text)
                with self.subTest(case=case["name"], line=i + 1):
                    if "role_weights" in want and "error" not in want:
                        # -reduction R [-split-roles]: Config.RoleWeights.
                        w = spiral.Config(
                            search_traces=line["traces"], set_size=line["size"], sets=line["sets"], aggregations_per_set=n2,
                            ordered=line["ordered"],
                        ).role_weights(fl["reduction"] or "", "split-roles" in fl)
                        rw = want["role_weights"]
                        role_lines += 1
                        self.assertEqual((w.search, w.aggregation), tuple(None if rw[k] is None else Fraction(rw[k]) for k in ("search", "aggregation")))
                        self.assertEqual(
                            bits([w.search_float, w.aggregation_float, w.search_multiplier, w.aggregation_multiplier]),
                            bits([rw["search_float"], rw["aggregation_float"], rw["search_multiplier"], rw["aggregation_multiplier"]]),
                        )
                    if "error" in want:
                        with self.assertRaises(spiral.SpiralError):
                            spiral.Config(
                                search_traces=line["traces"], set_size=line["size"], sets=line["sets"], ordered=line["ordered"]
                            ).constants()
                        continue
                    got = spiral.Config(
                        search_traces=line["traces"], set_size=line["size"], sets=line["sets"], ordered=line["ordered"]
                    ).constants()
                    for name in ("miss_prob", "cover_prob", "m"):
                        self.assertEqual(getattr(got, name), None if want[name] is None else Fraction(want[name]))
                    for name in ("miss_prob_float", "cover_prob_float", "m_float"):
                        self.assertEqual(bits([getattr(got, name)]), bits([want[name]]))
        self.assertGreater(role_lines, 3)


class PlanVectors(unittest.TestCase):
    def test_plan(self) -> None:
        for case in cases("plan"):
            fl = flags(case["command"])
            cfg = spiral.Config(
                search_traces=int(fl["traces"]),
                set_size=int(fl["size"]),
                sets=int(fl["sets"]),
                aggregations_per_set=1,
                ordered="ordered" in fl,
                order="shuffled" if "shuffle" in fl else "index",
                design="balanced" if "balanced" in fl else "uniform",
            )
            want = [parse(t)["sets"] for t in lines(case["output"])]
            with self.subTest(case=case["name"]):
                got = cfg.plan(int(fl["seed"]), int(fl.get("step") or 0), int(fl["problems"]))
                self.assertEqual(got.sets.tolist(), want)
                self.assertEqual(cfg.plan(int(fl["seed"]), int(fl.get("step") or 0), int(fl["problems"]), np.int32).sets.tolist(), want)


if __name__ == "__main__":
    unittest.main()
