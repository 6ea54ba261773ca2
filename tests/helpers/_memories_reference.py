"""The memories organ as it was before columns (main at 63ac138): a test oracle.

Owns its records. Rebuilt only by applying PutPayload, UpdateMemoryContent,
UpdateState, DeleteMemory and DemoteMemory ops in log order. Deletion is soft:
a forgotten memory keeps its record (for history) but is no longer live.
Never imports another organ.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec
import numpy as np
import numpy.typing as npt

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


_LABELS = ("kind", "realm", "session", "source_tool", "harness")
_ID, _EMBEDDING = attrgetter("id"), attrgetter("embedding")


class ScoringStates(NamedTuple):
    """What recall scores, for many ids at once (``MemoriesOrgan.scoring_states``):
    one entry per id asked, in order. Where ``live`` is False (never existed or
    forgotten) the entry is a placeholder: kind "", zeros, no access times."""

    live: npt.NDArray[np.bool_]
    kind: list[str]
    created_ms: npt.NDArray[np.int64]
    confidence: npt.NDArray[np.float64]
    strength: npt.NDArray[np.float64]
    tier: npt.NDArray[np.int64]
    access_ms: list[tuple[int, ...]]  # creation time, then the recent accesses (as access_times)


def _share_labels(puts: list[ops.PutPayload]) -> None:
    """Make equal label strings (kind, realm, ...) one object: a decoded million
    memories would otherwise hold a million copies of "observation"."""
    force = msgspec.structs.force_setattr
    for name in _LABELS:
        values = list(map(attrgetter(name), puts))
        if not any(values):
            continue
        canon: dict[str, str] = {}
        for put, value in zip(puts, values):
            if value is not None:
                shared = canon.setdefault(value, value)
                if shared is not value:
                    force(put, name, shared)


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
        # Vectors restored from a checkpoint's sidecar stay in one matrix (a record
        # restored without its embedding bytes reads its row): sorted ids -> row.
        self._sidecar_ids: npt.NDArray[np.uint64] = np.zeros(0, np.uint64)
        self._sidecar_rows: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._sidecar_vecs: npt.NDArray[np.float32] = np.zeros((0, 0), np.float32)

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
        ids = list(map(_ID, run))
        if not ids:
            return
        lo, hi = min(ids), max(ids)
        inst = hi >> 32
        if (
            lo >> 32 != inst  # ids of several instances
            or len(set(ids)) != len(ids)  # a duplicate inside the run
            or not records.keys().isdisjoint(ids)  # a put of an existing id
            or (self.embedding_dim is None and any(map(_EMBEDDING, run)))
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

    def scoring_states(self, ids: Sequence[int]) -> ScoringStates:
        """``scoring_state`` and ``access_times`` of many ids in one call, as columns."""
        n = len(ids)
        live = [False] * n
        kind = [""] * n
        created = [0] * n
        confidence = [0.0] * n
        strength = [0.0] * n
        tier = [0] * n
        access: list[tuple[int, ...]] = [()] * n
        get, touches, put_type = self._records.get, self._touches, ops.PutPayload
        for pos, mid in enumerate(ids):
            rec = get(mid)
            if rec is None:
                continue
            if rec.__class__ is put_type:
                put: ops.PutPayload = rec  # type: ignore[assignment]
                confidence[pos], strength[pos] = put.confidence, put.strength
            else:
                r: MemoryRecord = rec  # type: ignore[assignment]
                if r.deleted_ms is not None:
                    continue
                put = r.put
                confidence[pos], strength[pos], tier[pos] = r.confidence, r.strength, r.tier
            live[pos] = True
            kind[pos] = put.kind
            created[pos] = put.created_ms
            trace = touches.get(mid)
            access[pos] = (put.created_ms, *trace) if trace else (put.created_ms,)
        return ScoringStates(
            live=np.array(live, np.bool_),
            kind=kind,
            created_ms=np.array(created, np.int64),
            confidence=np.array(confidence, np.float64),
            strength=np.array(strength, np.float64),
            tier=np.array(tier, np.int64),
            access_ms=access,
        )

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

    def _sidecar_vector(self, mid: int) -> npt.NDArray[np.float32] | None:
        ids = self._sidecar_ids
        if not len(ids):
            return None
        at = int(np.searchsorted(ids, np.uint64(mid)))  # a plain int would compare as float64
        if at < len(ids) and int(ids[at]) == mid:
            return self._sidecar_vecs[int(self._sidecar_rows[at])]
        return None

    def _to_memory(self, mid: int, rec: MemoryRecord) -> Memory:
        put = rec.put
        emb = None
        if rec.embedding is not None:
            emb = np.frombuffer(rec.embedding, dtype="<f4").astype(np.float32)
        else:
            restored = self._sidecar_vector(mid)
            if restored is not None:
                emb = np.array(restored, np.float32)
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

    # ---- checkpoints (chitta/field/checkpoint) ------------------------------------------------
    def snapshot(self) -> tuple[dict[str, Any], npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """This organ's state as a msgpack-able map, plus the current vector of every
        live memory that has one (ids, count x dim float32) for the vector sidecar.
        Vectors of another dimension than the most common one stay in the map."""
        puts: list[ops.PutPayload] = []
        changed: list[list[Any]] = []
        vec_ids: list[int] = []
        blobs: list[bytes] = []
        strip = msgspec.structs.replace
        for pos, (mid, rec) in enumerate(self._records.items()):
            if rec.__class__ is ops.PutPayload:
                put: ops.PutPayload = rec  # type: ignore[assignment]
                emb, live = put.embedding, True
            else:
                r: MemoryRecord = rec  # type: ignore[assignment]
                put, emb, live = r.put, r.embedding, r.deleted_ms is None
                changed.append(
                    [
                        pos,
                        r.text,
                        list(r.tags),
                        r.meta,
                        r.confidence,
                        r.strength,
                        r.decay_rate,
                        r.tier,
                        r.updated_ms,
                        r.last_access_ms,
                        r.access_count,
                        r.deleted_ms,
                    ]
                )
            puts.append(put if put.embedding is None else strip(put, embedding=None))
            if not live:
                continue
            if emb is None:
                vec = self._sidecar_vector(mid)
                if vec is not None:
                    emb = vec.astype("<f4").tobytes()
            if emb is not None:
                vec_ids.append(mid)
                blobs.append(emb)
        dims: dict[int, int] = {}
        for b in blobs:
            dims[len(b)] = dims.get(len(b), 0) + 1
        width = max(dims, key=lambda w: dims[w]) if dims else 0
        main = [i for i, b in enumerate(blobs) if len(b) == width]
        odd = [[vec_ids[i], b] for i, b in enumerate(blobs) if len(b) != width]
        ids = np.array([vec_ids[i] for i in main], np.uint64)
        vecs = np.frombuffer(b"".join(blobs[i] for i in main), "<f4").reshape(len(main), width // 4)
        state = {
            "puts": msgspec.msgpack.encode(puts),
            "changed": changed,
            "odd_vectors": odd,
            "live": self._live,
            "max_local": [[k, v] for k, v in self._max_local.items()],
            "embedding_dim": self.embedding_dim,
            "touches": [[k, v] for k, v in self._touches.items()],
            "ignored": self.ignored,
        }
        return state, ids, vecs

    def restore(
        self, state: dict[str, Any], ids: npt.NDArray[np.uint64], vecs: npt.NDArray[np.float32]
    ) -> None:
        """Load a snapshot into this (fresh) organ. Raises on a malformed map."""
        puts = msgspec.msgpack.decode(state["puts"], type=list[ops.PutPayload])
        _share_labels(puts)
        records: dict[int, MemoryRecord | ops.PutPayload] = dict(zip((p.id for p in puts), puts))
        if len(records) != len(puts):
            raise ValueError("snapshot repeats a memory id")
        for pos, text, tags, meta, conf, strength, decay, tier, upd, last, count, deleted in state[
            "changed"
        ]:
            rec = MemoryRecord(puts[pos])
            rec.text, rec.tags, rec.meta = text, tuple(tags), meta
            rec.confidence, rec.strength, rec.decay_rate, rec.tier = conf, strength, decay, tier
            rec.updated_ms, rec.last_access_ms, rec.access_count, rec.deleted_ms = (
                upd,
                last,
                count,
                deleted,
            )
            records[puts[pos].id] = rec
        for mid, blob in state["odd_vectors"]:
            rec = records[mid]
            if rec.__class__ is ops.PutPayload:
                rec = records[mid] = MemoryRecord(rec)  # type: ignore[arg-type]
            rec.embedding = blob  # type: ignore[union-attr]
        order = np.argsort(ids, kind="stable")
        self._sidecar_ids = np.ascontiguousarray(ids[order])
        self._sidecar_rows = order.astype(np.int64)
        self._sidecar_vecs = vecs
        self._records = records
        self._live = int(state["live"])
        self._max_local = {int(k): int(v) for k, v in state["max_local"]}
        self.embedding_dim = state["embedding_dim"]
        self._touches = {int(k): list(v) for k, v in state["touches"]}
        self.ignored = int(state["ignored"])

    def live_puts(self) -> tuple[list[int], list[ops.PutPayload], list[str]]:
        """Columns of every live memory, in order: ids, the puts that made them,
        their current texts."""
        put_type = ops.PutPayload
        items = [
            (mid, rec)
            for mid, rec in self._records.items()
            if rec.__class__ is put_type or rec.deleted_ms is None  # type: ignore[union-attr]
        ]
        return (
            [mid for mid, _ in items],
            [rec if rec.__class__ is put_type else rec.put for _, rec in items],  # type: ignore[misc, union-attr]
            [rec.text for _, rec in items],
        )
