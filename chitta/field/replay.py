"""Field replay: the log's new records into the organs, in runs.

``read_new`` gives records merged by (seqno, instance); ``op_runs`` splits them
into runs of one op type. A run of puts is decoded natively into columns
(``PutColumns``) for the organs that take them, a run of sparse codes into
arrays (``CodeColumns``), every other run into ops. A Batch record is unpacked
natively into a read result of its own and its inner runs are decoded the same
way, so batched writes (``remember_many``, imports) take the column paths too;
the general decoder handles what the native readers do not take, and reports
damage located at the record (raised, or skipped and listed under salvage).
Everything is decoded before any organ is touched: nothing is half-applied.
"""

from __future__ import annotations

import gc
from typing import Any

from chitta import _core, ops
from chitta.ops.code_columns import decode_code_run
from chitta.errors import ChittaError, CorruptionError, InvalidArgument
from chitta.field.state import FieldState
from chitta.ops import Op, OpType

_PUT, _CODE, _BATCH = int(OpType.PutPayload), int(OpType.UpdateSparseCode), int(OpType.Batch)
_RECORD_HEAD = 21  # bytes before a record's payload (FORMAT.md, segment 2.0; 17 in 1.0)
_KINDS = ops.PutPayload.enums["kind"]


def _validated(run: list[Op]) -> list[Op]:
    """Ops that decode but break a rule of their op (FORMAT.md §5, invalid
    payload) are damage: a CorruptionError, located by the caller."""
    for op in run:
        try:
            ops.validate(op)
        except InvalidArgument as exc:
            raise CorruptionError(f"payload decodes but is invalid: {exc}") from exc
    return run


def _check_put_columns(cols: Any) -> None:
    """The column decoder's label tables hold only documented kinds (the
    per-record path then names the record that does not)."""
    kinds = cols.labels["kind"].values
    if any(k is not None and k not in _KINDS for k in kinds):
        raise CorruptionError("a PutPayload kind is not one of the documented kinds")


def _count_puts(unit: tuple[int, int, int, Any]) -> int:
    op_type, start, end, inner = unit
    if op_type == _PUT:
        return end - start
    if op_type == _BATCH and inner is not None:
        return sum(e - s for t, s, e in inner.op_runs() if t == _PUT)
    return 0


# A decoded run: (op_type, what its organs take). Kinds of the second item:
# ("cols", PutColumns, ops or None), ("codes", CodeColumns), ("ops", [op, ...]).
Decoded = tuple[int, tuple[Any, ...]]


