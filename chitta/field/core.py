"""The field's core: the log, the organ registry, the clock and the lock.

:class:`FieldCore` owns what one open handle holds: the native segment log
(``chitta._core.SegmentLog``), the organs (built by :mod:`chitta.organs.registry`
and reached through its routes), the clock, the lock, the queue of plain puts
that ``remember()`` appends natively, and the recall engine over the organs.
Every write goes through :meth:`FieldCore.commit`: validated ops are encoded,
appended to this instance's segment, and only then routed to the organs that
handle their type. The feature modules of this package (write, read, recall,
lifecycle, maintain, checkpoint, vocab, replay) are functions over a core; the
:class:`~chitta.field.facade.Field` facade delegates to them.

What the lock guards: the organs' state and the core's counters (``applied``,
``unrouted``, the checkpoint marks). Everything that applies ops (commit's
routing, the pending-put run, replay) or reads several organs that must agree
(a recall's filters and lanes, a pass over the live memories) holds it. The
log's append itself runs outside it (the native log is safe across threads
and processes); so does embedding, which is the slow part of a write.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeGuard

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.encode.field_encoding import FieldEncoding
from chitta.errors import (
    ChittaError,
    ChittaIOError,
    ClosedError,
    InvalidArgument,
    LostWritesError,
    NotFound,
)
from chitta.field.field_lock import FieldLock
from chitta.field.recent_recalls import RecentRecalls
from chitta.ops import Op, OpType
from chitta.ops import checks as v
from chitta.ops.code_columns import CodeColumns
from chitta.ops.code_pack import logged_columns, packed_columns
from chitta.ops.put_columns import LABELS, LabelColumn, PutColumns
from chitta.organs import Organ, log_place, registry
from chitta.organs.encoder import EncoderOrgan
from chitta.organs.graph import GraphOrgan
from chitta.organs.memories import MemoriesOrgan
from chitta.organs.recall_index import RecallIndexOrgan
from chitta.organs.settings import SettingsOrgan
from chitta.recall.engine import RecallEngine, RecallSettings

_BATCH = int(OpType.Batch)
_PUT = int(OpType.PutPayload)
_CODE = int(OpType.UpdateSparseCode)
_CODE_U8 = int(OpType.UpdateSparseCodeU8)
PUT_COLUMNS_AT = 128  # a Batch's run of at least this many puts is applied as columns (D-032)
CODE_COLUMNS_AT = 64  # and of sparse codes (D-075)
# remember()'s plain path queues its puts natively (_core.PutQueue); at this
# many the queue calls FieldCore.apply_pending itself, so a handle that only
# writes stays bounded.
PENDING_LIMIT = 4096
_LABEL_NONE = (None,)
_KIND_DEFAULT = ("observation",)


class ColumnOrgan(Organ, Protocol):
    """A put organ that takes a run of puts as columns (the others get PutPayload ops)."""

    def apply_columns(self, cols: PutColumns) -> None: ...


class VectorSinkOrgan(ColumnOrgan, Protocol):
    """The column organ whose vector matrix replay decodes put runs into (no copy)."""

    def vector_sink(self, expect: int) -> Callable[[int, int], npt.NDArray[np.float32] | None]: ...
    def end_vector_sink(self, *, applied: bool) -> None: ...


class CodeOrgan(Organ, Protocol):
    """An organ that takes a run of sparse codes as arrays (CodeColumns)."""

    def apply_code_columns(self, codes: CodeColumns) -> None: ...


def takes_columns(organ: Organ) -> TypeGuard[ColumnOrgan]:
    return hasattr(organ, "apply_columns")


def has_vector_sink(organ: ColumnOrgan) -> TypeGuard[VectorSinkOrgan]:
    return hasattr(organ, "vector_sink")


def takes_code_columns(organ: Organ) -> TypeGuard[CodeOrgan]:
    return hasattr(organ, "apply_code_columns")


def queued_columns(
    ids: npt.NDArray[np.uint64],
    ms: npt.NDArray[np.int64],
    arena: bytes,
    offsets: npt.NDArray[np.int64],
) -> PutColumns:
    """A run of plain puts (what ``_core.PutQueue.take`` gives: ids, times, the
    UTF-8 texts back to back and their n + 1 offsets) as PutColumns: every other
    field at its default, created_ms = written_ms = ms."""
    n = len(ids)
    zeros = np.zeros(n, np.uint32)
    return PutColumns(
        ids=ids,
        created_ms=ms,
        written_ms=ms,
        confidence=np.ones(n, np.float64),
        strength=np.ones(n, np.float64),
        labels={
            name: LabelColumn(zeros, _KIND_DEFAULT if name == "kind" else _LABEL_NONE)
            for name in LABELS
        },
        text_arena=arena,
        text_offsets=offsets,
        vector_rows=np.zeros(0, np.int64),
        vectors=np.zeros((0, 0), np.float32),
        extras={},
    )


def pending_columns(run: Sequence[tuple[int, str, int]]) -> PutColumns:
    """Plain puts ``(id, text, ms)`` as one PutColumns (queued_columns from tuples)."""
    n = len(run)
    mids, texts, times = zip(*run) if n else ((), (), ())
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, n), out=offsets[1:])
    return queued_columns(
        np.array(mids, np.uint64), np.array(times, np.int64), b"".join(encoded), offsets
    )


def drainer(core: FieldCore) -> Callable[[], None]:
    """What the PutQueue calls when PENDING_LIMIT puts wait: the core's
    ``apply_pending``, held weakly (the queue must not keep its core alive)."""
    ref = weakref.ref(core)

    def drain() -> None:
        c = ref()
        if c is not None:
            c.apply_pending()

    return drain


class FieldCore:
    """One open handle's state and the commit path (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        instance_id: int,
        durability: str,
        create: bool,
        read_only: bool,
        salvage: bool,
        segment_bytes: int,
        clock: Callable[[], float] | None,
        recall_settings: RecallSettings | None,
    ) -> None:
        self.closed = True  # until the log is open
        self.path = root
        self.durability = durability
        self.buffered = durability == "buffered"  # a failed flush fails the handle
        self.salvage = salvage
        self.log = _core.SegmentLog(
            str(root),
            instance_id=instance_id,
            durability=durability,
            segment_bytes=segment_bytes,
            create=create,
            read_only=read_only,
            salvage=salvage,
        )
        self.closed = False
        self.read_only = read_only
        self.instance = int(self.log.instance_id)
        self.clock: Callable[[], float] = clock or time.time
        self.lock = FieldLock()  # exclusive for changes, shared for recalls (field_lock.py)
        self.recall_settings = recall_settings
        self.fresh_organs()
        # remember()'s plain path is one native call (chitta/field/write.py): it appends
        # and queues (id, ms, text) here; the organs take the queue as one run of
        # columns (apply_pending) before any read or other write, so every public
        # call sees its writes. It also holds this instance's id counter.
        self.pending_puts: _core.PutQueue = self.log.put_queue(
            clock=None if self.clock is time.time else self.clock, max_text_bytes=v.MAX_TEXT_BYTES
        )
        self.pending_puts.set_drain(drainer(self), PENDING_LIMIT)
        self.fast_put: Callable[[str], int | None] | None = None  # set once open and writable
        self.backlog: Any = None  # deferred.Backlog when texts get vectors in the background
        self.code_backlog: Any = None  # deferred_codes.CodeBacklog of a writable handle
        # every remember_many's sparse codes from the background coder, which codes as soon
        # as they wait (the daemon's field: chitta/field/deferred_codes.py)
        self.defer_codes = False
        self.encoding: FieldEncoding  # set by the facade once the organs are loaded
        self.embedded_writes = 0
        self.since_learning = 0  # embedded writes since this handle's last learning step
        self.recalls = RecentRecalls()  # recall ids for feedback (field/recent_recalls.py)
        self.learn_async = False  # learning steps off the writer's thread (field/learn_async.py)
        self.learn_resume_at = (
            0.0  # no background step before this time.monotonic() (its CPU share)
        )
        self.learner: threading.Thread | None = None  # the running background step, if any
        self.salvaged: list[dict[str, Any]] = []  # what salvage skipped, with where
        self.checkpoint_loaded: str | None = None  # the checkpoint this handle opened from
        self.checkpoint_applied = 0  # records the loaded checkpoint covers
        self.checkpoint_bytes = 0  # segment bytes it covers
        self.maintenance_runs: dict[
            str, int
        ] = {}  # "<organ>.<pass>" -> when this handle last ran it (ms)
        self.remote: Any = None  # the chitta.remote Replicator when opened with remote= (set by chitta/remote/attach.py)
        self._captures = threading.local()  # see captured_commits

    def fresh_organs(self) -> None:
        """Every registered organ, fresh (chitta/organs/registry.py), and the routes to them."""
        self.organs: list[Organ] = registry.build()
        self.registry = registry.Routes(self.organs)
        self.routes = (
            self.registry.table
        )  # op byte -> organs (a dict: the hot path looks it up per op)
        # The built-in organs the feature modules query, by name (never by import order).
        self.memories: MemoriesOrgan = self._builtin("memories", MemoriesOrgan)
        self.graph: GraphOrgan = self._builtin("graph", GraphOrgan)
        self.settings: SettingsOrgan = self._builtin("settings", SettingsOrgan)
        self.index: RecallIndexOrgan = self._builtin("recall_index", RecallIndexOrgan)
        self.encoder_organ: EncoderOrgan = self._builtin("encoder", EncoderOrgan)
        self.put_organs = self.routes[int(OpType.PutPayload)]
        # Organs that take a run of puts as columns (PutColumns); the others get PutPayload ops.
        self.column_organs: tuple[ColumnOrgan, ...] = tuple(
            o for o in self.put_organs if takes_columns(o)
        )
        self.op_organs: tuple[Organ, ...] = tuple(
            o for o in self.put_organs if not takes_columns(o)
        )
        # The organ whose vector matrix replay decodes put runs into (no copy when applied).
        self.vector_sink_organ: VectorSinkOrgan | None = next(
            (o for o in self.column_organs if has_vector_sink(o)), None
        )
        self.sink: Any = None  # during a replay: that organ's sink
        # Organs that take a run of sparse codes as arrays (CodeColumns): replay decodes those runs natively.
        self.code_organs: tuple[CodeOrgan, ...] = tuple(
            o for o in self.routes.get(int(OpType.UpdateSparseCode), ()) if takes_code_columns(o)
        )
        self.packed_code_organs: tuple[CodeOrgan, ...] = tuple(
            o for o in self.routes.get(int(OpType.UpdateSparseCodeU8), ()) if takes_code_columns(o)
        )
        # remember()'s direct path (chitta/field/write.py): one bound method per put organ.
        self.put_appliers: tuple[Callable[[ops.PutPayload], None], ...] = tuple(
            getattr(o, "apply_put", o.apply) for o in self.put_organs
        )
        self.engine = RecallEngine(
            self.memories, self.index, self.graph, settings=self.recall_settings
        )
        from chitta.policies.code_trust import staleness_hook

        self.engine.staleness = staleness_hook(self)  # the staleness factor (stale memories)
        from chitta.policies.code_lane import code_lane_hook

        self.engine.code_lane = code_lane_hook(self)  # memories about the symbols a query names
        from chitta.field.provenance import weights_hook

        # the provenance factor (open-weight writers, candidates: chitta/field/provenance.py)
        self.engine.provenance = weights_hook(self)
        from chitta.recall.graph_lane import graph_lane_hook

        self.engine.graph_lane = graph_lane_hook(self)  # PageRank from the entities a query names
        self.applied = 0
        self.unrouted = 0  # valid ops no organ of this version keeps state for
        # the same per op type (checkpoint state 7); None when a state-6 checkpoint did not say
        self.unrouted_types: dict[int, int] | None = {}
        self.vocab_saved: Any = (
            None  # the checkpoint's word table (vocab.emb) until the vocabulary takes it
        )

    def _builtin(self, name: str, kind: type[Any]) -> Any:
        organ = self.registry.organ(name)
        if not isinstance(organ, kind):
            raise InvalidArgument(
                f"organ {name!r} is a {type(organ).__name__}, not chitta's {kind.__name__}"
            )
        return organ

    @property
    def instance_id(self) -> int | None:
        """This handle's writer instance (None when read-only)."""
        return self.log.instance_id or None

    # ---- before every call: open, writable, this handle's queued puts applied --------
    def check_open(self) -> None:
        if self.closed:
            raise ClosedError("the field is closed")
        if self.buffered and self.log.writer_failed:
            raise self.writer_failure()
        if self.pending_puts:
            self.apply_pending()

    def check_writable(self) -> None:
        if self.closed:
            raise ClosedError("the field is closed")
        if self.buffered and self.log.writer_failed:
            raise self.writer_failure()
        if self.read_only:
            raise InvalidArgument("the field was opened read_only")
        if self.pending_puts:
            self.apply_pending()

    @contextlib.contextmanager
    def lost_writes(self) -> Iterator[None]:
        """Around a log call: a buffered writer's failure becomes a LostWritesError."""
        try:
            yield
        except ChittaIOError as exc:
            lost = self.lost_error(exc)
            if lost is not None:
                raise lost from exc
            raise

    def lost_error(self, exc: ChittaIOError) -> LostWritesError | None:
        """For a failed log call of a buffered writer that failed for good: the
        LostWritesError naming what it lost (None otherwise: raise ``exc`` itself)."""
        if self.buffered and not isinstance(exc, LostWritesError) and self.log.writer_failed:
            return self.writer_failure(exc)
        return None

    def writer_failure(self, cause: BaseException | None = None) -> LostWritesError:
        """The error of a buffered writer that failed for good: a LostWritesError naming
        the acknowledged memories the failed flush lost."""
        lost = self.log.lost_records()
        ids = sorted({mid for _, code, payload in lost for mid in _put_ids(code, payload)})
        err = LostWritesError(
            f"a buffered flush failed and lost {len(lost)} acknowledged records"
            f" ({len(ids)} memories; .lost_ids names them): {cause or 'see the first error'}."
            " Free space or fix the disk, reopen the field and write them again"
        )
        err.lost_ids = tuple(ids)
        err.lost_seqnos = tuple(seqno for seqno, _, _ in lost)
        return err

    def apply_pending(self) -> None:
        """Apply the puts remember() queued, in the order queued, as one run
        (the organs' batch path). Threads may queue more meanwhile: ``take``
        moves out what is queued at that moment, the rest waits for the next run."""
        with self.lock:
            taken = self.pending_puts.take()
            if taken is None:
                return
            cols = queued_columns(*taken)
            if self.backlog is not None:  # their vectors come from the background embedder
                self.backlog.ids.extend(cols.ids.tolist())
            for organ in self.column_organs:
                organ.apply_columns(cols)
            if self.op_organs:
                puts: list[Op] = list(cols.ops())
                for op_organ in self.op_organs:
                    op_organ.apply_run(OpType.PutPayload, puts)
            self.applied += len(cols)

    def route(self, op: Op) -> None:
        organs = self.routes.get(int(op.op_type))
        if organs is None:
            self.unrouted += 1
            if self.unrouted_types is not None:
                code = int(op.op_type)
                self.unrouted_types[code] = self.unrouted_types.get(code, 0) + 1
        else:
            for organ in organs:
                organ.apply(op)
        self.applied += 1

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # ---- committing: the one write pipeline ------------------------------------------
    @contextlib.contextmanager
    def captured_commits(self) -> Iterator[list[Op]]:
        """Inside, this thread's :meth:`commit` calls append nothing: their ops are
        collected in the list yielded (returned seqno 0), for the caller to commit
        later, e.g. a daemon grouping many calls' ops into one record
        (chitta/server/group.py). Other threads commit as usual."""
        captured: list[Op] = []
        self._captures.ops = captured
        try:
            yield captured
        finally:
            self._captures.ops = None

    def commit(
        self, op: Op, inner: Sequence[Op] | None = None, codes: CodeColumns | None = None
    ) -> int:
        """Append ``op`` (a Batch lands whole) and apply it; returns its seqno.
        ``inner``: a Batch's ops as built (applied as they are, not decoded again);
        ``codes``: the same ops as arrays when they are all sparse codes (commit_codes)."""
        captured = getattr(self._captures, "ops", None)
        if captured is not None:
            captured.append(op)
            return 0
        code = int(op.op_type)
        payload = ops.encode(op)
        if len(payload) > _core.MAX_PAYLOAD:
            raise InvalidArgument(
                f"the change encodes to {len(payload)} bytes; split it (limit {_core.MAX_PAYLOAD})"
            )
        # Vectors this record carries are kept by the memories organ as references to
        # where the log holds them (D-088): the record's place is asked for. Not in
        # buffered mode, where the bytes reach the file only at the next flush.
        blobs = (
            []
            if codes is not None or self.buffered
            else log_place.embeddings([op] if code != _BATCH else inner or ())
        )
        place: log_place.LogPlace | None = None
        try:
            if blobs:
                seqno, segment, payload_at = self.log.append_placed(code, payload)
                place = log_place.place(self.path, segment, payload_at, payload, blobs)
            else:
                seqno = self.log.append(code, payload)
        except ChittaIOError as exc:
            lost = self.lost_error(exc)
            if lost is not None:
                raise lost from exc
            raise
        with self.lock:
            if self.pending_puts:
                self.apply_pending()
            if codes is not None and self._codes_as_columns():
                for organ in self.code_organs:
                    organ.apply_code_columns(codes)
                self.applied += len(codes)
                return seqno
            self.memories.placing = place
            try:
                if code == _BATCH:
                    self.route_runs(op.unpack() if inner is None else inner, place)  # type: ignore[attr-defined]
                else:
                    self.route(op)
            finally:
                self.memories.placing = None
        return seqno

    def _codes_as_columns(self) -> bool:
        """Whether every organ of UpdateSparseCode takes them as columns (as replay does)."""
        return len(self.code_organs) == len(self.routes.get(_CODE, ()))

    def commit_codes(self, codes: CodeColumns) -> None:
        """Log ``codes`` (one op per row) as one atomic Batch, and hand the columns, not the
        ops, to the organs: a background coder's step of 1,024 codes leaves arrays in the
        code store, not 1,024 tuples of 64 Python ints (D-075). What is logged is packed
        (op 68 where a code packs) and the columns handed on are the values the logged ops
        apply, as replay applies them (D-074)."""
        group, applied = logged_columns(codes)
        if len(group) == 1:
            self.commit(group[0], None, applied)
        elif group:
            self.commit(ops.Batch.of(*group), group, applied)

    def route_runs(self, group: Sequence[Op], place: log_place.LogPlace | None = None) -> None:
        """A Batch's ops, in order, as runs of one op type (what replay does with the same
        record): a long run of puts becomes one PutColumns for the column organs.
        ``place``: where the log holds the record's vectors, when this handle appended it."""
        i, n = 0, len(group)
        while i < n:
            t = type(group[i])
            j = i + 1
            while j < n and type(group[j]) is t:
                j += 1
            if j - i == 1:
                self.route(group[i])
            else:
                run = list(group[i:j])
                code = int(run[0].op_type)
                if (
                    code in (_CODE, _CODE_U8)
                    and j - i >= CODE_COLUMNS_AT
                    and self._codes_as_columns()
                ):
                    # a run of codes (a background embedder's group, a re-encoding pass)
                    # leaves arrays in the code store, as replay's runs do (D-075); a packed
                    # run as the values its ops apply (D-074)
                    if code == _CODE:
                        width = len(run[0].features)  # type: ignore[attr-defined]
                        codes, left = CodeColumns.from_ops(run, width)  # type: ignore[arg-type]
                        whole = not left
                    else:
                        width = len(run[0].levels)  # type: ignore[attr-defined]
                        codes, skipped = packed_columns(run, width)  # type: ignore[arg-type]
                        whole = not skipped
                    if whole:
                        for code_organ in self.code_organs:
                            code_organ.apply_code_columns(codes)
                        self.applied += len(run)
                        i = j
                        continue
                if code == _PUT and j - i >= PUT_COLUMNS_AT:
                    cols = PutColumns.from_puts(run)  # type: ignore[arg-type]
                    cols = log_place.columns_at(cols, run, place)
                    for organ in self.column_organs:
                        organ.apply_columns(cols)
                    for op_organ in self.op_organs:
                        op_organ.apply_run(OpType.PutPayload, run)
                    self.applied += len(run)
                else:
                    organs = self.routes.get(code)
                    if organs is None:
                        for op in run:
                            self.route(op)
                    else:
                        for each in organs:
                            each.apply_run(OpType(code), run)
                        self.applied += len(run)
            i = j

    def commit_put(self, op: ops.PutPayload, payload: bytes) -> None:
        """The pipeline's direct path for one plain put (no vector, no codes): append
        its encoded ``payload`` and hand it to the put organs' ``apply_put``."""
        try:
            self.log.append(int(OpType.PutPayload), payload)
        except ChittaIOError as exc:
            lost = self.lost_error(exc)
            if lost is not None:
                raise lost from exc
            raise
        with self.lock:
            if self.pending_puts:
                self.apply_pending()  # keep this handle's puts in call order
            for apply in self.put_appliers:
                apply(op)
            self.applied += 1

    def commit_group(self, group: Sequence[Op]) -> None:
        """Commit ``group``: one op as itself, several as one atomic Batch."""
        if len(group) == 1:
            self.commit(group[0])
        elif group:
            self.commit(ops.Batch.of(*group), group)

    def new_id(self) -> int:
        new_id: int = self.pending_puts.new_id()  # ChittaError once all 2**32 are used
        return new_id

    def live_id(self, id: object) -> int:
        mid = v.memory_id(id)
        if not self.memories.is_live(mid):
            raise NotFound(f"no memory with id {mid}")
        return mid

    def replay(self) -> int:
        """Apply what the log holds beyond this handle's read positions (chitta/field/replay.py)."""
        from chitta.field import replay

        return replay.replay(self)

    def close(self) -> None:
        if self.closed:
            return
        learner = self.learner  # a background learning step commits before the log closes
        if learner is not None and learner is not threading.current_thread():
            learner.join()
        self.closed = True
        self.fast_put = None
        with self.lost_writes():
            self.log.close()


def _put_ids(code: int, payload: bytes) -> list[int]:
    """The ids of the memories a (lost) record put: a PutPayload's, or a Batch's puts'."""
    try:
        op = ops.decode(code, payload)
    except ChittaError:  # not decodable here (a newer op type): it put no memory we know of
        return []
    inner = op.unpack() if code == _BATCH else [op]  # type: ignore[attr-defined]
    return [o.id for o in inner if type(o) is ops.PutPayload]
