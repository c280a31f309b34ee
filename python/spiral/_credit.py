"""Plans and credit for a batch of problems."""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

import numpy as np

from . import _args, _native
from ._errors import BatchError, InputError, UsageError

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
    once), counts are int64, flags bool. Made by ``Config.credit_batch``;
    passed back to it as ``out``, its arrays are written again in place, as
    Go's BatchCredit is reused from step to step.

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
        "_key",
        "_out",
        "_out_addr",
        "_report",
        "_report_addr",
        "_thread",
    )

    def __init__(self, problems: int, traces: int, sets: int, outputs: tuple, dtype: Any) -> None:
        # The outputs, in three blocks (one per element type) whose parts
        # the library writes: one allocation per block.
        p, n1, k = problems, traces, sets
        ps, pk, o = p * n1, p * k, int(np.prod(outputs))
        fb = np.empty(ps + o + 2 * pk, dtype)
        ib = np.empty(ps + pk, np.int64)
        bb = np.empty((3, p), np.bool_)
        self.search = fb[:ps].reshape(p, n1)
        self.aggregation = fb[ps : ps + o].reshape(outputs)
        self.set_scores = fb[ps + o : ps + o + pk].reshape(p, k)
        self.set_advantages = fb[ps + o + pk :].reshape(p, k)
        self.appearances = ib[:ps].reshape(p, n1)
        self.scored_outputs = ib[ps:].reshape(p, k)
        self.no_signal, self.out_of_range, self.rejected = bb[0], bb[1], bb[2]
        self._key = (p, n1, k, outputs, fb.dtype)
        d, fc, w, b = _native.descriptor, _native._DTYPE_CODES[fb.dtype], _native.I64, _native.BOOL
        self._out, view, self._out_addr = _native.array_block("spiral_credit_out", _OUT_FIELDS)
        fa, ia, ba, f = d(fb)[0], d(ib)[0], d(bb)[0], fb.itemsize
        view[:] = (
            fa, ps, fc, fa + ps * f, o, fc, fa + (ps + o) * f, pk, fc, fa + (ps + o + pk) * f, pk, fc,
            ia, ps, w, ia + ps * 8, pk, w,
            ba, p, b, ba + p, p, b, ba + 2 * p, p, b,
        )  # fmt: skip
        self._report = _native._CreditReport()
        self._report_addr = ctypes.addressof(self._report)
        # The thread that made it, the only one that may pass it as out=.
        self._thread = threading.get_ident()

    @property
    def search_gate(self) -> GateReport:
        """What the search gate did (Go's BatchCredit.Gates.Search)."""
        g = self._report.search
        return GateReport(g.outputs, g.positive, g.at_target, g.gated, g.mass_removed)

    @property
    def aggregation_gate(self) -> GateReport:
        """What the aggregation gate did (Go's BatchCredit.Gates.Aggregation)."""
        g = self._report.aggregation
        return GateReport(g.outputs, g.positive, g.at_target, g.gated, g.mass_removed)

    @property
    def overlong(self) -> OverlongReport:
        """What the overlong punishment did (Go's BatchCredit.Overlong)."""
        r = self._report
        return OverlongReport(r.overlong_outputs, r.overlong_penalized, r.overlong_overlong, r.overlong_total)

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


class LossReport(NamedTuple):
    """What a loss reduction does with the coefficients (Go's loss.Report).

    Attributes
    ----------
    scale : float
        kappa: the trainer's gradient is ``scale`` times the chosen update
        (times the trainer's own constants, such as verl's dp_size); 1 for a
        sum, 1/R for the means.
    outputs : int
        B, the outputs reduced.
    rows : int
        R, those with at least one token.
    tokens : int
        T, their tokens.
    dropped : int
        Outputs with no token whose update is not 0: no coefficient can
        carry their part of the update.
    """

    scale: float = 0.0
    outputs: int = 0
    rows: int = 0
    tokens: int = 0
    dropped: int = 0


