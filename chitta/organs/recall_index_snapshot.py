"""Snapshot and restore of the recall-index organ for checkpoints (a mixin of
RecallIndexOrgan, which owns the state; chitta/field/checkpoint, docs/FORMAT.md 8)."""

from __future__ import annotations

from collections import deque
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.field.checkpoint.mapped_vectors import MappedVectors
from chitta.ops.put_columns import LabelColumn
from chitta.organs.dense_ann import DENSE_INDEX_KINDS, DenseANN
from chitta.organs.index._hnsw_tiered import RowRefs
from chitta.organs.index.bm25 import BM25
from chitta.organs.index.posting import PostingIndex
from chitta.organs.recall_pending import PendingText
from chitta.organs.recall_posting import PostingFile, open_posting
from chitta.organs.recall_rows import FIELDS, LabelTable, RowColumns
from chitta.organs.recall_vector_rows import CodeVersions, RowIds, VectorRows
from chitta.recall.context import keyword_document

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]


class LiveView(Protocol):
    """The live memories as restore reads them (``chitta.organs.memories_checkpoint.LiveMemories``)."""

    def ids(self) -> U64: ...
    def text(self, mid: int) -> str | None: ...
    def puts(self) -> tuple[list[int], list[ops.PutPayload], list[str]]: ...


