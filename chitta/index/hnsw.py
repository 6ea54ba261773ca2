"""Approximate nearest-neighbour search: HNSW, a two-tier HNSW, and the exact oracle.

``HNSW`` is a hierarchical navigable small-world graph (Malkov & Yashunin)
implemented in C++ (``csrc/hnsw/``). ``TieredHNSW`` keeps a base graph of up to
``threshold`` vectors (``HNSW_TIER2_THRESHOLD`` = 100K) and sends later inserts
to a small delta graph that :meth:`TieredHNSW.merge` folds back into the base
once it exceeds ``merge_ratio`` (``HNSW_DELTA_MERGE_RATIO`` = 10%) of it.
``BruteForceIndex`` answers the same calls exactly and is the oracle the tests
and benchmarks measure recall against.

Conventions shared by all three classes:

* ids are ``uint64`` (any integer array or sequence of non-negative ints is
  accepted); ``2**64 - 1`` is reserved: it pads missing results.
* vectors and queries are ``float32`` arrays of shape ``(n, dim)``; other
  dtypes are refused (no silent casts). A 1-D query of length ``dim`` is one
  query, and its results come back 1-D (shape ``(k,)``); 2-D queries give
  ``(q, k)`` results.
* ``metric="cosine"`` normalises vectors on insert and queries on search;
  ``metric="ip"`` uses raw inner products. Both report distance ``1 - dot``
  (cosine distance in [0, 2]; for "ip" it may be negative).
* results are nearest first; when fewer than ``k`` live (and allowed) vectors
  exist, rows are padded with id ``2**64 - 1`` (:data:`NO_ID`) and distance
  ``+inf``.
* bad input (wrong dtype/shape/dim, NaN or inf, a zero vector under cosine,
  an id given twice or already present, the reserved id, ``k <= 0``) raises
  :class:`chitta.errors.InvalidArgument`; removing an unknown id raises
  :class:`chitta.errors.NotFound`. Either way the index is left unchanged.
* ``allowed`` restricts results to the given ids (ids the index does not hold
  are ignored); the search still walks through other nodes and widens ``ef``
  when the filter is selective, or scans the allowed ids exactly when few.
* removed vectors stay in the graph for navigation and are never returned; a
  removed id may be added again.
* the GIL is released during add, remove, search, save, load and merge.
  Searches may run concurrently from several threads; ``add``/``remove`` wait
  for running searches and block new ones while they run. On
  ``TieredHNSW``, searches also continue while ``merge()`` builds the merged
  graph.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

__all__ = [
    "HNSW",
    "HNSW_DELTA_MERGE_RATIO",
    "HNSW_TIER2_THRESHOLD",
    "NO_ID",
    "BruteForceIndex",
    "TieredHNSW",
    "delta_path",
]

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


class HNSW:
    """An HNSW graph index over ``dim``-dimensional float32 vectors.

    ``M`` links per node on upper levels (``2*M`` on level 0),
    ``ef_construction`` the beam width while building, ``ef`` the default
    search beam (raised to ``k`` when smaller). ``seed`` fixes the level draw,
    so single-threaded builds (``num_threads=1``, the default) are
    deterministic.
    """

    def __init__(
        self,
        dim: int,
        *,
        M: int = 16,
        ef_construction: int = 200,
        metric: Metric = "cosine",
        seed: int = DEFAULT_SEED,
        ef: int = DEFAULT_EF,
    ) -> None:
        dim = _positive_int(dim, "dim")
        M = _positive_int(M, "M", minimum=2)
        ef_construction = _positive_int(ef_construction, "ef_construction")
        seed = _positive_int(seed, "seed", minimum=0)
        self._ef = _positive_int(ef, "ef")
        self._index = _core._HnswIndex(dim, M, ef_construction, _metric(metric), seed)

    @classmethod
    def _wrap(cls, index: _core._HnswIndex, ef: int) -> HNSW:
        self = cls.__new__(cls)
        self._index = index
        self._ef = ef
        return self

    @property
    def dim(self) -> int:
        return int(self._index.dim)

    @property
    def M(self) -> int:
        return int(self._index.M)

    @property
    def ef_construction(self) -> int:
        return int(self._index.ef_construction)

    @property
    def metric(self) -> str:
        return str(self._index.metric)

    @property
    def ef(self) -> int:
        """Default search beam width."""
        return self._ef

    @ef.setter
    def ef(self, value: int) -> None:
        self._ef = _positive_int(value, "ef")

    @property
    def node_count(self) -> int:
        """Nodes in the graph, removed ones included."""
        return int(self._index.node_count)

    def memory_bytes(self) -> int:
        """Heap bytes held by the native index (vectors, graph, id map)."""
        return int(self._index.memory_bytes())

    def add(self, ids: IdsLike, vectors: npt.NDArray[np.float32], *, num_threads: int = 1) -> None:
        """Adds ``vectors[i]`` under ``ids[i]``. All or nothing."""
        id_arr = _ids(ids)
        vec, _ = _vectors(vectors, self.dim, "vectors")
        if len(id_arr) != len(vec):
            raise InvalidArgument(f"{len(id_arr)} ids for {len(vec)} vectors")
        self._index.add(id_arr, vec, _threads(num_threads))

    def remove(self, ids: IdsLike) -> None:
        """Removes ids (NotFound, changing nothing, if one is not present)."""
        self._index.remove(_ids(ids))

    def search(
        self,
        queries: npt.NDArray[np.float32],
        k: int,
        *,
        ef: int | None = None,
        allowed: IdsLike | None = None,
        num_threads: int = 1,
    ) -> SearchResult:
        """The ``k`` nearest live ids and distances per query (see module doc)."""
        q, one = _vectors(queries, self.dim, "queries")
        k = _positive_int(k, "k")
        ef_value = self._ef if ef is None else _positive_int(ef, "ef")
        result = self._index.search(q, k, ef_value, _allowed(allowed), _threads(num_threads))
        return _finish(result, one)

    def save(self, path: PathLike) -> None:
        """Writes the index to ``path`` (format: csrc/hnsw/FORMAT.md), atomically by rename."""
        self._index.save(os.fspath(path))

    @classmethod
    def load(cls, path: PathLike, *, ef: int = DEFAULT_EF) -> HNSW:
        """Reads an index written by :meth:`save`; damage raises CorruptionError."""
        return cls._wrap(_core._HnswIndex.load(os.fspath(path)), _positive_int(ef, "ef"))

    def check_integrity(self) -> None:
        """Raises CorruptionError if a graph invariant is broken (tests, debugging)."""
        self._index.check_integrity()

    def unreachable_count(self) -> int:
        """Nodes that level 0 cannot reach from the entry point (diagnostic; ideally 0)."""
        return int(self._index.unreachable_count())

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, item: object) -> bool:
        return _contains(self._index, item)

    def __repr__(self) -> str:
        return f"HNSW(dim={self.dim}, M={self.M}, metric={self.metric!r}, len={len(self)})"


class BruteForceIndex:
    """Exact search with the HNSW call shapes: the recall oracle."""

    def __init__(self, dim: int, *, metric: Metric = "cosine") -> None:
        self._index = _core._BruteForceIndex(_positive_int(dim, "dim"), _metric(metric))

    @property
    def dim(self) -> int:
        return int(self._index.dim)

    @property
    def metric(self) -> str:
        return str(self._index.metric)

    def add(self, ids: IdsLike, vectors: npt.NDArray[np.float32], *, num_threads: int = 1) -> None:
        """Adds ``vectors[i]`` under ``ids[i]`` (``num_threads`` is accepted and unused)."""
        _threads(num_threads)
        id_arr = _ids(ids)
        vec, _ = _vectors(vectors, self.dim, "vectors")
        if len(id_arr) != len(vec):
            raise InvalidArgument(f"{len(id_arr)} ids for {len(vec)} vectors")
        self._index.add(id_arr, vec)

    def remove(self, ids: IdsLike) -> None:
        self._index.remove(_ids(ids))

    def search(
        self,
        queries: npt.NDArray[np.float32],
        k: int,
        *,
        ef: int | None = None,
        allowed: IdsLike | None = None,
        num_threads: int = 1,
    ) -> SearchResult:
        """Exact ``k`` nearest (ties by smaller id); ``ef`` is accepted and ignored."""
        q, one = _vectors(queries, self.dim, "queries")
        k = _positive_int(k, "k")
        if ef is not None:
            _positive_int(ef, "ef")
        result = self._index.search(q, k, _allowed(allowed), _threads(num_threads))
        return _finish(result, one)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, item: object) -> bool:
        return _contains(self._index, item)


def delta_path(path: PathLike) -> str:
    """The delta sidecar beside a base file: ``x.hnsw`` -> ``x.delta.hnsw``."""
    p = os.fspath(path)
    return p[: -len(".hnsw")] + ".delta.hnsw" if p.endswith(".hnsw") else p + ".delta.hnsw"


class TieredHNSW:
    """A base HNSW graph up to ``threshold`` vectors plus a delta graph for later inserts.

    The base takes inserts while it holds fewer than ``threshold`` nodes
    (removed nodes still count: they stay in the graph); later inserts go to
    the delta. A batch that crosses the threshold is split between the tiers.

    ``merge()`` (call it at checkpoints) folds the delta into the base when the
    delta holds more than ``merge_ratio`` of the base's live vectors. Searches
    query both tiers and combine them by distance (``merge="distance"``, the
    default) or by reciprocal rank fusion (``merge="rrf"``, 1/(60+rank)); RRF
    orders by fused score but still reports true distances.
    """

    def __init__(
        self,
        dim: int,
        *,
        M: int = 16,
        ef_construction: int = 200,
        metric: Metric = "cosine",
        threshold: int = HNSW_TIER2_THRESHOLD,
        merge_ratio: float = HNSW_DELTA_MERGE_RATIO,
        seed: int = DEFAULT_SEED,
        ef: int = DEFAULT_EF,
    ) -> None:
        dim = _positive_int(dim, "dim")
        M = _positive_int(M, "M", minimum=2)
        ef_construction = _positive_int(ef_construction, "ef_construction")
        seed = _positive_int(seed, "seed", minimum=0)
        threshold = _positive_int(threshold, "threshold", minimum=0)
        ratio = _ratio(merge_ratio)
        self._ef = _positive_int(ef, "ef")
        self._index = _core._TieredHnswIndex(
            dim, M, ef_construction, _metric(metric), seed, threshold, ratio
        )

    @property
    def dim(self) -> int:
        return int(self._index.dim)

    @property
    def M(self) -> int:
        return int(self._index.M)

    @property
    def ef_construction(self) -> int:
        return int(self._index.ef_construction)

    @property
    def metric(self) -> str:
        return str(self._index.metric)

    @property
    def threshold(self) -> int:
        return int(self._index.threshold)

    @property
    def merge_ratio(self) -> float:
        return float(self._index.merge_ratio)

    @property
    def ef(self) -> int:
        return self._ef

    @ef.setter
    def ef(self, value: int) -> None:
        self._ef = _positive_int(value, "ef")

    @property
    def base_size(self) -> int:
        """Live vectors in the base graph."""
        return int(self._index.base_size)

    @property
    def delta_size(self) -> int:
        """Live vectors in the delta graph."""
        return int(self._index.delta_size)

    @property
    def needs_merge(self) -> bool:
        """True when the delta holds more than ``merge_ratio`` of the base."""
        return bool(self._index.needs_merge)

    @property
    def merge_count(self) -> int:
        return int(self._index.merge_count)

    def memory_bytes(self) -> int:
        return int(self._index.memory_bytes())

    def add(self, ids: IdsLike, vectors: npt.NDArray[np.float32], *, num_threads: int = 1) -> None:
        """Adds to the base until it holds ``threshold`` nodes, then to the delta. All or nothing."""
        id_arr = _ids(ids)
        vec, _ = _vectors(vectors, self.dim, "vectors")
        if len(id_arr) != len(vec):
            raise InvalidArgument(f"{len(id_arr)} ids for {len(vec)} vectors")
        self._index.add(id_arr, vec, _threads(num_threads))

    def remove(self, ids: IdsLike) -> None:
        self._index.remove(_ids(ids))

    def search(
        self,
        queries: npt.NDArray[np.float32],
        k: int,
        *,
        ef: int | None = None,
        allowed: IdsLike | None = None,
        merge: Literal["distance", "rrf"] = "distance",
        num_threads: int = 1,
    ) -> SearchResult:
        """Searches both tiers (``ef`` each) and merges the two result lists."""
        q, one = _vectors(queries, self.dim, "queries")
        k = _positive_int(k, "k")
        ef_value = self._ef if ef is None else _positive_int(ef, "ef")
        if merge not in ("distance", "rrf"):
            raise InvalidArgument(f"merge must be 'distance' or 'rrf', got {merge!r}")
        result = self._index.search(q, k, ef_value, _allowed(allowed), merge, _threads(num_threads))
        return _finish(result, one)

    def merge(self, *, force: bool = False, num_threads: int = 1) -> bool:
        """Merges the delta into the base if ``needs_merge`` (or ``force``); True if it did.

        The merged graph is built beside the live tiers, so concurrent searches
        continue; add/remove wait until the merge is done.
        """
        return bool(self._index.merge(bool(force), _threads(num_threads)))

    def save(self, path: PathLike) -> None:
        """Writes the base to ``path`` and the delta to :func:`delta_path` (``x.delta.hnsw``)."""
        self._index.save(os.fspath(path), delta_path(path))

    @classmethod
    def load(
        cls,
        path: PathLike,
        *,
        threshold: int = HNSW_TIER2_THRESHOLD,
        merge_ratio: float = HNSW_DELTA_MERGE_RATIO,
        ef: int = DEFAULT_EF,
    ) -> TieredHNSW:
        """Reads the pair written by :meth:`save` (tier parameters are not stored)."""
        index = _core._TieredHnswIndex.load(
            os.fspath(path),
            delta_path(path),
            _positive_int(threshold, "threshold", minimum=0),
            _ratio(merge_ratio),
        )
        self = cls.__new__(cls)
        self._index = index
        self._ef = _positive_int(ef, "ef")
        return self

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, item: object) -> bool:
        return _contains(self._index, item)

    def __repr__(self) -> str:
        return (
            f"TieredHNSW(dim={self.dim}, base={self.base_size}, delta={self.delta_size}, "
            f"metric={self.metric!r})"
        )


def _ratio(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InvalidArgument(f"merge_ratio must be a number, got {type(value).__name__}")
    ratio = float(value)
    if not (0.0 < ratio <= 1000.0):
        raise InvalidArgument(f"merge_ratio must be in (0, 1000], got {ratio}")
    return ratio
