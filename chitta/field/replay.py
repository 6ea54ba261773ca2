"""Field replay: the log's new records into the organs, in runs.

``read_new`` gives records merged by (seqno, instance); ``op_runs`` splits them
into runs of one op type. A run of puts is decoded natively into columns
(``PutColumns``) for the organs that take them, a run of sparse codes into
arrays (``CodeColumns``; packed codes, op 68, are dequantised there exactly as
their op's ``activations`` does), every other run into ops. A Batch record is unpacked
natively into a read result of its own and its inner runs are decoded the same
way, so batched writes (``remember_many``, imports) take the column paths too;
the general decoder handles what the native readers do not take, and reports
damage located at the record (raised, or skipped and listed under salvage).
Everything is decoded before any organ is touched: nothing is half-applied.
"""

from __future__ import annotations

import gc
from typing import Any

from chitta import _core, free_memory, ops
from chitta.errors import ChittaError, CorruptionError, InvalidArgument
from chitta.field import sessions, vocab
from chitta.field.core import FieldCore
from chitta.ops import Op, OpType
from chitta.ops.code_columns import decode_code_run, decode_packed_run
from chitta.organs.log_place import LogPlace

_PUT, _CODE, _BATCH = int(OpType.PutPayload), int(OpType.UpdateSparseCode), int(OpType.Batch)
_CODE8 = int(OpType.UpdateSparseCodeU8)
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
    if len(cols.ids) and int(cols.ids.max()) == ops.RESERVED_ID:
        raise CorruptionError("a PutPayload id is 2**64-1, reserved as the indexes' padding id")


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


def refresh(core: FieldCore) -> int:
    """``Field.refresh`` (its docstring is the reference)."""
    core.check_open()
    if core.remote is not None:  # other machines' new chunks first (chitta/remote)
        core.remote.pull_quietly()
    elif not core.pending_puts and not core.log.may_have_new():
        # nothing of this handle's waiting and no segment grew: no lock, nothing to replay
        vocab.sync_words(core)
        return 0
    with core.lock:
        n = core.replay()
        if n:  # other writers' memories: session contexts are seeded again (field/sessions.py)
            sessions.forget_table(core)
    vocab.sync_words(core)  # their words join the expansion table now, not at a recall
    return n


def replay(core: FieldCore) -> int:
    if core.pending_puts:
        core.apply_pending()  # this handle's own writes come first
    # Replay allocates a container per op and frees none: the cyclic GC's
    # generation passes would rescan them all (~15% of open at 1M ops).
    gc_was_on = gc.isenabled()
    gc.disable()
    before = core.applied
    try:
        return _replay_all(core)
    finally:
        if gc_was_on:
            gc.enable()
        if core.applied - before >= free_memory.BULK:
            free_memory.give_back()  # the decoded runs (vectors, containers) are gone now


def _replay_all(core: FieldCore) -> int:
    result = core.log.read_new(commit=False)  # positions move only once applied
    for damage in result.damages:
        core.salvaged.append(dict(damage))
    # Batches unpacked first (no copies: the inner records point into the
    # Batch's payload), so the puts to come are counted before decoding.
    units: list[
        tuple[int, int, int, Any]
    ] = []  # (op_type, start, end, None) or (BATCH, index, 0, inner)
    for op_type, start, end in result.op_runs():
        if op_type == _BATCH:
            units.extend((_BATCH, i, 0, _core._unpack_batch(result, i)) for i in range(start, end))
        else:
            units.append((op_type, start, end, None))
    puts = sum(_count_puts(unit) for unit in units)
    # Vectors read from the files stay there: the memories organ keeps references (D-088)
    # and claims no matrix rows; otherwise the decoder writes them into its matrix.
    place = LogPlace(core.path, "", {}) if puts and core.memories.references_replay() else None
    sink_organ = core.vector_sink_organ if puts and place is None else None
    core.sink = sink_organ.vector_sink(puts) if sink_organ is not None else None
    core.memories.placing = place
    applied = False
    try:
        decoded: list[Decoded] = []
        for op_type, start, end, inner in units:
            if op_type == _BATCH:
                decoded.extend(_decode_batch(core, result, start, inner))
            else:
                decoded.append(_decode_run(core, result, op_type, start, end))
        # Everything decoded: only now touch the organs (nothing half-applied).
        _reserve_for(core, decoded)
        applied = True
        for op_type, run in decoded:
            _apply_decoded(core, op_type, run)
    finally:
        core.sink = None
        core.memories.placing = None
        if sink_organ is not None:
            sink_organ.end_vector_sink(applied=applied)
    core.log.commit_read()
    return len(result)


def _decode_run(core: FieldCore, result: Any, op_type: int, start: int, end: int) -> Decoded:
    """Records ``[start, end)`` of one op type; a record the run decoders refuse
    sends the run to the per-record path (which raises or salvages, located)."""
    try:
        return op_type, _decode_plain(core, result, op_type, start, end)
    except ChittaError:
        return op_type, ("ops", _decode_each(core, result, op_type, start, end))


