"""Plans and credit for a batch of problems."""

from __future__ import annotations

import ctypes
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import _native
from ._errors import BatchError

if TYPE_CHECKING:
    from ._config import Config

_lib = _native.lib


class GateReport(NamedTuple):
    """What one length gate did to a batch (Go's lengthgate.Report).

    Attributes
    ----------
    outputs : int
        Advantages examined.
    positive : int
        How many were > 0 before the gate.
    at_target : int
        Positive advantages of outputs of exactly the target length.
    gated : int
        Positive advantages set to 0.
    mass_removed : float
        Their sum.
    """

    outputs: int = 0
    positive: int = 0
    at_target: int = 0
    gated: int = 0
    mass_removed: float = 0.0


class OverlongReport(NamedTuple):
    """What the soft overlong punishment did to a batch (Go's lengthgate.PenaltyReport).

    Attributes
    ----------
    outputs : int
        Rewards examined.
    penalized : int
        Rewards given a penalty < 0.
    overlong : int
        Rewards of outputs longer than max_length (the full penalty).
    total : float
        The sum of the penalties (<= 0).
    """

    outputs: int = 0
    penalized: int = 0
    overlong: int = 0
    total: float = 0.0


class Credit:
    """SPIRAL's credit for a batch (Go's spiral.BatchCredit), as numpy arrays.

    P problems of N1 search traces and K sets; floating arrays have the dtype
    of the rewards given (float32 or float64; computed in float64 and rounded
    once), counts are int64, flags bool.

    Attributes
    ----------
    search : ndarray, shape (P, N1)
        A_search(y) of every search trace, after the search gate: the scalar
        for the trace's sequence log-probability gradient (search policy).
    aggregation : ndarray, the shape of the rewards
        A_agg of every aggregation output, after the aggregation gate.
    set_scores : ndarray, shape (P, K)
        f_i, the mean of the (shaped) scored rewards of each set.
    set_advantages : ndarray, shape (P, K)
        A_set = f_i - fbar.
    appearances : ndarray, shape (P, N1)
        |G(y)|, the number of scored sets that hold each trace.
    scored_outputs : ndarray, shape (P, K)
        The scored outputs of each set.
    no_signal : ndarray, shape (P,)
        The problem's raw rewards give no gradient (dynamic sampling drops it).
    out_of_range : ndarray, shape (P,)
        The problem's mean raw reward is outside ``Config.reward_range``.
    rejected : ndarray, shape (P,)
        The problem's input was bad (see ``BatchError``); zero credit.
    search_gate, aggregation_gate : GateReport
        What the length gates did.
    overlong : OverlongReport
        What ``Config.overlong`` did.
    """

    __slots__ = (
        "search",
        "aggregation",
        "set_scores",
        "set_advantages",
        "appearances",
        "scored_outputs",
        "no_signal",
        "out_of_range",
        "rejected",
        "search_gate",
        "aggregation_gate",
        "overlong",
    )

    def __init__(
        self,
        search: np.ndarray,
        aggregation: np.ndarray,
        set_scores: np.ndarray,
        set_advantages: np.ndarray,
        appearances: np.ndarray,
        scored_outputs: np.ndarray,
        no_signal: np.ndarray,
        out_of_range: np.ndarray,
        rejected: np.ndarray,
        search_gate: GateReport = GateReport(),
        aggregation_gate: GateReport = GateReport(),
        overlong: OverlongReport = OverlongReport(),
    ) -> None:
        self.search = search
        self.aggregation = aggregation
        self.set_scores = set_scores
        self.set_advantages = set_advantages
        self.appearances = appearances
        self.scored_outputs = scored_outputs
        self.no_signal = no_signal
        self.out_of_range = out_of_range
        self.rejected = rejected
        self.search_gate = search_gate
        self.aggregation_gate = aggregation_gate
        self.overlong = overlong

    def __repr__(self) -> str:
        return (
            f"Credit(problems={self.problems}, skip={int(self.skip.sum())}, "
            f"search_gate={self.search_gate}, aggregation_gate={self.aggregation_gate}, overlong={self.overlong})"
        )

    @property
    def problems(self) -> int:
        """P, the number of problems."""
        return len(self.no_signal)

    @property
    def skip(self) -> np.ndarray:
        """Problems that give no update (rejected, no signal or out of range): resample them."""
        return self.no_signal | self.out_of_range | self.rejected


