"""Memories organ: the content and state of every memory.

Owns its records. Rebuilt only by applying PutPayload, UpdateMemoryContent,
UpdateState, DeleteMemory and DemoteMemory ops in log order. Deletion is soft:
a forgotten memory keeps its record (for history) but is no longer live.
Never imports another organ.

State is columnar (``memories_store.MemoryColumns``): a memory is a row of
numpy columns, not a Python object, so replay takes a run of puts as columns
(``apply_columns``) and a million memories cost ~150 bytes each beside their
texts and vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.field.checkpoint.mapped_vectors import MappedVectors
from chitta.model import _MEMORY_SLOTS, Memory, memory_of
from chitta.ops import Op, OpType
from chitta.ops.put_columns import NO_OFFSET, PutColumns
from chitta.organs import log_place, memories_checkpoint
from chitta.organs.contract import Maintenance, Operation, RestoreContext, SnapshotContext
from chitta.organs.log_place import LogPlace
from chitta.organs.memories_store import LABELS, MemoryColumns

MAX_TRACE = 32  # access times kept per memory for ACT-R base-level activation
REPLAY_MAP_MIN = 64  # a replayed run maps a new segment for at least this many of its vectors
_LOCAL = np.uint64(0xFFFFFFFF)
_BUILD_COLUMNS = (
    "created",
    "written",
    "updated",
    "last_access",
    "confidence",
    "strength",
    "decay",
    "tier",
    "access",
)


def _matrix(a: npt.NDArray[Any]) -> npt.NDArray[Any] | None:
    """``a`` when the native memory builder can read its rows in place, else None (it then asks ``vector``)."""
    ok = a.ndim == 2 and a.dtype == np.float32 and a.flags.c_contiguous
    return a if ok else None


_SHIFT = np.uint64(32)


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


def _id_array(ids: Sequence[int] | npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    if isinstance(ids, np.ndarray) and ids.dtype == np.uint64 and ids.flags.c_contiguous:
        return ids
    return np.array(ids, np.uint64).reshape(-1)


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
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = ()

    def __init__(self) -> None:
        self._s = MemoryColumns()
        self._live = 0
        self._max_local: dict[int, int] = {}  # instance id -> highest id counter seen
        self.embedding_dim: int | None = None  # of the first vector ever applied
        self._touches: dict[int, list[int]] = {}  # id -> recent access times (ACT-R trace)
        self.ignored = 0  # ops naming a missing or forgotten memory, or a duplicate put
        # The vector references of the checkpoint this organ was restored from (state 10).
        self.vector_refs: Any = None
        self._claim_mark: tuple[int, int | None] | None = (
            None  # the vector matrix before a replay's claims
        )
        # While this handle applies a record it appended itself, or replays records read
        # from the files: where the log holds their vectors, so they are kept as references,
        # not copies (log_place.py, D-088).
        self.placing: LogPlace | None = None

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
        if op_type == OpType.PutPayload and len(run) > 8:
            cols = PutColumns.from_puts(run)  # type: ignore[arg-type]
            self.apply_columns(log_place.columns_at(cols, run, self.placing))
        else:
            for op in run:
                self.apply(op)

    def reserve_puts(self, puts: int, vectors: int, dim: int) -> None:
        """A hint before replay applies ``puts`` puts carrying ``vectors`` vectors of
        width ``dim``: size the columns and the vector matrix once."""
        s = self._s
        s.grow(puts)
        s.map.reserve(len(s.map) + puts)
        if vectors and dim and self.placing is None:  # referenced vectors need no matrix rows
            s.reserve_vectors(vectors, dim)

    def references_replay(self) -> bool:
        """Whether a replay's vectors can be kept as references into the files it reads
        (then the replay gives this organ no vector sink: D-088)."""
        return self._s.can_reference()

    def vector_sink(self, expect: int) -> Callable[[int, int], npt.NDArray[np.float32] | None]:
        """For replay's put decoder: ``sink(m, dim)`` gives matrix rows to decode a
        run's m vectors into (or None: the decoder allocates its own), so that
        ``apply_columns`` of that run copies no vector. ``expect``: vectors this
        replay may bring at most. Call ``end_vector_sink`` when the replay ends."""
        s = self._s
        self._claim_mark = (s.nvec, s.dim)
        left = [expect]

        def sink(m: int, dim: int) -> npt.NDArray[np.float32] | None:
            view = s.claim_vectors(m, dim, max(left[0], m))
            left[0] = max(0, left[0] - m)
            return view

        return sink

    def end_vector_sink(self, *, applied: bool) -> None:
        """The replay is over; ``applied=False``: it applied nothing (its claims are given back)."""
        self._s.end_claims(None if applied else self._claim_mark)

    def apply_columns(self, cols: PutColumns) -> None:
        """Apply a run of puts given as columns: exactly ``apply_run(PutPayload, cols.ops())``
        (a put of a present id, or repeated in the run, is ignored: the first wins)."""
        n = len(cols)
        if not n:
            return
        s = self._s
        fresh = s.map.add(np.ascontiguousarray(cols.ids, np.uint64))
        k = int(np.count_nonzero(fresh))
        self.ignored += n - k
        if not k:
            return
        every = k == n
        sel = None if every else np.flatnonzero(fresh)

        def take(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            return a if sel is None else a[sel]

        start = s.grow(k)
        end = start + k
        c = s.c
        created = take(cols.created_ms)
        c["created"][start:end] = created
        c["written"][start:end] = take(cols.written_ms)
        c["confidence"][start:end] = take(cols.confidence)
        c["strength"][start:end] = take(cols.strength)
        s.new_rows(start, k, created)
        for name in LABELS:
            col = cols.labels[name]
            c[name][start:end] = s.labels[name].lut(col.values)[take(col.codes)]
        base = len(s.arena)
        off = cols.text_offsets
        if sel is None:
            s.arena += cols.text_arena
            s.text_off[start + 1 : end + 1] = off[1:] + base
        else:
            lo, hi = off[sel].tolist(), off[sel + 1].tolist()
            arena = cols.text_arena
            s.arena += b"".join(arena[a:b] for a, b in zip(lo, hi))
            s.text_off[start + 1 : end + 1] = base + np.cumsum(off[sel + 1] - off[sel])
        s.n = end
        self._live += k
        organ_row = np.arange(start, end, dtype=np.int64)
        if sel is not None:
            full = np.full(n, -1, np.int64)
            full[sel] = organ_row
            organ_row = full
        self._columns_vectors(cols, fresh, organ_row, every)
        for run_row, op in cols.extras.items():
            if fresh[run_row]:
                self._extras(int(organ_row[run_row]), op, in_matrix=False)
        ids = take(cols.ids)
        inst = ids >> _SHIFT
        lo_i, hi_i = int(inst.min()), int(inst.max())
        for i in [lo_i] if lo_i == hi_i else np.unique(inst).tolist():
            local = int((ids[inst == i] if lo_i != hi_i else ids).max() & _LOCAL)
            if local > self._max_local.get(i, 0):
                self._max_local[i] = local

    def _columns_vectors(
        self,
        cols: PutColumns,
        fresh: npt.NDArray[np.bool_],
        organ_row: npt.NDArray[np.int64],
        every: bool,
    ) -> None:
        s = self._s
        vrows = cols.vector_rows
        mat = cols.vectors
        claimed = s.take_claim(mat)  # the run's vectors already sit in the matrix, from this row
        at: npt.NDArray[np.int64] | None = None  # their matrix rows, when claimed
        if claimed is not None:
            at = claimed + np.arange(len(vrows), dtype=np.int64)
        if len(vrows) and not every:
            keep = fresh[vrows]
            vrows = vrows[keep]
            if at is not None:
                at = at[keep]
            else:
                mat = mat[keep]
        if self.embedding_dim is None:  # the first vector of the run, in run order
            first = (int(vrows[0]), 4 * int(mat.shape[1])) if len(vrows) else None
            for run_row, op in cols.extras.items():
                if (
                    op.embedding is not None
                    and fresh[run_row]
                    and (first is None or run_row < first[0])
                ):
                    first = (run_row, len(op.embedding))
            if first is not None:
                self.embedding_dim = first[1] // 4
        if not len(vrows):
            return
        rows = organ_row[vrows]
        if s.dim is None:
            s.dim = int(mat.shape[1])
            s.vecs = np.zeros((0, s.dim), np.float32)
        placed = self._placed_rows(cols, vrows if at is None else None, mat)
        if at is not None:
            s.c["vec"][rows] = at
        elif placed is not None:
            s.c["vec"][rows] = -2 - (placed + np.arange(len(rows), dtype=np.int64))
        elif mat.shape[1] == s.dim:
            s.c["vec"][rows] = s.add_vectors(mat) + np.arange(len(rows), dtype=np.int64)
        else:
            for row, vec in zip(rows.tolist(), mat):
                s.odd[row] = vec.astype("<f4").tobytes()

    def _placed_rows(
        self, cols: PutColumns, vrows: npt.NDArray[np.int64] | None, mat: npt.NDArray[np.float32]
    ) -> int | None:
        """The first base row of the run's vectors (``vrows``, in run order) added as
        references into the log, when ``placing`` is set (this handle appended the record,
        or replays records read from the files) and every one's place is known; None:
        they are copied (D-088)."""
        place, at = self.placing, cols.vector_at
        if place is None or at is None or vrows is None or not len(vrows):
            return None
        full = cols.vector_rows
        pick = None if len(vrows) == len(full) else np.searchsorted(full, vrows)
        rows_at = at if pick is None else at[pick]
        if bool(np.any(rows_at == NO_OFFSET)):
            return None
        dim = int(mat.shape[1])
        offsets = np.ascontiguousarray(rows_at, np.uint64)
        if cols.vector_segments is None:  # this handle's own record: one segment
            seg = np.zeros(len(offsets), np.uint32)
            return self._s.add_refs(place.root, (place.segment,), seg, offsets, dim)
        assert cols.vector_seg is not None  # the native decoder sets both
        seg = cols.vector_seg if pick is None else cols.vector_seg[pick]
        # a replayed segment is mapped for a run that brings enough of its rows (MAX_MAPS)
        return self._s.add_refs(
            place.root, cols.vector_segments, seg, offsets, dim, min_new=REPLAY_MAP_MIN
        )

    def _extras(self, row: int, op: ops.PutPayload, *, in_matrix: bool) -> None:
        s = self._s
        if op.tags:
            s.tags[row] = tuple(op.tags)
        if op.meta is not None:
            s.meta[row] = op.meta
        if op.artifacts:
            s.artifacts[row] = tuple(op.artifacts)
        if (
            op.embedding is not None
            and not in_matrix
            and int(s.c["vec"][row]) == -1
            and row not in s.odd
        ):
            s.set_vector(row, op.embedding, self.placing)

    def _put(self, op: ops.PutPayload) -> None:
        s = self._s
        mid = op.id
        row = s.map.add_one(mid)
        if row < 0:
            self.ignored += 1
            return
        s.grow(1)
        c = s.c
        c["created"][row] = c["updated"][row] = op.created_ms
        c["written"][row] = op.written_ms
        c["confidence"][row] = op.confidence
        c["strength"][row] = op.strength
        s.new_rows(row, 1, op.created_ms)
        labels = s.labels
        c["kind"][row] = labels["kind"].code(op.kind)
        c["realm"][row] = labels["realm"].code(op.realm)
        c["session"][row] = labels["session"].code(op.session)
        c["source_tool"][row] = labels["source_tool"].code(op.source_tool)
        c["harness"][row] = labels["harness"].code(op.harness)
        s.arena += op.text.encode()
        s.text_off[row + 1] = len(s.arena)
        s.n = row + 1
        self._live += 1
        inst, local = mid >> 32, mid & 0xFFFFFFFF
        if local > self._max_local.get(inst, 0):
            self._max_local[inst] = local
        if op.embedding is not None:
            if self.embedding_dim is None:
                self.embedding_dim = len(op.embedding) // 4
            s.set_vector(row, op.embedding, self.placing)
        if op.tags or op.meta is not None or op.artifacts:
            self._extras(row, op, in_matrix=True)

    apply_put = _put  # the Field's remember() path: one PutPayload, no dispatch

    def vectors_of(self, ids: Sequence[int]) -> tuple[list[int], npt.NDArray[np.float32]]:
        """(the ``ids`` live with a matrix vector, in order; those vectors as put, a copy)."""
        s = self._s
        if not ids or s.dim is None:
            return [], np.zeros((0, s.dim or 0), np.float32)
        arr = np.array(ids, np.uint64)
        rows = np.asarray(s.map.rows(arr), np.int64)
        have = rows >= 0
        safe = np.where(have, rows, 0)
        ok = have & ~s.c["dead"][safe] & (s.c["vec"][safe] != -1)
        rows = rows[ok]
        return arr[ok].tolist(), s.gather_vectors(rows)

    def _live_row(self, mid: int) -> int:
        """The row of a live memory, else -1 (and the op counts as ignored)."""
        row = int(self._s.map.row(mid))
        if row < 0 or self._s.c["dead"][row]:
            self.ignored += 1
            return -1
        return row

    def _delete(self, op: ops.DeleteMemory) -> None:
        row = self._live_row(op.id)
        if row >= 0:
            c = self._s.c
            c["dead"][row] = True
            c["deleted"][row] = op.at_ms
            self._live -= 1

    def _update_content(self, op: ops.UpdateMemoryContent) -> None:
        row = self._live_row(op.id)
        if row < 0:
            return
        s = self._s
        if op.text is not None:
            s.texts[row] = op.text
        if op.embedding is not None:
            s.set_vector(row, op.embedding, self.placing)
            if self.embedding_dim is None:
                self.embedding_dim = len(op.embedding) // 4
        if op.tags is not None:
            if op.tags:
                s.tags[row] = tuple(op.tags)
            else:
                s.tags.pop(row, None)
        if op.meta is not None:
            if row not in s.put_meta:
                s.put_meta[row] = s.meta.get(row)
            s.meta[row] = op.meta
        upd = s.c["updated"]
        upd[row] = max(upd[row], op.at_ms)

    def _update_state(self, op: ops.UpdateState) -> None:
        row = self._live_row(op.id)
        if row < 0:
            return
        c = self._s.c
        if op.strength is not None:
            c["strength"][row] = op.strength
        if op.confidence is not None:
            c["confidence"][row] = op.confidence
        if op.decay_rate is not None:
            c["decay"][row] = op.decay_rate
        if op.touch:
            c["last_access"][row] = max(c["last_access"][row], op.at_ms)
            c["access"][row] += 1
            trace = self._touches.setdefault(op.id, [])
            trace.append(op.at_ms)
            if len(trace) > MAX_TRACE:
                del trace[0]

    def _demote(self, op: ops.DemoteMemory) -> None:
        row = self._live_row(op.id)
        if row >= 0:
            self._s.c["tier"][row] = op.tier

    # ---- queries ------------------------------------------------------------------
    def __len__(self) -> int:
        return self._live

    @property
    def forgotten(self) -> int:
        return self._s.n - self._live

    def _row(self, mid: int) -> int:
        """The row of a live memory, else -1 (nothing counted)."""
        row = int(self._s.map.row(mid)) if 0 <= mid < 2**64 else -1
        return -1 if row < 0 or self._s.c["dead"][row] else row

    def is_live(self, mid: int) -> bool:
        return self._row(mid) >= 0

    def forgotten_memory(self, mid: int) -> Memory | None:
        """A forgotten memory as it was when forgotten (None if live or never put)."""
        row = int(self._s.map.row(mid)) if 0 <= mid < 2**64 else -1
        return self._memory(mid, row) if row >= 0 and self._s.c["dead"][row] else None

    def scoring_state(self, mid: int) -> tuple[str, int, float, float, int] | None:
        """(kind, created_ms, confidence, strength, tier) of a live memory, without
        building a Memory (recall scores many candidates and returns few)."""
        row = self._row(mid)
        if row < 0:
            return None
        s, c = self._s, self._s.c
        kind = s.label("kind", row)
        return (
            kind,
            int(c["created"][row]),
            float(c["confidence"][row]),
            float(c["strength"][row]),  # type: ignore[return-value]
            int(c["tier"][row]),
        )

    def scoring_states(self, ids: Sequence[int]) -> ScoringStates:
        """``scoring_state`` and ``access_times`` of many ids in one call, as columns."""
        s, c = self._s, self._s.c
        rows = s.map.rows(_id_array(ids))
        live = rows >= 0
        r = np.where(live, rows, 0)
        if s.n:
            live &= ~c["dead"][r]
        else:
            live[:] = False
        all_live = bool(live.all())

        def col(name: str, zero: Any) -> npt.NDArray[Any]:
            got = c[name][r] if s.n else np.zeros(len(r), c[name].dtype)
            return got if all_live else np.where(live, got, zero)

        created = col("created", 0)
        kinds = s.labels["kind"].objects()[c["kind"][r]] if s.n else np.empty(len(r), object)
        kind: list[str] = kinds.tolist()
        touches = self._touches
        created_l = created.tolist()
        if all_live:
            access = [(t, *tr) if (tr := touches.get(m)) else (t,) for m, t in zip(ids, created_l)]
        else:
            access = [()] * len(r)
            for pos in np.flatnonzero(live).tolist():
                trace = touches.get(ids[pos])
                t = created_l[pos]
                access[pos] = (t, *trace) if trace else (t,)
            for pos in np.flatnonzero(~live).tolist():
                kind[pos] = ""
        return ScoringStates(
            live=live,
            kind=kind,
            created_ms=created,
            confidence=col("confidence", 0.0),
            strength=col("strength", 0.0),
            tier=col("tier", 0),
            access_ms=access,
        )

    def recall_columns(self) -> tuple[tuple[Any, ...], list[str | None]]:
        """For the native recall tail (chitta/recall/native_tail.py): ``(map, dead, created,
        confidence, strength, tier, kind codes)`` as held (the native id -> row map and the
        columns, no copies; valid until the next change) and the kind label of each code."""
        s, c = self._s, self._s.c
        return (
            s.map,
            c["dead"],
            c["created"],
            c["confidence"],
            c["strength"],
            c["tier"],
            c["kind"],
        ), s.labels["kind"].values

    def touch_traces(
        self, ids: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
        """The recorded accesses of each of ``ids`` (``access_times`` without the creation
        time) as ``(offsets, flat times)``; None when none of them has any."""
        touches = self._touches
        if not touches:
            return None
        traces = [touches.get(m, ()) for m in ids.tolist()]
        if not any(traces):
            return None
        offsets = np.zeros(len(traces) + 1, np.int64)
        np.cumsum([len(t) for t in traces], out=offsets[1:])
        flat = np.fromiter((t for trace in traces for t in trace), np.int64, count=int(offsets[-1]))
        return offsets, flat

    def access_times(self, mid: int) -> tuple[int, ...]:
        """Creation time and the most recent accesses (at most MAX_TRACE), in ms."""
        row = int(self._s.map.row(mid)) if 0 <= mid < 2**64 else -1
        if row < 0:
            return ()
        return (int(self._s.c["created"][row]), *self._touches.get(mid, ()))

    def next_local_id(self, instance_id: int) -> int:
        return self._max_local.get(instance_id, 0) + 1

    def _live_rows(self) -> npt.NDArray[np.int64]:
        return np.flatnonzero(~self._s.c["dead"][: self._s.n])

    def live_ids(self) -> Iterator[int]:
        """Ids of live memories, in apply order."""
        s = self._s
        if self._live == s.n:
            return iter(s.map.ids().tolist())
        return iter(s.map.ids()[self._live_rows()].tolist())

    def written_after(self, ms: int | None, limit: int) -> list[tuple[int, int]]:
        """``(written ms, id)`` of up to ``limit`` live memories written after ``ms``
        (None: all), oldest first (ties by id). A memory without a written time counts
        from its creation."""
        s = self._s
        rows = self._live_rows()
        written = s.c["written"][rows]
        written = np.where(written == 0, s.c["created"][rows], written)
        ids = s.map.ids()[rows]
        if ms is not None:
            keep = written > ms
            written, ids = written[keep], ids[keep]
        order = np.lexsort((ids, written))[:limit]
        return list(zip(written[order].tolist(), ids[order].tolist()))

    def ids_since(self, row: int) -> list[int]:
        """Ids put at row ``row`` and after (rows only grow: a reader's catch-up)."""
        ids = self._s.map
        return [] if len(ids) <= row else ids.ids()[row:].tolist()

    def all_ids(self) -> list[int]:
        """Ids of every memory ever put (forgotten ones too), in apply order."""
        return self._s.map.ids().tolist()  # type: ignore[no-any-return]

    def nbytes(self) -> dict[str, int]:
        """Bytes held, by part: columns, texts (arena + changed), vectors, row map."""
        s = self._s
        return {
            "columns": sum(col.nbytes for col in s.c.values()) + s.text_off.nbytes,
            "texts": len(s.arena) + sum(len(t) for t in s.texts.values()),
            "vectors": s.vecs.nbytes + s.base.nbytes + sum(len(b) for b in s.odd.values()),
            "row_map": int(s.map.memory_bytes()),
        }

    def get(self, mid: int) -> Memory | None:
        row = self._row(mid)
        return None if row < 0 else self._memory(mid, row)

    def claim_rows(self) -> dict[int, tuple[tuple[str, ...], str | None, int]]:
        """id -> (artifact refs, ``meta["invalidated_by"]``, written ms) of every live
        memory with artifact refs or an invalidation (read by chitta/policies/code_trust.py).
        An invalidation is an UpdateMemoryContent's meta: only rows whose meta an update
        replaced are read (``put_meta`` holds those), not every row with meta."""
        s = self._s
        c, ids = s.c, s.map.ids()
        changed = (r for r in s.put_meta if "invalidated_by" in (s.meta.get(r) or {}))
        rows = set(s.artifacts) | set(changed)
        out: dict[int, tuple[tuple[str, ...], str | None, int]] = {}
        for row in sorted(rows):
            if c["dead"][row]:
                continue
            by = (s.meta.get(row) or {}).get("invalidated_by")
            written = int(c["written"][row]) or int(c["created"][row])
            out[int(ids[row])] = (
                s.artifacts.get(row, ()),
                None if by is None else str(by),
                written,
            )
        return out

    def live_id_array(self) -> npt.NDArray[np.uint64]:
        """The live memories' ids, in ``live_puts`` order."""
        return self._s.map.ids()[self._live_rows()]

    def ids_with_tags(self, tags: frozenset[str]) -> npt.NDArray[np.uint64]:
        """Sorted ids of the live memories carrying every tag of ``tags`` (a recall filter:
        one pass over the tagged rows)."""
        s = self._s
        dead = s.c["dead"]
        rows = [r for r, have in s.tags.items() if not dead[r] and tags.issubset(have)]
        if not rows:
            return np.zeros(0, np.uint64)
        return np.sort(s.map.ids()[np.array(rows, np.int64)]).astype(np.uint64)

    def updated_ms(self, ids: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """When each memory's content last changed (its put, or an UpdateMemoryContent); -1 for
        an id this organ never held. Caches of what a text says check against it."""
        s = self._s
        rows = s.map.rows(_id_array(ids))
        if not s.n:
            return np.full(len(rows), -1, np.int64)
        got = s.c["updated"][np.where(rows >= 0, rows, 0)].astype(np.int64)
        return np.where(rows >= 0, got, -1)

    def text(self, mid: int) -> str | None:
        """The current text of a live memory (None if not live)."""
        row = self._row(mid)
        return None if row < 0 else self._s.text(row)

    def memories(self, ids: Sequence[int]) -> list[Memory | None]:
        """``get`` of many ids in one call (None where not live)."""
        s = self._s
        c = s.c
        vecs = _matrix(s.vecs)
        base = s.base.native() if isinstance(s.base, MappedVectors) else _matrix(s.base)
        if vecs is None or base is None:  # a matrix the native builder cannot read in place
            return [self.get(m) for m in _id_array(ids).tolist()]
        # One native call (_ext/bind_memories_build.cc): the row lookups and the values _memory reads.
        return _core._build_memories(
            Memory,
            _MEMORY_SLOTS,
            ids,
            s.map,
            c["dead"],
            tuple(c[name] for name in _BUILD_COLUMNS),
            tuple((c[name], s.labels[name].values) for name in LABELS),
            s.arena,
            s.text_off,
            s.texts,
            s.tags,
            s.meta,
            s.artifacts,
            c["vec"],
            vecs,
            base,
            s.odd,
        )

    def _memory(self, mid: int, row: int) -> Memory:
        s = self._s
        c = s.c
        labels = s.labels
        meta = s.meta.get(row)
        created = int(c["created"][row])
        return memory_of(
            (
                int(mid),
                s.text(row),
                labels["kind"].values[c["kind"][row]],
                labels["realm"].values[c["realm"][row]],
                labels["session"].values[c["session"][row]],
                labels["source_tool"].values[c["source_tool"][row]],
                labels["harness"].values[c["harness"][row]],
                s.tags.get(row, ()),
                float(c["confidence"][row]),
                float(c["strength"][row]),
                float(c["decay"][row]),
                int(c["tier"][row]),
                created,
                int(c["updated"][row]),
                int(c["last_access"][row]),
                int(c["access"][row]),
                dict(meta) if meta is not None else None,
                s.vector(row),
                s.artifacts.get(row, ()),
                int(c["written"][row]) or created,
            )
        )

    # ---- checkpoints (chitta/field/checkpoint) ------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        """The organ contract's snapshot: the state map, vectors as ``vectors.emb``."""
        return memories_checkpoint.snapshot(self, ctx)

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        memories_checkpoint.restore(self, state, ctx)

    def stats(self) -> dict[str, Any]:
        return {"live": self._live, "ignored": self.ignored}

    def snapshot_columns(
        self,
    ) -> tuple[dict[str, Any], npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """This organ's state as a msgpack-able map (columns as little-endian bytes,
        the put texts as one arena), plus the current vector of every live memory
        in the vector matrix (ids, count x dim float32) for the vector sidecar.
        Other vectors (another width) stay in the map as ``odd_vectors``."""
        s = self._s
        state = s.state()
        live = self._live_rows()
        with_vec = live[s.c["vec"][live] != -1]
        ids = s.map.ids()
        dead = s.c["dead"]
        state.update(
            odd_vectors=[[int(ids[r]), blob] for r, blob in s.odd.items() if not dead[r]],
            live=self._live,
            max_local=[[k, v] for k, v in self._max_local.items()],
            embedding_dim=self.embedding_dim,
            touches=[[k, v] for k, v in self._touches.items()],
            ignored=self.ignored,
        )
        return state, np.ascontiguousarray(ids[with_vec]), s.gather_vectors(with_vec)

    def restore_columns(
        self, state: dict[str, Any], ids: npt.NDArray[np.uint64], vecs: Any
    ) -> None:
        """Load a snapshot into this (fresh) organ. Raises on a malformed map."""
        s = self._s
        s.load(state)
        s.adopt_base(ids, vecs)
        for mid, blob in state["odd_vectors"]:
            row = int(s.map.row(int(mid)))
            if row < 0:
                raise ValueError("odd_vectors names a memory the snapshot lacks")
            s.c["vec"][row] = -1
            s.odd[row] = bytes(blob)
        live = int(state["live"])
        if live != int(np.count_nonzero(~s.c["dead"][: s.n])):
            raise ValueError("memories: the live count does not match the columns")
        self._live = live
        self._max_local = {int(k): int(v) for k, v in state["max_local"]}
        self.embedding_dim = state["embedding_dim"]
        self._touches = {int(k): list(v) for k, v in state["touches"]}
        self.ignored = int(state["ignored"])

    def live_puts(self) -> tuple[list[int], list[ops.PutPayload], list[str]]:
        """Columns of every live memory, in order: ids, the puts that made them
        (without their vectors), their current texts."""
        s = self._s
        rows = self._live_rows()
        ids = s.map.ids()[rows].tolist()
        row_list = rows.tolist()
        c = s.c
        cols = {name: s.labels[name].objects()[c[name][rows]].tolist() for name in LABELS}
        created, written = c["created"][rows].tolist(), c["written"][rows].tolist()
        conf, strength = c["confidence"][rows].tolist(), c["strength"][rows].tolist()
        put_texts = s.put_texts(row_list)
        puts = []
        meta, put_meta, tags, artifacts = s.meta, s.put_meta, s.tags, s.artifacts
        for j, row in enumerate(row_list):
            puts.append(
                ops.PutPayload(
                    id=ids[j],
                    text=put_texts[j],
                    kind=cols["kind"][j],
                    created_ms=created[j],
                    realm=cols["realm"][j],
                    session=cols["session"][j],
                    source_tool=cols["source_tool"][j],
                    harness=cols["harness"][j],
                    tags=tags.get(row, ()),
                    confidence=conf[j],
                    strength=strength[j],
                    meta=put_meta[row] if row in put_meta else meta.get(row),
                    artifacts=artifacts.get(row, ()),
                    written_ms=written[j],
                )
            )
        texts = [s.texts.get(row, t) for row, t in zip(row_list, put_texts)]
        return ids, puts, texts
