"""The configuration of a SPIRAL step, its constants and role weights."""

from __future__ import annotations

import ctypes
import dataclasses
import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from . import _args, _credit, _native
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
        object.__setattr__(self, "target", _args.bounded(self.target, "target", -_I64_MAX, _I64_MAX, ConfigError))
        _args.text(self.boundary, "boundary")


@dataclass(frozen=True)
class Gates:
    """One length gate per role (Go's lengthgate.Gates); the default gates nothing."""

    search: Gate = field(default_factory=Gate)
    aggregation: Gate = field(default_factory=Gate)

    def __post_init__(self) -> None:
        for name in ("search", "aggregation"):
            if not isinstance(getattr(self, name), Gate):
                raise TypeError(f"spiral: {name} must be a Gate, got {type(getattr(self, name)).__name__}")

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
        object.__setattr__(self, "max_length", _args.bounded(self.max_length, "max_length", -_I64_MAX, _I64_MAX, ConfigError))
        object.__setattr__(self, "buffer", _args.bounded(self.buffer, "buffer", -_I64_MAX, _I64_MAX, ConfigError))
        object.__setattr__(self, "factor", _args.real(self.factor, "factor"))


@dataclass(frozen=True)
class RewardRange:
    """OpenRLHF's dynamic-sampling filter (Go's advantage.RewardRange).

    A problem whose mean raw reward lies outside the open interval
    (low, high) gets no update. The default (0, 0) keeps every problem.
    """

    low: float = 0.0
    high: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "low", _args.real(self.low, "low"))
        object.__setattr__(self, "high", _args.real(self.high, "high"))


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


_I64_MAX = (1 << 63) - 1