class IndexSnapshot:
    """snapshot_files() / restore_files() (the organ contract's snapshot / restore call them:
    chitta/organs/recall_index_checkpoint.py); the attributes are RecallIndexOrgan's."""

    _cols: RowColumns
    _text_pending: PendingText
    _bm25: BM25
    _kw_context: dict[int, tuple[str, str | None]]
    _mean: F32 | None
    _vecs: F32
    _row_ids: RowIds
    _row: VectorRows
    _free_rows: list[int]
    _recent: deque[int]
    _code_version: CodeVersions
    _dense_kind: str
    _ann: DenseANN | None
    _adopt: tuple[npt.NDArray[np.uint64], F32, set[int]] | None
    dim: int | None

    if TYPE_CHECKING:  # RecallIndexOrgan's and DenseLane's, before this class in the organ's bases

        @property
        def _posting(self) -> PostingIndex: ...
        @_posting.setter
        def _posting(self, value: PostingIndex | PostingFile) -> None: ...
        def _flush_codes(self) -> None: ...
        def _flush_text(self) -> None: ...
        def _uses_ann(self) -> bool: ...
        def _ann_for_checkpoint(self) -> DenseANN | None: ...
        def _ensure_ann(self) -> DenseANN: ...
        def row_refs(self) -> RowRefs: ...
        def _quant_reset(self) -> None: ...

    def speakers_state(self) -> list[list[Any]]:
        raise NotImplementedError  # SpeakerIndex (recall_speakers.py), before this class in the organ's bases

    def restore_speakers(
        self, saved: list[list[Any]] | None, mids: list[int], metas: list[Any]
    ) -> None:
        raise NotImplementedError

    def snapshot_files(
        self, posting_path: str, ann_path: str, *, bm25_path: str | None = None
    ) -> dict[str, Any]:
        """State not derivable from the live memories' puts and vectors: the staged
        set, code versions, the recorded binary mean, recent vector order. Writes the
        posting index (pending codes folded in) to ``posting_path``, the keyword
        index (pending texts folded in) to ``bm25_path`` when given and, when the
        field's dense path is the graph, the graph (built now if need be) to
        ``ann_path`` and its delta beside it."""
        self._flush_codes()
        self._posting.save(posting_path)
        if bm25_path is not None:
            self._flush_text()
            self._bm25.save(bm25_path)
        ann = self._ann_for_checkpoint()
        ann_files = ann.save(ann_path, self.row_refs()) if ann is not None else []
        coded = np.array(self._code_version.keys(), np.uint64)
        versions = self._code_version.values().astype(np.uint32)
        cols = self._cols
        staged = np.fromiter(cols.staged_oldest_first(), np.uint64, cols.n_staged)
        return {
            "staged": staged.astype(
                "<u8"
            ).tobytes(),  # in arrival order (state 4; before: any order)
            "columns": self._columns_state(),  # state 4 (optional; absent: from the live puts)
            "coded": coded.astype("<u8").tobytes(),
            "code_versions": versions.astype("<u4").tobytes(),
            "mean": None if self._mean is None else self._mean.astype("<f4").tobytes(),
            "recent": list(self._recent),
            "posting": {"n_features": self._posting.n_features, "active": self._posting.active},
            "dense_index": self._dense_kind,
            "ann": bool(ann_files),
            "ann_pending": b""
            if ann is None
            else ann.pending_ids().astype("<u8").tobytes(),  # state 3
            "keyword_context": [[mid, ctx] for mid, (_text, ctx) in self._kw_context.items()],
            "keyword_index": bm25_path is not None,
            "speakers": self.speakers_state(),  # state v3 (optional; absent: from the puts' meta)
        }

    def restore_files(
        self,
        state: dict[str, Any],
        live: LiveView,
        vector_ids: U64,
        vectors: F32 | MappedVectors,
        posting_path: str,
        ann_path: str,
        codes: tuple[npt.NDArray[np.uint64], F32] | None = None,
        units: tuple[F32, U64] | None = None,
        *,
        bm25_path: str | None = None,
    ) -> None:
        """Load a snapshot into this (fresh) organ: filters and texts from the live
        memories, vectors (normalised here) from the sidecar, sparse codes from the
        posting file; ``codes`` (codes.bin: one binary code per sidecar vector and
        their mean) are adopted by the Hamming index when it is first built;
        ``units`` (units.emb, copy-on-write, and the ids without a unit row) become
        the dense lane's matrix as they are, with nothing normalised; the keyword
        index comes from ``bm25_path`` when the snapshot has one (else it is built
        from the texts on the first keyword query)."""
        mid_arr = live.ids()
        cols = self._cols
        saved = state.get("columns")
        if saved is not None:
            cols.restore(
                np.frombuffer(saved["ids"], "<u8"),
                {
                    f: (list(saved["labels"][f][0]), np.frombuffer(saved["labels"][f][1], "<u4"))
                    for f in FIELDS
                },
                np.frombuffer(saved["created_ms"], "<i8"),
                np.frombuffer(state["staged"], "<u8"),
            )
            rows = cols.map.rows(mid_arr)
            if len(mid_arr) != cols.n or (len(rows) and int(rows.min()) < 0):
                raise ValueError("recall index columns do not hold the live memories")
        else:  # state <= 3: from the live puts, staged ones arriving in the memories' order
            puts = live.puts()[1]
            labels = {}
            for f in FIELDS:
                col = LabelColumn.of(list(map(attrgetter(f), puts)))
                table = LabelTable()
                labels[f] = (table.values, table.of_column(col))
            created = np.fromiter(map(attrgetter("created_ms"), puts), np.int64, len(puts))
            staged_set = np.frombuffer(state["staged"], "<u8")
            cols.restore(mid_arr, labels, created, mid_arr[np.isin(mid_arr, staged_set)])
            rows = np.arange(len(mid_arr), dtype=np.int64)
        kw = state["keyword_context"]
        if state["keyword_index"] and bm25_path is not None:
            self._restore_bm25(bm25_path, len(mid_arr))
            for mid, ctx in kw:
                text = live.text(int(mid)) if cols.row(int(mid)) >= 0 else None
                if text is not None:
                    self._kw_context[int(mid)] = (text, ctx)
        else:
            where = np.full(cols.n, -1, np.int64)  # position in the live order of each row
            where[rows] = np.arange(len(mid_arr))
            docs = list(live.puts()[2])
            for mid, ctx in kw:
                r = cols.row(int(mid))
                if r >= 0:
                    at = int(where[r])
                    self._kw_context[int(mid)] = (docs[at], ctx)
                    docs[at] = keyword_document(docs[at], ctx)
            self._text_pending.add_texts(rows, docs)
        if state.get("speakers") is None:  # older states: each live put's meta names its speaker
            mids, puts, _texts = live.puts()
            self.restore_speakers(None, mids, list(map(attrgetter("meta"), puts)))
        else:
            self.restore_speakers(state["speakers"], [], [])
        if state["mean"] is not None:
            self._mean = np.frombuffer(state["mean"], "<f4").astype(np.float32)
        if units is not None and len(vectors):
            self._restore_units(units[0], units[1], vector_ids, codes)
        elif len(vectors):  # state 8 (and 1-2): normalised here, as replay does (one pass)
            self.dim = int(vectors.shape[1])
            total = len(vectors)
            # zeros: _unit_rows packs the kept rows at the top; the rows past them stay zero
            self._vecs = np.zeros((max(1024, total + total // 4), self.dim), np.float32)
            self._quant_reset()
            if isinstance(vectors, MappedVectors):  # state 10: straight from the mapped log
                norms, n = vectors.unit_into(self._vecs[:total])
            else:
                norms, n = _core._unit_rows(
                    np.ascontiguousarray(vectors, np.float32), self._vecs[:total]
                )
            keep = np.isfinite(norms) & (norms > 0)
            ids = vector_ids[keep]
            self._row_ids = RowIds(ids)
            self._row.set_many(ids, np.arange(n, dtype=np.int64))
            if self._row.recount() != n:
                raise ValueError("the vector sidecar repeats an id")
            if (
                codes is not None
                and len(codes[0]) == len(vectors)
                and codes[1].shape[0] == self.dim
            ):
                self._adopt = (codes[0] if n == len(vectors) else codes[0][keep], codes[1], set())
        self._recent.extend(state["recent"])
        self._posting = open_posting(posting_path)  # checked now, read on first use
        self._posting_width = int(state["posting"]["active"])
        self._dense_kind = state["dense_index"]
        if self._dense_kind not in DENSE_INDEX_KINDS:
            raise ValueError(f"unknown dense index {self._dense_kind!r}")
        if state["ann"]:
            pending = np.frombuffer(state.get("ann_pending", b""), "<u8").tolist()
            self._ann = DenseANN.load(ann_path, int(self.dim or 0), pending, self.row_refs)
        coded = np.frombuffer(state["coded"], "<u8")
        versions = np.frombuffer(state["code_versions"], "<u4")
        if len(coded) != len(versions):
            raise ValueError("snapshot code versions do not match the coded ids")
        self._code_version.set_many(coded, versions.astype(np.int64))
        if self._code_version.recount() != len(coded):
            raise ValueError("snapshot code versions repeat an id")

    def _columns_state(self) -> dict[str, Any]:
        """The live rows' columns, packed: ids, event times, label codes + tables."""
        cols = self._cols
        rows = cols.live_rows()
        return {
            "ids": cols.ids[rows].astype("<u8").tobytes(),
            "created_ms": cols.created[rows].astype("<i8").tobytes(),
            "labels": {
                f: [cols.tables[f].values, cols.labels[f][rows].astype("<u4").tobytes()]
                for f in FIELDS
            },
        }

    def _restore_bm25(self, path: str, live: int) -> None:
        """The keyword index from its sidecar; refused (ValueError, the checkpoint is
        then ignored) unless it is configured as this organ's and holds one document
        per live memory."""
        fresh = self._bm25
        loaded = BM25.load(path)
        if (loaded.k1, loaded.b, loaded.stem, loaded.stopwords) != (
            fresh.k1,
            fresh.b,
            fresh.stem,
            fresh.stopwords,
        ):
            raise ValueError(f"{path}: keyword index configured differently from this field's")
        if len(loaded) != live:
            raise ValueError(
                f"{path}: keyword index holds {len(loaded)} documents, the field {live}"
            )
        self._bm25 = loaded

    def _restore_units(
        self,
        rows: F32,
        missing: U64,
        vector_ids: U64,
        codes: tuple[npt.NDArray[np.uint64], F32] | None,
    ) -> None:
        """The unit rows of units.emb (a copy-on-write map, in the vector sidecar's
        order) as the dense lane's matrix; ids listed as missing get free rows."""
        self.dim = int(rows.shape[1])
        self._vecs = rows
        self._quant_reset()
        self._row_ids = RowIds(vector_ids)
        free: list[int] = []
        if len(missing):
            free = np.flatnonzero(np.isin(vector_ids, missing)).tolist()
            if len(free) != len(missing):
                raise ValueError("units_missing names ids the vector sidecar does not hold")
            for r in free:
                self._row_ids[r] = 0
        keep = np.ones(len(vector_ids), bool)
        keep[free] = False
        self._row.set_many(vector_ids[keep], np.flatnonzero(keep))
        if self._row.recount() != len(self._row_ids) - len(free):
            raise ValueError("units.emb rows do not match the memories' vectors")
        self._free_rows = free
        if codes is not None and len(codes[0]) == len(rows) and codes[1].shape[0] == self.dim:
            self._adopt = (codes[0], codes[1], set(free))
