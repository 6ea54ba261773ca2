"""The dense lane's graph index for large fields: a tiered HNSW (chitta.organs.index)
kept in step with the recall-index organ's vectors.

Changes queue up (vectors set or dropped) and are applied on the next search
or save, so replay stays cheap. Chosen by the field setting ``dense_index``
(``ConfigureField``):
- ``"hnsw"``: the graph above the exact-scan size, built (or caught up) on the
  first query that needs it and saved by checkpoints;
- ``"auto"`` (the default): a checkpoint of a field with ``AUTO_ANN_MIN`` or
  more vectors builds the graph (in the checkpoint's own view, so no query
  waits for it), at most ``AUTO_BUILD_STEP`` vectors and about
  ``AUTO_BUILD_SECONDS`` of inserting per checkpoint so that none runs for long
  (a large field's graph grows over several: 100K vectors take ~100 s of
  inserting on 2 cores, D-058), and saves it
  as the ``.hnsw`` / ``.delta.hnsw`` sidecars with the ids it lacks; a
  field opened with that graph searches it, plus an exact scan of the vectors
  written since (at most ``AUTO_PENDING_EXACT``; never inserted at query time).
  Without a graph, or with more new vectors than that, it uses binary codes +
  exact rescoring;
- ``"hamming"``: always the binary codes + exact rescoring;
- ``"exact"``: an exact scan of every vector at any size (no approximation;
  its cost grows with the field, ~0.07 ms per 1,000 vectors of 384 floats).

Below the exact-scan size (``EXACT_DENSE_LIMIT``, 20,000, in
recall_index_dense.py) a field scans exactly unless "auto" has a graph: from
``AUTO_ANN_MIN`` vectors on, the checkpoint's graph serves it (a 10K field's
scan costs ~0.7 ms, its graph search ~0.15). The graph, not binary codes, in
that range: on LoCoMo conversations with question queries the codes' top 400
held only 0.75 of the exact top 100 where the graph (ef 64) held 0.99
(see docs/DECISIONS.md D-019).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from chitta.organs.index._hnsw_tiered import RowRefs, TieredHNSW, delta_path
from chitta.organs.index.posting import PAD_ID

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]

DENSE_INDEX_KINDS = ("auto", "hamming", "hnsw", "exact")
ANN_EF = 64  # search breadth: recall@10 >= 0.95 on the benchmark sets at ef 12-32
AUTO_ANN_MIN = 4_096  # "auto": checkpoints build (and searches use) the graph from this many vectors on (was 50,000)
AUTO_BUILD_STEP = 100_000  # "auto": at most this many vectors go into the graph per checkpoint
AUTO_BUILD_SECONDS = 2.0  # "auto": a checkpoint stops inserting after the chunk that passes this
AUTO_BUILD_CHUNK = 1_024  # vectors per insert call while a checkpoint builds the graph (the
# budget is checked between calls, so a checkpoint overruns it by at most one call)
AUTO_PENDING_EXACT = (
    10_000  # "auto": vectors the graph lacks scanned exactly, up to this many (~1 ms)
)


class DenseANN:
    """A tiered HNSW over unit vectors, ids = memory ids. A graph saved by a
    checkpoint is read on first use, not when the field opens (``load``)."""

    def __init__(
        self,
        dim: int,
        graph: TieredHNSW | None = None,
        *,
        path: str | None = None,
        pending: Iterable[int] = (),
        rows: Callable[[], RowRefs] | None = None,
    ) -> None:
        self.dim = dim
        self._path = path  # a saved graph not read yet
        self._rows = rows  # the field's unit rows a saved graph refers to (read when it is)
        self._graph = graph if graph is not None or path is not None else TieredHNSW(dim, ef=ANN_EF)
        self._pending: set[int] = set(pending)  # ids whose current vector is not in the graph yet
        self._dropped: set[int] = set()  # ids to take out of a saved graph once it is read
        self._stale: set[int] = set()  # pending ids whose older vector the graph still holds

    @property
    def loaded(self) -> bool:
        return self._graph is not None

    @property
    def graph(self) -> TieredHNSW:
        """The graph, read from its file first if need be (damage raises the
        file's CorruptionError; a missing file OSError)."""
        if self._graph is None:
            assert self._path is not None
            refs = self._rows() if self._rows is not None else None
            graph = TieredHNSW.load(self._path, ef=ANN_EF, rows=refs)
            if graph.dim != self.dim:
                raise ValueError(f"the graph holds {graph.dim}-d vectors, the field {self.dim}-d")
            gone = [mid for mid in self._dropped if mid in graph]
            if gone:
                graph.remove(np.array(gone, np.uint64))
            self._dropped.clear()
            self._stale = {mid for mid in self._pending if mid in graph}
            self._graph = graph
        return self._graph

    def read(self) -> None:
        """Read a saved graph now (see ``graph``)."""
        _ = self.graph

    def vector_set(self, mid: int) -> None:
        self._pending.add(mid)
        if self._graph is not None and mid in self._graph:
            self._stale.add(mid)

    def vector_dropped(self, mid: int) -> None:
        self._pending.discard(mid)  # and any older vector of it in the graph goes too
        self._stale.discard(mid)
        if self._graph is None:
            self._dropped.add(mid)
        elif mid in self._graph:
            self._graph.remove(np.array([mid], np.uint64))

    def catch_up(
        self,
        rows_of: Callable[[list[int]], F32],
        limit: int | None = None,
        seconds: float | None = None,
    ) -> None:
        """Insert what is pending (at most ``limit``, smallest ids first);
        ``rows_of(ids)`` gives their unit vectors. ``seconds``: stop after the
        chunk of ``AUTO_BUILD_CHUNK`` inserts that passes this much time (the rest
        stays pending; which ids made it in varies with the machine's speed, which
        only changes the graph's shape, never which vectors a search sees)."""
        if not self._pending:
            return
        ids = sorted(self._pending)[:limit]
        step = len(ids) if seconds is None else AUTO_BUILD_CHUNK
        start = time.perf_counter()
        for lo in range(0, len(ids), step):
            chunk = ids[lo : lo + step]
            self.graph.add(
                np.array(chunk, np.uint64),
                np.ascontiguousarray(rows_of(chunk), np.float32),
                num_threads=2,
            )
            self._pending.difference_update(chunk)
            self._stale.difference_update(chunk)
            if seconds is not None and time.perf_counter() - start >= seconds:
                break

    def pending_ids(self) -> npt.NDArray[np.uint64]:
        """The ids not in the graph yet, ascending (saved with the graph)."""
        return np.array(sorted(self._pending), np.uint64)

    @property
    def pending(self) -> int:
        """How many ids have a vector the graph does not hold yet."""
        return len(self._pending)

    def search(self, vector: F32, k: int) -> tuple[U64, F32]:
        return _cosines(self.graph.search(vector, k))

    def search_start(self, vector: F32, k: int) -> Callable[[], tuple[U64, F32]]:
        """``search`` started on the process's search thread; the returned
        function waits for it and gives exactly what ``search`` gives."""
        pending = self.graph.search_async(vector, k)
        return lambda: _cosines(pending.wait())

    def _search_now(self, vector: F32, k: int) -> Callable[[], tuple[U64, F32]]:
        found = self.search(vector, k)
        return lambda: found

    def search_with_pending(
        self, vector: F32, k: int, rows_of: Callable[[list[int]], F32]
    ) -> tuple[U64, F32]:
        """The graph's top ``k`` merged with the exact cosines of the pending ids
        (``rows_of(ids)`` gives their unit vectors), inserting nothing: the graph's
        entry for a pending id is stale and is dropped. Best first, ties by id."""
        return self.search_with_pending_start(vector, k, rows_of, concurrent=False)()

    def search_with_pending_start(
        self, vector: F32, k: int, rows_of: Callable[[list[int]], F32], *, concurrent: bool = True
    ) -> Callable[[], tuple[U64, F32]]:
        """``search_with_pending`` with the graph search started on the search
        thread (``concurrent``; else run now); the returned function finishes it
        (the pending ids' exact scan runs there, in the caller's thread) and
        gives the same result."""
        start = self.search_start if concurrent else self._search_now
        if not self._pending:
            return start(vector, k)
        pending = sorted(self._pending)
        stale = np.fromiter(self._stale, np.uint64, len(self._stale)) if self._stale else None
        wait = start(vector, k + len(self._stale))  # room for the stale entries dropped here
        return lambda: self._merge_pending(wait(), vector, k, pending, stale, rows_of)

    @staticmethod
    def _merge_pending(
        found: tuple[U64, F32],
        vector: F32,
        k: int,
        pending: list[int],
        stale: U64 | None,
        rows_of: Callable[[list[int]], F32],
    ) -> tuple[U64, F32]:
        ids, cos = found
        if stale is not None:
            fresh = ~np.isin(ids, stale)
            ids, cos = ids[fresh], cos[fresh]
        extra = np.ascontiguousarray(rows_of(pending), np.float32) @ vector
        all_ids = np.concatenate([ids, np.array(pending, np.uint64)])
        all_cos = np.concatenate([cos, extra.astype(np.float32)])
        order = np.lexsort((all_ids, -all_cos))[:k]
        return all_ids[order], all_cos[order]

    def save(self, path: str, rows: RowRefs | None = None) -> list[str]:
        """Fold the delta into the base when due, then write both tiers; their paths.
        ``rows``: the field's unit rows; a vector equal to its id's row is written as a
        reference to it (HNSW format 2.0), so the file holds links, not vectors."""
        self.graph.merge()
        self.graph.save(path, rows=rows)
        return [path, delta_path(path)]

    @classmethod
    def load(
        cls,
        path: str,
        dim: int,
        pending: Iterable[int] = (),
        rows: Callable[[], RowRefs] | None = None,
    ) -> DenseANN:
        """The graph ``save`` wrote to ``path``, read on first use; ``pending``:
        the ids it lacks (``pending_ids`` at save time); ``rows()``: the unit rows
        it refers to, which must be the ones it was saved with (the dense lane reads
        the graph before it changes or drops a row it restored)."""
        return cls(dim, path=path, pending=pending, rows=rows)

    def __len__(self) -> int:
        return len(self.graph) + len(self._pending)


def _cosines(found: tuple[U64, F32]) -> tuple[U64, F32]:
    ids, dist = found
    keep = ids != PAD_ID
    return ids[keep], (1.0 - dist[keep]).astype(np.float32)  # cosine distance -> cosine
