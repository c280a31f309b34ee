"""Checks of the arguments of the package's public calls, in Python's words.

Every refusal names the argument (a ``TypeError`` for a value of the wrong
kind, an ``InputError``, which is a ``ValueError``, for a value out of range
or an array of the wrong shape), before anything is allocated or copied.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ._errors import ConfigError, InputError

U64 = 1 << 64


def integer(x: Any, name: str) -> int:
    """Return x as a Python int (an int or a numpy integer, not a bool), else raise TypeError."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"spiral: {name} must be an integer, got a bool")
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"spiral: {name} must be an integer, got {type(x).__name__}") from None


def uint64(x: Any, name: str) -> int:
    """Return x as an int in [0, 2^64) (a seed, a step, a key), else raise."""
    v = integer(x, name)
    if not 0 <= v < U64:
        raise InputError(f"spiral: {name} = {v}: want an unsigned 64-bit integer, in [0, 2**64)", name, value=float(v))
    return v


def bounded(x: Any, name: str, lo: int, hi: int, error: type = InputError, context: str = "") -> int:
    """Return x as an int in [lo, hi], else raise naming it (and what bounds it, in context)."""
    v = integer(x, name)
    if not lo <= v <= hi:
        raise error(f"spiral: {name} = {v}: want an integer in [{lo}, {hi}]" + (f" {context}" if context else ""), name, value=float(v))
    return v


def real(x: Any, name: str, error: type = ConfigError) -> float:
    """Return x as a finite float, else raise naming it."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"spiral: {name} must be a number, got {type(x).__name__}")
    try:
        v = float(x)
    except OverflowError:
        raise error(f"spiral: {name} = {x}: beyond a float", name) from None
    if not math.isfinite(v):
        raise error(f"spiral: {name} = {v}: want a finite number", name, v)
    return v


def text(x: Any, name: str) -> bytes:
    """Return the str x as UTF-8 bytes, else raise TypeError or ValueError naming it."""
    if not isinstance(x, str):
        raise TypeError(f"spiral: {name} must be a str, got {type(x).__name__}")
    try:
        return x.encode()
    except UnicodeEncodeError:
        raise ValueError(f"spiral: {name} = {x!r} is not valid Unicode text") from None


def choice(x: Any, name: str, choices: Any, error: type = ConfigError) -> str:
    """Return x if it is one of the str choices, else raise naming it."""
    if not isinstance(x, str):
        raise TypeError(f"spiral: {name} must be a str, one of {sorted(choices)}, got {type(x).__name__}")
    if x not in choices:
        raise error(f"spiral: {name} = {x!r}, want one of {sorted(choices)}", name)
    return x


def flag(x: Any, name: str) -> bool:
    """Return x as a bool (a bool, a numpy bool or the ints 0 and 1), else raise TypeError."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)) and x in (0, 1):
        return bool(x)
    raise TypeError(f"spiral: {name} must be a bool, got {x!r}")


def shaped(a: np.ndarray, name: str, *shapes: tuple, context: str = "", problems: Any = None) -> None:
    """Raise InputError naming a and both shapes unless a has one of the shapes.

    context says what the shapes follow from, or problems (the problems of
    the argument sets) does.
    """
    if a.shape in shapes:
        return
    if problems is not None:
        context = f"for the {problems} problems of sets"
    want = " or ".join(dict.fromkeys(str(s) for s in shapes))
    raise InputError(f"spiral: {name} has shape {a.shape}, want {want}" + (f" {context}" if context else ""), name, value=float(a.size))
