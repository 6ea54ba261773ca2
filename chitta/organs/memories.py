"""Memories organ: the content and state of every memory.

Owns its records. Rebuilt only by applying PutPayload, UpdateMemoryContent,
UpdateState, DeleteMemory and DemoteMemory ops in log order. Deletion is soft:
a forgotten memory keeps its record (for history) but is no longer live.
Never imports another organ.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from chitta import ops
from chitta.model import Memory
from chitta.ops import Op, OpType


MAX_TRACE = 32  # access times kept per memory for ACT-R base-level activation


class MemoryRecord:
    """Mutable per-memory state; the organ's own, never handed out."""

    __slots__ = (
        "access_count",
        "confidence",
        "decay_rate",
        "deleted_ms",
        "embedding",
        "last_access_ms",
        "meta",
        "put",
        "strength",
        "tags",
        "text",
        "tier",
        "updated_ms",
    )

    def __init__(self, put: ops.PutPayload) -> None:
        self.put = put
        self.text = put.text
        self.tags = put.tags
        self.meta = put.meta
        self.embedding = put.embedding
        self.confidence = put.confidence
        self.strength = put.strength
        self.decay_rate = 0.0
        self.tier = 0
        self.updated_ms = put.created_ms
        self.last_access_ms = 0
        self.access_count = 0
        self.deleted_ms: int | None = None


