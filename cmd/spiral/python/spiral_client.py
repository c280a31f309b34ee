"""A Python client of the spiral JSON Lines bridge.

The bridge answers exactly one line per input line, in input order; a line
that fails is answered ``{"line": k, "error": "..."}`` with ``k`` its number
counting from 1. This client

- matches every answer to its request: it numbers the lines it writes,
  counts the answers it reads, and checks the number of every error answer
  against its own count (a mismatch raises :class:`ProtocolError` and stops
  the bridge);
- leaves nothing behind after a failure: a batch is encoded whole before its
  first line is written, so a value JSON cannot hold (a NaN reward) raises
  :class:`EncodeError` with nothing sent; a batch interrupted after some of
  its lines were written (an exception or ``KeyboardInterrupt`` while
  waiting) leaves those answers owed, and the next call first reads and
  discards them (it *drains*; it does not restart the bridge);
- never hangs: answers are read on their own thread (so any number of lines
  may be written before the first answer is read, without the pipe deadlock
  of a single-threaded client), the end of the bridge's output is seen by
  every later wait, a bridge that exits raises :class:`BridgeDied` with its
  exit status and the end of its stderr, and a bridge that answers nothing
  for ``timeout`` seconds is killed and raises :class:`BridgeTimeout`. A
  dead bridge is not restarted: make a new :class:`Bridge`;
- accepts numpy arrays and scalars of every dtype (anything with a
  ``tolist`` method, so torch tensors on the CPU too) without needing numpy,
  and with ``arrays=True`` answers with numpy arrays.

Example::

    with Bridge(["spiral", "credit"]) as b:
        answers = b.map(problems)          # a list of dicts, in input order
        one = b.call(problem)              # one line, one answer

    with Bridge(["spiral", "group", "-preset", "verl-grpo"]) as b:
        out = b.call({"ids": uids, "rewards": scores})

JSON has no NaN or Infinity: :func:`mark_unscorable` turns the NaN rewards of
a credit or group line into the bridge's ``"unscorable"`` marks.
"""
from __future__ import annotations

import collections
import json
import math
import numbers
import subprocess
import threading
import time
from typing import Any, Iterable, Literal, Sequence

__all__ = [
    "Bridge",
    "BridgeError",
    "LineError",
    "BatchError",
    "EncodeError",
    "BridgeDied",
    "BridgeTimeout",
    "ProtocolError",
    "mark_unscorable",
]

#: The most bytes of the bridge's stderr kept for :class:`BridgeDied`.
STDERR_TAIL = 64 << 10


class BridgeError(Exception):
    """The base class of every error this client raises."""


class LineError(BridgeError, ValueError):
    """The bridge answered a line with ``{"line": k, "error": "..."}``.

    Attributes
    ----------
    line : int
        The line's number in the bridge's input, counting from 1.
    index : int
        The line's position in its batch, counting from 0.
    message : str
        The bridge's error text.
    """

    def __init__(self, line: int, index: int, message: str) -> None:
        super().__init__(f"line {line} (batch index {index}): {message}")
        self.line = line
        self.index = index
        self.message = message


class BatchError(BridgeError, ValueError):
    """Some lines of a batch failed; every answer of the batch was read.

    Attributes
    ----------
    errors : list of LineError
        The failed lines, in batch order.
    answers : list of dict
        Every answer of the batch in order, the failed lines' included
        (as the bridge's ``{"line": k, "error": "..."}``).
    """

    def __init__(self, errors: list[LineError], answers: list[dict]) -> None:
        first = errors[0]
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        super().__init__(f"{len(errors)} of {len(answers)} lines failed; the first: {first}{more}")
        self.errors = errors
        self.answers = answers


