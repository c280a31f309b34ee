"""The group baselines of GRPO, Dr. GRPO and RLOO, with the trainers' presets."""

from __future__ import annotations

import ctypes
import json
from dataclasses import asdict, dataclass
from typing import Any, Optional, Sequence

import numpy as np

from . import _args, _native

_lib = _native.lib


@dataclass(frozen=True)
class GroupOptions:
    """A member of the GRPO family (Go's advantage.GroupOptions).

    The default is plain mean-centring, A_i = r_i - mean (Dr. GRPO).

    Parameters
    ----------
    scale : {"none", "group", "batch", "others"}
        The divisor: none, the group's standard deviation, the batch's, or
        that of the group's other rewards, only where it is positive
        (NeMo-RL's normalize_rewards; needs ``leave_one_out`` and
        ``epsilon`` > 0).
    epsilon : float
        Added to the standard deviation before dividing (>= 0).
    bessel : bool
        The standard deviation uses n - 1 (torch.std's default).
    leave_one_out : bool
        The baseline is the mean of the group's other rewards (RLOO).
    nan_unscorable : bool
        A NaN reward marks its row unscorable (TRL), instead of an error.
    best : bool
        Only the group's best row gets an advantage, r_max - r_second
        (verl's grpo_passk).
    clip : (float, float)
        Clamp every advantage to [low, high] after the baseline and the
        scale (OpenRLHF's clip_range); (0, 0) clamps nothing.
    whiten : {"none", "verl", "openrlhf", "trl"}
        Whiten the advantages over the batch after everything else
        (REINFORCE++-baseline; TRL RLOO's normalize_advantages), rows weighted
        by their lengths in tokens when ``group_advantages`` is given them.
    """

    scale: str = "none"
    epsilon: float = 0.0
    bessel: bool = False
    leave_one_out: bool = False
    nan_unscorable: bool = False
    best: bool = False
    clip: tuple = (0.0, 0.0)
    whiten: str = "none"

    def __post_init__(self) -> None:
        # Kinds checked here, naming the field; the values by the library.
        _args.text(self.scale, "scale")
        _args.text(self.whiten, "whiten")
        object.__setattr__(self, "epsilon", _args.real(self.epsilon, "epsilon"))
        for name in ("bessel", "leave_one_out", "nan_unscorable", "best"):
            object.__setattr__(self, name, _args.flag(getattr(self, name), name))
        clip = self.clip
        if not isinstance(clip, (tuple, list)) or len(clip) != 2:
            raise TypeError(f"spiral: clip must be a pair (low, high), got {clip!r}")
        object.__setattr__(self, "clip", (_args.real(clip[0], "clip"), _args.real(clip[1], "clip")))

    @classmethod
    def preset(cls, name: str) -> "GroupOptions":
        """Return the options of a trainer's convention, such as ``"verl-grpo"`` (see ``PRESETS``)."""
        b = _args.text(name, "preset")
        d = json.loads(_native.text(_lib.spiral_group_preset, b, len(b)))
        d["clip"] = (d["clip"]["low"], d["clip"]["high"])
        return cls(**d)

    def _json(self) -> bytes:
        d = asdict(self)
        d["clip"] = {"low": float(self.clip[0]), "high": float(self.clip[1])}
        return json.dumps(d).encode()


PRESETS: tuple[str, ...] = _native.names(_lib.spiral_group_presets)
"""The names of the group presets (Go's advantage.Preset), such as ``"verl-grpo"``."""


@dataclass(frozen=True)
class GroupReport:
    """The groups seen by ``group_advantages`` (Go's advantage.GroupReport).

    Groups are listed by id, in the order of their first row; every row of a
    listed group gets advantage 0 (a dynamic-sampling trainer drops them).

    Attributes
    ----------
    groups : int
        The number of distinct ids.
    singletons : list
        Groups with exactly one scored row.
    zero_variance : list
        Groups of two or more scored rows whose rewards are all equal.
    unscored : list
        Groups none of whose rows could be scored.
    unscorable : int
        Rows whose reward was NaN under ``nan_unscorable``.
    """

    groups: int
    singletons: list
    zero_variance: list
    unscored: list
    unscorable: int