class MemoriesOrgan:
    name = "memories"
    handles = frozenset(
        {
            OpType.PutPayload,
            OpType.UpdateMemoryContent,
            OpType.UpdateState,
            OpType.DeleteMemory,
            OpType.DemoteMemory,
        }
    )

    def __init__(self) -> None:
        # A memory that was only put (never updated, forgotten, demoted) is kept
        # as its PutPayload, which holds everything a fresh MemoryRecord would
        # (the op is immutable); the first change turns it into a MemoryRecord
        # (_live_record). Replay and remember() then skip building ~13 slots per memory.
        self._records: dict[int, MemoryRecord | ops.PutPayload] = {}
        self._live = 0
        self._max_local: dict[int, int] = {}  # instance id -> highest id counter seen
        self.embedding_dim: int | None = None
        self._touches: dict[int, list[int]] = {}  # id -> recent access times (ACT-R trace)
        self.ignored = 0  # ops naming a missing or forgotten memory, or a duplicate put

    # ---- applying ---------------------------------------------------------------
    def apply(self, op: Op) -> None:
        t = type(op)
        if t is ops.PutPayload:
            self._put(op)  # type: ignore[arg-type]
        elif t is ops.DeleteMemory:
            self._delete(op)  # type: ignore[arg-type]
        elif t is ops.UpdateMemoryContent:
            self._update_content(op)  # type: ignore[arg-type]
        elif t is ops.UpdateState:
            self._update_state(op)  # type: ignore[arg-type]
        elif t is ops.DemoteMemory:
            self._demote(op)  # type: ignore[arg-type]

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        if op_type == OpType.PutPayload:
            self._put_run(run)  # type: ignore[arg-type]
        else:
            for op in run:
                self.apply(op)

    def _put_run(self, run: list[ops.PutPayload]) -> None:
        """Apply a run of puts; the same result as ``_put`` on each in turn."""
        records = self._records
        ids = [op.id for op in run]
        if not ids:
            return
        lo, hi = min(ids), max(ids)
        inst = hi >> 32
        if (
            lo >> 32 != inst  # ids of several instances
            or len(set(ids)) != len(ids)  # a duplicate inside the run
            or not records.keys().isdisjoint(ids)  # a put of an existing id
            or (self.embedding_dim is None and any(op.embedding is not None for op in run))
        ):
            put = self._put
            for op in run:
                put(op)
            return
        records.update(zip(ids, run))
        self._live += len(ids)
        local = hi & 0xFFFFFFFF
        if local > self._max_local.get(inst, 0):
            self._max_local[inst] = local

    def _put(self, op: ops.PutPayload) -> None:
        mid = op.id
        if mid in self._records:
            self.ignored += 1
            return
        self._records[mid] = op
        self._live += 1
        inst, local = mid >> 32, mid & 0xFFFFFFFF
        if local > self._max_local.get(inst, 0):
            self._max_local[inst] = local
        if op.embedding is not None and self.embedding_dim is None:
            self.embedding_dim = len(op.embedding) // 4

    apply_put = _put  # the Field's remember() path: one PutPayload, no dispatch

    def _live_record(self, mid: int) -> MemoryRecord | None:
        rec = self._records.get(mid)
        if rec is None:
            self.ignored += 1
            return None
        if rec.__class__ is ops.PutPayload:  # first change: make it mutable
            rec = self._records[mid] = MemoryRecord(rec)
        elif rec.deleted_ms is not None:  # type: ignore[union-attr]
            self.ignored += 1
            return None
        return rec  # type: ignore[return-value]

    def _delete(self, op: ops.DeleteMemory) -> None:
        rec = self._live_record(op.id)
        if rec is not None:
            rec.deleted_ms = op.at_ms
            self._live -= 1

    def _update_content(self, op: ops.UpdateMemoryContent) -> None:
        rec = self._live_record(op.id)
        if rec is None:
            return
        if op.text is not None:
            rec.text = op.text
        if op.embedding is not None:
            rec.embedding = op.embedding
            if self.embedding_dim is None:
                self.embedding_dim = len(op.embedding) // 4
        if op.tags is not None:
            rec.tags = op.tags
        if op.meta is not None:
            rec.meta = op.meta
        rec.updated_ms = max(rec.updated_ms, op.at_ms)

    def _update_state(self, op: ops.UpdateState) -> None:
        rec = self._live_record(op.id)
        if rec is None:
            return
        if op.strength is not None:
            rec.strength = op.strength
        if op.confidence is not None:
            rec.confidence = op.confidence
        if op.decay_rate is not None:
            rec.decay_rate = op.decay_rate
        if op.touch:
            rec.last_access_ms = max(rec.last_access_ms, op.at_ms)
            rec.access_count += 1
            trace = self._touches.setdefault(op.id, [])
            trace.append(op.at_ms)
            if len(trace) > MAX_TRACE:
                del trace[0]

    def _demote(self, op: ops.DemoteMemory) -> None:
        rec = self._live_record(op.id)
        if rec is not None:
            rec.tier = op.tier

    # ---- queries ------------------------------------------------------------------
    def __len__(self) -> int:
        return self._live

    @property
    def forgotten(self) -> int:
        return len(self._records) - self._live

    def is_live(self, mid: int) -> bool:
        rec = self._records.get(mid)
        return rec is not None and (rec.__class__ is ops.PutPayload or rec.deleted_ms is None)  # type: ignore[union-attr]

    def scoring_state(self, mid: int) -> tuple[str, int, float, float, int] | None:
        """(kind, created_ms, confidence, strength, tier) of a live memory, without
        building a Memory (recall scores many candidates and returns few)."""
        rec = self._records.get(mid)
        if rec is None:
            return None
        if rec.__class__ is ops.PutPayload:
            return (rec.kind, rec.created_ms, rec.confidence, rec.strength, 0)  # type: ignore[union-attr]
        if rec.deleted_ms is not None:  # type: ignore[union-attr]
            return None
        put = rec.put  # type: ignore[union-attr]
        return (put.kind, put.created_ms, rec.confidence, rec.strength, rec.tier)  # type: ignore[union-attr]

    def access_times(self, mid: int) -> tuple[int, ...]:
        """Creation time and the most recent accesses (at most MAX_TRACE), in ms."""
        rec = self._records.get(mid)
        if rec is None:
            return ()
        created = rec.created_ms if rec.__class__ is ops.PutPayload else rec.put.created_ms  # type: ignore[union-attr]
        return (created, *self._touches.get(mid, ()))

    def next_local_id(self, instance_id: int) -> int:
        return self._max_local.get(instance_id, 0) + 1

    def live_ids(self) -> Iterator[int]:
        put = ops.PutPayload
        for mid, rec in self._records.items():
            if rec.__class__ is put or rec.deleted_ms is None:  # type: ignore[union-attr]
                yield mid

    def get(self, mid: int) -> Memory | None:
        rec = self._records.get(mid)
        if rec is None:
            return None
        if rec.__class__ is ops.PutPayload:
            return self._to_memory(mid, MemoryRecord(rec))
        if rec.deleted_ms is not None:  # type: ignore[union-attr]
            return None
        return self._to_memory(mid, rec)  # type: ignore[arg-type]

    @staticmethod
    def _to_memory(mid: int, rec: MemoryRecord) -> Memory:
        put = rec.put
        emb = None
        if rec.embedding is not None:
            emb = np.frombuffer(rec.embedding, dtype="<f4").astype(np.float32)
        return Memory(
            id=mid,
            text=rec.text,
            kind=put.kind,
            realm=put.realm,
            session=put.session,
            source_tool=put.source_tool,
            harness=put.harness,
            tags=tuple(rec.tags),
            confidence=rec.confidence,
            strength=rec.strength,
            decay_rate=rec.decay_rate,
            tier=rec.tier,
            created_ms=put.created_ms,
            updated_ms=rec.updated_ms,
            last_access_ms=rec.last_access_ms,
            access_count=rec.access_count,
            meta=dict(rec.meta) if rec.meta is not None else None,
            embedding=emb,
            artifacts=tuple(put.artifacts),
            written_ms=put.written_ms or put.created_ms,
        )
