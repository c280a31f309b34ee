"""Exceptions carrying the library's structured errors.

Each exception's message is the Go library's own message, unchanged; its
attributes are the fields of the Go error it stands for (InputError,
BatchError, combin.SetError).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

# Kinds of error and item (spiral_abi.h).
_OTHER, _INPUT, _BATCH, _ARG, _CONFIG, _USAGE = range(6)

_REASONS = {0: None, 1: "not_finite", 2: "too_large", 3: "set", 4: "negative_length", 5: "too_costly"}
_SET_REASONS = {1: "empty", 2: "length", 3: "out_of_range", 4: "repeated", 5: "duplicate"}


@dataclass(frozen=True)
class Item:
    """One structured error as the C ABI gives it (internal)."""

    kind: int
    field: str
    func: str
    message: str
    problem: int
    set: int
    output: int
    value: float
    reason: int
    set_reason: int
    set_other: int


@dataclass(frozen=True)
class SetProblem:
    """What is wrong with a set (Go's combin.SetError).

    The ``InputError`` that carries it gives the set (``set``), the member
    within it (``output``) and the offending trace index or size
    (``value``).

    Attributes
    ----------
    reason : str
        ``"empty"``, ``"length"`` (a set runs past the end of the members, or
        the member at ``output`` is in no set), ``"out_of_range"``,
        ``"repeated"`` or ``"duplicate"``.
    other : int
        The earlier member (``"repeated"``), the earlier set
        (``"duplicate"``), the member where a set too long starts
        (``"length"``), or -1.
    """

    reason: str
    other: int


class SpiralError(ValueError):
    """Base class of the errors the library reports.

    ``str(e)`` is the Go library's message.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(SpiralError):
    """An invalid configuration or option (``Config``, ``GroupOptions``, a preset name).

    Attributes
    ----------
    field : str
        The field at fault, in ``Config``'s names (``"set_size"``,
        ``"gates.search.target"``, ...), or "" when the error names none.
    value : float
        Its value, or 0.
    """

    def __init__(self, message: str, field: str = "", value: float = 0.0) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class UsageError(SpiralError):
    """A misuse of the C ABI, such as an output array of the wrong length."""


class InputError(SpiralError):
    """One bad entry of the input (Go's InputError, the library's one input error type).

    Attributes
    ----------
    field : str
        The argument at fault: ``"sets"``, ``"rewards"``,
        ``"reward_counts"``, ``"unscorable"``, ``"search_lengths"``,
        ``"aggregation_lengths"``, ``"keys"``, or a group function's
        ``"rewards"``, ``"ids"``, ``"lengths"``.
    problem : int
        The problem within the batch, or -1 for the batch as a whole.
    set : int
        The set within the problem, or -1.
    output : int
        The position within the set (an aggregation output, or a member of
        a set), or -1.
    value : float
        The bad value (a reward, an index, a length, a count), or 0.
    reason : str or None
        ``"not_finite"`` (NaN or infinite reward), ``"too_large"`` (|reward|
        > 1e30), ``"set"`` (see ``set_problem``), ``"negative_length"``, or
        None for another description (in the message).
    set_problem : SetProblem or None
        What is wrong with the set, when ``reason == "set"``.
    """

    def __init__(
        self,
        message: str,
        field: str = "",
        problem: int = -1,
        set: int = -1,
        output: int = -1,
        value: float = 0.0,
        reason: Optional[str] = None,
        set_problem: Optional[SetProblem] = None,
    ) -> None:
        super().__init__(message)
        self.field = field
        self.problem = problem
        self.set = set
        self.output = output
        self.value = value
        self.reason = reason
        self.set_problem = set_problem

    def __repr__(self) -> str:
        return (
            f"InputError(field={self.field!r}, problem={self.problem}, set={self.set}, "
            f"output={self.output}, value={self.value!r}, reason={self.reason!r})"
        )


class BatchError(SpiralError):
    """Some problems of a batch are bad; every other problem was credited.

    The Go library's advantage.BatchError: the layout of the batch was sound,
    so the good problems got their credit and the bad ones zero credit, marked
    in ``credit.rejected`` (as Go's ``CreditBatch`` does).

    Attributes
    ----------
    problems : list of InputError
        Each bad problem's first error, in problem order.
    credit : Credit or None
        The credit of the batch, with the bad problems rejected: a trainer
        may drop them and keep the rest.
    """

    def __init__(self, message: str, problems: list[InputError]) -> None:
        super().__init__(message)
        self.problems = problems
        self.credit: Any = None


class ArgError(SpiralError):
    """A bad argument of an evaluation function (Go's eval.InputError).

    Attributes
    ----------
    func : str
        The computation, such as ``"pass@k"`` or ``"coverage"``.
    arg : str
        The argument, such as ``"k"`` or ``"problems"``.
    index : int
        The position within the argument, or -1.
    too_costly : bool
        The arguments are valid but beyond the function's cost bound.
    """

    def __init__(self, message: str, func: str, arg: str, index: int, too_costly: bool) -> None:
        super().__init__(message)
        self.func = func
        self.arg = arg
        self.index = index
        self.too_costly = too_costly


def _input_error(it: Item) -> InputError:
    sp = None
    if it.reason == 3:
        sp = SetProblem(_SET_REASONS.get(it.set_reason, str(it.set_reason)), it.set_other)
    return InputError(it.message, it.field, it.problem, it.set, it.output, it.value, _REASONS.get(it.reason), sp)


def from_items(kind: int, message: str, items: list[Item]) -> SpiralError:
    """Build the exception for an error of the given kind, message and items."""
    if kind == _BATCH:
        return BatchError(message, [_input_error(it) for it in items])
    it = items[0] if items else None
    if it is None:
        return SpiralError(message)
    if kind == _INPUT:
        e = _input_error(it)
        if message != it.message:
            e = InputError(message, e.field, e.problem, e.set, e.output, e.value, e.reason, e.set_problem)
        return e
    if kind == _ARG:
        return ArgError(message, it.func, it.field, it.output, it.reason == 5)
    if kind == _CONFIG:
        return ConfigError(message, it.field, it.value)
    if kind == _USAGE:
        return UsageError(message)
    return SpiralError(message)
