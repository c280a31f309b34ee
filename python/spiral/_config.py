"""The configuration of a SPIRAL step, its constants and role weights."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import operator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from . import _credit, _native
from ._errors import ConfigError

_lib = _native.lib


@dataclass(frozen=True)
class Gate:
    """The asymmetric length gate of Eq. 8 (Go's lengthgate.Gate).

    A positive advantage of an output longer than ``target`` tokens is set
    to 0; negative advantages are kept.

    Parameters
    ----------
    target : int
        L_target in tokens; 0 disables the gate.
    boundary : {"gate", "keep"}
        What happens at exactly ``target`` tokens: gated (the default, Eq. 8
        read literally) or kept.
    """

    target: int = 0
    boundary: str = "gate"

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", operator.index(self.target))


@dataclass(frozen=True)
class Gates:
    """One length gate per role (Go's lengthgate.Gates); the default gates nothing."""

    search: Gate = field(default_factory=Gate)
    aggregation: Gate = field(default_factory=Gate)

    @classmethod
    def shared(cls, target: int, boundary: str = "gate") -> "Gates":
        """Return Gates with the same gate for search traces and aggregation outputs."""
        g = Gate(target, boundary)
        return cls(g, g)


@dataclass(frozen=True)
class SoftOverlong:
    """DAPO's soft overlong punishment, added to each aggregation reward (Go's lengthgate.SoftOverlong).

    Parameters
    ----------
    max_length : int
        L_max in tokens, >= 1.
    buffer : int
        The length of the linear punishment interval, 0 <= buffer <= max_length.
    factor : float
        The penalty's scale, 0 < factor <= 1e30 (DAPO's is 1).
    """

    max_length: int
    buffer: int
    factor: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_length", operator.index(self.max_length))
        object.__setattr__(self, "buffer", operator.index(self.buffer))
        object.__setattr__(self, "factor", float(self.factor))


@dataclass(frozen=True)
class RewardRange:
    """OpenRLHF's dynamic-sampling filter (Go's advantage.RewardRange).

    A problem whose mean raw reward lies outside the open interval
    (low, high) gets no update. The default (0, 0) keeps every problem.
    """

    low: float = 0.0
    high: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))


@dataclass(frozen=True)
class Constants:
    """The constants of Proposition 3.1 for a configuration's family and design.

    Attributes
    ----------
    miss_prob, cover_prob, m : Fraction or None
        The probability that a given trace is in no set, q_K = 1 - that, and
        the multiplier M of the expected search update; None where the exact
        value is beyond the library's cost bound.
    miss_prob_float, cover_prob_float, m_float : float
        The same as floats, always given.
    """

    miss_prob: Optional[Fraction]
    cover_prob: Optional[Fraction]
    m: Optional[Fraction]
    miss_prob_float: float
    cover_prob_float: float
    m_float: float


@dataclass(frozen=True)
class RoleWeights:
    """The weights the expected update puts on the search and aggregation gradients.

    E[update] = search * grad_search J + aggregation * grad_agg J. Scaling the
    search terms by ``search_multiplier`` and the aggregation terms by
    ``aggregation_multiplier`` makes the update exactly grad J.

    Attributes
    ----------
    search, aggregation : Fraction or None
        The exact weights (search is None beyond the exact cost bound of M).
    search_float, aggregation_float : float
        The weights as floats.
    search_multiplier, aggregation_multiplier : float
        1/weight, or 0 for a role whose advantages are identically 0.
    """

    search: Optional[Fraction]
    aggregation: Optional[Fraction]
    search_float: float
    aggregation_float: float
    search_multiplier: float
    aggregation_multiplier: float


_BASELINES = {"within_set": 0, "leave_one_out": 1}
_REDUCTIONS = {"sum": 0, "mean_per_role": 1, "mean_pooled": 2}


def _fraction(s: str) -> Optional[Fraction]:
    return Fraction(s) if s else None


