"""Shared pieces of the Hamming indexes: input checks and the common wrapper surface.

Private: use :mod:`chitta.organs.index.hamming`. Every check raises
:class:`chitta.errors.InvalidArgument` with a message naming the argument.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.errors import InvalidArgument

_U64_MAX = 2**64 - 1


class _HammingBase:
    """What both Hamming wrappers share: ``len``, ``in``, memory, ``remove``, search."""

    __slots__ = ("_core",)

    _core: Any

    def __len__(self) -> int:
        return len(self._core)

    def __contains__(self, id: object) -> bool:
        key = _id_or_none(id)
        return key is not None and bool(self._core.contains(key))

    def memory_bytes(self) -> int:
        """Bytes held: codes (and, when rescoring, vectors), ids, tombstones and the id map
        (estimated)."""
        return int(self._core.memory_bytes())

    def remove(self, ids: npt.ArrayLike) -> None:
        """Remove ``ids``. All or nothing: NotFound if any is absent."""
        self._core.remove(_id_array(ids))

    def _top_k(
        self, queries: npt.ArrayLike, k: int, dtype: type, width: int, what: str, *extra: int
    ) -> tuple[Any, Any]:
        """The native search of checked ``queries``; 1-D results for a 1-D query."""
        q, single = _queries(queries, dtype, width, what)
        ids, values = self._core.search(q, k, *extra)
        return (ids[0], values[0]) if single else (ids, values)


def _same_length(ids: npt.NDArray[np.uint64], rows: npt.NDArray[Any], what: str) -> None:
    """InvalidArgument unless there is one row of ``what`` per id."""
    if rows.shape[0] != ids.shape[0]:
        raise InvalidArgument(f"{ids.shape[0]} ids but {rows.shape[0]} {what}; they must match")


def _candidates(candidates: int | None) -> int:
    """The native candidate setting: 0 for ``None`` (the default rule), else a positive int."""
    return 0 if candidates is None else _positive_int(candidates, "candidates")


def _integer(value: object, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(f"{what} must be an integer, got a bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidArgument(f"{what} must be an integer, got {type(value).__name__}") from None


def _positive_int(value: object, what: str) -> int:
    if type(value) is int and value > 0:  # fast path for the common case
        return value
    v = _integer(value, what)
    if v <= 0:
        raise InvalidArgument(f"{what} must be positive, got {v}")
    return v


def _count(value: object, what: str) -> int:
    v = _integer(value, what)
    if v < 0:
        raise InvalidArgument(f"{what} must not be negative, got {v}")
    return v


def _id_or_none(value: object) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return v if 0 <= v <= _U64_MAX else None


def _id_array(ids: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    arr: Any = np.asarray(ids)
    if arr.ndim != 1:
        raise InvalidArgument(f"ids must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype.kind == "u":
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if arr.dtype.kind == "i":
        if (arr < 0).any():
            raise InvalidArgument("ids must not be negative")
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if arr.dtype == object and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= _U64_MAX for x in arr
    ):
        return np.array([int(x) for x in arr], dtype=np.uint64)
    raise InvalidArgument(f"ids must be unsigned 64-bit integers, got dtype {arr.dtype}")


def _code_matrix(codes: npt.ArrayLike, words: int, what: str) -> npt.NDArray[np.uint64]:
    arr: Any = np.asarray(codes)
    if arr.ndim != 2 or arr.shape[1] != words:
        raise InvalidArgument(f"{what} must have shape (n, {words}), got {arr.shape}")
    if arr.shape[0] == 0:
        return np.empty((0, words), dtype=np.uint64)
    if arr.dtype != np.uint64:
        raise InvalidArgument(f"{what} must have dtype uint64, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _float_matrix(vectors: npt.ArrayLike, dim: int | None, what: str) -> npt.NDArray[np.float32]:
    arr: Any = np.asarray(vectors)
    if arr.ndim != 2 or (dim is not None and arr.shape[1] != dim):
        want = "(n, dim)" if dim is None else f"(n, {dim})"
        raise InvalidArgument(f"{what} must have shape {want}, got {arr.shape}")
    if arr.shape[1] == 0:
        raise InvalidArgument(f"{what} must have at least one column")
    if arr.shape[0] == 0:
        return np.empty((0, arr.shape[1]), dtype=np.float32)
    if arr.dtype != np.float32:
        raise InvalidArgument(f"{what} must have dtype float32, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _float_vector(values: npt.ArrayLike, dim: int, what: str) -> npt.NDArray[np.float32]:
    arr: Any = np.asarray(values)
    if arr.shape != (dim,):
        raise InvalidArgument(f"{what} must have shape ({dim},), got {arr.shape}")
    if arr.dtype != np.float32:
        raise InvalidArgument(f"{what} must have dtype float32, got {arr.dtype}")
    if not np.isfinite(arr).all():
        raise InvalidArgument(f"{what} has a NaN or inf")
    return np.ascontiguousarray(arr)


def _queries(values: npt.ArrayLike, dtype: type, width: int, what: str) -> tuple[Any, bool]:
    if type(values) is np.ndarray and values.dtype == dtype and values.flags.c_contiguous:
        # Fast path: already the right array; only the shape needs checking.
        if values.ndim == 1 and values.shape[0] == width:
            return values.reshape(1, width), True
        if values.ndim == 2 and values.shape[1] == width and values.shape[0] > 0:
            return values, False
    arr: Any = np.asarray(values)
    single = arr.ndim == 1
    if single:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise InvalidArgument(
            f"{what} must have shape ({width},) or (nq, {width}), got {arr.shape}"
        )
    if arr.shape[0] == 0:
        return np.empty((0, width), dtype=dtype), False
    if arr.dtype != dtype:
        raise InvalidArgument(f"{what} must have dtype {np.dtype(dtype)}, got {arr.dtype}")
    return np.ascontiguousarray(arr), single
