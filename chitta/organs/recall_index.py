"""Recall-index organ: the derived search state of every live memory.

Owns the keyword index (BM25), the dense vectors (exact scan, or binary codes
with exact rescoring when the field is large), the sparse-code posting index,
and the filter indexes (kind, realm, session, harness, event time, staged).
Everything here is rebuilt from PutPayload / UpdateMemoryContent /
DeleteMemory / UpdateState / UpdateSparseCode / ConfigureField ops. Native
indexes are filled lazily, in batches, on the first query after changes, so
replay stays a sequence of cheap dictionary updates. Never imports another organ.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Iterator
from itertools import compress, repeat
from operator import attrgetter, eq
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.index.bm25 import BM25
from chitta.index.hamming import HammingRescoreIndex
from chitta.index.posting import PAD_ID, PostingIndex
from chitta.ops import Op, OpType
from chitta.organs.dense_ann import DENSE_INDEX_KINDS, DenseANN
from chitta.organs.recall_filters import SortedIds, intersect
from chitta.recall.context import CONTEXT_KEY, context_of, keyword_document

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]

EXACT_DENSE_LIMIT = 20_000  # up to this many vectors (or allowed ids) the dense lane scans exactly


def _row_norms(rows: F32) -> F32:
    """L2 norm of each row, computed the same way for one row or a million (the
    checkpoint path must normalise bit-for-bit as the replay path does); in
    blocks, so a million rows need no million-row temporary."""
    rows = np.ascontiguousarray(rows, np.float32)
    out = np.empty(len(rows), np.float32)
    for lo in range(0, len(rows), 8192):
        block = rows[lo : lo + 8192]
        out[lo : lo + len(block)] = np.sqrt(np.add.reduce(block * block, axis=1))
    return out


class RecallIndexOrgan:
    name = "recall_index"
    handles = frozenset(
        {
            OpType.PutPayload,
            OpType.UpdateMemoryContent,
            OpType.DeleteMemory,
            OpType.UpdateState,
            OpType.UpdateSparseCode,
            OpType.ConfigureField,
        }
    )

    def __init__(self, *, exact_limit: int | None = None) -> None:
        self.exact_limit = EXACT_DENSE_LIMIT if exact_limit is None else exact_limit
        # filters
        self._by: dict[str, dict[str, set[int]]] = {f: defaultdict(set) for f in ("kind", "realm", "session", "harness")}
        self._attrs: dict[int, tuple[str, str | None, str | None, str | None]] = {}
        self._created: dict[int, int] = {}
        self._time_cache: tuple[U64, npt.NDArray[np.int64]] | None = None
        self._staged: set[int] = set()
        self._staged_order: deque[int] = deque()  # staged ids in arrival order (lazily cleaned)
        self._sorted_ids = SortedIds()  # derived: sorted id arrays of the filters
        # keyword lane
        self._bm25 = BM25(stem=True)  # light stemming: LoCoMo dev keyword R@10 +0.03 (RESULTS.md, locomo)
        self._text_pending: dict[int, str] = {}
        self._text_indexed: set[int] = set()
        # id -> (text, recall context or None) of memories that have or had a context (chitta.recall.context)
        self._kw_context: dict[int, tuple[str, str | None]] = {}
        # dense lane
        self.dim: int | None = None
        self._row: dict[int, int] = {}
        self._vecs: F32 = np.zeros((0, 0), np.float32)
        self._row_ids: list[int] = []
        self._free_rows: list[int] = []
        self._mean: F32 | None = None
        self._hamming: HammingRescoreIndex | None = None
        self._hamming_pending: set[int] = set()
        self._recent: deque[int] = deque(maxlen=8192)  # ids whose vectors were set last
        self._dense_kind = "auto"  # ConfigureField "dense_index": the large-field dense path
        self._ann: DenseANN | None = None
        self._row_index: tuple[U64, npt.NDArray[np.int64]] | None = None  # derived: sorted ids, their rows
        # posting lane
        self._posting = PostingIndex()
        self._code_pending: dict[int, tuple[tuple[int, ...], bytes]] = {}
        self._code_version: dict[int, int] = {}

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
            if op.touch and op.id in self._staged:  # type: ignore[attr-defined]
                self._staged.discard(op.id)  # type: ignore[attr-defined]
                self._sorted_ids.staged_changed()
        elif t is ops.UpdateSparseCode:
            self._code(op)  # type: ignore[arg-type]
        elif t is ops.ConfigureField and op.key == "dense_index":  # type: ignore[attr-defined]
            if op.value in DENSE_INDEX_KINDS:  # type: ignore[attr-defined]
                self._dense_kind = op.value  # type: ignore[attr-defined]
        elif t is ops.ConfigureField and op.key == "binary_mean":  # type: ignore[attr-defined]
            self._mean = np.frombuffer(op.value, dtype="<f4").astype(np.float32)  # type: ignore[attr-defined]
            self._hamming = None  # codes depend on the mean: rebuild on next use

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        if op_type == OpType.PutPayload:
            self._put_run(run)  # type: ignore[arg-type]
            return
        for op in run:
            self.apply(op)

    def _put_run(self, run: list[ops.PutPayload]) -> None:
        """Replay's fast path for a run of puts: the same result as ``_put`` on
        each in turn, with bulk dictionary and set updates."""
        ids = [op.id for op in run]
        if len(set(ids)) != len(ids) or not self._attrs.keys().isdisjoint(ids):
            for op in run:
                self._put(op)
            return
        attrs = self._attrs
        by_kind, by_realm, by_session, by_harness = (self._by[f] for f in ("kind", "realm", "session", "harness"))
        for op in run:
            mid = op.id
            attrs[mid] = (op.kind, op.realm, op.session, op.harness)
            by_kind[op.kind].add(mid)
            if op.realm is not None:
                by_realm[op.realm].add(mid)
            if op.session is not None:
                by_session[op.session].add(mid)
            if op.harness is not None:
                by_harness[op.harness].add(mid)
            if op.embedding is not None:
                self._set_vector(mid, op.embedding)
        self._created.update(zip(ids, (op.created_ms for op in run)))
        self._time_cache = None
        self._sorted_ids.clear()
        self._staged.update(ids)
        self._staged_order.extend(ids)
        self._text_pending.update(zip(ids, (self._keyword_text(op.id, op.text, op.meta) for op in run)))

    def _put(self, op: ops.PutPayload) -> None:
        mid = op.id
        if mid in self._attrs:
            return  # duplicate put: the memories organ keeps the first
        attrs = (op.kind, op.realm, op.session, op.harness)
        self._attrs[mid] = attrs
        for field, value in zip(("kind", "realm", "session", "harness"), attrs):
            if value is not None:
                self._by[field][value].add(mid)
        self._created[mid] = op.created_ms
        self._time_cache = None
        self._sorted_ids.clear()
        self._staged.add(mid)
        self._staged_order.append(mid)
        self._text_pending[mid] = self._keyword_text(mid, op.text, op.meta)
        if op.embedding is not None:
            self._set_vector(mid, op.embedding)

    apply_put = _put  # the Field's remember() path: one PutPayload, no dispatch

    def _update(self, op: ops.UpdateMemoryContent) -> None:
        mid = op.id
        if mid not in self._attrs:
            return
        old = self._kw_context.get(mid)
        # A new text keeps the current context; new meta (replacing the old)
        # re-reads it. The organ keeps the text only of memories that have or
        # had a context, so a memory that never had one gets its first
        # context from an update only together with its text.
        if op.text is not None or (op.meta is not None and old is not None):
            text = op.text if op.text is not None else old[0]  # type: ignore[index]
            meta = op.meta if op.meta is not None else ({CONTEXT_KEY: old[1]} if old else None)
            if mid in self._text_indexed:
                self._bm25.remove(np.array([mid], np.uint64))
                self._text_indexed.discard(mid)
            self._text_pending[mid] = self._keyword_text(mid, text, meta)
        if op.embedding is not None:
            self._set_vector(mid, op.embedding)

    def _drop(self, mid: int) -> None:
        attrs = self._attrs.pop(mid, None)
        if attrs is None:
            return
        for field, value in zip(("kind", "realm", "session", "harness"), attrs):
            if value is not None:
                self._by[field][value].discard(mid)
        self._created.pop(mid, None)
        self._time_cache = None
        self._sorted_ids.clear()
        self._staged.discard(mid)
        self._kw_context.pop(mid, None)
        if self._text_pending.pop(mid, None) is None and mid in self._text_indexed:
            self._bm25.remove(np.array([mid], np.uint64))
            self._text_indexed.discard(mid)
        self._drop_vector(mid)
        self._code_pending.pop(mid, None)
        if mid in self._code_version:
            del self._code_version[mid]
            if mid in self._posting:
                self._posting.remove(np.array([mid], np.uint64))

    def _keyword_text(self, mid: int, text: str, meta: Any) -> str:
        ctx = context_of(meta) if meta else None
        if ctx is not None or mid in self._kw_context:
            self._kw_context[mid] = (text, ctx)
        return keyword_document(text, ctx)

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
        self._row[mid] = row
        self._row_index = None
        self._hamming_pending.add(mid)
        self._recent.append(mid)
        if self._ann is not None:
            self._ann.vector_set(mid)

    def _drop_vector(self, mid: int) -> None:
        row = self._row.pop(mid, None)
        if row is None:
            return
        self._row_index = None
        self._vecs[row] = 0.0
        self._row_ids[row] = 0
        self._free_rows.append(row)
        if mid in self._hamming_pending:
            self._hamming_pending.discard(mid)
        elif self._hamming is not None and mid in self._hamming:
            self._hamming.remove(np.array([mid], np.uint64))
        if self._ann is not None:
            self._ann.vector_dropped(mid)

    def _code(self, op: ops.UpdateSparseCode) -> None:
        mid = op.id
        if mid not in self._attrs:
            return
        if mid in self._code_version and mid in self._posting:
            self._posting.remove(np.array([mid], np.uint64))
        self._code_pending[mid] = (op.features, op.activations)
        self._code_version[mid] = op.encoder_version

    # ---- keeping native indexes current -----------------------------------------
    def _flush_text(self) -> None:
        if self._text_pending:
            ids = np.fromiter(self._text_pending.keys(), np.uint64, len(self._text_pending))
            self._bm25.add(ids, list(self._text_pending.values()))
            self._text_indexed.update(self._text_pending)
            self._text_pending.clear()

    def _flush_codes(self) -> None:
        if not self._code_pending:
            return
        items = [(mid, f, a) for mid, (f, a) in self._code_pending.items() if len(f) == self._posting.active]
        self._code_pending.clear()
        if items:
            ids = np.array([m for m, _, _ in items], np.uint64)
            feats = np.array([f for _, f, _ in items], np.uint32)
            acts = np.frombuffer(b"".join(a for _, _, a in items), dtype="<f4").reshape(len(items), -1)
            order = np.argsort(feats, axis=1, kind="stable")  # the index wants sorted rows
            self._posting.add(ids, np.take_along_axis(feats, order, 1),
                              np.ascontiguousarray(np.take_along_axis(acts, order, 1), np.float32))

    def _ensure_hamming(self) -> HammingRescoreIndex:
        if self._hamming is None:
            mean = self._mean if self._mean is not None and self._mean.shape[0] == self.dim else None
            if mean is None:
                mean = self.estimated_mean()
            self._hamming = HammingRescoreIndex(int(self.dim or 0), mean=mean)
            self._hamming_pending = set(self._row)
        if self._hamming_pending:
            ids = np.fromiter(self._hamming_pending, np.uint64, len(self._hamming_pending))
            rows = [self._row[int(i)] for i in ids]
            self._hamming.add(ids, self._vecs[rows])
            self._hamming_pending.clear()
        return self._hamming

    def _ensure_ann(self) -> DenseANN:
        if self._ann is None:
            self._ann = DenseANN(int(self.dim or 0))
            for mid in self._row:
                self._ann.vector_set(mid)
        self._ann.catch_up(lambda ids: self._vecs[[self._row[i] for i in ids]])
        return self._ann

    def _uses_ann(self) -> bool:
        return self._dense_kind == "hnsw" and len(self._row) > self.exact_limit

    # ---- queries --------------------------------------------------------------------
    @property
    def vector_count(self) -> int:
        return len(self._row)

    def estimated_mean(self) -> F32 | None:
        if not self._row:
            return None
        rows = np.fromiter(self._row.values(), np.int64, len(self._row))
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

    def is_staged(self, mid: int) -> bool:
        return mid in self._staged

    def staged_ids(self) -> set[int]:
        return set(self._staged)

    def staged_oldest_first(self) -> Iterator[int]:
        """Staged ids in the order they arrived, oldest first (ids no longer staged
        are dropped from the old end as they are met). Do not change the organ
        while iterating."""
        order, staged = self._staged_order, self._staged
        while order and order[0] not in staged:
            order.popleft()
        return (mid for mid in order if mid in staged)

    def code_version(self, mid: int) -> int | None:
        return self._code_version.get(mid)

    def code_features(self, mid: int) -> tuple[int, ...]:
        """The feature ids of a memory's current sparse code, ascending (empty if none)."""
        pending = self._code_pending.get(mid)
        if pending is not None:
            return tuple(sorted(pending[0]))
        if mid in self._code_version and mid in self._posting:
            return tuple(int(x) for x in self._posting.get(mid)[0])
        return ()

    def coded_ids(self) -> list[int]:
        return list(self._code_version)

    def vector(self, mid: int) -> F32 | None:
        row = self._row.get(mid)
        return None if row is None else self._vecs[row]

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
            by_kind = self._by["kind"]
            of_kind = [cache.members("kind", k, by_kind[k]) for k in sorted(kinds) if by_kind.get(k)]
            arrays.append(np.unique(np.concatenate(of_kind)) if len(of_kind) > 1 else
                          of_kind[0] if of_kind else np.zeros(0, np.uint64))
        for field, value in (("realm", realm), ("session", session), ("harness", harness)):
            if value is not None:
                members = self._by[field].get(value)
                arrays.append(cache.members(field, value, members) if members else np.zeros(0, np.uint64))
        if since_ms is not None or until_ms is not None:
            arrays.append(cache.in_time_range(self._created, since_ms, until_ms))
        if not arrays and include_staged:
            return None
        result = intersect(arrays) if arrays else cache.everything(self._attrs)  # type: ignore[arg-type]
        if not include_staged:
            result = cache.without_staged(result, self._staged)
        return result

    def _times(self) -> tuple[U64, npt.NDArray[np.int64]]:
        if self._time_cache is None:
            ids = np.fromiter(self._created.keys(), np.uint64, len(self._created))
            times = np.fromiter(self._created.values(), np.int64, len(self._created))
            self._time_cache = (ids, times)
        return self._time_cache

    def keyword(self, query: str, k: int, allowed: U64 | None) -> U64:
        self._flush_text()
        if len(self._bm25) == 0 or (allowed is not None and len(allowed) == 0):
            return np.zeros(0, np.uint64)
        ids, _ = self._bm25.search(query, k, allowed=allowed)
        found: U64 = ids[ids != PAD_ID]
        return found

    def posting(self, features: npt.NDArray[np.uint32], k: int, allowed: U64 | None) -> U64:
        self._flush_codes()
        if len(self._posting) == 0 or (allowed is not None and len(allowed) == 0):
            return np.zeros(0, np.uint64)
        ids, _ = self._posting.search(np.ascontiguousarray(np.sort(features), np.uint32), k, allowed=allowed)
        found: U64 = ids[ids != PAD_ID]
        return found

    def dense(self, vector: F32, k: int, allowed: U64 | None) -> tuple[U64, F32]:
        """Top-k live memories by cosine with ``vector`` (unit length), best first."""
        if not self._row or self.dim is None or vector.shape[0] != self.dim:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        if allowed is not None:
            return self._exact(vector, self._rows_of(allowed), k)
        if len(self._row) <= self.exact_limit:
            return self._exact_all(vector, k)
        if self._uses_ann():
            return self._ensure_ann().search(vector, k)
        ids, cos = self._ensure_hamming().search(vector, k)
        keep = ids != PAD_ID
        return ids[keep], cos[keep]

    def _rows_of(self, ids: U64) -> npt.NDArray[np.int64]:
        """Rows of those of ``ids`` that have a vector, in the order of ``ids``."""
        if self._row_index is None and len(ids) * 8 < len(self._row):  # few ids: not worth sorting every row
            get = self._row.get
            arr = np.array([get(i, -1) for i in ids.tolist()], np.int64)
            return arr[arr >= 0]
        if self._row_index is None:
            keys = np.fromiter(self._row.keys(), np.uint64, len(self._row))
            vals = np.fromiter(self._row.values(), np.int64, len(self._row))
            order = np.argsort(keys)
            self._row_index = (keys[order], vals[order])
        keys, vals = self._row_index
        if len(keys) == 0:
            return np.zeros(0, np.int64)
        pos = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
        found = keys[pos] == ids
        rows: npt.NDArray[np.int64] = vals[pos[found]]
        return rows

    def _exact_all(self, vector: F32, k: int) -> tuple[U64, F32]:
        """Exact scan of every stored row in place (no gather); freed rows are skipped."""
        n = len(self._row_ids)
        sims = self._vecs[:n] @ vector
        if self._free_rows:
            sims[np.array(self._free_rows, np.int64)] = -np.inf
        kk = min(k, len(self._row))
        top = np.argpartition(-sims, kk - 1)[:kk]
        ids = np.array([self._row_ids[r] for r in top.tolist()], np.uint64)
        order = np.lexsort((ids, -sims[top]))  # cosine desc, then id asc: deterministic
        return ids[order], sims[top][order].astype(np.float32)

    def _exact(self, vector: F32, rows: npt.NDArray[np.int64], k: int) -> tuple[U64, F32]:
        if len(rows) == 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        sims = self._vecs[rows] @ vector
        kk = min(k, len(rows))
        top = np.argpartition(-sims, kk - 1)[:kk]
        ids = np.array([self._row_ids[r] for r in rows[top]], np.uint64)
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
        get = self._row.get
        rows = [get(mid, -1) for mid in ids]
        have = [i for i, r in enumerate(rows) if r >= 0]
        if have and self.dim is not None and vector.shape[0] == self.dim:
            picked = self._vecs[[rows[i] for i in have]]
            out[have] = (picked[:, None, :] @ vector[:, None])[:, 0, 0]
        return out

    def stats(self) -> dict[str, Any]:
        return {
            "vectors": len(self._row),
            "dim": self.dim,
            "coded": len(self._code_version),
            "staged": len(self._staged),
            "dense_index": self._dense_kind,
            "dense_path": "exact" if len(self._row) <= self.exact_limit
            else ("hnsw" if self._uses_ann() else "hamming+rescore"),
        }

    # ---- checkpoints (chitta/checkpoint) ------------------------------------------------
    def snapshot(self, posting_path: str, ann_path: str) -> dict[str, Any]:
        """State not derivable from the live memories' puts and vectors: the staged
        set, code versions, the recorded binary mean, recent vector order. Writes the
        posting index (pending codes folded in) to ``posting_path`` and, when the
        field's dense path is the graph, the graph (built now if need be) to
        ``ann_path`` and its delta beside it."""
        self._flush_codes()
        self._posting.save(posting_path)
        ann_files = self._ensure_ann().save(ann_path) if self._uses_ann() else []
        coded = np.fromiter(self._code_version.keys(), np.uint64, len(self._code_version))
        versions = np.fromiter(self._code_version.values(), np.uint32, len(self._code_version))
        return {
            "staged": np.fromiter(self._staged, np.uint64, len(self._staged)).astype("<u8").tobytes(),
            "coded": coded.astype("<u8").tobytes(),
            "code_versions": versions.astype("<u4").tobytes(),
            "mean": None if self._mean is None else self._mean.astype("<f4").tobytes(),
            "recent": list(self._recent),
            "posting": {"n_features": self._posting.n_features, "active": self._posting.active},
            "dense_index": self._dense_kind,
            "ann": bool(ann_files),
            "keyword_context": [[mid, ctx] for mid, (_text, ctx) in self._kw_context.items()],
        }

    def restore(
        self,
        state: dict[str, Any],
        live: tuple[list[int], list[ops.PutPayload], list[str]],
        vector_ids: U64,
        vectors: F32,
        posting_path: str,
        ann_path: str,
    ) -> None:
        """Load a snapshot into this (fresh) organ: filters and texts from the live
        memories, vectors (normalised here) from the sidecar, codes from the posting file."""
        mids, puts, texts = live
        attrs = self._attrs
        columns = {f: list(map(attrgetter(f), puts)) for f in ("kind", "realm", "session", "harness")}
        attrs.update(zip(mids, zip(*columns.values())))
        for field, values in columns.items():
            by = self._by[field]
            distinct = set(values)
            distinct.discard(None)
            if len(distinct) <= 32:  # few values (kinds, harnesses): one C-level pass each
                for value in distinct:
                    by[value].update(compress(mids, map(eq, repeat(value), values)))
            else:
                for mid, value in zip(mids, values):
                    if value is not None:
                        by[value].add(mid)
        self._created.update(zip(mids, map(attrgetter("created_ms"), puts)))
        self._text_pending.update(zip(mids, texts))
        for mid, ctx in state["keyword_context"]:
            text = self._text_pending.get(mid)
            if text is not None:
                self._kw_context[mid] = (text, ctx)
                self._text_pending[mid] = keyword_document(text, ctx)
        # Keep one int object per id (the memories organ's): a million ids held by
        # several dicts and sets would otherwise each carry their own 32-byte copy.
        staged = set(np.frombuffer(state["staged"], "<u8").tolist())
        self._staged_order = deque(mid for mid in mids if mid in staged)
        self._staged = set(self._staged_order)
        del staged
        canonical = dict(zip(mids, mids))  # value: the object to share
        if state["mean"] is not None:
            self._mean = np.frombuffer(state["mean"], "<f4").astype(np.float32)
        if len(vectors):
            norms = _row_norms(vectors)
            keep = np.isfinite(norms) & (norms > 0)
            ids = vector_ids[keep]
            self.dim = int(vectors.shape[1])
            n = len(ids)
            self._vecs = np.zeros((max(1024, n + n // 4), self.dim), np.float32)
            if n == len(vectors):  # the usual case: no gather copy of a million rows
                np.divide(vectors, norms[:, None], out=self._vecs[:n])
            else:
                np.divide(vectors[keep], norms[keep, None], out=self._vecs[:n])
            self._row_ids = [canonical.get(mid, mid) for mid in ids.tolist()]
            self._row = dict(zip(self._row_ids, range(n)))
        self._recent.extend(state["recent"])
        self._posting = PostingIndex.load(posting_path)
        self._dense_kind = state["dense_index"]
        if self._dense_kind not in DENSE_INDEX_KINDS:
            raise ValueError(f"unknown dense index {self._dense_kind!r}")
        if state["ann"]:
            self._ann = DenseANN.load(ann_path, int(self.dim or 0))
        coded = np.frombuffer(state["coded"], "<u8").tolist()
        versions = np.frombuffer(state["code_versions"], "<u4").tolist()
        if len(coded) != len(versions):
            raise ValueError("snapshot code versions do not match the coded ids")
        self._code_version = {canonical.get(mid, mid): ver for mid, ver in zip(coded, versions)}