@dataclass(frozen=True)
class Config:
    """One SPIRAL training step's shape, in the paper's symbols (Go's spiral.Config).

    Sample N1 search traces, draw K distinct sets of n of them, show each set
    to the aggregator and sample N2 aggregation outputs for it. The defaults
    are the paper's 8/4/4/4. A Config is immutable; ``replace`` returns a
    changed copy. It is checked when made (``ConfigError`` names the field),
    and any number of threads may use one Config.

    Parameters
    ----------
    search_traces : int
        N1, search traces per problem.
    set_size : int
        n, candidates per aggregation prompt, 1 <= n <= N1.
    sets : int
        K, distinct sets per problem.
    aggregations_per_set : int
        N2, aggregation outputs per set.
    ordered : bool
        Draw ordered n-tuples instead of unordered n-subsets.
    order : {"index", "shuffled"}
        The presentation order inside a set.
    design : {"uniform", "balanced"}
        How the K sets are drawn: uniformly without replacement (the
        paper's) or as a balanced design.
    gates : Gates
        The length gates of Eq. 8.
    overlong : SoftOverlong or None
        DAPO's soft overlong punishment.
    reward_range : RewardRange
        OpenRLHF's filter on the mean raw reward.
    """

    search_traces: int = 8
    set_size: int = 4
    sets: int = 4
    aggregations_per_set: int = 4
    ordered: bool = False
    order: str = "index"
    design: str = "uniform"
    gates: Gates = field(default_factory=Gates)
    overlong: Optional[SoftOverlong] = None
    reward_range: RewardRange = field(default_factory=RewardRange)

    def __post_init__(self) -> None:
        for name in ("search_traces", "set_size", "sets", "aggregations_per_set"):
            object.__setattr__(self, name, operator.index(getattr(self, name)))
        object.__setattr__(self, "ordered", bool(self.ordered))
        text = json.dumps(dataclasses.asdict(self)).encode()
        h = ctypes.c_size_t()
        _native.check(_lib.spiral_config_new(text, len(text), ctypes.byref(h)))
        object.__setattr__(self, "_handle", _Handle(h.value))
        object.__setattr__(self, "_plan_size", self.sets * self.set_size)

    @classmethod
    def paper(cls) -> "Config":
        """Return the paper's configuration: N1 = 8, n = 4, K = 4, N2 = 4, uniform subsets, no gate."""
        return cls()

    def replace(self, **changes: Any) -> "Config":
        """Return a copy with the given fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    @property
    def plan_size(self) -> int:
        """K*n, the trace indices of one problem's plan."""
        return self.sets * self.set_size

    @property
    def aggregation_outputs(self) -> int:
        """K*N2, the aggregation outputs (and rewards) of one problem."""
        return self.sets * self.aggregations_per_set

    @property
    def generations(self) -> int:
        """N1 + K*N2, the outputs generated per problem."""
        return self.search_traces + self.aggregation_outputs

    def constants(self) -> Constants:
        """Return the constants of Proposition 3.1 for this family and design (Go's Config.Constants)."""
        f = (ctypes.c_double * 3)()
        t = _native.text(_lib.spiral_constants, self._handle.value, f).split("\n")
        return Constants(_fraction(t[0]), _fraction(t[1]), _fraction(t[2]), f[0], f[1], f[2])

    def m(self) -> Optional[Fraction]:
        """Return M, the multiplier of Proposition 3.1, exactly (None beyond the exact cost bound)."""
        return self.constants().m

    def plan(self, seed: int, step: int, problems: int, dtype: Any = np.int64) -> np.ndarray:
        """Draw the plans of a batch of problems (Go's Planner.PlanTo).

        The same seed and step give the same plans as Go's
        ``planner.PlanTo(&batch, problems, rand.New(rand.NewPCG(seed, step)))``
        and as ``spiral plan -seed S -step T``, on every machine.

        Parameters
        ----------
        seed, step : int
            Unsigned 64-bit integers.
        problems : int
            P, the number of problems.
        dtype : {numpy.int64, numpy.int32}
            The element type of the result.

        Returns
        -------
        ndarray, shape (P, K, n)
            ``sets[q, i, j]`` is candidate j of set i of problem q, a search
            trace index in [0, N1), in presentation order.
        """
        return _credit.plan(self, seed, step, problems, dtype)

    def credit_batch(
        self,
        sets: Any,
        rewards: Any,
        *,
        reward_counts: Any = None,
        unscorable: Any = None,
        search_lengths: Any = None,
        aggregation_lengths: Any = None,
    ) -> "_credit.Credit":
        """Compute SPIRAL's credit for a batch of problems (Go's Config.CreditBatch).

        With sets G_i, set scores f_i (the mean reward of set i) and fbar
        their mean: A_set(G_i) = f_i - fbar, A_search(y) = the mean of A_set
        over the sets that hold y (0 in no set), A_agg(i, j) = r_ij - f_i.
        The passes, in order: checks; dynamic sampling on the raw rewards
        (``no_signal``, ``out_of_range``); ``overlong`` shaping; the credit;
        the length gates.

        Arrays may be numpy arrays (float32 or float64 rewards, int32 or int64
        indices and lengths: used in place when contiguous, copied otherwise),
        torch tensors (through ``numpy()``) or sequences; only their number of
        elements matters, in the flat layout below.

        Parameters
        ----------
        sets : array_like of int, P*K*n elements
            ``sets[q, i, j]`` (or flat ``(q*K+i)*n + j``): candidate j of set i
            of problem q, as ``plan`` returns it.
        rewards : array_like of float
            One per aggregation output, set after set: shape (P, K, N2), or
            flat with ``reward_counts``.
        reward_counts : array_like of int, P*K elements, optional
            The outputs of each set, in [1, N2], when a generation was
            dropped (ragged sets); ``rewards`` is then flat.
        unscorable : array_like of bool, like rewards, optional
            Outputs that could not be scored: their reward is not read (it may
            be NaN), they are left out of every score and baseline and get
            advantage 0.
        search_lengths : array_like of int, P*N1 elements, optional
            Search trace lengths in tokens; required by the search gate.
        aggregation_lengths : array_like of int, like rewards, optional
            Aggregation output lengths; required by the aggregation gate and
            ``overlong``.

        Returns
        -------
        Credit

        Raises
        ------
        InputError
            The layout does not fit the configuration (a length that is not
            P*K*n, P*K*N2 or sum(reward_counts), a count outside [1, N2],
            lengths missing for a gate); nothing is computed.
        BatchError
            Some problems are bad (a NaN, infinite or too large reward, a bad
            set, a negative length): ``e.problems`` lists each as an
            InputError naming field, problem, set and output, and
            ``e.credit`` holds the credit of every other problem, the bad ones
            marked in ``rejected`` with zero credit.
        """
        return _credit.credit_batch(
            self, sets, rewards, reward_counts, unscorable, search_lengths, aggregation_lengths
        )

    def role_weights(self, baseline: str = "within_set", reduction: str = "sum") -> RoleWeights:
        """Return the role weights of the update (Go's Config.RoleWeights).

        Parameters
        ----------
        baseline : {"within_set", "leave_one_out"}
            The aggregation baseline: the paper's set mean including the
            output's own reward, or the mean of the others.
        reduction : {"sum", "mean_per_role", "mean_pooled"}
            How the loss combines one problem's per-output terms.

        Returns
        -------
        RoleWeights
            At the paper's configuration (within_set, sum): search 1365/1541,
            aggregation 12.
        """
        try:
            b, r = _BASELINES[baseline], _REDUCTIONS[reduction]
        except KeyError as e:
            raise ConfigError(
                f"spiral: baseline {baseline!r} or reduction {reduction!r} unknown "
                f"(baselines {sorted(_BASELINES)}, reductions {sorted(_REDUCTIONS)})"
            ) from e
        f = (ctypes.c_double * 4)()
        t = _native.text(_lib.spiral_role_weights, self._handle.value, b, r, f).split("\n")
        return RoleWeights(_fraction(t[0]), _fraction(t[1]), f[0], f[1], f[2], f[3])


class _Handle:
    """A configuration handle of the library, released with its Config."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def __del__(self) -> None:
        if self.value and _lib is not None:
            _lib.spiral_release(self.value)
            self.value = 0