class LossCoefficients(NamedTuple):
    """Per-output loss coefficients (Go's spiral.LossCoefficients).

    Put them where the trainer's advantages go (one per sequence, broadcast
    over its tokens): its own loss reduction then gives ``report.scale``
    times the chosen update.

    Attributes
    ----------
    search : ndarray, shape (P, N1)
        The coefficient of every search trace.
    aggregation : ndarray, the shape of the credit's aggregation
        The coefficient of every aggregation output.
    report : LossReport
    """

    search: np.ndarray
    aggregation: np.ndarray
    report: LossReport


REDUCTIONS: tuple[str, ...] = _native.names(_lib.spiral_loss_reductions)
"""The loss reductions, named as the trainers name them (Go's loss.Reduction): ``"token-mean"``, ..."""

_UPDATES = {"joint_gradient": 0, "paper": 1, "scored": 2}


def loss_coefficients(
    cfg: "Config",
    credit: Credit,
    search_lengths: Any,
    aggregation_lengths: Any,
    reduction: str,
    update: str,
    split_roles: bool,
    missing_rate: float = 0.0,
    reward_counts: Any = None,
) -> LossCoefficients:
    """Loss coefficients of a credited batch; see ``Config.loss_coefficients``."""
    if not isinstance(credit, Credit):
        raise TypeError(f"spiral: credit must be a Credit (from credit_batch), got {type(credit).__name__}")
    name = _args.text(reduction, "reduction")
    u = _UPDATES[_args.choice(update, "update", _UPDATES)]
    split = _args.flag(split_roles, "split_roles")
    rate = _args.real(missing_rate, "missing_rate")
    ints = _native.ints
    rc = None if reward_counts is None else ints(reward_counts, "reward_counts")
    scored = np.ascontiguousarray(credit.scored_outputs)
    search = np.ascontiguousarray(credit.search)
    agg = np.ascontiguousarray(credit.aggregation)
    sl = ints(search_lengths, "search_lengths")
    al = ints(aggregation_lengths, "aggregation_lengths")
    _args.shaped(sl, "search_lengths", search.shape, (search.size,))
    _args.shaped(al, "aggregation_lengths", agg.shape, (agg.size,))
    out_s = np.empty(search.shape, search.dtype)
    out_a = np.empty(agg.shape, agg.dtype)
    a = _native.array
    inp = _native._LossIn(
        search=a(search),
        aggregation=a(agg),
        search_lengths=a(sl),
        aggregation_lengths=a(al),
        reward_counts=a(rc),
        scored_outputs=a(scored),
        missing_rate=rate,
    )
    s_out, a_out = a(out_s), a(out_a)
    rep = _native._LossReport()
    _native.check(
        _lib.spiral_loss_coefficients(
            cfg._handle.value, name, len(name), u, int(split), ctypes.byref(inp), ctypes.byref(s_out), ctypes.byref(a_out), ctypes.byref(rep)
        )
    )
    if rep.outputs > 0 and rep.rows == 0:
        raise InputError(
            f"spiral: search_lengths and aggregation_lengths: all {rep.outputs} outputs have 0 tokens, "
            f"so no loss reduction carries an update (lengths are the tokens the loss reads)",
            "search_lengths",
            value=0.0,
        )
    return LossCoefficients(out_s, out_a, LossReport(rep.scale, rep.outputs, rep.rows, rep.tokens, rep.dropped))