class ReplayMixin(FieldState):
    def refresh(self) -> int:
        """Apply what other instances appended since the last look. Returns records read."""
        self._check_open()
        if self._remote is not None:  # other machines' new chunks first (chitta/remote)
            self._remote.pull_quietly()
        with self._lock:
            n = self._replay()
        self._vocab_sync()  # their words join the expansion table now, not at a recall
        return n

    def _replay(self) -> int:
        if self._pending_puts:
            self._apply_pending()  # this handle's own writes come first
        # Replay allocates a container per op and frees none: the cyclic GC's
        # generation passes would rescan them all (~15% of open at 1M ops).
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            return self._replay_all()
        finally:
            if gc_was_on:
                gc.enable()

    def _replay_all(self) -> int:
        result = self._log.read_new(commit=False)  # positions move only once applied
        for damage in result.damages:
            self.salvaged.append(dict(damage))
        # Batches unpacked first (no copies: the inner records point into the
        # Batch's payload), so the puts to come are counted before decoding.
        units: list[tuple[int, int, int, Any]] = []  # (op_type, start, end, None) or (BATCH, index, 0, inner)
        for op_type, start, end in result.op_runs():
            if op_type == _BATCH:
                units.extend((_BATCH, i, 0, _core._unpack_batch(result, i)) for i in range(start, end))
            else:
                units.append((op_type, start, end, None))
        puts = sum(_count_puts(unit) for unit in units)
        sink_organ = self._vector_sink_organ if puts else None
        self._sink = sink_organ.vector_sink(puts) if sink_organ is not None else None
        applied = False
        try:
            decoded: list[Decoded] = []
            for op_type, start, end, inner in units:
                if op_type == _BATCH:
                    decoded.extend(self._decode_batch(result, start, inner))
                else:
                    decoded.append(self._decode_run(result, op_type, start, end))
            # Everything decoded: only now touch the organs (nothing half-applied).
            self._reserve_for(decoded)
            applied = True
            for op_type, run in decoded:
                self._apply_decoded(op_type, run)
        finally:
            self._sink = None
            if sink_organ is not None:
                sink_organ.end_vector_sink(applied=applied)
        self._log.commit_read()
        return len(result)

    # ---- decoding ---------------------------------------------------------------------
    def _decode_run(self, result: Any, op_type: int, start: int, end: int) -> Decoded:
        """Records ``[start, end)`` of one op type; a record the run decoders refuse
        sends the run to the per-record path (which raises or salvages, located)."""
        try:
            return op_type, self._decode_plain(result, op_type, start, end)
        except ChittaError:
            return op_type, ("ops", self._decode_each(result, op_type, start, end))

    def _decode_plain(self, result: Any, op_type: int, start: int, end: int) -> tuple[Any, ...]:
        """A run decoded whole; ChittaError if any record of it is damaged."""
        if op_type == _PUT:
            cols = ops.decode_put_columns(result, start, end, self._sink)
            _check_put_columns(cols)
            puts = ops.decode_records(result, op_type, start, end) if self._op_organs else None
            return ("cols", cols, _validated(puts) if puts is not None else None)
        if op_type == _CODE and self._code_organs:
            codes, others = decode_code_run(result, start, end, self._code_width())
            if not others:
                return ("codes", codes)
            # A code of another feature count in the run: the whole run goes per op, in log order.
        return ("ops", _validated(ops.decode_records(result, op_type, start, end)))

    def _decode_batch(self, result: Any, index: int, inner: Any) -> list[Decoded]:
        """The inner runs of Batch record ``index`` (``inner``: it unpacked, or None)
        (the Batch whole, or, damaged and salvaged, nothing)."""
        try:
            if inner is None:  # not the plain shape: the general decoder decides
                batch: Any = ops.decode(_BATCH, result.payload(index))
                return [(int(op.op_type), ("ops", _validated([op]))) for op in batch.unpack()]
            return [(t, self._decode_plain(inner, t, s, e)) for t, s, e in inner.op_runs()]
        except ChittaError as exc:
            self._skip_or_raise(exc, result, index)
            return []

    def _code_width(self) -> int:
        """Features per sparse code of this field (codes of another count take the op path)."""
        return int(self._index.code_width)

    def _decode_each(self, result: Any, op_type: int, start: int, end: int) -> list[Op]:
        out: list[Op] = []
        for i in range(start, end):
            try:
                out.extend(_validated([ops.decode(op_type, result.payload(i))]))
            except ChittaError as exc:
                self._skip_or_raise(exc, result, i)
        return out

    # ---- applying ---------------------------------------------------------------------
    def _reserve_for(self, decoded: list[Decoded]) -> None:
        """Tell the column organs how many puts and vectors are coming (one allocation
        each instead of growing run by run: at 1M memories, copies of 1.5 GB)."""
        runs = [run[1] for _, run in decoded if run[0] == "cols"]
        if len(runs) < 2:
            return
        puts = sum(len(cols) for cols in runs)
        widths = [cols.vectors.shape[1] for cols in runs if len(cols.vector_rows)]
        dim = max(set(widths), key=widths.count) if widths else 0
        vectors = sum(len(cols.vector_rows) for cols in runs if len(cols.vector_rows) and cols.vectors.shape[1] == dim)
        for organ in self._column_organs:
            reserve = getattr(organ, "reserve_puts", None)
            if reserve is not None:
                reserve(puts, vectors, int(dim))

    def _apply_decoded(self, op_type: int, run: tuple[Any, ...]) -> None:
        kind = run[0]
        if kind == "cols":
            self._apply_put_columns(run[1], run[2])
        elif kind == "codes":
            for organ in self._code_organs:
                organ.apply_code_columns(run[1])
            self._applied += len(run[1])
        else:
            self._apply_ops(op_type, run[1])

    def _apply_ops(self, op_type: int, run: list[Op]) -> None:
        organs = self._routes.get(op_type)
        if organs is None:
            self._unrouted += len(run)
        else:
            for organ in organs:
                organ.apply_run(OpType(op_type), run)
        self._applied += len(run)

    def _apply_put_columns(self, cols: Any, puts: list[Op] | None) -> None:
        for organ in self._column_organs:
            organ.apply_columns(cols)
        for op_organ in self._op_organs:
            op_organ.apply_run(OpType.PutPayload, puts if puts is not None else cols.ops())
        self._applied += len(cols)

    # ---- damage ---------------------------------------------------------------------
    def _located(self, exc: ChittaError, result: Any, index: int) -> ChittaError:
        segment = result.segments[int(result.segment_index[index])]
        offset = int(result.offsets[index])
        kind = type(exc) if isinstance(exc, CorruptionError) else CorruptionError
        located = kind(f"{exc} (segment {segment}, offset {offset}; open with salvage=True "
                       "to skip it)")
        located.segment = segment
        located.offset = offset
        return located

    def _skip_or_raise(self, exc: ChittaError, result: Any, index: int) -> None:
        located = self._located(exc, result, index)
        if not self._salvage:
            raise located from exc
        self.salvaged.append(
            {
                "segment": located.segment,  # type: ignore[attr-defined]
                "offset": located.offset,  # type: ignore[attr-defined]
                "bytes": len(result.payload(index)) + _RECORD_HEAD,
                "kind": type(exc).__name__,
                "detail": str(exc),
            }
        )
