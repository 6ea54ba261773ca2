"""numpy's own float32 dot product, for the native recall tail's cosines.

The recall scorer's reference cosine is ``float(row @ query)`` on float32
vectors: numpy hands a contiguous float32 vector-vector product to its BLAS
(``cblas_sdot``; with numpy's wheels the scipy-openblas build, 64-bit integers,
``scipy_cblas_sdot64_``). The native tail (``csrc/recall``) computes the
candidates' cosines by calling that same function, so every cosine, and every
score, stays bit-for-bit the Python path's. :func:`sdot_address` finds it among
the loaded OpenBLAS libraries and keeps it only if it reproduces numpy's dot
exactly on a set of random vectors (lengths 1 to 1,024); without it (no
OpenBLAS, another BLAS, a mismatch) the tail computes cosines with numpy.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from chitta.recall import blas

_CANDIDATES = (
    "scipy_cblas_sdot64_",
    "cblas_sdot64_",
    "cblas_sdot_64",
    "cblas_sdot_64_",
)  # 64-bit-integer builds
_lock = threading.Lock()
_address: int | None = None
_looked = False


def _agrees(fn: ctypes._CFuncPtr) -> bool:  # type: ignore[name-defined]
    rng = np.random.default_rng(20261130)
    for n in (1, 2, 7, 16, 31, 64, 100, 384, 385, 768, 1024):
        for _ in range(3):
            x = rng.standard_normal(n).astype(np.float32)
            y = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3])).astype(np.float32)
            want = float(x @ y)
            got = float(fn(n, x.ctypes.data, 1, y.ctypes.data, 1))
            if got != want and not (np.isnan(got) and np.isnan(want)):
                return False
    return True


def sdot_address() -> int | None:
    """The address of numpy's ``cblas_sdot`` (64-bit integer interface), or None."""
    global _address, _looked
    if _looked:
        return _address
    with _lock:
        if not _looked:
            _address = _find()
            _looked = True
    return _address


def _find() -> int | None:
    for path in blas._openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _CANDIDATES:
            fn = getattr(lib, name, None)
            if fn is None:
                continue
            fn.restype = ctypes.c_float
            fn.argtypes = [
                ctypes.c_int64,
                ctypes.c_void_p,
                ctypes.c_int64,
                ctypes.c_void_p,
                ctypes.c_int64,
            ]
            with blas.one_thread():
                if _agrees(fn):
                    return ctypes.cast(fn, ctypes.c_void_p).value
    return None
