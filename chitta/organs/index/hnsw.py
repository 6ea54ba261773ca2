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

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.organs.index._hnsw_common import (
    DEFAULT_EF,
    DEFAULT_SEED,
    HNSW_DELTA_MERGE_RATIO,
    HNSW_TIER2_THRESHOLD,
    NO_ID,
    IdsLike,
    Metric,
    PathLike,
    SearchResult,
    _add_args,
    _allowed,
    _finish,
    _graph_params,
    _GraphBase,
    _IndexBase,
    _metric,
    _positive_int,
    _search_args,
    _threads,
)
from chitta.organs.index._hnsw_tiered import TieredHNSW, delta_path

__all__ = [
    "HNSW",
    "HNSW_DELTA_MERGE_RATIO",
    "HNSW_TIER2_THRESHOLD",
    "NO_ID",
    "BruteForceIndex",
    "TieredHNSW",
    "delta_path",
]


class HNSW(_GraphBase):
    """An HNSW graph index over ``dim``-dimensional float32 vectors.

    ``M`` links per node on upper levels (``2*M`` on level 0),
    ``ef_construction`` the beam width while building, ``ef`` the default
    search beam (raised to ``k`` when smaller). ``seed`` fixes the level draw,
    so single-threaded builds (``num_threads=1``, the default) are
    deterministic.
    """

    _index: _core._HnswIndex

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
        dim, M, ef_construction, seed = _graph_params(dim, M, ef_construction, seed)
        self._ef = _positive_int(ef, "ef")
        self._index = _core._HnswIndex(dim, M, ef_construction, _metric(metric), seed)

    @classmethod
    def _wrap(cls, index: _core._HnswIndex, ef: int) -> HNSW:
        self = cls.__new__(cls)
        self._index = index
        self._ef = ef
        return self

    @property
    def node_count(self) -> int:
        """Nodes in the graph, removed ones included."""
        return int(self._index.node_count)

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
        q, one, k = _search_args(queries, k, self.dim)
        ef_value = self._search_ef(ef)
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

    def __repr__(self) -> str:
        return f"HNSW(dim={self.dim}, M={self.M}, metric={self.metric!r}, len={len(self)})"


class BruteForceIndex(_IndexBase):
    """Exact search with the HNSW call shapes: the recall oracle."""

    _index: _core._BruteForceIndex

    def __init__(self, dim: int, *, metric: Metric = "cosine") -> None:
        self._index = _core._BruteForceIndex(_positive_int(dim, "dim"), _metric(metric))

    def add(self, ids: IdsLike, vectors: npt.NDArray[np.float32], *, num_threads: int = 1) -> None:
        """Adds ``vectors[i]`` under ``ids[i]`` (``num_threads`` is accepted and unused)."""
        _threads(num_threads)
        self._index.add(*_add_args(ids, vectors, self.dim))

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
        q, one, k = _search_args(queries, k, self.dim)
        if ef is not None:
            _positive_int(ef, "ef")
        result = self._index.search(q, k, _allowed(allowed), _threads(num_threads))
        return _finish(result, one)