_BASELINES = {"within_set": 0, "leave_one_out": 1}


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
    aggregation_baseline : {"within_set", "leave_one_out"}
        The aggregation advantage's baseline: the mean of the set's scored
        rewards, the output's own included (the paper's), or the mean of the
        others (S/(S-1) (r - f) for S scored outputs; needs N2 >= 2).
        ``role_weights`` and ``loss_coefficients`` follow it.
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
    aggregation_baseline: str = "within_set"

    def __post_init__(self) -> None:
        # Kinds and ranges checked here, naming the field; the values by
        # the library's Config.Validate.
        for name in ("search_traces", "set_size", "sets", "aggregations_per_set"):
            object.__setattr__(self, name, _args.bounded(getattr(self, name), name, -_I64_MAX, _I64_MAX, ConfigError))
        object.__setattr__(self, "ordered", _args.flag(self.ordered, "ordered"))
        _args.text(self.order, "order")
        _args.text(self.design, "design")
        for name, kind in (("gates", Gates), ("overlong", (SoftOverlong, type(None))), ("reward_range", RewardRange)):
            if not isinstance(getattr(self, name), kind):
                want = "SoftOverlong or None" if name == "overlong" else kind.__name__
                raise TypeError(f"spiral: {name} must be a {want}, got {type(getattr(self, name)).__name__}")
        for role in ("search", "aggregation"):
            if not isinstance(getattr(self.gates, role), Gate):
                raise TypeError(f"spiral: gates.{role} must be a Gate, got {type(getattr(self.gates, role)).__name__}")
        _args.choice(self.aggregation_baseline, "aggregation_baseline", _BASELINES)
        d = dataclasses.asdict(self)
        d["aggregation_baseline"] = _BASELINES[self.aggregation_baseline]
        text = json.dumps(d).encode()
        h = ctypes.c_size_t()
        _native.check(_lib.spiral_config_new(text, len(text), ctypes.byref(h)))
        object.__setattr__(self, "_handle", _Handle(h.value))
        object.__setattr__(self, "_plan_size", self.sets * self.set_size)
        object.__setattr__(self, "_dims", (self.sets, self.set_size, self.search_traces, self.aggregations_per_set))

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

    plan = _credit.plan

    credit_batch = _credit.credit_batch

    def loss_coefficients(
        self,
        credit: "_credit.Credit",
        *,
        search_lengths: Any,
        aggregation_lengths: Any,
        reduction: str = "token-mean",
        update: str = "joint_gradient",
        split_roles: bool = False,
        missing_rate: float = 0.0,
        reward_counts: Any = None,
    ) -> "_credit.LossCoefficients":
        """Per-output coefficients for the trainer's own loss reduction (Go's Config.LossCoefficients).

        A trainer that puts coefficient c_o where output o's advantage goes and
        reduces its per-token losses -c_o * ratio with ``reduction`` gets, for
        this batch exactly, ``report.scale`` times the chosen update: SPIRAL's
        unbiased joint gradient (the search advantages divided by M, the
        aggregation advantages by K(N2-1)), the same from the counts actually
        scored (``"scored"``: unbiased when aggregation outputs go missing at
        random) or the paper's update (the advantages as they are). See
        docs/findings.md#loss-coefficients and docs/findings.md#missing-outputs.

        Parameters
        ----------
        credit : Credit
            The batch's credit, from ``credit_batch``.
        search_lengths : array_like of int, P*N1 elements
            The tokens of every search trace the loss reads.
        aggregation_lengths : array_like of int, like credit.aggregation
            The tokens of every aggregation output.
        reduction : str
            The trainer's loss reduction, one of ``REDUCTIONS``: verl's
            ``"token-mean"`` (the default), ``"seq-mean-token-sum"``,
            ``"seq-mean-token-mean"``, ``"seq-mean-token-sum-norm"``; TRL's
            ``"trl-grpo"``, ``"trl-bnpo"``, ``"trl-dr-grpo"``, ``"trl-dapo"``,
            ``"trl-rloo"``; OpenRLHF's ``"openrlhf-token"``,
            ``"openrlhf-sequence"``; NeMo-RL's ``"nemo-rl-token"``,
            ``"nemo-rl-sequence"``; or ``"sum"``. Call it on the rows the
            trainer reduces together (verl: a mini-batch).
        update : {"joint_gradient", "paper", "scored"}
            The update the trainer's gradient follows (with this Config's
            ``aggregation_baseline``, with which the credit was computed).
            ``"scored"`` divides a problem's search advantages by
            M(K') P(K' >= 2), K' its sets with a scored output, and a set's
            aggregation advantages by K (S-1) P(S >= 2) (K S P(S >= 2) leave
            one out), S its scored outputs (``credit.scored_outputs``).
        split_roles : bool
            The trainer reduces search traces and aggregation outputs as two
            loss terms, each over its own outputs, and adds them.
        missing_rate : float
            delta in [0, 1), the stated probability that each aggregation
            output is missing (dropped or unscorable), independently of its
            content (Go's LossOptions.MissingRate): ``"joint_gradient"``
            divides by the expected counts, ``"scored"`` by P(K' >= 2) and
            P(S >= 2), so that the expected update is grad J when delta is
            the true rate. Default 0, every output scored.
        reward_counts : array_like of int, P*K elements, optional
            The outputs of each set, as given to ``credit_batch`` for ragged
            sets (read by ``"scored"``); None means N2 each.

        Returns
        -------
        LossCoefficients
            ``search`` (P, N1) and ``aggregation`` (the credit's shape), in the
            credit's dtype, and the reduction's ``report`` (``scale`` = kappa).

        Raises
        ------
        InputError
            A length negative or beyond the loss's bound (``field`` names the
            lengths, ``output`` the row); ``missing_rate`` outside [0, 1);
            ``reward_counts`` that do not fit the credit.
        ConfigError
            An unknown reduction or update, a missing_rate that is not finite.
        """
        return _credit.loss_coefficients(
            self, credit, search_lengths, aggregation_lengths, reduction, update, split_roles, missing_rate, reward_counts
        )

    def role_weights(self, reduction: str = "sum", split_roles: bool = False, missing_rate: float = 0.0) -> RoleWeights:
        """Return the role weights of the update (Go's Config.RoleWeights).

        The weights the expected update (the advantages as they are, with
        this Config's ``aggregation_baseline``) puts on the search and
        aggregation gradients under a sequence-level loss reduction; for the
        reductions that weight outputs by their lengths, ``loss_coefficients``
        gives the per-output coefficients instead.

        Parameters
        ----------
        reduction : str
            ``"sum"``, or a sequence mean such as ``"seq-mean-token-sum"``
            (one of ``REDUCTIONS``).
        split_roles : bool
            The trainer reduces search traces and aggregation outputs as two
            loss terms (``"seq-mean-token-sum"`` with it: a mean per role).
        missing_rate : float
            delta in [0, 1): each aggregation output missing (dropped or
            unscorable) with this probability, independently of its content.
            With delta > 0 the weights are the expected counts E[M(K')] and
            K E[(S-1)+] (K E[S; S >= 2] leave one out); uniform design,
            ``"sum"`` or ``"seq-mean-token-sum-norm"`` only.

        Returns
        -------
        RoleWeights
            At the paper's configuration with a sum: search 1365/1541,
            aggregation 12 (with missing_rate 0.25: 513/64).
        """
        f = (ctypes.c_double * 4)()
        name = _args.text(reduction, "reduction")
        split = _args.flag(split_roles, "split_roles")
        rate = _args.real(missing_rate, "missing_rate")
        t = _native.text(_lib.spiral_role_weights, self._handle.value, name, len(name), int(split), rate, f).split("\n")
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