def _decode_plain(
    core: FieldCore, result: Any, op_type: int, start: int, end: int
) -> tuple[Any, ...]:
    """A run decoded whole; ChittaError if any record of it is damaged."""
    if op_type == _PUT:
        cols = ops.decode_put_columns(result, start, end, core.sink)
        _check_put_columns(cols)
        puts = ops.decode_records(result, op_type, start, end) if core.op_organs else None
        return ("cols", cols, _validated(puts) if puts is not None else None)
    if op_type == _CODE and core.code_organs:
        codes, others = decode_code_run(result, start, end, _code_width(core))
        if not others:
            return ("codes", codes)
        # A code of another feature count in the run: the whole run goes per op, in log order.
    if op_type == _CODE8 and core.packed_code_organs:
        packed, rest = decode_packed_run(result, start, end, _code_width(core))
        if not rest:
            return ("codes", packed)
        # another width or a record the native reader refused: the run per op (validated)
    return ("ops", _validated(ops.decode_records(result, op_type, start, end)))


def _decode_batch(core: FieldCore, result: Any, index: int, inner: Any) -> list[Decoded]:
    """The inner runs of Batch record ``index`` (``inner``: it unpacked, or None)
    (the Batch whole, or, damaged and salvaged, nothing)."""
    try:
        if inner is None:  # not the plain shape: the general decoder decides
            batch: Any = ops.decode(_BATCH, result.payload(index))
            return [(int(op.op_type), ("ops", _validated([op]))) for op in batch.unpack()]
        return [(t, _decode_plain(core, inner, t, s, e)) for t, s, e in inner.op_runs()]
    except ChittaError as exc:
        _skip_or_raise(core, exc, result, index)
        return []


def _code_width(core: FieldCore) -> int:
    """Features per sparse code of this field (codes of another count take the op path)."""
    return int(core.index.code_width)


def _decode_each(core: FieldCore, result: Any, op_type: int, start: int, end: int) -> list[Op]:
    out: list[Op] = []
    for i in range(start, end):
        try:
            out.extend(_validated([ops.decode(op_type, result.payload(i))]))
        except ChittaError as exc:
            _skip_or_raise(core, exc, result, i)
    return out


def _reserve_for(core: FieldCore, decoded: list[Decoded]) -> None:
    """Tell the column organs how many puts and vectors are coming (one allocation
    each instead of growing run by run: at 1M memories, copies of 1.5 GB)."""
    runs = [run[1] for _, run in decoded if run[0] == "cols"]
    if len(runs) < 2:
        return
    puts = sum(len(cols) for cols in runs)
    widths = [cols.vectors.shape[1] for cols in runs if len(cols.vector_rows)]
    dim = max(set(widths), key=widths.count) if widths else 0
    vectors = sum(
        len(cols.vector_rows)
        for cols in runs
        if len(cols.vector_rows) and cols.vectors.shape[1] == dim
    )
    for organ in core.column_organs:
        reserve = getattr(organ, "reserve_puts", None)
        if reserve is not None:
            reserve(puts, vectors, int(dim))


def _apply_decoded(core: FieldCore, op_type: int, run: tuple[Any, ...]) -> None:
    kind = run[0]
    if kind == "cols":
        _apply_put_columns(core, run[1], run[2])
    elif kind == "codes":
        for organ in core.code_organs if op_type == _CODE else core.packed_code_organs:
            organ.apply_code_columns(run[1])
        core.applied += len(run[1])
    else:
        _apply_ops(core, op_type, run[1])


def _apply_ops(core: FieldCore, op_type: int, run: list[Op]) -> None:
    organs = core.routes.get(op_type)
    if organs is None:
        core.unrouted += len(run)
        if core.unrouted_types is not None:
            core.unrouted_types[op_type] = core.unrouted_types.get(op_type, 0) + len(run)
    else:
        for organ in organs:
            organ.apply_run(OpType(op_type), run)
    core.applied += len(run)


def _apply_put_columns(core: FieldCore, cols: Any, puts: list[Op] | None) -> None:
    for organ in core.column_organs:
        organ.apply_columns(cols)
    for op_organ in core.op_organs:
        op_organ.apply_run(OpType.PutPayload, puts if puts is not None else cols.ops())
    core.applied += len(cols)


def _located(core: FieldCore, exc: ChittaError, result: Any, index: int) -> ChittaError:
    segment = result.segments[int(result.segment_index[index])]
    offset = int(result.offsets[index])
    kind = type(exc) if isinstance(exc, CorruptionError) else CorruptionError
    located = kind(f"{exc} (segment {segment}, offset {offset}; open with salvage=True to skip it)")
    located.segment = segment
    located.offset = offset
    return located


def _skip_or_raise(core: FieldCore, exc: ChittaError, result: Any, index: int) -> None:
    located = _located(core, exc, result, index)
    if not core.salvage:
        raise located from exc
    core.salvaged.append(
        {
            "segment": located.segment,  # type: ignore[attr-defined]
            "offset": located.offset,  # type: ignore[attr-defined]
            "bytes": len(result.payload(index)) + _RECORD_HEAD,
            "kind": type(exc).__name__,
            "detail": str(exc),
        }
    )