class EncodeError(BridgeError, ValueError):
    """A request cannot be written as JSON; nothing of its batch was sent.

    Attributes
    ----------
    index : int
        The request's position in its batch, counting from 0.
    reason : str
        What is wrong (such as a NaN, which JSON cannot hold).
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"request {index} of the batch: {reason}; nothing of the batch was sent")
        self.index = index
        self.reason = reason


class BridgeDied(BridgeError):
    """The bridge exited (or was killed) before answering every line.

    Attributes
    ----------
    returncode : int or None
        Its exit status (negative: the signal that killed it), or None if it
        had not exited yet when its output ended.
    stderr : str
        The last bytes of what it wrote to stderr (at most ``STDERR_TAIL``).
    owed : int
        How many written lines were left unanswered.
    """

    def __init__(self, returncode: int | None, stderr: str, owed: int) -> None:
        how = "was killed by signal %d" % -returncode if returncode is not None and returncode < 0 else "exited with status %s" % returncode
        tail = stderr.strip()
        super().__init__(f"the bridge {how} with {owed} lines unanswered" + (f"; its stderr:\n{tail}" if tail else "; its stderr was empty"))
        self.returncode = returncode
        self.stderr = stderr
        self.owed = owed


class BridgeTimeout(BridgeError):
    """The bridge gave no answer for ``timeout`` seconds and was killed.

    Attributes
    ----------
    timeout : float
        The seconds waited for one answer.
    owed : int
        How many written lines were left unanswered.
    """

    def __init__(self, timeout: float, owed: int) -> None:
        super().__init__(f"no answer from the bridge in {timeout:g} s with {owed} lines unanswered; the bridge was killed")
        self.timeout = timeout
        self.owed = owed


class ProtocolError(BridgeError):
    """An answer that cannot belong to the line it answers; the bridge was
    stopped.

    Attributes
    ----------
    expected : int
        The number of the line the answer should belong to.
    answer : str
        The answer's text (at most 200 characters).
    """

    def __init__(self, expected: int, answer: str, why: str) -> None:
        super().__init__(f"answer to line {expected}: {why}: {answer!r}")
        self.expected = expected
        self.answer = answer


def _json_default(o: Any) -> Any:
    """Turns numpy (or torch) arrays and scalars into Python values."""
    tolist = getattr(o, "tolist", None)
    if tolist is not None:
        v = tolist()
        if type(v) is not type(o):  # a list, int, float or bool
            return v
    # A scalar whose tolist returns itself (numpy's longdouble).
    if isinstance(o, numbers.Integral):
        return int(o)
    if isinstance(o, numbers.Real):
        return float(o)
    raise TypeError(f"a {type(o).__name__} is not a JSON value")


def _encode(obj: Any) -> str:
    return json.dumps(obj, allow_nan=False, separators=(",", ":"), default=_json_default)


def _is_nan(x: Any) -> bool:
    if isinstance(x, (bool, int, str)) or x is None:
        return False
    try:
        return math.isnan(x)
    except (TypeError, ValueError):
        return False


def _rows(x: Any) -> Any:
    """x as Python lists (an array or tensor through tolist)."""
    tolist = getattr(x, "tolist", None)
    return tolist() if tolist is not None and not isinstance(x, (list, tuple)) else x


#: The answer fields that list ids (group's), which stay lists.
_ID_FIELDS = frozenset({"singletons", "zero_variance", "unscored"})


def _as_arrays(value: Any, np: Any) -> Any:
    """The numeric lists of an answer as float64 arrays, rows as lists."""
    if isinstance(value, dict):
        return {k: v if k in _ID_FIELDS else _as_arrays(v, np) for k, v in value.items()}
    if isinstance(value, list):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            return np.asarray(value, dtype=np.float64)
        if value and all(isinstance(x, list) for x in value):
            return [_as_arrays(x, np) for x in value]
    return value


def mark_unscorable(line: dict) -> dict:
    """Marks the NaN rewards of a credit or group line as unscorable.

    Parameters
    ----------
    line : dict
        A credit line (``"rewards"`` a list of rows, one per set) or a group
        line (``"rewards"`` one list). Rewards may be lists, numpy arrays of
        any float dtype, or lists of numpy scalars.

    Returns
    -------
    dict
        A copy of ``line`` whose NaN rewards are replaced by 0 and marked
        true in ``"unscorable"`` (the shape of ``"rewards"``): the bridge
        leaves those outputs out of every score and baseline and gives them
        advantage 0.
    """
    rewards = _rows(line["rewards"])
    nested = len(rewards) > 0 and isinstance(_rows(rewards[0]), (list, tuple))
    rows = [list(_rows(r)) for r in rewards] if nested else [list(rewards)]
    marks = [[_is_nan(r) for r in row] for row in rows]
    clean = [[0 if m else r for r, m in zip(row, ms)] for row, ms in zip(rows, marks)]
    out = dict(line)
    out["rewards"] = clean if nested else clean[0]
    out["unscorable"] = marks if nested else marks[0]
    return out


class Bridge:
    """One running bridge command, such as ``["spiral", "credit"]``.

    Parameters
    ----------
    argv : sequence of str
        The command and its flags.
    timeout : float or None, optional
        The most seconds to wait for any one answer (default 60); the bridge
        is then killed and :class:`BridgeTimeout` raised. None waits as long
        as the bridge lives (a bridge that exits still raises at once).
    arrays : bool, optional
        Answer with numpy arrays (numpy is then required): every list of
        numbers becomes a float64 array (counts too: they are exact below
        2^53), and a list of such lists (the rows of ``"aggregation"``, which
        may differ in length) a list of arrays; lists of ids stay lists.
        Default False: plain lists.

    Notes
    -----
    One thread at a time may use a Bridge. After a batch fails, nothing of it
    reaches the next call: a batch that cannot be encoded sends nothing; one
    whose lines the bridge refused is read to its end before
    :class:`BatchError` is raised; one interrupted while waiting leaves its
    answers owed, and the next call reads and discards them first (drain).
    A bridge that died stays dead: every later call raises
    :class:`BridgeDied`.
    """

    def __init__(self, argv: Sequence[str], timeout: float | None = 60.0, arrays: bool = False) -> None:
        self._np = None
        if arrays:
            import numpy

            self._np = numpy
        self._proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.timeout = timeout
        self._cond = threading.Condition()
        self._answers: collections.deque[str] = collections.deque()
        self._eof = False  # the bridge's stdout ended; seen by every wait
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_len = 0
        self._sent = 0  # lines written
        self._read = 0  # answers taken from _answers
        self._failure: BridgeError | None = None  # why the bridge is unusable
        self._writes: collections.deque[bytes | None] = collections.deque()
        self._write_cond = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
            threading.Thread(target=self._write_stdin, daemon=True),
        ]
        for t in self._threads:
            t.start()

    @property
    def pid(self) -> int:
        """The bridge's process id."""
        return self._proc.pid

    @property
    def received(self) -> int:
        """How many answers the bridge has written so far."""
        with self._cond:
            return self._read + len(self._answers)

    def _read_stdout(self) -> None:
        try:
            for raw in self._proc.stdout:
                if not raw.endswith(b"\n"):
                    break  # cut off by the bridge's death: not an answer
                with self._cond:
                    self._answers.append(raw.decode("utf-8", "replace"))
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self._proc.stderr.read1(8192), b""):
            self._stderr.append(chunk)
            self._stderr_len += len(chunk)
            while self._stderr_len - len(self._stderr[0]) >= STDERR_TAIL:
                self._stderr_len -= len(self._stderr.popleft())

    def _write_stdin(self) -> None:
        # Writes on its own thread, so a bridge that stops reading can block
        # only this thread, which killing the bridge releases.
        while True:
            with self._write_cond:
                while not self._writes:
                    self._write_cond.wait()
                data = self._writes.popleft()
            try:
                if data is None:
                    self._proc.stdin.close()
                    return
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
            except OSError:  # the bridge is gone; the reader sees its end
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass
                return

    def _write(self, data: bytes | None) -> None:
        with self._write_cond:
            self._writes.append(data)
            self._write_cond.notify()

    def _died(self) -> BridgeDied:
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        for t in self._threads[1:2]:
            t.join(timeout=5)
        tail = b"".join(self._stderr)[-STDERR_TAIL:]
        return BridgeDied(code, tail.decode("utf-8", "replace"), self._sent - self._read)

    def _fail(self, err: BridgeError) -> BridgeError:
        """Makes the bridge unusable with err and stops it."""
        if self._failure is None:
            self._failure = err
        if self._proc.poll() is None:
            self._proc.kill()
        return self._failure

    def _next(self) -> tuple[int, str]:
        """Takes the next answer with its line number, waiting for it."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        with self._cond:
            while not self._answers:
                if self._eof:
                    raise self._fail(self._died())
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise self._fail(BridgeTimeout(self.timeout, self._sent - self._read))
                self._cond.wait(left)
            text = self._answers.popleft()
            self._read += 1
            return self._read, text

    def _decode(self, number: int, text: str) -> dict:
        try:
            answer = json.loads(text)
        except ValueError:
            raise self._fail(ProtocolError(number, text[:200], "not JSON")) from None
        if not isinstance(answer, dict):
            raise self._fail(ProtocolError(number, text[:200], "not a JSON object"))
        if "error" in answer:
            if answer.get("line") != number:
                raise self._fail(ProtocolError(number, text[:200], "the error names another line"))
        elif self._np is not None:
            answer = _as_arrays(answer, self._np)
        return answer

    def _drain(self) -> None:
        if self._failure is not None:
            raise self._failure
        while self._read < self._sent:
            self._next()

    def map_text(self, texts: Iterable[str], *, errors: Literal["raise", "return"] = "raise") -> list[dict]:
        """Sends lines of JSON text as they are and returns their answers.

        Parameters
        ----------
        texts : iterable of str
            One JSON object per string, without a newline.
        errors : {"raise", "return"}, optional
            What to do when the bridge refuses some lines: raise
            :class:`BatchError` after reading every answer (default), or
            return the ``{"line": k, "error": "..."}`` answers in place.

        Returns
        -------
        list of dict
            One answer per line, in order.
        """
        batch = list(texts)
        for i, t in enumerate(batch):
            if not isinstance(t, str):
                raise EncodeError(i, f"a {type(t).__name__}, not a str")
            if "\n" in t:
                raise EncodeError(i, "a newline inside a line")
        self._drain()
        if not batch:
            return []
        first = self._sent + 1
        self._sent += len(batch)
        self._write(("\n".join(batch) + "\n").encode("utf-8"))
        answers = [self._decode(*self._next()) for _ in batch]
        if errors == "raise":
            failed = [LineError(a["line"], a["line"] - first, a["error"]) for a in answers if "error" in a]
            if failed:
                raise BatchError(failed, answers)
        return answers

    def map(self, objs: Iterable[Any], *, errors: Literal["raise", "return"] = "raise") -> list[dict]:
        """Sends every object as one line and returns every answer, in order.

        Parameters
        ----------
        objs : iterable
            JSON-encodable objects; numpy arrays and scalars are accepted.
            Every object is encoded before the first line is sent.
        errors : {"raise", "return"}, optional
            As in :meth:`map_text`.

        Returns
        -------
        list of dict
            One answer per object, in order.

        Raises
        ------
        EncodeError
            An object holds a NaN, an infinity or a value JSON cannot hold;
            nothing was sent.
        BatchError
            The bridge refused some lines (with ``errors="raise"``).
        BridgeDied, BridgeTimeout, ProtocolError
            The bridge is unusable.
        """
        texts = []
        for i, obj in enumerate(objs):
            try:
                texts.append(_encode(obj))
            except ValueError as e:
                raise EncodeError(i, f"{e} (JSON has no NaN or Infinity: mark the output unscorable, e.g. with mark_unscorable(line))") from None
            except TypeError as e:
                raise EncodeError(i, str(e)) from None
        return self.map_text(texts, errors=errors)

    def call(self, obj: Any) -> dict:
        """Sends one object and returns its answer.

        Raises
        ------
        LineError
            The bridge refused the line.
        EncodeError, BridgeDied, BridgeTimeout, ProtocolError
            As in :meth:`map`.
        """
        try:
            return self.map([obj])[0]
        except BatchError as e:
            raise e.errors[0] from None

    def call_text(self, text: str) -> dict:
        """Sends one line of JSON text as it is and returns its answer
        (:class:`LineError` for an error answer)."""
        try:
            return self.map_text([text])[0]
        except BatchError as e:
            raise e.errors[0] from None

    def close(self) -> int | None:
        """Closes the bridge's input, waits for it to exit and returns its
        exit status (1 when some line failed); a bridge that does not exit
        within ``timeout`` seconds is killed."""
        self._write(None)
        try:
            return self._proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()
        finally:
            for t in self._threads[:2]:
                t.join(timeout=5)
            self._proc.stdout.close()
            self._proc.stderr.close()

    def __enter__(self) -> Bridge:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False
