"""pass@k and coverage."""

from __future__ import annotations

import ctypes
from typing import Any, Union

import numpy as np

from . import _args, _native
from ._errors import InputError, SpiralError

_lib = _native.lib


def _descs(*arrays: Any) -> tuple[list, list]:
    descs = [_native.array(a) for a in arrays]
    return descs, [ctypes.byref(d) for d in descs]


def pass_at_k(n: Any, c: Any, k: Any) -> Union[float, np.ndarray]:
    """The unbiased estimator of pass@k (Go's eval.PassAtK), elementwise.

    pass@k = 1 - C(n-c, k)/C(n, k): the probability that at least one of k
    samples is correct, from n samples of which c are correct (Chen et al.,
    2021). c = 0 gives exactly 0; n - c < k gives exactly 1.

    Parameters
    ----------
    n, c, k : int or array_like of int
        Broadcast against each other.

    Returns
    -------
    float or ndarray of float64
        A float when every argument is a scalar.

    Raises
    ------
    ArgError
        n < 0, c < 0, c > n, k < 1 or k > n, naming the argument and, for
        arrays, the element (``index``, in the broadcast flat order).
    """
    scalar = all(np.ndim(x) == 0 for x in (n, c, k))
    try:
        nb, cb, kb = np.broadcast_arrays(_native.ints(n, "n"), _native.ints(c, "c"), _native.ints(k, "k"))
    except ValueError as e:
        if isinstance(e, SpiralError):
            raise
        raise InputError(f"spiral: n, c and k do not broadcast together: {e}", "n") from None
    shape = nb.shape
    nv, cv, kv = (np.ascontiguousarray(x, dtype=np.int64).reshape(-1) for x in (nb, cb, kb))
    out = np.empty(nv.shape, np.float64)
    descs, p = _descs(nv, cv, kv, out)
    _native.check(_lib.spiral_pass_at_k(*p))
    del descs
    return float(out[0]) if scalar else out.reshape(shape)


def coverage(n: Any, c: Any, kmax: int) -> np.ndarray:
    """The coverage curve of a test set (Go's eval.CoverageCurveTo).

    coverage(k) = (1/P) sum_i [1 - C(n_i - c_i, k)/C(n_i, k)], the mean
    pass@k over the P problems, for k = 1..kmax.

    Parameters
    ----------
    n, c : array_like of int, shape (P,)
        Samples and correct samples of each problem; every n_i >= kmax.
    kmax : int
        The largest k.

    Returns
    -------
    ndarray of float64, shape (kmax,)
        Element k-1 is coverage at k, nondecreasing in k.

    Raises
    ------
    ArgError
        An empty test set, kmax < 1, or a problem with n < kmax, c < 0 or
        c > n (``index`` is the problem).
    """
    nv = _native.ints(n, "n").reshape(-1)
    cv = _native.ints(c, "c").reshape(-1)
    kmax = _args.integer(kmax, "kmax")
    # Beyond the size cap eval refuses kmax before anything is allocated.
    out = np.empty(kmax, np.float64) if 0 <= kmax <= _native.MAX_SIZE else None
    descs, p = _descs(nv, cv, out)
    _native.check(_lib.spiral_coverage(p[0], p[1], min(max(kmax, -(1 << 63)), (1 << 63) - 1), p[2]))
    del descs
    return out
