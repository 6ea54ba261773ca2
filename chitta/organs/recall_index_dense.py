"""The recall-index organ's dense lane (a mixin of RecallIndexOrgan, which owns
the state): unit vectors in one growing matrix, exact scan up to
``EXACT_DENSE_LIMIT`` vectors (or a checkpoint's graph from ``AUTO_ANN_MIN`` on,
"auto"), then the tiered HNSW graph or binary codes + exact rescoring, as the
field's ``dense_index`` setting says (dense_ann.py; "exact": always the scan)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import CheckpointIgnored, ChittaError
from chitta.organs import shared_reads
from chitta.organs.dense_ann import (
    AUTO_ANN_MIN,
    AUTO_BUILD_SECONDS,
    AUTO_BUILD_STEP,
    AUTO_PENDING_EXACT,
    DenseANN,
)
from chitta.organs.index.hamming import binarize
from chitta.organs.index.hamming_rescore import HammingRescoreRows
from chitta.organs.index.posting import PAD_ID
from chitta.organs.recall_rows import RowColumns
from chitta.organs.recall_vector_rows import HammingPending, RowIds, VectorRows

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]

EXACT_DENSE_LIMIT = 20_000  # up to this many vectors (or allowed ids) the dense lane scans exactly
# From this many rows the exact scan first reads the rows' int8 form (a quarter of the bytes)
# and scores in f32 only the rows that can still be among the k best (csrc/recall/dense_scan.h)
QUANT_FROM = 512
_NO_SKIP = np.zeros(0, np.int64)


def _row_norms(rows: F32) -> F32:
    """L2 norm of each row, the same for one row or a million (the checkpoint path
    must normalise bit-for-bit as the replay path does): ``_core._row_norms``,
    which ``_core._unit_rows`` shares."""
    return _core._row_norms(np.ascontiguousarray(rows, np.float32))


class DenseLane:
    """Dense-lane methods; the attributes are RecallIndexOrgan's."""

    _row: VectorRows
    _cols: RowColumns
    _vecs: F32
    _vec_hint: tuple[int, int] | None
    _row_ids: RowIds
    _free_rows: list[int]
    _mean: F32 | None
    _hamming: HammingRescoreRows | None
    _hamming_pending: HammingPending
    # Codes adopted from a checkpoint (codes.bin): (codes of rows 0..n-1, their mean,
    # rows whose vector changed since) until the Hamming index is first built.
    _adopt: tuple[npt.NDArray[np.uint64], F32, set[int]] | None = None
    _ann: DenseANN | None
    # the int8 form of rows 0.._quant.size-1 (None until an exact scan of QUANT_FROM rows or
    # more), and the rows below that size whose vector changed since (_quant_rows)
    _quant: Any = None
    _quant_dirty: set[int]
    _dense_kind: str
    _row_index: Any
    _recent: Any
    dim: int | None
    exact_limit: int

    def _set_vector(self, mid: int, blob: bytes) -> None:
        v = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        norm = float(_row_norms(v[None, :])[0])
        self._drop_vector(mid)
        if norm == 0.0 or not np.isfinite(norm):
            return
        if self.dim is None:
            self.dim = v.shape[0]
            self._vecs = np.zeros((1024, self.dim), np.float32)
        if v.shape[0] != self.dim:
            return  # another writer's model; the field refuses this at write time
        if self._free_rows:
            row = self._free_rows.pop()
            self._row_ids[row] = mid
        else:
            row = len(self._row_ids)
            if row >= self._vecs.shape[0]:
                grown = np.zeros((self._vecs.shape[0] * 2, self.dim), np.float32)
                grown[:row] = self._vecs[:row]
                self._vecs = grown
            self._row_ids.append(mid)
        self._vecs[row] = v / norm
        self._quant_changed(row)
        self._row[mid] = row
        self._row_index = None
        self._hamming_pending.add(mid)
        self._recent.append(mid)
        if self._ann is not None:
            self._ann.vector_set(mid)

    def _set_vectors(
        self, cols: Any, idx: npt.NDArray[np.int64], accepted: npt.NDArray[np.bool_] | None
    ) -> None:
        """The vectors of a run's accepted puts (``idx``; ``accepted``: the same as a
        mask, or None), with the effect of ``_set_vector`` on each in row order:
        the common-width matrix is normalised and stored in bulk (one copy)."""
        if accepted is None:
            accepted = np.zeros(len(cols), bool)
            accepted[idx] = True
        width = int(cols.vectors.shape[1]) * 4 if len(cols.vector_rows) else -1
        odd = sorted(
            i
            for i, op in cols.extras.items()
            if accepted[i] and op.embedding is not None and len(op.embedding) != width
        )
        if odd:  # rare: another width in the run; take every vector in row order
            in_order = sorted(set(odd) | set(cols.vector_rows[accepted[cols.vector_rows]].tolist()))
            for i in in_order:
                op = cols.op(i)
                self._set_vector(op.id, op.embedding)
            return
        sel = accepted[cols.vector_rows]
        mat = cols.vectors[sel] if not bool(sel.all()) else cols.vectors
        if self.dim is None:
            norms = _row_norms(mat)
            if not bool((np.isfinite(norms) & (norms > 0)).any()):
                return
            self.dim = int(mat.shape[1])
            hint, self._vec_hint = self._vec_hint, None
            rows = hint[1] if hint is not None and hint[0] == self.dim else 0
            self._vecs = np.zeros((max(1024, rows), self.dim), np.float32)
        if mat.shape[1] != self.dim:
            return  # another writer's model; the field refuses this at write time
        run_ids = cols.ids[cols.vector_rows[sel]]
        start = len(self._row_ids)
        if not self._free_rows:  # the usual case: normalised straight into the matrix, one pass
            self._vector_room(start + len(mat), start)
            norms, k = _core._unit_rows(mat, self._vecs[start : start + len(mat)])
            if k < len(mat):
                run_ids = run_ids[np.isfinite(norms) & (norms > 0)]
            mids: list[int] = run_ids.tolist()
            self._row_ids.extend(mids)
            rows_of = np.arange(start, start + k, dtype=np.int64)
        else:
            norms = _row_norms(mat)
            good = np.isfinite(norms) & (norms > 0)
            if not good.any():
                return
            if not bool(good.all()):
                mat, norms, run_ids = mat[good], norms[good], run_ids[good]
            mids = run_ids.tolist()
            reuse = min(len(mids), len(self._free_rows))
            free = [self._free_rows.pop() for _ in range(reuse)]
            for row, mid in zip(free, mids):
                self._row_ids[row] = mid
            self._row_ids.extend(mids[reuse:])
            self._vector_room(len(self._row_ids), start)
            rows_of = np.array(free + list(range(start, len(self._row_ids))), np.int64)
            self._vecs[rows_of] = mat / norms[:, None]
            for row in free:
                self._quant_changed(row)
        ids = np.array(mids, np.uint64)
        self._row.set_many(ids, rows_of)
        self._row_index = None
        self._hamming_pending.add_many(ids)
        self._recent.extend(mids)
        if self._ann is not None:
            for mid in mids:
                self._ann.vector_set(mid)

    def _vector_room(self, need: int, used: int) -> None:
        """Grow the unit-vector matrix (doubling) to hold ``need`` rows, keeping its
        first ``used``."""
        if need > self._vecs.shape[0]:
            cap = max(self._vecs.shape[0], 1)
            while cap < need:
                cap *= 2
            grown = np.zeros((cap, self.dim or 0), np.float32)
            grown[:used] = self._vecs[:used]
            self._vecs = grown

    def _drop_vector(self, mid: int) -> None:
        if self._ann is not None and not self._ann.loaded and mid in self._row:
            self._ready_ann()  # a saved graph refers to this row: read it while the row holds
        row = self._row.pop(mid, None)
        if row is None:
            return
        self._row_index = None
        if self._adopt is not None and row < len(self._adopt[0]):
            self._adopt[2].add(row)  # its adopted code no longer holds
        self._vecs[row] = 0.0
        self._quant_changed(row)
        self._row_ids[row] = 0
        self._free_rows.append(row)
        if (
            not self._hamming_pending.discard(mid)
            and self._hamming is not None
            and mid in self._hamming
        ):
            self._hamming.remove(np.array([mid], np.uint64))
        if self._ann is not None:
            self._ann.vector_dropped(mid)

    def _quant_changed(self, row: int) -> None:
        """Row ``row`` of the matrix was written: its int8 form (if made) is made anew."""
        if self._quant is not None and row < self._quant.size:
            self._quant_dirty.add(row)

    def _quant_reset(self) -> None:
        """The matrix was replaced (a restore): the int8 form is made anew when next needed."""
        self._quant = None
        self._quant_dirty = set()

    def _quant_due(self) -> bool:
        """``_quant_rows`` has rows to quantize."""
        n = len(self._row_ids)
        if n < QUANT_FROM or self.dim is None:
            return False
        quant = self._quant
        return quant is None or bool(self._quant_dirty) or quant.size < n

    def _dense_scans_exactly(self) -> bool:
        """An unfiltered dense search is the exact scan (no graph, no binary codes)."""
        return self._dense_kind == "exact" or (
            not self._uses_auto_ann() and len(self._row) <= self.exact_limit
        )

    def _quant_rows(self) -> Any:
        """The int8 form of the matrix's rows in use, brought up to date; None below
        QUANT_FROM rows (the f32 scan alone is as cheap there)."""
        n = len(self._row_ids)
        if n < QUANT_FROM or self.dim is None:
            return None
        if self._quant_due():
            shared_reads.refuse_work("dense rows to quantize")
        quant = self._quant
        if quant is None:
            quant = self._quant = _core._DenseQuant(int(self.dim))
            self._quant_dirty = set()
        if self._quant_dirty:
            rows = np.fromiter(sorted(self._quant_dirty), np.int64, len(self._quant_dirty))
            self._quant_dirty = set()
            quant.set(rows, np.ascontiguousarray(self._vecs[rows]))
        if quant.size < n:
            quant.append(self._vecs[quant.size : n])
        return quant

    def _ensure_hamming(self) -> HammingRescoreRows:
        if self._hamming is None or self._hamming_pending:
            shared_reads.refuse_work("binary codes to build")
        if self._hamming is None:
            mean = (
                self._mean if self._mean is not None and self._mean.shape[0] == self.dim else None
            )
            adopt, self._adopt = self._adopt, None
            if adopt is not None and mean is not None and not np.array_equal(adopt[1], mean):
                adopt = None  # codes made against another mean
            if mean is None:
                mean = adopt[1] if adopt is not None else self.estimated_mean()
            assert mean is not None  # there are rows: their mean exists
            self._hamming = HammingRescoreRows(int(self.dim or 0), mean)
            if adopt is not None:
                self._adopt_codes(
                    self._hamming, *adopt
                )  # pending: what changed since the checkpoint
            else:
                self._hamming_pending.set_all_with_vectors()
        if self._hamming_pending:
            # The organ's unit rows as they are, coded here: the same rows and
            # codes a field opened from a checkpoint adopts from codes.bin.
            # (in matrix row order, as the checkpoint path adds them)
            at = self._hamming_pending.rows()
            cols = self._cols
            vrows = cols.vrow[at]
            order = np.argsort(vrows, kind="stable")
            ids = cols.ids[at[order]]
            rows = vrows[order]
            self._hamming.add_refs(ids, rows, binarize(self._vecs[rows], self._hamming.mean))
            self._hamming_pending.clear()
        return self._hamming

    def _adopt_codes(
        self, index: HammingRescoreRows, codes: npt.NDArray[np.uint64], _mean: F32, stale: set[int]
    ) -> None:
        """Add rows 0..n-1 (as restored from a checkpoint) with their codes from
        codes.bin, less the rows changed since; no normalising, binarising or copying."""
        n = len(codes)
        ids = self._row_ids.array()[:n].copy()
        rows = np.arange(n, dtype=np.int64)
        if not stale:
            index.add_refs(ids, rows, codes)
            return
        keep = np.ones(n, bool)
        keep[np.fromiter(stale, np.int64, len(stale))] = False
        index.add_refs(ids[keep], rows[keep], codes[keep])

    def hamming_mean(self) -> F32 | None:
        """The mean the Hamming codes are (or would now be) made against."""
        if self._hamming is not None and self._hamming.mean is not None:
            return self._hamming.mean
        if self._adopt is not None:
            return self._adopt[1]
        if self._mean is not None and self._mean.shape[0] == self.dim:
            return self._mean
        return self.estimated_mean()

    def sidecar_rows(self, ids: U64) -> npt.NDArray[np.int64]:
        """This lane's row of each of ``ids`` (the vector sidecar's), -1 where it has none."""
        return self._row.rows_of(ids)

    def unit_blocks(self, rows: npt.NDArray[np.int64], block: int = 65536) -> Iterator[F32]:
        """The unit rows ``rows`` (zeros where -1) in blocks; slices of the matrix,
        not copies, where the rows run in order."""
        for lo in range(0, len(rows), block):
            r = rows[lo : lo + block]
            if r[0] >= 0 and r[-1] - r[0] == len(r) - 1 and np.all(np.diff(r) == 1):
                yield self._vecs[int(r[0]) : int(r[0]) + len(r)]
            else:
                out = np.zeros((len(r), int(self.dim or 0)), np.float32)
                have = r >= 0
                out[have] = self._vecs[r[have]]
                yield out

    def sidecar_codes(
        self, rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.uint64], F32] | None:
        """(codes, mean) for a checkpoint's codes.bin: the code of each unit row of
        ``rows`` (as :meth:`unit_blocks`) against :meth:`hamming_mean`, so a field
        opened from the checkpoint adopts exactly the codes it would make."""
        mean = self.hamming_mean()
        if mean is None or not len(rows):
            return None
        codes = np.zeros((len(rows), (int(self.dim or 0) + 63) // 64), np.uint64)
        at = 0
        for block in self.unit_blocks(rows):
            codes[at : at + len(block)] = binarize(np.ascontiguousarray(block, np.float32), mean)
            at += len(block)
        return codes, np.asarray(mean, np.float32)

    def row_refs(self) -> tuple[U64, npt.NDArray[np.int64], F32]:
        """(ids, rows, matrix): this lane's unit row of each id, for a graph file that
        refers to them instead of storing the vectors (HNSW format 2.0)."""
        n = len(self._row_ids)
        ids = self._row_ids.array()
        rows = np.arange(n, dtype=np.int64)
        rows[self._row.rows_of(ids) != rows] = -1  # free rows (id 0) hold no vector
        return ids, rows, self._vecs[:n]

    def _ready_ann(self) -> DenseANN | None:
        """The graph, read from its checkpoint file if not yet; a file that cannot
        be read (pruned, damaged) is dropped with a warning: the lane falls back to
        binary codes ("auto") or builds the graph anew ("hnsw")."""
        ann = self._ann
        if ann is not None and not ann.loaded:
            try:
                ann.read()
            except (ChittaError, OSError, ValueError) as e:
                warnings.warn(
                    f"the dense lane's saved graph is not used: {e}",
                    CheckpointIgnored,
                    stacklevel=4,
                )
                self._ann = None
        return self._ann

    def _ensure_ann(self, limit: int | None = None, seconds: float | None = None) -> DenseANN:
        """The graph with (at most ``limit`` of, for about ``seconds``) the pending
        vectors inserted."""
        self._ready_ann()
        if self._ann is None:
            self._ann = DenseANN(int(self.dim or 0), pending=self._row)  # a new graph: all pending
        self._ann.catch_up(
            lambda ids: self._vecs[self._row.rows_of(np.array(ids, np.uint64))], limit, seconds
        )
        return self._ann

    def _uses_ann(self) -> bool:
        """Searches go to the graph, caught up first ("hnsw")."""
        return self._dense_kind == "hnsw" and len(self._row) > self.exact_limit

    def _uses_auto_ann(self) -> bool:
        """Searches go to a graph a checkpoint built, plus an exact scan of newer vectors
        ("auto", from ``AUTO_ANN_MIN`` vectors on: below the exact-scan size too)."""
        return (
            self._dense_kind == "auto"
            and self._ann is not None
            and len(self._row) >= AUTO_ANN_MIN
            and self._ann.pending <= AUTO_PENDING_EXACT
        )

    def _ann_for_checkpoint(self) -> DenseANN | None:
        """The graph a checkpoint saves, built or caught up now ("auto": by at most
        ``AUTO_BUILD_STEP`` vectors, for about ``AUTO_BUILD_SECONDS``), or None when it
        saves none."""
        if self._uses_ann():
            return self._ensure_ann()
        if self._dense_kind == "auto" and len(self._row) >= AUTO_ANN_MIN:
            return self._ensure_ann(AUTO_BUILD_STEP, AUTO_BUILD_SECONDS)
        return None

    @property
    def vector_count(self) -> int:
        return len(self._row)

    def estimated_mean(self) -> F32 | None:
        if not self._row:
            return None
        rows = self._row.values()
        lo, n = int(rows[0]), len(rows)
        if int(rows[-1]) - lo == n - 1 and bool(np.all(np.diff(rows) == 1)):  # rows lo, lo+1, ...:
            return np.asarray(self._vecs[lo : lo + n].mean(axis=0), np.float32)  # the same sum
        return np.asarray(self._vecs[rows].mean(axis=0), np.float32)

    def recent_vectors(self, n: int) -> F32:
        """Unit vectors of up to ``n`` memories whose vectors were set most recently."""
        rows: list[int] = []
        seen: set[int] = set()
        for mid in reversed(self._recent):
            row = self._row.get(mid)
            if row is not None and mid not in seen:
                seen.add(mid)
                rows.append(row)
                if len(rows) >= n:
                    break
        if not rows or self.dim is None:
            return np.zeros((0, self.dim or 0), np.float32)
        return np.ascontiguousarray(self._vecs[rows[::-1]])

    def vector(self, mid: int) -> F32 | None:
        row = self._row.get(mid)
        return None if row is None else self._vecs[row]

    def dense(self, vector: F32, k: int, allowed: U64 | None) -> tuple[U64, F32]:
        """Top-k live memories by cosine with ``vector`` (unit length), best first."""
        if not self._row or self.dim is None or vector.shape[0] != self.dim:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        if allowed is not None:
            return self._exact(vector, self._rows_of(allowed), k)
        if self._dense_kind == "exact":
            return self._exact_all(vector, k)
        if self._uses_auto_ann() and (ann := self._ready_ann()) is not None:
            return ann.search_with_pending(
                vector, k, lambda ids: self._vecs[self._row.rows_of(np.array(ids, np.uint64))]
            )
        if len(self._row) <= self.exact_limit:
            return self._exact_all(vector, k)
        if self._uses_ann():
            return self._ensure_ann().search(vector, k)
        ids, cos = self._ensure_hamming().search(vector, k, self._vecs)
        keep = ids != PAD_ID
        return ids[keep], cos[keep]

    def dense_start(
        self, vector: F32, k: int, allowed: U64 | None
    ) -> Callable[[], tuple[U64, F32]] | None:
        """``dense`` with the graph search started on the search thread; the returned function gives what
        ``dense`` gives. None where ``dense`` would not search the saved graph (scan, codes, filter)."""
        if (
            not self._row
            or self.dim is None
            or vector.shape[0] != self.dim
            or allowed is not None
            or self._dense_kind == "exact"
            or not self._uses_auto_ann()
            or (ann := self._ready_ann()) is None
        ):
            return None
        return ann.search_with_pending_start(
            vector, k, lambda ids: self._vecs[self._row.rows_of(np.array(ids, np.uint64))]
        )

    def _rows_of(self, ids: U64) -> npt.NDArray[np.int64]:
        """Rows of those of ``ids`` that have a vector, in the order of ``ids``."""
        rows = self._row.rows_of(ids)
        found: npt.NDArray[np.int64] = rows[rows >= 0]
        return found

    def _exact_all(self, vector: F32, k: int) -> tuple[U64, F32]:
        """Exact scan of every stored row in place (no gather); freed rows are skipped.
        Cosine descending, then id ascending (deterministic); one f32 dot per row
        (hnsw/distance.h's kernel) for the rows the int8 first pass cannot rule out."""
        skip = np.array(self._free_rows, np.int64) if self._free_rows else _NO_SKIP
        ids, cos = _core._dense_top_k(
            self._quant_rows(),
            self._vecs,
            len(self._row_ids),
            self._row_ids.array(),
            np.ascontiguousarray(vector, np.float32),
            min(k, len(self._row)),
            skip,
        )
        return ids, cos

    def _exact(self, vector: F32, rows: npt.NDArray[np.int64], k: int) -> tuple[U64, F32]:
        if len(rows) == 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        sims = self._vecs[rows] @ vector
        kk = min(k, len(rows))
        top = np.argpartition(-sims, kk - 1)[:kk]
        ids = self._row_ids.array()[rows[top]]
        order = np.lexsort((ids, -sims[top]))  # cosine desc, then id asc: deterministic
        return ids[order], sims[top][order].astype(np.float32)

    def cosines(self, vector: F32, ids: list[int]) -> dict[int, float]:
        cos = self.cosine_array(vector, ids)
        return {mid: c for mid, c in zip(ids, cos.tolist()) if not math.isnan(c)}

    def cosine_array(self, vector: F32, ids: list[int]) -> npt.NDArray[np.float64]:
        """Cosine of ``vector`` (unit length) with each memory of ``ids``; NaN where it has none.

        One dot product per row (a stacked 1 x dim by dim x 1 product), so each
        value is bit-for-bit ``float(self.vector(mid) @ vector)``.
        """
        out = np.full(len(ids), np.nan, np.float64)
        rows = self._row.rows_of(np.array(ids, np.uint64)).tolist()
        have = [i for i, r in enumerate(rows) if r >= 0]
        if have and self.dim is not None and vector.shape[0] == self.dim:
            picked = self._vecs[[rows[i] for i in have]]
            out[have] = (picked[:, None, :] @ vector[:, None])[:, 0, 0]
        return out
