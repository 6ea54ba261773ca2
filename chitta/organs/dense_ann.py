"""The dense lane's graph index for large fields: a tiered HNSW (chitta.index)
kept in step with the recall-index organ's vectors.

Changes queue up (vectors set or dropped) and are applied on the next search
or save, so replay stays cheap. Chosen by the field setting ``dense_index``
(``ConfigureField``): ``"hnsw"`` uses it above the exact-scan size;
``"hamming"`` and ``"auto"`` use the binary-code pre-filter with exact
rescoring instead (building a graph of a million vectors takes minutes on a
small machine, and a checkpoint is what makes it pay: it saves the graph as
the ``.hnsw`` / ``.delta.hnsw`` sidecars).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from chitta.index._hnsw_tiered import TieredHNSW, delta_path
from chitta.index.posting import PAD_ID

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]

DENSE_INDEX_KINDS = ("auto", "hamming", "hnsw")
ANN_EF = 64  # search breadth: recall@10 >= 0.95 on the benchmark sets at ef 12-32


class DenseANN:
    """A tiered HNSW over unit vectors, ids = memory ids."""

    def __init__(self, dim: int, graph: TieredHNSW | None = None) -> None:
        self.dim = dim
        self.graph = graph if graph is not None else TieredHNSW(dim, ef=ANN_EF)
        self._pending: set[int] = set()  # ids whose current vector is not in the graph yet

    def vector_set(self, mid: int) -> None:
        self._pending.add(mid)

    def vector_dropped(self, mid: int) -> None:
        if mid in self._pending:
            self._pending.discard(mid)
        elif mid in self.graph:
            self.graph.remove(np.array([mid], np.uint64))

    def catch_up(self, rows_of: Callable[[list[int]], F32]) -> None:
        """Insert what is pending; ``rows_of(ids)`` gives their unit vectors."""
        if not self._pending:
            return
        ids = sorted(self._pending)
        self.graph.add(np.array(ids, np.uint64), np.ascontiguousarray(rows_of(ids), np.float32), num_threads=2)
        self._pending.clear()

    def search(self, vector: F32, k: int) -> tuple[U64, F32]:
        ids, dist = self.graph.search(vector, k)
        keep = ids != PAD_ID
        return ids[keep], (1.0 - dist[keep]).astype(np.float32)  # cosine distance -> cosine

    def save(self, path: str) -> list[str]:
        """Fold the delta into the base when due, then write both tiers; their paths."""
        self.graph.merge()
        self.graph.save(path)
        return [path, delta_path(path)]

    @classmethod
    def load(cls, path: str, dim: int) -> DenseANN:
        graph = TieredHNSW.load(path, ef=ANN_EF)
        if graph.dim != dim:
            raise ValueError(f"the graph holds {graph.dim}-d vectors, the field {dim}-d")
        return cls(dim, graph)

    def __len__(self) -> int:
        return len(self.graph) + len(self._pending)
