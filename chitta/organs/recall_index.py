"""Recall-index organ: the derived search state of every live memory.

Owns the keyword index (BM25), the dense vectors (exact scan, or binary codes
with exact rescoring when the field is large), the sparse-code posting index,
and the filter indexes (kind, realm, session, harness, event time, staged).
Everything here is rebuilt from PutPayload / UpdateMemoryContent /
DeleteMemory / UpdateState / UpdateSparseCode / ConfigureField ops. Native
indexes are filled lazily, in batches, on the first query after changes, so
replay stays a sequence of cheap dictionary updates. Never imports another organ.
The dense lane's methods live in ``recall_index_dense.py``, snapshot and
restore for checkpoints in ``recall_index_snapshot.py``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator
from operator import attrgetter
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
from chitta.organs.recall_index_dense import EXACT_DENSE_LIMIT, DenseLane
from chitta.organs.recall_index_snapshot import IndexSnapshot
from chitta.organs.recall_speakers import SpeakerIndex
from chitta.recall.context import CONTEXT_KEY, context_of, keyword_document

U64 = npt.NDArray[np.uint64]
F32 = npt.NDArray[np.float32]

_LABEL_FIELDS = ("kind", "realm", "session", "harness")
_ID, _CREATED, _TEXT, _META, _EMBEDDING = (attrgetter(f) for f in ("id", "created_ms", "text", "meta", "embedding"))


class _Shared(dict[tuple[Any, ...], tuple[Any, ...]]):
    """Equal label tuples as one object: most memories share their (kind, realm,
    session, harness), so ``_attrs`` holds one tuple per distinct combination
    rather than one per memory (grows with the combinations ever seen)."""

    def __missing__(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        self[key] = key
        return key


class RecallIndexOrgan(DenseLane, SpeakerIndex, IndexSnapshot):
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
        self.exact_limit = EXACT_DENSE_LIMIT if exact_limit is None else exact_limit  # read at open: tests lower it
        # filters
        self._by: dict[str, dict[str, set[int]]] = {f: defaultdict(set) for f in ("kind", "realm", "session", "harness")}
        self._attrs: dict[int, tuple[str, str | None, str | None, str | None]] = {}
        self._shared_attrs = _Shared()
        self._created: dict[int, int] = {}
        self._time_cache: tuple[U64, npt.NDArray[np.int64]] | None = None
        self._staged: set[int] = set()
        self._staged_order: deque[int] = deque()  # staged ids in arrival order (lazily cleaned)
        self._sorted_ids = SortedIds()  # derived: sorted id arrays of the filters
        # keyword lane
        self._bm25 = BM25(stem=True)  # light stemming: LoCoMo dev keyword R@10 +0.03 (RESULTS.md, locomo)
        self._text_pending: dict[int, str] = {}
        # (which ids the BM25 index holds: ``mid in self._bm25``; no Python-side set of them)
        # id -> (text, recall context or None) of memories that have or had a context (chitta.recall.context)
        self._kw_context: dict[int, tuple[str, str | None]] = {}
        self._init_speakers()  # who said each memory (meta["speaker"]): recall_speakers.py
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
        """Replay's (and deferred remember's) fast path for a run of puts: the same
        result as ``_put`` on each in turn, with bulk dictionary and set updates
        (one loop for the labels; measured faster than building label columns)."""
        ids = list(map(_ID, run))
        attrs = self._attrs
        if len(set(ids)) != len(ids) or not attrs.keys().isdisjoint(ids):
            for op in run:
                self._put(op)
            return
        shared = self._shared_attrs
        by_kind, by_realm, by_session, by_harness = (self._by[f] for f in _LABEL_FIELDS)
        for op in run:
            mid, realm, session, harness = op.id, op.realm, op.session, op.harness
            attrs[mid] = shared[(op.kind, realm, session, harness)]
            by_kind[op.kind].add(mid)
            if realm is not None:
                by_realm[realm].add(mid)
            if session is not None:
                by_session[session].add(mid)
            if harness is not None:
                by_harness[harness].add(mid)
        self._created.update(zip(ids, map(_CREATED, run)))
        self._time_cache = None
        self._sorted_ids.clear()
        self._staged.update(ids)
        self._staged_order.extend(ids)
        if any(map(_META, run)):
            self._text_pending.update(zip(ids, (self._keyword_text(op.id, op.text, op.meta) for op in run)))
            for op in run:
                if op.meta:
                    self._note_speaker(op.id, op.meta)
        else:  # no meta, so no recall context: the keyword document is the text
            # (fresh ids: none of them is in _kw_context, _drop removed any old entry)
            self._text_pending.update(zip(ids, map(_TEXT, run)))
        if any(map(_EMBEDDING, run)):
            for op in run:
                if op.embedding is not None:
                    self._set_vector(op.id, op.embedding)

    def _put(self, op: ops.PutPayload) -> None:
        mid = op.id
        if mid in self._attrs:
            return  # duplicate put: the memories organ keeps the first
        attrs = self._shared_attrs[(op.kind, op.realm, op.session, op.harness)]
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
        if op.meta:
            self._note_speaker(mid, op.meta)
        if op.embedding is not None:
            self._set_vector(mid, op.embedding)

    apply_put = _put  # the Field's remember() path: one PutPayload, no dispatch

    def _update(self, op: ops.UpdateMemoryContent) -> None:
        mid = op.id
        if mid not in self._attrs:
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
        self._forget_speaker(mid)
        if self._text_pending.pop(mid, None) is None and mid in self._bm25:
            self._bm25.remove(np.array([mid], np.uint64))
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

    # ---- queries --------------------------------------------------------------------

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

    def stats(self) -> dict[str, Any]:
        return {
            "vectors": len(self._row),
            "dim": self.dim,
            "coded": len(self._code_version),
            "staged": len(self._staged),
            "dense_index": self._dense_kind,
            "dense_path": "exact" if len(self._row) <= self.exact_limit
            else ("hnsw" if self._uses_ann() or self._uses_auto_ann() else "hamming+rescore"),
        }
