"""Recall-index organ: the derived search state of every live memory.

Owns the keyword index (BM25), the dense vectors (exact scan, or binary codes
with exact rescoring when the field is large), the sparse-code posting index,
and the filters (kind, realm, session, harness, event time, staged), kept as
columns indexed by a native id -> row map (``recall_rows.py``), so a run of puts
(``apply_columns``) costs array writes, not a Python object per memory.
Everything here is rebuilt from PutPayload / UpdateMemoryContent /
DeleteMemory / UpdateState / UpdateSparseCode(U8) / ConfigureField ops. Native
indexes are filled lazily, in batches, on the first query after changes
(keyword texts wait as row ranges over the puts' text arenas:
``recall_pending.py``). Never imports another organ. The dense lane's methods
live in ``recall_index_dense.py``, snapshot and restore for checkpoints in
``recall_index_snapshot.py``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import free_memory, ops
from chitta.errors import CorruptionError
from chitta.ops import Op, OpType
from chitta.ops.code_columns import CodeColumns
from chitta.ops.put_columns import PutColumns
from chitta.organs import recall_index_checkpoint, shared_reads
from chitta.organs.contract import Maintenance, Operation, RestoreContext, SnapshotContext
from chitta.organs.dense_ann import DENSE_INDEX_KINDS, DenseANN
from chitta.organs.index.bm25 import BM25
from chitta.organs.index.hamming_rescore import HammingRescoreRows
from chitta.organs.index.posting import PAD_ID, PostingIndex
from chitta.organs.recall_codes import PendingCodes
from chitta.organs.recall_filters import SortedIds, intersect
from chitta.organs.recall_index_dense import EXACT_DENSE_LIMIT, DenseLane
from chitta.organs.recall_index_snapshot import IndexSnapshot
from chitta.organs.recall_pending import PendingText
from chitta.organs.recall_posting import PostingFile
from chitta.organs.recall_rows import RowColumns
from chitta.organs.recall_speakers import SpeakerIndex
from chitta.organs.recall_vector_rows import CodeVersions, HammingPending, RowIds, VectorRows
from chitta.recall.context import CONTEXT_KEY, context_of, keyword_document

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]
_SORT_ROWS = 8192  # codes sorted per slice when the pending codes enter the posting index


class RecallIndexOrgan(DenseLane, SpeakerIndex, IndexSnapshot):
    name = "recall_index"
    handles = frozenset(
        {
            OpType.PutPayload,
            OpType.UpdateMemoryContent,
            OpType.DeleteMemory,
            OpType.UpdateState,
            OpType.UpdateSparseCode,
            OpType.UpdateSparseCodeU8,
            OpType.ConfigureField,
        }
    )
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = ()

    def __init__(self, *, exact_limit: int | None = None) -> None:
        self.exact_limit = (
            EXACT_DENSE_LIMIT if exact_limit is None else exact_limit
        )  # read at open: tests lower it
        # filters: per-row columns (live, label codes, event time, staged, arrival order)
        self._cols = RowColumns()
        self._sorted_ids = SortedIds(self._cols)  # derived: sorted id arrays of the filters
        # keyword lane
        self._bm25 = BM25(
            stem=True
        )  # light stemming: LoCoMo dev keyword R@10 +0.03 (DECISIONS.md D-021)
        self._text_pending = PendingText(self._cols)
        self.vocabulary_sink: Any = (
            None  # called with each batch of keyword documents (chitta.recall.expand)
        )
        # (which ids the BM25 index holds: ``mid in self._bm25``; no Python-side set of them)
        # id -> (text, recall context or None) of memories that have or had a context (chitta.recall.context)
        self._kw_context: dict[int, tuple[str, str | None]] = {}
        self._init_speakers()  # who said each memory (meta["speaker"]): recall_speakers.py
        # dense lane
        self.dim: int | None = None
        self._row = VectorRows(self._cols)  # id -> matrix row, a column over the organ's rows
        self._vecs: F32 = np.zeros((0, 0), np.float32)
        self._row_ids = RowIds()  # matrix row -> id
        self._free_rows: list[int] = []
        self._quant_reset()  # the exact scan's int8 form of the rows (recall_index_dense.py)
        self._mean: F32 | None = None
        self._hamming: HammingRescoreRows | None = None
        self._hamming_pending = HammingPending(
            self._cols
        )  # ids whose vectors wait for the Hamming index
        self._recent: deque[int] = deque(maxlen=8192)  # ids whose vectors were set last
        self._dense_kind = "auto"  # ConfigureField "dense_index": the large-field dense path
        self._ann: DenseANN | None = None
        self._row_index: tuple[U64, npt.NDArray[np.int64]] | None = (
            None  # derived: sorted ids, their rows
        )
        # posting lane
        self._posting_now: PostingIndex | None = PostingIndex()
        self._posting_file: PostingFile | None = (
            None  # a checkpoint's, read on first use (recall_posting.py)
        )
        self._posting_width = PostingIndex().active  # the posting file's, while it is not read
        self._vec_hint: tuple[int, int] | None = (
            None  # (width, rows) replay announced (reserve_puts)
        )
        self._code_pending = PendingCodes()  # codes not yet in the posting index (recall_codes.py)
        self._code_version = CodeVersions(self._cols)  # id -> encoder version of its code, a column

    # ---- applying -----------------------------------------------------------------
    def apply(self, op: Op) -> None:
        t = type(op)
        if t is ops.PutPayload:
            self._put(op)  # type: ignore[arg-type]
        elif t is ops.DeleteMemory:
            self._drop(op.id)  # type: ignore[attr-defined]
        elif t is ops.UpdateMemoryContent:
            self._update(op)  # type: ignore[arg-type]
        elif t is ops.UpdateState:
            if op.touch and self._cols.unstage(op.id):  # type: ignore[attr-defined]
                self._sorted_ids.staged_changed()
        elif t is ops.UpdateSparseCode or t is ops.UpdateSparseCodeU8:
            self._code(op)  # type: ignore[arg-type]
        elif t is ops.ConfigureField and op.key == "dense_index":  # type: ignore[attr-defined]
            if op.value in DENSE_INDEX_KINDS:  # type: ignore[attr-defined]
                self._dense_kind = op.value  # type: ignore[attr-defined]
        elif t is ops.ConfigureField and op.key == "binary_mean":  # type: ignore[attr-defined]
            self._mean = np.frombuffer(op.value, dtype="<f4").astype(np.float32)  # type: ignore[attr-defined]
            self._hamming = None  # codes depend on the mean: rebuild on next use

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        if op_type == OpType.PutPayload and len(run) >= 128:  # below, per-op puts cost less (D-032)
            self.apply_columns(PutColumns.from_puts(run))  # type: ignore[arg-type]
            return
        for op in run:
            self.apply(op)

    def apply_columns(self, cols: PutColumns) -> None:
        """A run of puts as columns: the effect of ``apply`` on each put in turn
        (a put of an id already live is ignored), with array writes instead of a
        Python object per put. Only the rows in ``cols.extras`` (meta, odd
        vectors) are looked at one by one."""
        idx, rows = self._cols.put_run(cols.ids, cols.labels, cols.created_ms)
        if not len(rows):
            return
        self._sorted_ids.clear()
        overrides: dict[int, str] = {}
        accepted = None
        if cols.extras:
            accepted = np.zeros(len(cols), bool)
            accepted[idx] = True
            for i, op in cols.extras.items():
                if op.meta and accepted[i]:
                    doc = self._keyword_text(op.id, op.text, op.meta)
                    if doc is not op.text:
                        overrides[i] = doc
                    self._note_speaker(op.id, op.meta)
        self._text_pending.add_arena(rows, cols.text_arena, cols.text_offsets, idx, overrides)
        if len(cols.vector_rows) or any(op.embedding is not None for op in cols.extras.values()):
            self._set_vectors(cols, idx, accepted)

    def _put(self, op: ops.PutPayload) -> None:
        mid = op.id
        r = self._cols.put_one(mid, (op.kind, op.realm, op.session, op.harness), op.created_ms)
        if r < 0:
            return  # duplicate put: the memories organ keeps the first
        self._sorted_ids.clear()
        meta = op.meta
        if meta:
            self._text_pending.set(r, self._keyword_text(mid, op.text, meta))
            self._note_speaker(mid, meta)
        else:  # no context (and a put's id is never in _kw_context: a drop removes it)
            self._text_pending.set(r, op.text)
        if op.embedding is not None:
            self._set_vector(mid, op.embedding)

    apply_put = _put  # the Field's remember() path: one PutPayload, no dispatch

    def _update(self, op: ops.UpdateMemoryContent) -> None:
        mid = op.id
        row = self._cols.row(mid)
        if row < 0:
            return
        old = self._kw_context.get(mid)
        if op.meta is not None:  # new meta replaces the old: its speaker too
            self._note_speaker(mid, op.meta)
        # A new text keeps the current context; new meta (replacing the old)
        # re-reads it. The organ keeps the text only of memories that have or
        # had a context, so a memory that never had one gets its first
        # context from an update only together with its text.
        if op.text is not None or (op.meta is not None and old is not None):
            text = op.text if op.text is not None else old[0]  # type: ignore[index]
            meta = op.meta if op.meta is not None else ({CONTEXT_KEY: old[1]} if old else None)
            if mid in self._bm25:
                self._bm25.remove(np.array([mid], np.uint64))
            self._text_pending.set(row, self._keyword_text(mid, text, meta))
        if op.embedding is not None:
            self._set_vector(mid, op.embedding)

    def _drop(self, mid: int) -> None:
        row = self._cols.drop(mid)
        if row < 0:
            return
        self._sorted_ids.clear()
        self._kw_context.pop(mid, None)
        self._forget_speaker(mid)
        if not self._text_pending.discard(row) and mid in self._bm25:
            self._bm25.remove(np.array([mid], np.uint64))
        self._drop_vector(mid)
        self._code_pending.discard(mid)
        if self._code_version.pop(mid) is not None and mid in self._posting:
            self._posting.remove(np.array([mid], np.uint64))

    def _keyword_text(self, mid: int, text: str, meta: Any) -> str:
        ctx = context_of(meta) if meta else None
        if ctx is not None or mid in self._kw_context:
            self._kw_context[mid] = (text, ctx)
        return keyword_document(text, ctx)

    def _code(self, op: ops.UpdateSparseCode | ops.UpdateSparseCodeU8) -> None:
        mid = op.id
        if self._cols.row(mid) < 0:
            return
        if mid in self._code_version and mid in self._posting:
            self._posting.remove(np.array([mid], np.uint64))
        self._code_pending.set(mid, op.features, op.activations)
        self._code_version[mid] = op.encoder_version

    @property
    def code_width(self) -> int:
        """Features per sparse code in the posting index (codes of another count are never indexed)."""
        index = self._posting_now
        return self._posting_width if index is None else index.active

    def reserve_puts(self, puts: int, vectors: int, dim: int) -> None:
        """A hint before replay applies ``puts`` puts carrying ``vectors`` vectors of
        width ``dim``: size the row columns, the id map and the unit-vector matrix once."""
        cols = self._cols
        cols._reserve(cols.n + puts)
        cols.map.reserve(len(cols.map) + puts)
        if not vectors or not dim:
            return
        if self.dim is None:  # the first vector decides the width: a hint until then
            self._vec_hint = (dim, vectors)
            return
        need = len(self._row_ids) + vectors
        if dim == self.dim and need > self._vecs.shape[0]:
            grown = np.zeros((need, dim), np.float32)
            used = len(self._row_ids)
            grown[:used] = self._vecs[:used]
            self._vecs = grown

    def apply_code_columns(self, codes: CodeColumns) -> None:
        """``_code`` of every row in order (replay's path for a run of sparse codes)."""
        rows = self._cols.live_rows_of(codes.ids)
        live = rows >= 0
        if not live.any():
            return
        ids = codes.ids if live.all() else codes.ids[live]
        # An id coded before this run leaves the posting index first (as _code does).
        prior = self._code_version.rows_of(ids) >= 0
        if prior.any():
            index = self._posting
            gone = [mid for mid in set(ids[prior].tolist()) if mid in index]
            if gone:
                index.remove(np.array(gone, np.uint64))
        feats, acts, versions = codes.features, codes.activations, codes.versions
        if not live.all():
            feats, acts, versions = feats[live], acts[live], versions[live]
        self._code_pending.add_run(ids, feats, acts)
        # Versions: each id's last row wins.
        rev = np.arange(len(ids))[::-1]
        _, first = np.unique(ids[rev], return_index=True)
        last = rev[first]
        self._code_version.set_many(ids[last], versions[last].astype(np.int64))

    @property
    def _posting(self) -> PostingIndex:
        """The posting index; a checkpoint's is read here, on first use."""
        index = self._posting_now
        if index is None:
            if self._posting_file is None:
                raise CorruptionError(
                    "the checkpoint's posting index could not be read earlier; reopen the field"
                )
            shared_reads.refuse_work("the posting index to read")
            held, self._posting_file = self._posting_file, None  # one read attempt per open
            index = self._posting_now = held.read()
        return index

    @_posting.setter
    def _posting(self, value: PostingIndex | PostingFile) -> None:
        if isinstance(value, PostingFile):
            self._posting_now, self._posting_file = None, value
        else:
            self._posting_now, self._posting_file = value, None

    # ---- keeping native indexes current -----------------------------------------
    def _flush_text(self) -> None:
        if self._text_pending:
            shared_reads.refuse_work("texts to index")
            ids, docs = self._text_pending.take()
            if len(ids):
                self._bm25.add(ids, docs)
                if self.vocabulary_sink is not None:
                    self.vocabulary_sink(docs)
                if len(ids) >= free_memory.BULK:
                    free_memory.give_back()

    def keyword_flush(self) -> None:
        """Index the pending keyword documents now (and feed them to ``vocabulary_sink``): what the
        next keyword search would do first (the expansion lane's word search starts before it)."""
        self._flush_text()

    def indexed_texts(self) -> int:
        """Documents the keyword index holds (pending ones not counted)."""
        return len(self._bm25)

    def _flush_codes(self) -> None:
        if not self._code_pending:
            return
        shared_reads.refuse_work("codes to index")
        posting = self._posting
        rows, counts = self._code_pending.feature_counts(posting.active, posting.n_features)
        if rows >= free_memory.BULK:  # lists sized once, not grown by doubling copies (D-089)
            posting.reserve(rows, counts)
        moved = 0
        # chunk by chunk, each let go once in the index: no copy of all the codes (D-089)
        for ids, feats, acts in self._code_pending.drain(posting.active):
            moved += len(ids)
            # the index wants sorted rows: sorted in place, in slices (no int64 order array
            # and no sorted copies of all the codes at once: D-075)
            feats = np.ascontiguousarray(feats, np.uint32)
            acts = np.ascontiguousarray(acts, np.float32)
            if not feats.flags.writeable:
                feats = feats.copy()
            if not acts.flags.writeable:
                acts = acts.copy()
            # ... and added in the same slices: the index's copy of a call's rows stays one
            # slice, not every pending code (ordinals follow the same order either way)
            for lo in range(0, len(ids), _SORT_ROWS):
                block = slice(lo, lo + _SORT_ROWS)
                order = np.argsort(feats[block], axis=1, kind="stable")
                feats[block] = np.take_along_axis(feats[block], order, 1)
                acts[block] = np.take_along_axis(acts[block], order, 1)
                posting.add(ids[block], feats[block], acts[block])
            del ids, feats, acts
        if moved >= free_memory.BULK:
            free_memory.give_back()

    # ---- queries --------------------------------------------------------------------

    def is_staged(self, mid: int) -> bool:
        return self._cols.is_staged(mid)

    def recall_columns(self) -> tuple[tuple[Any, ...], F32, int | None]:
        """For the native recall tail (chitta/recall/native_tail.py): ``((map, staged, matrix
        row), unit vectors, dim)``, the native id -> row map and the columns as held (no copies;
        valid until the next change)."""
        cols = self._cols
        return (cols.map._m, cols.staged, cols.vrow), self._vecs, self.dim

    def staged_ids(self) -> set[int]:
        cols = self._cols
        return set(cols.ids[np.flatnonzero(cols.staged[: cols.n])].tolist())

    def staged_oldest_first(self) -> Iterator[int]:
        """Staged ids in the order they arrived, oldest first. Do not change the
        organ while iterating."""
        return self._cols.staged_oldest_first()

    def __len__(self) -> int:
        return len(self._cols)

    def __contains__(self, mid: object) -> bool:
        return isinstance(mid, int) and 0 <= mid < 2**64 and self._cols.row(mid) >= 0

    def code_version(self, mid: int) -> int | None:
        return self._code_version.get(mid)

    def code_features(self, mid: int) -> tuple[int, ...]:
        """The feature ids of a memory's current sparse code, ascending (empty if none)."""
        pending = self._code_pending.features(mid)
        if pending is not None:
            return tuple(sorted(pending))
        if mid in self._code_version and mid in self._posting:
            return tuple(int(x) for x in self._posting.get(mid)[0])
        return ()

    def ids_without_vector(self) -> U64:
        """Live ids with no dense vector, in arrival order (chitta/field/deferred.py)."""
        cols = self._cols
        n = cols.n
        return cols.ids[np.flatnonzero(cols.live[:n] & (cols.vrow[:n] < 0))]

    def ids_without_code(self) -> U64:
        """Live ids with a dense vector and no sparse code, in arrival order
        (chitta/field/deferred_codes.py: what a crash left uncoded)."""
        cols = self._cols
        n = cols.n
        return cols.ids[np.flatnonzero(cols.live[:n] & (cols.vrow[:n] >= 0) & (cols.cver[:n] < 0))]

    def coded_ids(self) -> list[int]:
        return self._code_version.keys()

    def ready_for_reads(self) -> None:
        """Do now what the next recall would do first (index pending texts, quantize new
        rows), so that recalls find nothing due and run beside each other: a server's
        writer calls it after each group it commits."""
        self._flush_text()
        if self._dense_scans_exactly():
            self._quant_rows()

    def shared_read_verdict(self, may_work: bool, posting: bool, dense: bool) -> str:
        """Whether a recall using these lanes (keyword always; ``posting``, ``dense`` as
        given) may run beside other reads (chitta/field/field_lock.py): "ready" when its
        lanes will change nothing; "work" when texts, codes or rows are due to be indexed
        first (done here when ``may_work``, the caller then being alone); "exclusive" when
        a lane it uses builds or reads an index lazily (a graph, binary codes, a checkpoint's
        posting file)."""
        dense_exact = dense and self._dense_scans_exactly()
        due = (
            bool(self._text_pending)
            or (posting and bool(self._code_pending))
            or (dense_exact and self._quant_due())
        )
        if due:
            if not may_work:
                return "work"
            self._flush_text()
            if posting:
                self._flush_codes()
            if dense_exact:
                self._quant_rows()
        if (dense and not dense_exact) or (posting and self._posting_now is None):
            return "exclusive"
        return "ready"

    def allowed(
        self,
        *,
        kinds: frozenset[str] | None = None,
        realm: str | None = None,
        session: str | None = None,
        harness: str | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        include_staged: bool = True,
    ) -> U64 | None:
        """Ids passing every given filter, sorted (None: no filter at all)."""
        arrays: list[U64] = []
        cache = self._sorted_ids
        if kinds is not None:
            of_kind = [a for k in sorted(kinds) if len(a := cache.members("kind", k))]
            arrays.append(
                np.unique(np.concatenate(of_kind))
                if len(of_kind) > 1
                else of_kind[0]
                if of_kind
                else np.zeros(0, np.uint64)
            )
        for field, value in (("realm", realm), ("session", session), ("harness", harness)):
            if value is not None:
                arrays.append(cache.members(field, value))
        if since_ms is not None or until_ms is not None:
            arrays.append(cache.in_time_range(since_ms, until_ms))
        if not arrays and include_staged:
            return None
        result = intersect(arrays) if arrays else cache.everything()
        if not include_staged:
            result = cache.without_staged(result)
        return result

    def keyword(self, query: str, k: int, allowed: U64 | None) -> U64:
        self._flush_text()
        if len(self._bm25) == 0 or (allowed is not None and len(allowed) == 0):
            return np.zeros(0, np.uint64)
        ids, _ = self._bm25.search(query, k, allowed=allowed)
        found: U64 = ids[ids != PAD_ID]
        return found

    def keyword_scored(
        self, query: str, k: int, allowed: U64 | None
    ) -> tuple[U64, npt.NDArray[np.float32]]:
        """``keyword``'s ids with their BM25 scores (convex fusion: chitta.recall.convex)."""
        self._flush_text()
        if len(self._bm25) == 0 or (allowed is not None and len(allowed) == 0):
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        ids, scores = self._bm25.search(query, k, allowed=allowed)
        keep = ids != PAD_ID
        return ids[keep], scores[keep]

    def posting(self, features: npt.NDArray[np.uint32], k: int, allowed: U64 | None) -> U64:
        self._flush_codes()
        if len(self._posting) == 0 or (allowed is not None and len(allowed) == 0):
            return np.zeros(0, np.uint64)
        ids, _ = self._posting.search(
            np.ascontiguousarray(np.sort(features), np.uint32), k, allowed=allowed
        )
        found: U64 = ids[ids != PAD_ID]
        return found

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        """The organ contract's snapshot: the state map and the native sidecars."""
        return recall_index_checkpoint.snapshot(self, ctx)

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        recall_index_checkpoint.restore(self, state, ctx)

    def stats(self) -> dict[str, Any]:
        return {
            "vectors": len(self._row),
            "dim": self.dim,
            "coded": len(self._code_version),
            "staged": self._cols.n_staged,
            "dense_index": self._dense_kind,
            "dense_path": "hnsw"
            if self._dense_kind != "exact" and (self._uses_ann() or self._uses_auto_ann())
            else (
                "exact"
                if self._dense_kind == "exact" or len(self._row) <= self.exact_limit
                else "hamming+rescore"
            ),
        }
