"""TieredHNSW: the two-tier HNSW index (base graph + delta graph). See :mod:`chitta.organs.index.hnsw`."""

from __future__ import annotations

import os
from typing import Literal

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument
from chitta.organs.index._hnsw_common import (
    DEFAULT_EF,
    DEFAULT_SEED,
    HNSW_DELTA_MERGE_RATIO,
    HNSW_TIER2_THRESHOLD,
    IdsLike,
    Metric,
    PathLike,
    SearchResult,
    _allowed,
    _finish,
    _graph_params,
    _GraphBase,
    _metric,
    _positive_int,
    _ratio,
    _search_args,
    _threads,
)

__all__ = ["RowRefs", "TieredHNSW", "delta_path"]

# Vectors the caller holds: (ids uint64[n], rows int64[n], matrix float32[R, dim]);
# row rows[i] of matrix is the vector of ids[i] (-1: none). A graph saved with
# them refers to those rows instead of storing the vectors (file format 2.0).
RowRefs = tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.float32]]


def delta_path(path: PathLike) -> str:
    """The delta sidecar beside a base file: ``x.hnsw`` -> ``x.delta.hnsw``."""
    p = os.fspath(path)
    return p[: -len(".hnsw")] + ".delta.hnsw" if p.endswith(".hnsw") else p + ".delta.hnsw"


class TieredHNSW(_GraphBase):
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

    _index: _core._TieredHnswIndex

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
        dim, M, ef_construction, seed = _graph_params(dim, M, ef_construction, seed)
        threshold = _positive_int(threshold, "threshold", minimum=0)
        ratio = _ratio(merge_ratio)
        self._ef = _positive_int(ef, "ef")
        self._index = _core._TieredHnswIndex(
            dim, M, ef_construction, _metric(metric), seed, threshold, ratio
        )

    @property
    def threshold(self) -> int:
        return int(self._index.threshold)

    @property
    def merge_ratio(self) -> float:
        return float(self._index.merge_ratio)

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
        q, one, k, ef_value = self._checked(queries, k, ef, merge)
        result = self._index.search(q, k, ef_value, _allowed(allowed), merge, _threads(num_threads))
        return _finish(result, one)

    def search_async(
        self,
        queries: npt.NDArray[np.float32],
        k: int,
        *,
        ef: int | None = None,
        allowed: IdsLike | None = None,
        merge: Literal["distance", "rrf"] = "distance",
    ) -> PendingSearch:
        """Starts ``search`` on the process's search thread and returns at once;
        ``.wait()`` gives exactly what ``search`` gives (same ids, distances bit
        for bit) or raises its errors. The queries and ``allowed`` are copied, so
        they may change meanwhile; writes to the graph wait for the search."""
        q, one, k, ef_value = self._checked(queries, k, ef, merge)
        return PendingSearch(
            self._index.search_async(q, k, ef_value, _allowed(allowed), merge), one
        )

    def _checked(
        self, queries: npt.NDArray[np.float32], k: int, ef: int | None, merge: str
    ) -> tuple[npt.NDArray[np.float32], bool, int, int]:
        """The arguments ``search`` and ``search_async`` share, checked: (queries, one, k, ef)."""
        q, one, k = _search_args(queries, k, self.dim)
        ef_value = self._search_ef(ef)
        if merge not in ("distance", "rrf"):
            raise InvalidArgument(f"merge must be 'distance' or 'rrf', got {merge!r}")
        return q, one, k, ef_value

    def merge(self, *, force: bool = False, num_threads: int = 1) -> bool:
        """Merges the delta into the base if ``needs_merge`` (or ``force``); True if it did.

        The merged graph is built beside the live tiers, so concurrent searches
        continue; add/remove wait until the merge is done.
        """
        return bool(self._index.merge(bool(force), _threads(num_threads)))

    def save(self, path: PathLike, *, rows: RowRefs | None = None) -> None:
        """Writes the base to ``path`` and the delta to :func:`delta_path` (``x.delta.hnsw``).
        ``rows``: each live vector equal to its id's row (normalised as ``add`` does) is
        written as a reference to it (format 2.0); ``load`` then needs the same rows."""
        self._index.save(os.fspath(path), delta_path(path), rows)

    @classmethod
    def load(
        cls,
        path: PathLike,
        *,
        threshold: int = HNSW_TIER2_THRESHOLD,
        merge_ratio: float = HNSW_DELTA_MERGE_RATIO,
        ef: int = DEFAULT_EF,
        rows: RowRefs | None = None,
    ) -> TieredHNSW:
        """Reads the pair written by :meth:`save` (tier parameters are not stored);
        ``rows``: the vectors a 2.0 file refers to (a missing one, or one other than
        at save time, raises CorruptionError)."""
        index = _core._TieredHnswIndex.load(
            os.fspath(path),
            delta_path(path),
            _positive_int(threshold, "threshold", minimum=0),
            _ratio(merge_ratio),
            rows,
            int(rows[2].shape[1]) if rows is not None and rows[2].ndim == 2 else 0,
        )
        self = cls.__new__(cls)
        self._index = index
        self._ef = _positive_int(ef, "ef")
        return self

    def __repr__(self) -> str:
        return (
            f"TieredHNSW(dim={self.dim}, base={self.base_size}, delta={self.delta_size}, "
            f"metric={self.metric!r})"
        )


class PendingSearch:
    """A search started by ``TieredHNSW.search_async``."""

    __slots__ = ("_handle", "_one")

    def __init__(self, handle: _core._TieredSearch, one: bool) -> None:
        self._handle = handle
        self._one = one

    @property
    def done(self) -> bool:
        return bool(self._handle.done)

    def wait(self) -> SearchResult:
        """The search's ``(ids, distances)``, waiting for it (or running it here
        if the search thread has not started it); the same errors as ``search``."""
        return _finish(self._handle.wait(), self._one)