_local = threading.local()


def plan(cfg: "Config", seed: int, step: int, problems: Any, dtype: Any = np.int64) -> np.ndarray:
    """Draw the plans of a batch; see ``Config.plan``."""
    problems = len(problems) if hasattr(problems, "__len__") else int(problems)
    if problems < 0:
        raise ValueError(f"spiral: problems = {problems} < 0")
    out = np.empty((problems, cfg.sets, cfg.set_size), dtype=dtype)
    d = _native.descriptor(out)
    buf = _native.scratch(3)
    buf[0], buf[1], buf[2] = d
    _native.check(_lib.spiral_plan(cfg._handle.value, seed, step, problems, ctypes.addressof(buf)))
    return out


def credit_batch(
    cfg: "Config",
    sets: Any,
    rewards: Any,
    reward_counts: Any = None,
    unscorable: Any = None,
    search_lengths: Any = None,
    aggregation_lengths: Any = None,
) -> Credit:
    """Compute the credit of a batch; see ``Config.credit_batch``."""
    ints, desc = _native.ints, _native.descriptor
    s = ints(sets, "sets")
    r = _native.floats(rewards, "rewards")
    rc = None if reward_counts is None else ints(reward_counts, "reward_counts")
    un = None if unscorable is None else _native.bools(unscorable, "unscorable")
    sl = None if search_lengths is None else ints(search_lengths, "search_lengths")
    al = None if aggregation_lengths is None else ints(aggregation_lengths, "aggregation_lengths")

    n1, k, size = cfg.search_traces, cfg.sets, cfg._plan_size
    p = s.size // size
    ft = r.dtype
    search = np.empty((p, n1), ft)
    aggregation = np.empty(r.shape, ft)
    set_scores = np.empty((p, k), ft)
    set_advantages = np.empty((p, k), ft)
    appearances = np.empty((p, n1), np.int64)
    scored = np.empty((p, k), np.int64)
    flags = np.empty((3, p), np.bool_)

    loc = _local
    try:
        buf, rep, rep_addr = loc.buf, loc.report, loc.report_addr
    except AttributeError:
        buf = loc.buf = (ctypes.c_int64 * 45)()
        rep = loc.report = _native._CreditReport()
        rep_addr = loc.report_addr = ctypes.addressof(rep)
    buf[0:45] = (
        *desc(s), *desc(r), *desc(rc), *desc(un), *desc(sl), *desc(al),
        *desc(search), *desc(aggregation), *desc(set_scores), *desc(set_advantages),
        *desc(appearances), *desc(scored), *desc(flags[0]), *desc(flags[1]), *desc(flags[2]),
    )  # fmt: skip
    base = ctypes.addressof(buf)
    h = _lib.spiral_credit_batch(cfg._handle.value, base, base + 18 * 8, rep_addr)
    err = _native.take_error(h) if h else None
    if err is not None and not isinstance(err, BatchError):
        raise err
    sg, ag = rep.search, rep.aggregation
    c = Credit(
        search,
        aggregation,
        set_scores,
        set_advantages,
        appearances,
        scored,
        flags[0],
        flags[1],
        flags[2],
        GateReport(sg.outputs, sg.positive, sg.at_target, sg.gated, sg.mass_removed),
        GateReport(ag.outputs, ag.positive, ag.at_target, ag.gated, ag.mass_removed),
        OverlongReport(rep.overlong_outputs, rep.overlong_penalized, rep.overlong_overlong, rep.overlong_total),
    )
    if err is not None:
        err.credit = c
        raise err
    return c


__all__ = ["Credit", "GateReport", "OverlongReport", "plan", "credit_batch"]
