"""Shared pieces of the HNSW Python surface: constants, type aliases, input checks.

Private: use :mod:`chitta.index.hnsw`. Every check raises
:class:`chitta.errors.InvalidArgument` with a message naming the argument.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

NO_ID: int = 2**64 - 1
HNSW_TIER2_THRESHOLD: int = int(_core.HNSW_TIER2_THRESHOLD)  # 100_000
HNSW_DELTA_MERGE_RATIO: float = float(_core.HNSW_DELTA_MERGE_RATIO)  # 0.10
DEFAULT_EF: int = 64
DEFAULT_SEED: int = 100

Metric = Literal["cosine", "ip"]
IdsLike = npt.ArrayLike | Sequence[int]
SearchResult = tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]
PathLike = str | os.PathLike[str]


def _positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgument(f"{name} must be an int, got {type(value).__name__}")
    if int(value) < minimum:
        raise InvalidArgument(f"{name} must be >= {minimum}, got {int(value)}")
    return int(value)


def _threads(num_threads: int | None) -> int:
    if num_threads is None:
        return 1
    return _positive_int(num_threads, "num_threads")


def _metric(metric: str) -> str:
    if metric not in ("cosine", "ip"):
        raise InvalidArgument(f"metric must be 'cosine' or 'ip', got {metric!r}")
    return metric


def _ids(ids: IdsLike, name: str = "ids") -> npt.NDArray[np.uint64]:
    arr = ids if isinstance(ids, np.ndarray) else np.asarray(ids, dtype=object)
    if arr.ndim != 1:
        raise InvalidArgument(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype == object:  # Python ints, possibly beyond int64
        values = arr.tolist()
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
            raise InvalidArgument(f"{name} must be integers")
        if min(values) < 0:
            raise InvalidArgument(f"{name} must be non-negative")
        if max(values) >= 2**64:
            raise InvalidArgument(f"{name} must be < 2**64")
        return np.array(values, dtype=np.uint64)
    if arr.dtype == np.uint64:
        return np.ascontiguousarray(arr)
    if not np.issubdtype(arr.dtype, np.integer):
        raise InvalidArgument(f"{name} must be integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.signedinteger) and bool((arr < 0).any()):
        raise InvalidArgument(f"{name} must be non-negative")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def _vectors(vectors: npt.ArrayLike, dim: int, name: str) -> tuple[npt.NDArray[np.float32], bool]:
    """Checks dtype/shape; returns a C-contiguous (n, dim) float32 array and whether it was 1-D."""
    if not isinstance(vectors, np.ndarray):
        raise InvalidArgument(f"{name} must be a numpy float32 array, got {type(vectors).__name__}")
    if vectors.dtype != np.float32:
        raise InvalidArgument(f"{name} must have dtype float32, got {vectors.dtype}")
    one = vectors.ndim == 1
    if one:
        vectors = vectors.reshape(1, -1)
    if vectors.ndim != 2:
        raise InvalidArgument(f"{name} must be 1-D or 2-D, got {vectors.ndim}-D")
    if vectors.shape[1] != dim:
        raise InvalidArgument(f"{name} must have {dim} columns, got {vectors.shape[1]}")
    return np.ascontiguousarray(vectors), one


def _add_args(ids: IdsLike, vectors: npt.ArrayLike, dim: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
    """The checked (ids, vectors) of an ``add``: equal lengths, ``dim`` columns."""
    id_arr = _ids(ids)
    vec, _ = _vectors(vectors, dim, "vectors")
    if len(id_arr) != len(vec):
        raise InvalidArgument(f"{len(id_arr)} ids for {len(vec)} vectors")
    return id_arr, vec


def _allowed(allowed: IdsLike | None) -> npt.NDArray[np.uint64] | None:
    return None if allowed is None else _ids(allowed, "allowed")


def _finish(result: tuple[np.ndarray, np.ndarray], one: bool) -> SearchResult:
    ids, dist = result
    if one:
        return ids[0], dist[0]
    return ids, dist


def _contains(index: object, item: object) -> bool:
    if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
        return False
    value = int(item)
    if value < 0 or value >= NO_ID:
        return False
    return bool(index.contains(value))  # type: ignore[attr-defined]


def _ratio(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InvalidArgument(f"merge_ratio must be a number, got {type(value).__name__}")
    ratio = float(value)
    if not (0.0 < ratio <= 1000.0):
        raise InvalidArgument(f"merge_ratio must be in (0, 1000], got {ratio}")
    return ratio