_local = threading.local()
_PLAN_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))
_I64 = np.dtype(np.int64)
_U64 = 1 << 64
_ABSENT3 = (0, 0, _native.ABSENT)
# The fields of spiral_credit_in and spiral_credit_out, in the header's order
# (checked against it when the blocks are made).
_IN_FIELDS = ("sets", "rewards", "reward_counts", "unscorable", "search_lengths", "aggregation_lengths")
_OUT_FIELDS = (
    "search", "aggregation", "set_scores", "set_advantages", "appearances", "scored_outputs", "no_signal", "out_of_range", "rejected",
)
_native.array_block("spiral_credit_in", _IN_FIELDS)  # checked at import
_pack_in = struct.Struct(f"={3 * len(_IN_FIELDS)}q").pack_into  # the block's int64 triples, in one call
_get_ident = threading.get_ident
_floats_in, _ints_in = _native.floats_in, _native.ints_in
_MAX_SIZE = _native.MAX_SIZE
_ARRAY_SIZE = _native._ARRAY_SIZE
_spiral_plan, _spiral_credit_batch = _lib.spiral_plan, _lib.spiral_credit_batch  # looked up once
_addressof, _char_from_buffer = ctypes.addressof, ctypes.c_char.from_buffer
_PLAN_CODES = {np.dtype(np.int64): _native.I64, np.dtype(np.int32): _native.I32}
_pack_plan = struct.Struct("=6q").pack_into  # the keys' and the plans' spiral_array


class Plans:
    """The plans of a batch, as the library drew them (Go's Planner.PlanTo).

    ``sets[q, i, j]`` is candidate j of set i of problem q: the index in
    [0, N1) of the search trace shown as candidate j of aggregation prompt i.
    The library keeps its own copy of the plans, so ``Config.credit_batch``
    credits them without checking them again; ``sets`` is read-only. A Plans
    converts to an ndarray (``numpy.asarray``) and indexes like one.

    Attributes
    ----------
    sets : ndarray, shape (P, K, n), read-only
    keys : ndarray of uint64, shape (P,)
        The problems' keys (read-only, shared by the plans of as many
        problems, when ``Config.plan`` was given an int P).
    seed, step : int
        What the plans were drawn from: the plan of problem ``keys[q]`` is a
        function of (seed, step, keys[q]) alone.
    """

    __slots__ = ("sets", "keys", "seed", "step", "_handle", "__weakref__")

    def __init__(self, sets: np.ndarray, keys: np.ndarray, seed: int, step: int, handle: int) -> None:
        sets.flags.writeable = False
        self.sets, self.keys, self.seed, self.step = sets, keys, seed, step
        self._handle = handle

    def __del__(self) -> None:
        if self._handle and _lib is not None:
            _lib.spiral_release(self._handle)
            self._handle = 0

    def __array__(self, dtype: Any = None) -> np.ndarray:
        if dtype is None:
            return self.sets
        try:
            return self.sets.astype(dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"spiral: dtype of plans: {e}") from None

    def __len__(self) -> int:
        return len(self.sets)

    def __getitem__(self, index: Any) -> Any:
        try:
            return self.sets[index]
        except (IndexError, OverflowError) as e:
            raise IndexError(f"spiral: index into plans of shape {self.sets.shape}: {e}") from None
        except (TypeError, ValueError) as e:
            raise TypeError(f"spiral: index into plans: {e}") from None

    @property
    def shape(self) -> tuple:
        """(P, K, n)."""
        return self.sets.shape

    def __repr__(self) -> str:
        return f"Plans(problems={len(self.sets)}, seed={self.seed}, step={self.step})"


def _keys(keys: Any, plan_size: int, name: str = "keys") -> np.ndarray:
    """The problem keys (the argument name) as a contiguous uint64 array: 0..P-1 for an int P."""
    if isinstance(keys, (int, np.integer)) and not isinstance(keys, (bool, np.bool_)):
        # Refused before the keys and the plans are allocated, as Go's
        # PlanTo refuses them.
        most = _native.MAX_SIZE // plan_size
        if not 0 <= keys <= most:
            raise InputError(
                f"spiral: keys: {keys} problems of K*n = {plan_size} members: want 0 to {most} "
                f"(the size cap {_native.MAX_SIZE} members)",
                "keys",
                value=float(keys),
            )
        return np.arange(int(keys), dtype=np.uint64)
    k = _native._array(keys, name)
    if k.size and k.dtype.kind == "O":
        vals = [_args.uint64(v, name) for v in k.reshape(-1)]
        return np.array(vals, dtype=np.uint64)
    if k.size and k.dtype.kind not in "iu":
        raise TypeError(f"spiral: {name} must be integers, got an array of {k.dtype}")
    if k.size and k.dtype.kind == "i" and int(k.min()) < 0:
        raise InputError(f"spiral: {name} hold {int(k.min())} < 0: a key is an unsigned 64-bit integer, in [0, 2**64)", name, value=float(k.min()))
    return np.ascontiguousarray(k.reshape(-1), dtype=np.uint64)


