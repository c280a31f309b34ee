"""A step's flat rows (one per generated sequence) in the library's layout, and back.

verl's DataProto and TRL's batches hold one row per generated sequence; the
library reads a batch problem by problem: ``(P, N1)`` search traces, and the
aggregation outputs set after set. ``Rows`` maps one to the other; the
micro-batch coefficients (``part_coefficients``, ``reduction_scale``) are
computed on any subset of the rows.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _args, _native
from ._errors import BatchError, InputError
from . import _credit
from ._credit import Credit, LossReport, Plans

SEARCH, AGGREGATION = 0, 1

_lib = _native.lib


_PartIn = _native.STRUCTS["spiral_part_in"]  # built from spiral_abi.h


_lib.spiral_part_coefficients.restype = ctypes.c_size_t
_lib.spiral_part_coefficients.argtypes = [
    ctypes.c_char_p,
    ctypes.c_int64,
    ctypes.c_double,
    ctypes.POINTER(_PartIn),
    ctypes.POINTER(_native._Array),
    ctypes.POINTER(_native._LossReport),
]
_lib.spiral_reduction_scale.restype = ctypes.c_size_t
_lib.spiral_reduction_scale.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_double)]


def _array(a: np.ndarray | None) -> _native._Array:
    return _native._Array(*_native.descriptor(a))


def _one_dim(a: np.ndarray, name: str) -> np.ndarray:
    if a.ndim != 1:
        raise InputError(f"spiral: {name} has shape {a.shape}, want one value per row (n,)", name, value=float(a.size))
    return a


def reduction_scale(reduction: str, outputs: int, rows: int) -> float:
    """kappa for a whole batch (Go's loss.ScaleOf): the scale every part's coefficients share.

    Parameters
    ----------
    reduction : str
        The trainer's reduction, one of ``REDUCTIONS``.
    outputs : int
        B, every output of the batch (on every rank, in data-parallel training).
    rows : int
        R, those with at least one token (on every rank).

    Returns
    -------
    float
        1 for the sums, 1/B for ``trl-dr-grpo``, 1/R for the others; 0 when R is 0.
    """
    b = _args.bounded(outputs, "outputs", 0, 2**63 - 1)
    r = _args.bounded(rows, "rows", 0, b, context="(at most outputs)")
    out = ctypes.c_double()
    name = _args.text(reduction, "reduction")
    _native.check(_lib.spiral_reduction_scale(name, len(name), b, r, ctypes.byref(out)))
    return out.value


def part_coefficients(
    update: Any,
    lengths: Any,
    reduction: str,
    *,
    scale: float,
    terms: Any = None,
    over_sequences: Any = None,
    over_tokens: Any = None,
) -> tuple[np.ndarray, LossReport]:
    """Coefficients of one part of a batch (a micro-batch, a rank's rows) at a kappa the caller fixes.

    Go's ``loss.PartCoefficients``. The trainer reduces the part with
    ``reduction`` over the part's own counts (or over the divisors
    ``over_*``, counts beyond the part) and adds the parts' gradients; with
    the same ``scale`` for every part, their sum is ``scale`` times the whole
    update ``sum_o update[o] grad log pi(y_o)``, whatever the parts' counts.

    Which call is right is the trainer's setting:

    - verl, legacy worker (``trainer.use_legacy_worker_impl`` ``auto``, the
      default, or ``enable``: ``dp_actor``): each micro-batch is reduced on
      its own and multiplied by ``1/gradient_accumulation``. One call per
      micro-batch, no ``over_*``. With ``use_dynamic_bsz`` the factor is the
      micro-batch's rows over ``ppo_mini_batch_size``: pass ``scale = kappa
      * ppo_mini_batch_size / rows``.
    - verl, new engine (``use_legacy_worker_impl=disable``): ``ppo_loss``
      divides by ``batch_num_tokens`` (the mini-batch's tokens, all-reduced)
      and ``global_batch_size`` (``ppo_mini_batch_size * rollout.n``: every
      row of the mini-batch, empty ones included): ``over_tokens`` and
      ``over_sequences`` those.
    - TRL ``GRPOTrainer``, ``loss_type`` ``"grpo"``, ``"bnpo"``,
      ``"dr_grpo"``: each micro-batch (gradient accumulation step; the
      ``steps_per_generation`` steps share one generation) is reduced on its
      own: no ``over_*``. ``"dapo"`` (the default) divides by
      ``num_items_in_batch``, the generation batch's tokens gathered from
      every process: ``over_tokens=[that]``.

    Truncated outputs: TRL's ``mask_truncated_completions=True`` zeroes their
    mask, so pass length 0 for them (they carry nothing, and are counted in
    the report's ``dropped`` when their update is not 0); DAPO's overlong
    filter likewise. A soft overlong penalty belongs in the rewards
    (``Config.overlong``), not here.

    Parameters
    ----------
    update : array_like, shape (n,)
        u_o of the part's outputs: the per-row coefficients of
        ``Config.loss_coefficients(..., reduction="sum")`` (or ``Rows.update``).
    lengths : array_like of int, shape (n,)
        L_o, the tokens of each output the loss reads (its response mask's sum).
    reduction : str
        The trainer's reduction, one of ``REDUCTIONS``.
    scale : float
        kappa, the same for every part: ``reduction_scale`` of the whole batch.
    terms : array_like of int, shape (n,), optional
        The loss term of each output (two terms: search and aggregation
        outputs reduced separately); one term when omitted.
    over_sequences, over_tokens : array_like of int, one per term, optional
        The divisors beyond the part: the count the sequence means divide
        by, the tokens the token means divide by. Only the one the reduction
        reads is needed (and checked: at least the part's own count).

    Returns
    -------
    coefficients : ndarray of float64, shape (n,)
        Where the trainer's advantages go, broadcast over the row's tokens.
    report : LossReport
        ``scale`` is kappa; ``outputs``, ``rows``, ``tokens`` count the part.
    """
    u = _one_dim(_native.floats(update, "update"), "update")
    ln = _native.ints(lengths, "lengths")
    _args.shaped(ln, "lengths", u.shape, context="parallel to update")
    tm = None
    if terms is not None:
        tm = _native.ints(terms, "terms")
        _args.shaped(tm, "terms", u.shape, context="parallel to update")
    os_ = ot = None
    if over_sequences is not None or over_tokens is not None:
        given = {}
        for name, v in (("over_sequences", over_sequences), ("over_tokens", over_tokens)):
            if v is not None:
                a = np.ascontiguousarray(np.atleast_1d(_native.ints(v, name)), np.int64)
                given[name] = _one_dim(a, name)
        if len(given) == 2:
            _args.shaped(given["over_tokens"], "over_tokens", given["over_sequences"].shape, context="parallel to over_sequences")
        shape = next(iter(given.values())).shape
        os_ = given.get("over_sequences", np.zeros(shape, np.int64))
        ot = given.get("over_tokens", np.zeros(shape, np.int64))
    s = _args.real(scale, "scale", InputError)
    out = np.empty(u.shape, np.float64)
    pin = _PartIn(_array(u), _array(ln), _array(tm), _array(os_), _array(ot))
    oa = _array(out)
    rep = _native._LossReport()
    name = _args.text(reduction, "reduction")
    _native.check(_lib.spiral_part_coefficients(name, len(name), s, ctypes.byref(pin), ctypes.byref(oa), ctypes.byref(rep)))
    return out, LossReport(rep.scale, rep.outputs, rep.rows, rep.tokens, rep.dropped)


def _mask(response_mask: Any) -> np.ndarray:
    """A response mask (bool, integer or float 0/1) as an array, refused naming it if it is not numbers."""
    m = _native._array(_native._to_numpy(response_mask), "response_mask")
    if m.size and m.dtype.kind not in "biuf":
        raise TypeError(f"spiral: response_mask must hold 0/1 numbers or booleans, got an array of {m.dtype}")
    return m


def response_lengths(response_mask: Any) -> np.ndarray:
    """Each row's length in tokens from verl's ``(bs, T)`` response mask (or TRL's completion mask)."""
    m = _mask(response_mask)
    if m.ndim != 2:
        raise InputError(f"spiral: response_mask has shape {m.shape}, want (bs, T)", "response_mask", value=float(m.size))
    return m.astype(bool).sum(axis=1).astype(np.int64)


def per_token(values: Any, response_mask: Any) -> np.ndarray:
    """verl's ``(bs, T)`` token layout: each row's value on its response tokens, 0 elsewhere.

    verl's ``data.batch["advantages"]`` and TRL's ``(B, T)`` advantages take
    this; TRL's ``(B,)`` advantages take ``values`` as they are.
    """
    v = _native.floats(values, "values")
    m = _mask(response_mask)
    if m.ndim != 2:
        raise InputError(f"spiral: response_mask has shape {m.shape}, want (bs, T)", "response_mask", value=float(m.size))
    _args.shaped(v, "values", (m.shape[0],), context="one per row of response_mask")
    return v[:, None] * m.astype(bool)


class Rows:
    """Where each of a step's flat rows sits in the library's batch layout, and back.

    A row is one generated sequence: a search trace (role ``SEARCH``) with
    its trace index y in [0, N1), or an aggregation output (role
    ``AGGREGATION``) with its set i in [0, K) and output index j in [0, N2);
    both with their problem's key. Rows may come in any order, aggregation
    outputs may be missing (dropped generations: fewer than N2 in a set).

    Parameters
    ----------
    config : Config
    keys : array_like of uint64, shape (P,)
        The batch's problem keys, in the order of its ``Plans``.
    key : array_like of uint64, shape (rows,)
        Each row's problem key.
    role : array_like of int, shape (rows,)
        ``SEARCH`` (0) or ``AGGREGATION`` (1).
    index : array_like of int, shape (rows,)
        The trace index y of a search row, the output index j of an
        aggregation row.
    set : array_like of int, shape (rows,)
        The set i of an aggregation row (ignored for search rows).

    Attributes
    ----------
    problem : ndarray of int64, shape (rows,)
        Each row's problem, its position in ``keys``.
    role : ndarray of int8, shape (rows,)
        The roles, which are the loss terms when the roles are reduced apart.
    reward_counts : ndarray of int64, shape (P*K,)
        The aggregation outputs of each set present.
    """

    def __init__(self, config: Any, keys: Any, key: Any, role: Any, index: Any, set: Any) -> None:
        from ._config import Config  # here: _config imports this module's neighbours

        if not isinstance(config, Config):
            raise TypeError(f"spiral: config must be a Config, got {type(config).__name__}")
        self.config = config
        keys = _one_dim(_native._array(_native._to_numpy(keys), "keys"), "keys")
        keys = _credit._keys(keys, config._plan_size)
        uniq, counts = np.unique(keys, return_counts=True)
        if len(uniq) != len(keys):
            twice = int(uniq[np.flatnonzero(counts > 1)[0]])
            raise InputError(f"spiral: keys hold {twice} more than once: a problem's key is its own", "keys", value=float(twice))
        key = _one_dim(_native._array(_native._to_numpy(key), "key"), "key")
        key = _credit._keys(key, config._plan_size, "key")
        n = len(key)
        role = _one_dim(_native.ints(role, "role"), "role")
        index = _one_dim(_native.ints(index, "index"), "index")
        set_ = _one_dim(_native.ints(set, "set"), "set")
        for name, a in (("role", role), ("index", index), ("set", set_)):
            _args.shaped(a, name, (n,), context="parallel to key")
        n1, k, n2 = config.search_traces, config.sets, config.aggregations_per_set
        p = len(keys)
        by_key = np.argsort(keys, kind="stable")
        pos = np.searchsorted(keys, key, sorter=by_key)
        pos = np.minimum(pos, max(p - 1, 0))
        problem = by_key[pos] if p else np.zeros(n, np.int64)
        unknown = np.flatnonzero(keys[problem] != key) if p else np.arange(n)
        if len(unknown):
            r = int(unknown[0])
            raise InputError(f"spiral: key[{r}] = {int(key[r])} is not one of keys", "key", output=r, value=float(key[r]))
        bad = np.flatnonzero((role != SEARCH) & (role != AGGREGATION))
        if len(bad):
            r = int(bad[0])
            raise InputError(f"spiral: role[{r}] = {role[r]}, want SEARCH (0) or AGGREGATION (1)", "role", output=r, value=float(role[r]))
        search = role == SEARCH
        agg = ~search
        limit = np.where(search, n1, n2)
        bad = np.flatnonzero((index < 0) | (index >= limit))
        if len(bad):
            r = int(bad[0])
            raise InputError(f"spiral: index[{r}] = {index[r]} outside [0, {limit[r]}) for its role", "index", output=r, value=float(index[r]))
        bad = np.flatnonzero(agg & ((set_ < 0) | (set_ >= k)))
        if len(bad):
            r = int(bad[0])
            raise InputError(f"spiral: set[{r}] = {set_[r]} outside [0, K = {k})", "set", output=r, value=float(set_[r]))
        self.problem = problem.astype(np.int64)
        self.role = role.astype(np.int8)
        self.keys = keys
        self._search = search
        self._agg = agg
        # Search trace y of problem q is entry q*N1 + y: every one present once.
        self._search_at = self.problem[search] * n1 + index[search]
        seen = np.bincount(self._search_at, minlength=p * n1)
        if len(seen) > p * n1 or (seen != 1).any():
            at = int(np.flatnonzero(seen != 1)[0])
            raise InputError(
                f"spiral: search trace {at % n1} of problem key {int(keys[at // n1])} appears {int(seen[at])} times "
                f"in the rows' key, role and index, want once",
                "index",
                problem=at // n1,
                value=float(seen[at]),
            )
        # Aggregation outputs set after set, a set's outputs in output order.
        s = self.problem[agg] * k + set_[agg]
        slot = s * n2 + index[agg]
        if len(np.unique(slot)) != len(slot):
            raise InputError("spiral: an aggregation output appears twice in the rows' key, role, set and index", "index")
        self._order = np.argsort(slot, kind="stable")
        self._agg_at = np.empty(len(self._order), np.int64)
        self._agg_at[self._order] = np.arange(len(self._order))
        self.reward_counts = np.bincount(s, minlength=p * k).astype(np.int64)

    def __len__(self) -> int:
        return len(self.problem)

    @property
    def search(self) -> np.ndarray:
        """The search rows (a bool mask over the rows)."""
        return self._search

    @property
    def aggregation(self) -> np.ndarray:
        """The aggregation rows (a bool mask over the rows)."""
        return self._agg

    def _column(self, column: Any, name: str, convert: Any = None) -> np.ndarray:
        """A per-row column as an array of shape (rows,), refused naming it otherwise."""
        c = convert(column, name) if convert else _native._array(_native._to_numpy(column), name)
        _args.shaped(c, name, (len(self.problem),), context="one value per row")
        return c

    def _sets(self, plans: Any) -> np.ndarray:
        """The sets of plans for this batch's problems: (P, K, n), or (P*K, n) or flat for an array."""
        p, k, n = len(self.keys), self.config.sets, self.config.set_size
        if isinstance(plans, Plans):
            sets = plans.sets
            _args.shaped(sets, "plans", (p, k, n), context=f"for the {p} problems of keys")
            return sets
        sets = _native.ints(plans, "plans")
        _args.shaped(sets, "plans", (p, k, n), (p * k, n), (p * k * n,), context=f"for the {p} problems of keys")
        return sets

    def _credit(self, credit: Any) -> Credit:
        """credit, refused naming it unless it is the credit of these rows' batch."""
        if not isinstance(credit, Credit):
            raise TypeError(f"spiral: credit must be a Credit (from credit), got {type(credit).__name__}")
        p, n1 = len(self.keys), self.config.search_traces
        if credit.search.shape != (p, n1) or credit.aggregation.size != len(self._agg_at):
            raise InputError(
                f"spiral: credit holds {credit.problems} problems and {credit.aggregation.size} aggregation outputs; "
                f"these rows have {p} problems and {len(self._agg_at)} aggregation outputs",
                "credit",
                value=float(credit.problems),
            )
        return credit

    def members(self, plans: Plans | np.ndarray) -> np.ndarray:
        """The rows of the search traces each aggregation prompt shows.

        Returns an int64 array of shape (P, K, n): ``members[q, i, j]`` is
        the row of candidate j of set i of problem q, so that
        ``texts[rows.members(plans)]`` holds every prompt's traces.
        """
        p, n1 = len(self.keys), self.config.search_traces
        sets = self._sets(plans).reshape(p, self.config.sets, self.config.set_size)
        if sets.size and (int(sets.min()) < 0 or int(sets.max()) >= n1):
            bad = int(sets.min()) if int(sets.min()) < 0 else int(sets.max())
            raise InputError(f"spiral: plans hold {bad}, not a search trace index in [0, N1 = {n1})", "plans", value=float(bad))
        row_of = np.empty(p * n1, np.int64)
        row_of[self._search_at] = np.flatnonzero(self._search)
        return row_of[np.arange(p)[:, None, None] * n1 + sets]

    def search_values(self, column: Any) -> np.ndarray:
        """The search rows' values of a per-row column, shape (P, N1)."""
        return self._search_values(self._column(column, "column"))

    def _search_values(self, c: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.keys) * self.config.search_traces, c.dtype)
        out[self._search_at] = c[self._search]
        return out.reshape(len(self.keys), self.config.search_traces)

    def aggregation_values(self, column: Any) -> np.ndarray:
        """The aggregation rows' values of a per-row column, set after set (the rewards' layout)."""
        return self._aggregation_values(self._column(column, "column"))

    def _aggregation_values(self, c: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(c[self._agg][self._order])

    def to_rows(self, search: Any, aggregation: Any) -> np.ndarray:
        """Per-row values from per-trace ``(P, N1)`` and per-output (set after set) values."""
        p, n1, k, n2 = len(self.keys), self.config.search_traces, self.config.sets, self.config.aggregations_per_set
        s = _native._array(_native._to_numpy(search), "search")
        _args.shaped(s, "search", (p, n1), (p * n1,), context=f"for the {p} problems of keys")
        a = _native._array(_native._to_numpy(aggregation), "aggregation")
        r = len(self._agg_at)
        full = ((p, k, n2), (p * k, n2)) if r == p * k * n2 else ()
        _args.shaped(a, "aggregation", (r,), *full, context=f"for the {r} aggregation rows")
        try:
            dtype = np.result_type(s, a)
        except TypeError as e:
            raise TypeError(f"spiral: search ({s.dtype}) and aggregation ({a.dtype}) have no common type: {e}") from None
        out = np.zeros(len(self.problem), dtype)
        out[self._search] = s.reshape(-1)[self._search_at]
        out[self._agg] = a.reshape(-1)[self._agg_at]
        return out

    def credit(self, plans: Plans | np.ndarray, reward: Any, *, lengths: Any, unscorable: Any = None, out: Credit | None = None) -> Credit:
        """Credit the batch from per-row columns (``Config.credit_batch``).

        ``reward`` holds each aggregation row's reward (search rows' values
        are ignored); ``lengths`` each row's length in tokens; ``unscorable``
        marks aggregation rows whose reward could not be computed. Errors
        name these arguments (bad plans, refused by ``credit_batch`` as
        ``sets``, are named ``plans``).
        """
        sets = self._sets(plans)
        if isinstance(plans, Plans):
            sets = plans  # credited by its handle, without a check
        reward = self._column(reward, "reward", _native.floats)
        ln = self._column(lengths, "lengths", _native.ints)
        un = None if unscorable is None else self._column(unscorable, "unscorable", _native.bools)
        try:
            return self.config.credit_batch(
                sets,
                self._aggregation_values(reward),
                reward_counts=self.reward_counts,
                unscorable=None if un is None else self._aggregation_values(un),
                search_lengths=self._search_values(ln),
                aggregation_lengths=self._aggregation_values(ln),
                out=out,
            )
        except BatchError as e:
            if not any(x.field == "sets" for x in e.problems):
                raise
            renamed = BatchError(f"spiral: plans: {str(e).removeprefix('spiral: ')}", [_plans_error(x) for x in e.problems])
            renamed.credit = e.credit
            raise renamed from None
        except InputError as e:
            if e.field != "sets":
                raise
            raise _plans_error(e) from None

    def keep(self, credit: Credit) -> np.ndarray:
        """The rows of problems the credit keeps (not ``skip``): a bool mask."""
        return ~np.asarray(self._credit(credit).skip)[self.problem]

    def advantages(self, credit: Credit) -> np.ndarray:
        """Each row's advantage (A_search or A_agg)."""
        c = self._credit(credit)
        return self.to_rows(c.search, c.aggregation.reshape(-1))

    def update(self, credit: Credit, *, lengths: Any, update: str = "joint_gradient") -> np.ndarray:
        """Each row's u_o, the chosen update's coefficient (0 for a row of no token).

        The coefficients of ``Config.loss_coefficients`` with the ``sum``
        reduction, per row: feed a subset of them to ``part_coefficients``.
        """
        credit = self._credit(credit)
        ln = self._column(lengths, "lengths", _native.ints)
        lc = self.config.loss_coefficients(
            credit,
            search_lengths=self._search_values(ln),
            aggregation_lengths=self._aggregation_values(ln),
            reduction="sum",
            update=update,
        )
        return self.to_rows(lc.search, lc.aggregation.reshape(-1))

    def coefficients(
        self,
        credit: Credit,
        *,
        lengths: Any,
        reduction: str,
        update: str = "joint_gradient",
        split_roles: bool = False,
    ) -> tuple[np.ndarray, LossReport]:
        """Each row's coefficient for a reduction over all the rows at once (``Config.loss_coefficients``).

        For a trainer that reduces the rows in parts (micro-batches), use
        ``update`` and ``part_coefficients`` per part instead.
        """
        credit = self._credit(credit)
        ln = self._column(lengths, "lengths", _native.ints)
        lc = self.config.loss_coefficients(
            credit,
            search_lengths=self._search_values(ln),
            aggregation_lengths=self._aggregation_values(ln),
            reduction=reduction,
            update=update,
            split_roles=split_roles,
        )
        return self.to_rows(lc.search, lc.aggregation.reshape(-1)), lc.report


def _plans_error(e: InputError) -> InputError:
    """e, an error of credit_batch's sets, named as Rows.credit's plans."""
    if e.field != "sets":
        return e
    return InputError(f"spiral: plans: {str(e).removeprefix('spiral: ')}", "plans", e.problem, e.set, e.output, e.value, e.reason, e.set_problem)
