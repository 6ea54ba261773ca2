"""Shared pieces of the HNSW Python surface: constants, type aliases, input checks.

Private: use :mod:`chitta.organs.index.hnsw`. Every check raises
:class:`chitta.errors.InvalidArgument` with a message naming the argument.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

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


def _add_args(
    ids: IdsLike, vectors: npt.ArrayLike, dim: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
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


def _graph_params(
    dim: object, M: object, ef_construction: object, seed: object
) -> tuple[int, int, int, int]:
    """The checked graph parameters of an HNSW constructor: ``(dim, M, ef_construction, seed)``."""
    return (
        _positive_int(dim, "dim"),
        _positive_int(M, "M", minimum=2),
        _positive_int(ef_construction, "ef_construction"),
        _positive_int(seed, "seed", minimum=0),
    )


def _search_args(
    queries: npt.ArrayLike, k: object, dim: int
) -> tuple[npt.NDArray[np.float32], bool, int]:
    """The checked ``(queries, one, k)`` of a ``search``: ``one`` when the query was 1-D."""
    q, one = _vectors(queries, dim, "queries")
    return q, one, _positive_int(k, "k")


class _IndexBase:
    """What every index wrapper shares: the native index, its dim/metric, len, ``in``, remove."""

    _index: Any

    @property
    def dim(self) -> int:
        return int(self._index.dim)

    @property
    def metric(self) -> str:
        return str(self._index.metric)

    def remove(self, ids: IdsLike) -> None:
        """Removes ids (NotFound, changing nothing, if one is not present)."""
        self._index.remove(_ids(ids))

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, item: object) -> bool:
        return _contains(self._index, item)


class _GraphBase(_IndexBase):
    """What the graph wrappers (HNSW, TieredHNSW) share: build parameters, ``ef``, add."""

    _ef: int

    @property
    def M(self) -> int:
        return int(self._index.M)

    @property
    def ef_construction(self) -> int:
        return int(self._index.ef_construction)

    @property
    def ef(self) -> int:
        """Default search beam width."""
        return self._ef

    @ef.setter
    def ef(self, value: int) -> None:
        self._ef = _positive_int(value, "ef")

    def memory_bytes(self) -> int:
        """Heap bytes held by the native index (vectors, graph, id map)."""
        return int(self._index.memory_bytes())

    def add(self, ids: IdsLike, vectors: npt.NDArray[np.float32], *, num_threads: int = 1) -> None:
        """Adds ``vectors[i]`` under ``ids[i]``. All or nothing."""
        id_arr, vec = _add_args(ids, vectors, self.dim)
        self._index.add(id_arr, vec, _threads(num_threads))

    def _search_ef(self, ef: object) -> int:
        """The beam of one search: ``ef`` when given, else the default."""
        return self._ef if ef is None else _positive_int(ef, "ef")