_last_keys: tuple = (-1, None, _ABSENT3)  # the keys 0..P-1 of the last int P planned: (P, keys, descriptor)


def plan(self: "Config", seed: int, step: int, keys: Any, dtype: Any = np.int64) -> Plans:
    """Draw the plans of a batch of problems (Go's Planner.PlanTo).

    The plan of a problem is a function of (seed, step, its key) alone:
    the same whatever the other keys, their number or order, the thread or
    the machine, and the same as Go's ``planner.PlanTo(&plans, seed, step,
    keys)`` and ``spiral plan -seed S -step T`` (which plans keys
    0..P-1) give. A data-parallel trainer whose ranks plan their own
    shards gets the plans of one process planning every problem, and
    dynamic sampling that replaces some problems leaves the others' plans
    unchanged.

    Parameters
    ----------
    seed, step : int
        Unsigned 64-bit integers.
    keys : int or array_like of int
        Each problem's key, an unsigned 64-bit integer (for instance its
        index in the data set); an int P plans the keys 0..P-1.
    dtype : {numpy.int64, numpy.int32}
        The element type of ``sets``.

    Returns
    -------
    Plans
        ``plans.sets[q, i, j]`` (or ``plans[q, i, j]``) is candidate j of
        set i of problem ``keys[q]``, a search trace index in [0, N1), in
        presentation order; ``credit_batch`` credits them without a check.
    """
    cfg = self
    global _last_keys
    if not (type(seed) is int and 0 <= seed < _U64):
        seed = _args.uint64(seed, "seed")
    if not (type(step) is int and 0 <= step < _U64):
        step = _args.uint64(step, "step")
    if dtype is np.int64:
        dt = _I64
    else:
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError):
            raise TypeError(f"spiral: dtype = {dtype!r}, want numpy.int64 or numpy.int32") from None
        if dt not in _PLAN_DTYPES:
            raise TypeError(f"spiral: dtype = {dt}, want numpy.int64 or numpy.int32")
    last = _last_keys  # read once: another thread may replace it
    if type(keys) is int and keys == last[0] and keys * cfg._plan_size <= _MAX_SIZE:
        # The keys 0..P-1 of the last plan of as many problems, read-only.
        k, kd = last[1], last[2]
    else:
        k = _keys(keys, cfg._plan_size)
        kd = _native.descriptor(k.view(np.int64))
        if type(keys) is int:
            k.flags.writeable = False
            _last_keys = (keys, k, kd)
    k_, n = cfg._dims[0], cfg._dims[1]
    out = np.empty((len(k), k_, n), dtype=dt)
    block = _local.__dict__.get("plan")
    if block is None:
        arrays = (_native._Array * 2)()
        handle = ctypes.c_size_t()
        block = _local.plan = ((ctypes.c_int64 * 6).from_buffer(arrays), ctypes.addressof(arrays), handle, ctypes.addressof(handle), arrays)
    od = (_addressof(_char_from_buffer(out)), out.size, _PLAN_CODES[dt]) if out.size else _native.descriptor(out)
    _pack_plan(block[0], 0, *kd, *od)
    base = block[1]
    h = _spiral_plan(cfg._handle.value, seed, step, base, base + _ARRAY_SIZE, block[3])
    if h:
        raise _native.take_error(h)
    return Plans(out, k, seed, step, block[2].value)