def group_advantages(
    rewards: Any,
    ids: Any,
    options: Optional[GroupOptions] = None,
    *,
    preset: Optional[str] = None,
    unscorable: Any = None,
    lengths: Any = None,
) -> tuple[np.ndarray, GroupReport]:
    """Group-relative advantages in verl's layout (Go's advantage.GroupRelative).

    For a group of G scored rewards with mean m and standard deviation s
    (selected by ``options.scale``): A_i = r_i - m (none), (G/(G-1))(r_i - m)
    (leave_one_out), or (r_i - m)/(s + epsilon) (group, batch).

    Parameters
    ----------
    rewards : array_like of float, shape (R,)
        One scalar reward per row (float32 or float64).
    ids : array_like, shape (R,)
        The group of each row: integers, strings or any hashable values; the
        rows of a group may be anywhere.
    options : GroupOptions, optional
        The formula; the default is Dr. GRPO's.
    preset : str, optional
        A trainer's convention instead of ``options``, one of ``PRESETS``.
    unscorable : array_like of bool, shape (R,), optional
        Rows that could not be scored: left out of their group's mean and
        standard deviation, advantage 0 (their reward is not read).
    lengths : array_like of int, shape (R,), optional
        Each row's length in tokens (its response mask's sum), the weight
        whitening gives it (Go's GroupRelativeTokens); by default every row
        weighs 1.

    Returns
    -------
    advantages : ndarray, shape (R,)
        In the dtype of the rewards.
    report : GroupReport
        The ids of the groups of one row, of equal rewards and of none scored.

    Raises
    ------
    InputError
        A reward NaN (without nan_unscorable), infinite or beyond 1e30
        (``output`` is the row).
    ConfigError
        Invalid options or an unknown preset.
    """
    if preset is not None:
        if options is not None:
            raise TypeError("spiral: give options or preset, not both")
        options = GroupOptions.preset(preset)
    if options is None:
        options = GroupOptions()
    if not isinstance(options, GroupOptions):
        raise TypeError(f"spiral: options must be a GroupOptions, got {type(options).__name__}")
    r = _native.floats(rewards, "rewards").reshape(-1)
    un = None if unscorable is None else _native.bools(unscorable, "unscorable").reshape(-1)
    ln = None if lengths is None else _native.ints(lengths, "lengths").reshape(-1)
    ids_in = _native._to_numpy(ids)
    decode: Optional[list] = None
    if isinstance(ids_in, np.ndarray) and ids_in.dtype.kind == "i":
        codes = _native.ints(ids_in.reshape(-1), "ids")
    else:
        # Any hashable ids (strings, Python ints, ...): numbered, and given
        # back as they came. An array of strings (verl's uid column) is
        # numbered by numpy; anything else in order of first appearance.
        codes = None
        if isinstance(ids_in, np.ndarray) and ids_in.dtype.kind in "USO":
            try:
                uniq, inverse = np.unique(ids_in.reshape(-1), return_inverse=True)
                codes, decode = inverse.astype(np.int64), uniq.tolist()
            except TypeError:  # ids that do not sort (mixed types)
                pass
        if codes is None:
            try:
                flat: Sequence = ids_in.reshape(-1).tolist() if isinstance(ids_in, np.ndarray) else list(ids_in)
                seen: dict = {}
                codes = np.fromiter((seen.setdefault(x, len(seen)) for x in flat), dtype=np.int64, count=len(flat))
            except TypeError as e:
                raise TypeError(f"spiral: ids must be a sequence of hashable values: {e}") from None
            decode = list(seen)
    out = np.empty(r.shape, r.dtype)
    n = max(len(codes), 1)
    lists = np.empty((3, n), np.int64)
    rep = _native._GroupReport()
    text = options._json()
    descs = [_native.array(a) for a in (r, codes, ln, un, out, lists[0], lists[1], lists[2])]
    ptr = [ctypes.byref(d) for d in descs]
    _native.check(_lib.spiral_group(text, len(text), *ptr[:5], ctypes.byref(rep), *ptr[5:]))

    def ids_of(row: np.ndarray, count: int) -> list:
        got = row[:count].tolist()
        return [decode[i] for i in got] if decode is not None else got

    return out, GroupReport(
        rep.groups,
        ids_of(lists[0], rep.singletons),
        ids_of(lists[1], rep.zero_variance),
        ids_of(lists[2], rep.unscored),
        rep.unscorable,
    )
