"""One BLAS thread for the matrix-vector products of a recall.

A recall multiplies one query vector by a matrix (the dense lane's exact scan,
the sparse encoder's 384 x 16,384 projection of the query). OpenBLAS splits
such a product over all cores; on a busy machine (an agent, its tools and the
daemon share a few cores) its worker threads wait for each other and a 0.6 ms
product takes 15 ms (see docs/DECISIONS.md D-016). One thread is
never more than ~2x slower than all of them for these sizes, and it leaves the
other cores to concurrent recalls.

``one_thread()`` sets numpy's OpenBLAS to one thread for the duration of the
block and restores the previous count when the last nested or concurrent block
ends. The count is process-wide in OpenBLAS (its ``_local`` setter too), so a
BLAS call on another thread during a recall also runs on one thread. Results do
not change: the products split work by output element, so each element is
summed in the same order whatever the thread count (tests/unit/recall/test_recall_blas.py).
Where no OpenBLAS is loaded (macOS Accelerate, MKL, another platform) it does
nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from collections.abc import Callable, Iterator

_SETTERS: list[tuple[Callable[[int], object], Callable[[], int]]] | None = None
_lock = threading.Lock()
_depth = 0
_saved: list[int] = []

# Symbol names of OpenBLAS builds: plain, 64-bit-integer builds, and the
# scipy-openblas builds bundled with numpy wheels.
_PREFIXES = ("", "scipy_")
_SUFFIXES = ("", "64_", "_64", "_64_")


def _openblas_paths() -> list[str]:
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    paths = []
    for line in lines:
        parts = line.split(maxsplit=5)
        path = parts[5] if len(parts) == 6 else ""
        if (
            path.startswith("/")
            and "openblas" in path.rsplit("/", 1)[-1].lower()
            and path not in paths
        ):
            paths.append(path)
    return paths


def _find() -> list[tuple[Callable[[int], object], Callable[[], int]]]:
    import numpy  # noqa: F401  (loads numpy's BLAS before we look for it)

    found = []
    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            pair = None
            for suffix in _SUFFIXES:
                setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    pair = (setter, getter)
                    break
            if pair is not None:
                found.append(pair)
                break
    return found


def available() -> bool:
    """Whether an OpenBLAS whose thread count can be set is loaded."""
    global _SETTERS
    if _SETTERS is None:
        _SETTERS = _find()
    return bool(_SETTERS)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block's BLAS calls on one thread (see the module docstring)."""
    global _depth, _SETTERS
    if _SETTERS is None:
        _SETTERS = _find()
    if not _SETTERS:
        yield
        return
    with _lock:
        if _depth == 0:
            _saved[:] = [get() for _set, get in _SETTERS]
            for setter, _get in _SETTERS:
                setter(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for (setter, _get), n in zip(_SETTERS, _saved):
                    setter(n)