def credit_batch(
    self: "Config",
    sets: Any,
    rewards: Any,
    *,
    reward_counts: Any = None,
    unscorable: Any = None,
    search_lengths: Any = None,
    aggregation_lengths: Any = None,
    out: Optional[Credit] = None,
) -> Credit:
    """Compute SPIRAL's credit for a batch of problems (Go's Config.CreditBatch).

    With sets G_i, set scores f_i (the mean reward of set i) and fbar
    their mean: A_set(G_i) = f_i - fbar, A_search(y) = the mean of A_set
    over the sets that hold y (0 in no set), A_agg(i, j) = r_ij - f_i.
    The passes, in order: checks; dynamic sampling on the raw rewards
    (``no_signal``, ``out_of_range``); ``overlong`` shaping; the credit;
    the length gates.

    Arrays may be numpy arrays (float32 or float64 rewards, int32 or int64
    indices and lengths: read in place when contiguous, so no other thread
    may write them during the call; copied otherwise),
    torch tensors (through ``numpy()``) or sequences. Shapes are checked:
    each array has the shape below or is flat (one dimension, in the same
    order); a transposed array is refused naming the argument and both shapes.

    Parameters
    ----------
    sets : Plans, or array_like of int, shape (P, K, n), (P*K, n) or (P*K*n,)
        The plans ``Config.plan`` drew (credited without a check), or sets
        from elsewhere, ``sets[q, i, j]`` (or flat ``(q*K+i)*n + j``) being
        candidate j of set i of problem q (checked: a bad problem's sets are
        reported in a ``BatchError``).
    rewards : array_like of float
        One per aggregation output, set after set: shape (P, K, N2), (P*K,
        N2) or (P*K*N2,); flat, sum(reward_counts) long, with
        ``reward_counts``.
    reward_counts : array_like of int, shape (P, K) or (P*K,), optional
        The outputs of each set, in [1, N2], when a generation was
        dropped (ragged sets); ``rewards`` is then flat.
    unscorable : array_like of bool, like rewards, optional
        Outputs that could not be scored: their reward is not read (it may
        be NaN), they are left out of every score and baseline and get
        advantage 0.
    search_lengths : array_like of int, shape (P, N1) or (P*N1,), optional
        Search trace lengths in tokens; required by the search gate.
    aggregation_lengths : array_like of int, like rewards, optional
        Aggregation output lengths; required by the aggregation gate and
        ``overlong``.
    out : Credit, optional
        The Credit of an earlier batch of the same shape and dtype, written
        again in place and returned (no allocation: the fast path of a
        trainer that credits a batch of one size every step). Only the
        thread that made it may pass it (``UsageError`` otherwise): each
        thread reuses its own, so that no two calls write one Credit.

    Returns
    -------
    Credit

    Raises
    ------
    TypeError
        An argument of the wrong kind (``out`` not a Credit, an array not of
        numbers), naming it.
    UsageError
        ``out`` made by another thread.
    InputError
        An array of the wrong shape or with more elements than the problems
        of ``sets`` have (refused before anything is copied), or a layout
        that does not fit the configuration (a length that is not P*K*n,
        P*K*N2 or sum(reward_counts), a count outside [1, N2], lengths
        missing for a gate); nothing is computed.
    BatchError
        Some problems are bad (a NaN, infinite or too large reward, a bad
        set, a negative length): ``e.problems`` lists each as an
        InputError naming field, problem, set and output, and
        ``e.credit`` holds the credit of every other problem, the bad ones
        marked in ``rejected`` with zero credit.
    """
    if out is not None:
        if type(out) is not Credit:
            raise TypeError(f"spiral: out must be a Credit (from credit_batch), got {type(out).__name__}")
        if out._thread != _get_ident():
            # Two threads writing one Credit would corrupt each other's
            # results: each thread reuses its own.
            raise UsageError("spiral: out was made by another thread: pass each thread's own Credit as out")
    k, n, n1, n2 = self._dims
    if type(sets) is Plans:
        plans, s, sd = sets._handle, sets.sets, _ABSENT3
    else:
        s, sd = _ints_in(sets, "sets")
        plans = 0
    # Shapes are checked, and sizes before anything is allocated. An array
    # whose length does not fit the problems of sets is named with them.
    size, kn = s.size, k * n
    if size % kn:
        raise InputError(f"spiral: sets: {size} members, not a multiple of K*n = {k}*{n}", "sets", value=float(size))
    p = size // kn
    pk = p * k
    if s.ndim != 1 and s.shape != (p, k, n):
        _args.shaped(s, "sets", (p, k, n), (pk, n))
    if size > _MAX_SIZE:
        raise InputError(f"spiral: sets has {size} members, more than the size cap {_MAX_SIZE}", "sets", value=float(size))
    r, rd = _floats_in(rewards, "rewards")
    rc, rcd = (None, _ABSENT3) if reward_counts is None else _ints_in(reward_counts, "reward_counts")
    un = None if unscorable is None else _native.bools(unscorable, "unscorable")
    sl, sld = (None, _ABSENT3) if search_lengths is None else _ints_in(search_lengths, "search_lengths")
    al, ald = (None, _ABSENT3) if aggregation_lengths is None else _ints_in(aggregation_lengths, "aggregation_lengths")
    rs = r.shape
    if rc is None:
        if rs != (p, k, n2):
            _args.shaped(r, "rewards", (p, k, n2), (pk, n2), (pk * n2,), context=f"for the {p} problems of sets (a ragged batch gives reward_counts)")
    else:
        _args.shaped(rc, "reward_counts", (p, k), (pk,), problems=p)
        if r.ndim != 1:
            raise InputError(f"spiral: rewards has shape {rs}, want a flat array (sum(reward_counts),) with reward_counts", "rewards", value=float(r.size))
        if r.size > 2 * pk * n2:
            raise InputError(f"spiral: rewards has {r.size} elements, more than P*K*N2 = {pk * n2} for the {p} problems of sets", "rewards", value=float(r.size))
        if rc.size and 1 <= int(rc.min()) and int(rc.max()) <= n2 and int(rc.sum()) != r.size:
            raise InputError(f"spiral: rewards has {r.size} elements, want sum(reward_counts) = {int(rc.sum())}", "rewards", value=float(r.size))
    # The lengths of the arrays parallel to the rewards, once the rewards'
    # own layout holds (else the library names the rewards or their counts).
    if rc is None or (rc.size and int(rc.min()) >= 0 and int(rc.sum()) == r.size):
        if un is not None:
            _args.shaped(un, "unscorable", rs, (r.size,), context="parallel to rewards")
        if al is not None and al.shape != rs:
            _args.shaped(al, "aggregation_lengths", rs, (r.size,), context="parallel to rewards")
    if sl is not None and sl.shape != (p, n1):
        _args.shaped(sl, "search_lengths", (p, n1), (p * n1,), problems=p)

    key = (p, n1, k, rs, r.dtype)
    if out is None:
        c = Credit(p, n1, k, rs, r.dtype)
    else:
        c = out
        if c._key != key:
            raise InputError(
                f"spiral: out holds the credit of {c._key[0]} problems of N1 = {c._key[1]}, K = {c._key[2]}, "
                f"rewards {c._key[3]} {c._key[4]}; this batch has {p} problems of N1 = {n1}, "
                f"K = {k}, rewards {rs} {r.dtype}",
                "out",
            )
    block = _local.__dict__.get("credit_in")
    if block is None:
        block = _local.credit_in = _native.array_block("spiral_credit_in", _IN_FIELDS)
    _pack_in(block[1], 0, *sd, *rd, *rcd, *(_ABSENT3 if un is None else _native.descriptor(un)), *sld, *ald)
    h = _spiral_credit_batch(self._handle.value, plans, block[2], c._out_addr, c._report_addr)
    if h:
        err = _native.take_error(h)
        if isinstance(err, BatchError):
            err.credit = c
        raise err
    return c


__all__ = ["Credit", "GateReport", "OverlongReport", "LossCoefficients", "LossReport", "REDUCTIONS", "plan", "credit_batch", "loss_coefficients"]
