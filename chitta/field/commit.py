"""Field commits: an op through the log into the organs, and the queue of
plain puts that ``remember()`` appends natively.

A mixin of :class:`chitta.field.Field`. ``_commit`` appends one record (several
ops go as one atomic Batch) and only then routes its ops to the organs that
handle them. ``remember()``'s plain path queues ``(id, ms, text)`` in a
``_core.PutQueue``; every read or other write of the handle first applies that
queue as one run of columns (``_apply_pending``), so each public call sees its
writes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.ops import checks as v
from chitta.errors import ClosedError, InvalidArgument, NotFound
from chitta.field.state import FieldState
from chitta.ops import Op, OpType
from chitta.ops.put_columns import LABELS, LabelColumn, PutColumns

if TYPE_CHECKING:
    from chitta.field import Field

_BATCH = int(OpType.Batch)
# remember()'s plain path queues its puts natively (_core.PutQueue); at this
# many the queue calls Field._apply_pending itself, so a handle that only
# writes stays bounded.
PENDING_LIMIT = 4096
_LABEL_NONE = (None,)
_KIND_DEFAULT = ("observation",)


def queued_columns(
    ids: npt.NDArray[np.uint64], ms: npt.NDArray[np.int64], arena: bytes, offsets: npt.NDArray[np.int64]
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
        labels={name: LabelColumn(zeros, _KIND_DEFAULT if name == "kind" else _LABEL_NONE) for name in LABELS},
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
    return queued_columns(np.array(mids, np.uint64), np.array(times, np.int64), b"".join(encoded), offsets)


def drainer(field: Field) -> Callable[[], None]:
    """What the PutQueue calls when PENDING_LIMIT puts wait: the field's
    ``_apply_pending``, held weakly (the queue must not keep its field alive)."""
    ref = weakref.ref(field)

    def drain() -> None:
        f = ref()
        if f is not None:
            f._apply_pending()

    return drain


class CommitMixin(FieldState):
    """Checks, commits and routing of Field (the state they use: chitta/field/state.py)."""

    # ---- before every call: open, writable, this handle's queued puts applied --------
    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the field is closed")
        if self._pending_puts:
            self._apply_pending()

    def _check_writable(self) -> None:
        if self._closed:
            raise ClosedError("the field is closed")
        if self._read_only:
            raise InvalidArgument("the field was opened read_only")
        if self._pending_puts:
            self._apply_pending()

    def _apply_pending(self) -> None:
        """Apply the puts remember() queued, in the order queued, as one run
        (the organs' batch path). Threads may queue more meanwhile: ``take``
        moves out what is queued at that moment, the rest waits for the next run."""
        with self._lock:
            taken = self._pending_puts.take()
            if taken is None:
                return
            cols = queued_columns(*taken)
            for organ in self._column_organs:
                organ.apply_columns(cols)
            if self._op_organs:
                puts: list[Op] = list(cols.ops())
                for op_organ in self._op_organs:
                    op_organ.apply_run(OpType.PutPayload, puts)
            self._applied += len(cols)

    def _route(self, op: Op) -> None:
        organs = self._routes.get(int(op.op_type))
        if organs is None:
            self._unrouted += 1
        else:
            for organ in organs:
                organ.apply(op)
        self._applied += 1

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    # ---- committing ---------------------------------------------------------------
    def _commit(self, op: Op) -> int:
        code = int(op.op_type)
        payload = ops.encode(op)
        if len(payload) > _core.MAX_PAYLOAD:
            raise InvalidArgument(f"the change encodes to {len(payload)} bytes; split it (limit {_core.MAX_PAYLOAD})")
        seqno: int = self._log.append(code, payload)
        with self._lock:
            if self._pending_puts:
                self._apply_pending()
            if code == _BATCH:
                for inner in op.unpack():  # type: ignore[attr-defined]
                    self._route(inner)
            else:
                self._route(op)
        return seqno

    def _commit_group(self, group: Sequence[Op]) -> None:
        if group:
            self._commit(group[0] if len(group) == 1 else ops.Batch.of(*group))

    def _new_id(self) -> int:
        new_id: int = self._pending_puts.new_id()  # ChittaError once all 2**32 are used
        return new_id

    def _live_id(self, id: object) -> int:
        mid = v.memory_id(id)
        if not self._memories.is_live(mid):
            raise NotFound(f"no memory with id {mid}")
        return mid

    # ---- the log ----------------------------------------------------------------------
    def flush(self) -> None:
        """Push buffered records to the OS (matters for ``durability="buffered"``)."""
        self._check_open()
        self._log.flush()

    def sync(self) -> None:
        """Make everything this instance wrote durable on disk now."""
        self._check_open()
        self._log.sync()
