"""The shared library (libspiral, spiral's C ABI) and the marshalling of arrays.

The library is built from the Go module in ``python/capi`` by ``build.py``
(``go build -buildmode=c-shared``) next to this file, as ``_libspiral.so``;
the environment variable ``SPIRAL_LIB`` names another copy. Arrays cross as
``spiral_array`` descriptors (address, length, element type) into numpy's
memory: the library reads and writes them during a call and keeps nothing.
"""

from __future__ import annotations

import ctypes
import operator
import os
from typing import Any

import numpy as np

from . import _abi, _errors
from ._errors import InputError

_LIB_NAME = "_libspiral.so"


def library_path() -> str:
    """Return the path of the shared library this package loads."""
    return os.environ.get("SPIRAL_LIB") or os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIB_NAME)


def _load() -> ctypes.CDLL:
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"spiral: the shared library {path} is missing; build it with "
            f"`python3 python/build.py` (needs the Go toolchain)"
        )
    lib = ctypes.CDLL(path)
    h, i64, u64, p = ctypes.c_size_t, ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p
    sigs = {
        "spiral_abi_header": (None, [p, i64, ctypes.POINTER(i64)]),
        "spiral_abi_layout": (None, [p, i64, ctypes.POINTER(i64)]),
        "spiral_config_new": (h, [p, i64, ctypes.POINTER(h)]),
        "spiral_release": (None, [h]),
        "spiral_constants": (h, [h, p, p, i64, ctypes.POINTER(i64)]),
        "spiral_role_weights": (h, [h, p, i64, i64, ctypes.c_double, p, p, i64, ctypes.POINTER(i64)]),
        "spiral_plan": (h, [h, u64, u64, p, p, p]),
        "spiral_credit_batch": (h, [h, h, p, p, p]),
        "spiral_group_presets": (None, [p, i64, ctypes.POINTER(i64)]),
        "spiral_group_preset": (h, [p, i64, p, i64, ctypes.POINTER(i64)]),
        "spiral_group": (h, [p, i64, p, p, p, p, p, p, p, p, p]),
        "spiral_loss_reductions": (None, [p, i64, ctypes.POINTER(i64)]),
        "spiral_loss_coefficients": (h, [h, p, i64, i64, i64, p, p, p, p]),
        "spiral_pass_at_k": (h, [p, p, p, p]),
        "spiral_coverage": (h, [p, p, i64, p]),
        "spiral_max_size": (i64, []),
        "spiral_error_summary": (h, [h, ctypes.POINTER(i64), ctypes.POINTER(i64)]),
        "spiral_error_get": (h, [h, i64, p]),
        "spiral_error_text": (i64, [h, i64, i64, p, i64]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


lib = _load()


def _void_text(name: str) -> str:
    """The text a library function without an error writes (buf, capacity, needed)."""
    fn = getattr(lib, name)
    needed = ctypes.c_int64()
    fn(None, 0, ctypes.byref(needed))
    buf = ctypes.create_string_buffer(needed.value)
    fn(buf, len(buf), ctypes.byref(needed))
    return buf.raw[: needed.value].decode()


STRUCTS, CONSTS = _abi.load(_void_text)
_Array = STRUCTS["spiral_array"]
_CreditIn = STRUCTS["spiral_credit_in"]
_CreditOut = STRUCTS["spiral_credit_out"]
_CreditReport = STRUCTS["spiral_credit_report"]
_LossIn = STRUCTS["spiral_loss_in"]
_LossReport = STRUCTS["spiral_loss_report"]
_GroupReport = STRUCTS["spiral_group_report"]
_ErrorItem = STRUCTS["spiral_error_item"]

_ARRAY_SIZE = ctypes.sizeof(_Array)
if [(n, getattr(_Array, n).offset, ctypes.sizeof(t)) for n, t in _Array._fields_] != [("data", 0, 8), ("len", 8, 8), ("dtype", 16, 8)]:
    raise ImportError("spiral: spiral_array is not {data, len, dtype} of 8 bytes each: the package's fast paths need it")


def array_block(name: str, fields: tuple[str, ...]) -> tuple[Any, Any, int]:
    """Return a structure of the header made only of spiral_array, an int64 view of it and its address.

    The fast paths fill the view with one slice assignment of (address,
    length, element type) triples in the order of ``fields``, which must
    be the header's own: a field added, removed or moved stops the import.
    """
    st = STRUCTS[name]
    got = tuple(n for n, _ in st._fields_)
    if got != fields or any(t is not _Array for _, t in st._fields_) or ctypes.sizeof(st) != len(fields) * _ARRAY_SIZE:
        raise ImportError(f"spiral: {name} in spiral_abi.h has the fields {got}; the package fills {fields}")
    obj = st()
    return obj, (ctypes.c_int64 * (3 * len(fields))).from_buffer(obj), ctypes.addressof(obj)


ABSENT, F32, F64, I32, I64, BOOL = (CONSTS["SPIRAL_" + n] for n in ("ABSENT", "F32", "F64", "I32", "I64", "BOOL"))
_DTYPE_CODES = {
    np.dtype(np.float32): F32,
    np.dtype(np.float64): F64,
    np.dtype(np.int32): I32,
    np.dtype(np.int64): I64,
    np.dtype(np.bool_): BOOL,
}

MAX_SIZE: int = lib.spiral_max_size()
"""The library's size cap (Go's combin.MaxSize, 2^24): the most members a batch's plans hold."""

_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address(a: np.ndarray) -> int:
    """Return the address of a's first element (a contiguous array), 0 for an empty one."""
    if a.size == 0:
        return 0
    try:
        return _addressof(_char_from_buffer(a))  # a third of the time of a.ctypes.data
    except (TypeError, ValueError):  # a read-only array
        return a.ctypes.data


def descriptor(a: np.ndarray | None) -> tuple[int, int, int]:
    """Return the (address, length, element type) of a contiguous array, or an absent one."""
    if a is None:
        return (0, 0, ABSENT)
    return (address(a), a.size, _DTYPE_CODES[a.dtype])


_ndarray = np.ndarray
_FLOAT_CODES = {np.dtype(np.float64): F64, np.dtype(np.float32): F32}
_INT_CODES = {np.dtype(np.int64): I64, np.dtype(np.int32): I32}


def floats_in(x: Any, name: str) -> tuple[np.ndarray, tuple[int, int, int]]:
    """Return ``floats(x, name)`` and its descriptor.

    A contiguous, writable float64 or float32 ndarray (the common case) is
    taken as it is in one step: ``from_buffer`` refuses any other array,
    which then takes the general path.
    """
    if type(x) is _ndarray:
        code = _FLOAT_CODES.get(x.dtype)
        if code is not None:
            try:
                return x, (_addressof(_char_from_buffer(x)), x.size, code)
            except (TypeError, ValueError):  # empty, read-only or not contiguous
                pass
    a = floats(x, name)
    return a, descriptor(a)


def ints_in(x: Any, name: str) -> tuple[np.ndarray, tuple[int, int, int]]:
    """Return ``ints(x, name)`` and its descriptor, as ``floats_in`` does."""
    if type(x) is _ndarray:
        code = _INT_CODES.get(x.dtype)
        if code is not None:
            try:
                return x, (_addressof(_char_from_buffer(x)), x.size, code)
            except (TypeError, ValueError):
                pass
    a = ints(x, name)
    return a, descriptor(a)


def array(a: np.ndarray | None) -> Any:
    """Return the spiral_array of a contiguous array, or an absent one."""
    return _Array(*descriptor(a))


def _to_numpy(x: Any) -> Any:
    # torch tensors (and other array types with numpy()) without importing torch.
    if not isinstance(x, np.ndarray) and hasattr(x, "numpy") and hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return x


def _array(x: Any, name: str) -> np.ndarray:
    """Return np.asarray(x), an error naming the argument if numpy cannot make an array of it."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError, OverflowError) as e:
        raise TypeError(f"spiral: {name} is not an array of numbers: {e}") from None


_I64_MAX = (1 << 63) - 1


def ints(x: Any, name: str) -> np.ndarray:
    """Return x as a contiguous int32 or int64 array: x itself when it is one, else a copy."""
    x = _to_numpy(x)
    if isinstance(x, np.ndarray) and (x.dtype == np.int64 or x.dtype == np.int32):
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    a = _array(x, name)
    if a.size and a.dtype.kind == "O":
        # Python ints beyond int64, or objects: checked as Python ints.
        try:
            vals = [operator.index(v) for v in a.reshape(-1)]
        except TypeError:
            raise TypeError(f"spiral: {name} must hold integers, got an array of objects") from None
        big = max(vals, key=abs)
        raise InputError(f"spiral: {name} holds {big}, beyond int64", name, value=float(big))
    if a.size and a.dtype.kind not in "iub":
        raise TypeError(f"spiral: {name} must hold integers, got an array of {a.dtype}")
    if a.size and a.dtype == np.uint64 and int(a.max()) > _I64_MAX:  # compared as Python ints
        raise InputError(f"spiral: {name} holds {int(a.max())}, beyond int64", name, value=float(a.max()))
    return np.ascontiguousarray(a, dtype=np.int64)


def floats(x: Any, name: str) -> np.ndarray:
    """Return x as a contiguous float32 or float64 array: x itself when it is one, else a copy."""
    x = _to_numpy(x)
    if isinstance(x, np.ndarray) and (x.dtype == np.float64 or x.dtype == np.float32):
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    a = _array(x, name)
    if a.size and a.dtype.kind not in "fiub":
        raise TypeError(f"spiral: {name} must hold numbers, got an array of {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.float64)


def bools(x: Any, name: str) -> np.ndarray:
    """Return x as a contiguous bool array: x itself when it is one, else a copy."""
    x = _to_numpy(x)
    if isinstance(x, np.ndarray) and x.dtype == np.bool_ and x.flags.c_contiguous:
        return x
    a = _array(x, name)
    if a.size and a.dtype.kind not in "biu":
        raise TypeError(f"spiral: {name} must hold booleans, got an array of {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.bool_)


def text(fn: Any, *args: Any) -> str:
    """Call a function that writes a text (buf, capacity, needed) and return the text."""
    needed = ctypes.c_int64()
    buf = ctypes.create_string_buffer(512)
    check(fn(*args, buf, len(buf), ctypes.byref(needed)))
    if needed.value > len(buf):
        buf = ctypes.create_string_buffer(needed.value)
        check(fn(*args, buf, len(buf), ctypes.byref(needed)))
    return buf.raw[: needed.value].decode()


def names(fn: Any) -> tuple[str, ...]:
    """Call a function that writes names, one a line (buf, capacity, needed), and return them."""
    needed = ctypes.c_int64()
    buf = ctypes.create_string_buffer(4096)
    fn(buf, len(buf), ctypes.byref(needed))
    return tuple(buf.raw[: needed.value].decode().split("\n"))


def error_text(h: int, i: int, which: int) -> str:
    buf = ctypes.create_string_buffer(1024)
    n = lib.spiral_error_text(h, i, which, buf, len(buf))
    if n > len(buf):
        buf = ctypes.create_string_buffer(n)
        n = lib.spiral_error_text(h, i, which, buf, len(buf))
    return buf.raw[: max(n, 0)].decode()


def take_error(h: int) -> _errors.SpiralError:
    """Read error handle h into an exception, and release the handle."""
    try:
        kind, count = ctypes.c_int64(), ctypes.c_int64()
        if lib.spiral_error_summary(h, ctypes.byref(kind), ctypes.byref(count)) != 0:
            return _errors.SpiralError(f"spiral: error handle {h} is not valid")
        items = []
        it = _ErrorItem()
        for i in range(count.value):
            lib.spiral_error_get(h, i, ctypes.byref(it))
            items.append(
                _errors.Item(
                    kind=it.kind,
                    field=error_text(h, i, 1),
                    func=error_text(h, i, 2),
                    message=error_text(h, i, 0),
                    problem=it.problem,
                    set=it.set,
                    output=it.output,
                    value=it.value,
                    reason=it.reason,
                    set_reason=it.set_reason,
                    set_other=it.set_other,
                )
            )
        return _errors.from_items(kind.value, error_text(h, -1, 0), items)
    finally:
        lib.spiral_release(h)


def check(h: int) -> None:
    """Raise the error of handle h, if h is not 0."""
    if h:
        raise take_error(h)
