"""Typed ops: the op type codes, their payload schemas, and the payload codec.

Every state change in a field is one op, appended to the writer's segment as
``[op_type u8][payload]`` before it is applied. A payload is a msgpack array
of the op's fields in declaration order (``docs/OPS.md`` is the normative
table and states the evolution rules). This module is plain data and codec:
no I/O, and no validation beyond types; :func:`validate` is a helper callers
(the ``Field``) use before they append.

Decoding never returns a struct with wrong field types: a payload that does
not match its schema raises :class:`~chitta.errors.CorruptionError`, an
unknown op type :class:`~chitta.errors.UnknownOpType`.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Mapping
from typing import Any, ClassVar, TypeAlias

import msgspec
import numpy as np
import numpy.typing as npt

from chitta.errors import CorruptionError, InvalidArgument, UnknownOpType
from chitta.ops.base import I64, U32, U64, OpBase, OpType
from chitta.ops.code import (
    SYMBOL_KINDS,
    AddSymCallEdge,
    ClearProject,
    RemoveSymbol,
    RemoveSymCallEdge,
    UpdateSymbolDescription,
    UpsertCodeFile,
    UpsertSymbol,
)
from chitta.ops.curated import CURATED_EVENTS, CURATED_PROVENANCE, CuratedEvent
from chitta.ops.events import (
    ANALYTICS_EVENTS,
    BRANCH_EVENTS,
    PREDICTOR_EVENTS,
    SESSION_EVENTS,
    SYMBOL_EVENTS,
    TASK_EVENTS,
    TASK_KINDS,
    THEME_EVENTS,
    TRANSCRIPT_EVENTS,
    TRIGGER_EVENTS,
    USER_MODEL_EVENTS,
    USER_MODEL_KINDS,
    AnalyticsEvent,
    BranchEvent,
    PredictorEvent,
    SessionEvent,
    TaskEvent,
    ThemeEvent,
    TranscriptEvent,
    TriggerEvent,
    UserModelEvent,
)
from chitta.ops.field_config import CONFIG_KEYS, ConfigureField
from chitta.ops.knowledge import (
    AddTriplet,
    AssertFact,
    InvalidateTriplet,
    RetractFact,
    UpsertArtifact,
)
from chitta.ops.learning import (
    DEBT_STATUSES,
    WISDOM_STAGES,
    AttachDebtEvidence,
    FactorDelta,
    RecordFeedback,
    RecordSurprise,
    RegisterDebt,
    UpdateDebt,
    UpdateScorerModel,
    UpdateSourceWeight,
    UpdateSparseEncoder,
    UpdateSurpriseCredit,
    UpdateWisdomLifecycle,
    UpsertWisdomCandidate,
)
from chitta.ops.memory import (
    EDGE_KINDS,
    MEMORY_KINDS,
    AddAssocEdge,
    DeleteMemory,
    DemoteMemory,
    PutPayload,
    TrainPQ,
    UpdateMemoryContent,
    UpdateResidualPQ,
    UpdateSparseCode,
    UpdateSparseCodeU8,
    UpdateState,
)
from chitta.ops.provenance import (
    PROVENANCE_EVENTS,
    PROVENANCES,
    WITNESS_SIGNALS,
    ProvenanceEvent,
)

RESERVED_ID = 2**64 - 1
"""The one memory id no put may carry: the native indexes pad their answers with it."""

Op: TypeAlias = OpBase
"""Any op payload (every schema derives from :class:`OpBase`)."""


class Batch(OpBase, frozen=True, kw_only=True, array_like=True):
    """A group of ops applied whole or not at all (one record on disk).

    ``ops`` holds ``(op_type, encoded payload)`` pairs, each payload a complete
    msgpack value, so a reader can skip what it does not need. A Batch never
    contains a Batch. Build one with :meth:`Batch.of`; read it with
    :meth:`Batch.unpack`.
    """

    op_type: ClassVar[OpType] = OpType.Batch

    ops: tuple[tuple[int, msgspec.Raw], ...]

    @classmethod
    def of(cls, *ops: Op) -> Batch:
        """Encode ``ops`` into one Batch. Raises InvalidArgument for a nested or empty batch."""
        if not ops:
            raise InvalidArgument("a Batch needs at least one op")
        items: list[tuple[int, msgspec.Raw]] = []
        for op in ops:
            if isinstance(op, Batch):
                raise InvalidArgument("a Batch cannot contain a Batch")
            items.append((int(op.op_type), msgspec.Raw(encode(op))))
        return cls(ops=tuple(items))

    def unpack(self) -> list[Op]:
        """Decode the inner ops, in order.

        Raises CorruptionError for a nested Batch or a damaged inner payload,
        UnknownOpType for an inner op type this version does not know.
        """
        out: list[Op] = []
        for index, (code, raw) in enumerate(self.ops):
            if code == OpType.Batch:
                raise CorruptionError(
                    f"Batch item {index} is itself a Batch (nesting is forbidden)"
                )
            out.append(decode(code, raw))
        return out


OP_CLASSES: dict[OpType, type[OpBase]] = {
    cls.op_type: cls
    for cls in (
        PutPayload,
        UpdateState,
        DeleteMemory,
        AddAssocEdge,
        UpsertArtifact,
        AddTriplet,
        InvalidateTriplet,
        UpsertSymbol,
        RemoveSymbol,
        AddSymCallEdge,
        RemoveSymCallEdge,
        UpsertCodeFile,
        UpdateSparseCode,
        UpdateSparseCodeU8,
        DemoteMemory,
        TrainPQ,
        UpdateResidualPQ,
        SessionEvent,
        TranscriptEvent,
        TaskEvent,
        UserModelEvent,
        ThemeEvent,
        AnalyticsEvent,
        ClearProject,
        UpdateSymbolDescription,
        UpdateMemoryContent,
        AssertFact,
        RetractFact,
        BranchEvent,
        TriggerEvent,
        PredictorEvent,
        RecordSurprise,
        RegisterDebt,
        UpdateDebt,
        UpdateSourceWeight,
        RecordFeedback,
        UpdateSurpriseCredit,
        UpsertWisdomCandidate,
        UpdateWisdomLifecycle,
        UpdateScorerModel,
        AttachDebtEvidence,
        CuratedEvent,
        Batch,
        ConfigureField,
        UpdateSparseEncoder,
        ProvenanceEvent,
    )
}
"""Payload class of every known op type."""

# "deterministic" sorts dict keys (``meta``, ``payload``), so equal ops always
# encode to equal bytes. Struct fields keep their declared order.
_ENCODER = msgspec.msgpack.Encoder(order="deterministic")
_DECODERS: dict[int, msgspec.msgpack.Decoder[Any]] = {
    code: msgspec.msgpack.Decoder(cls) for code, cls in OP_CLASSES.items()
}


def _run_decoder(cls: type[OpBase]) -> msgspec.msgpack.Decoder[Any]:
    return msgspec.msgpack.Decoder(list[cls])  # type: ignore[valid-type]


_RUN_DECODERS: dict[int, msgspec.msgpack.Decoder[Any]] = {
    code: _run_decoder(cls) for code, cls in OP_CLASSES.items()
}
_RAW_LIST = msgspec.msgpack.Decoder(list[msgspec.Raw])


def _type_name(op_type: int) -> str:
    try:
        return f"{OpType(op_type).name} ({op_type})"
    except ValueError:
        return f"op type {op_type}"


def _op_name(op_type: int) -> str | None:
    try:
        return OpType(op_type).name
    except ValueError:
        return None


def _unknown(op_type: int) -> UnknownOpType:
    return UnknownOpType(f"unknown op type {op_type}: not known to this version of chitta")


def encode(op: Op) -> bytes:
    """Encode an op's payload (without the op type byte) as msgpack.

    Raises InvalidArgument when ``op`` is not an op or holds a value msgpack
    cannot carry (an int above 2**64-1, an unsupported object in ``meta``).
    """
    if not isinstance(op, OpBase):
        raise InvalidArgument(f"not an op: {type(op).__name__}")
    try:
        return _ENCODER.encode(op)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
        raise InvalidArgument(f"cannot encode {type(op).__name__}: {exc}") from exc


def decode(op_type: int, payload: bytes | bytearray | memoryview | msgspec.Raw) -> Op:
    """Decode one payload of ``op_type``.

    Fields missing at the end (an older writer) take their defaults; extra
    trailing fields (a newer writer) are dropped.
    """
    decoder = _DECODERS.get(op_type)
    if decoder is None:
        raise _unknown(op_type)
    try:
        op: Op = decoder.decode(payload)
    except msgspec.DecodeError as exc:
        raise CorruptionError(f"corrupt {_type_name(op_type)} payload: {exc}") from exc
    return op


def decode_run(op_type: int, framed: bytes | bytearray | memoryview) -> list[Op]:
    """Decode ``n`` payloads of one op type at once.

    ``framed`` is a msgpack array header for ``n`` followed by the ``n``
    payloads back to back. When the one-call path fails, each record is
    decoded on its own so the error names the record that is damaged.
    """
    decoder = _RUN_DECODERS.get(op_type)
    if decoder is None:
        raise _unknown(op_type)
    try:
        ops: list[Op] = decoder.decode(framed)
        return ops
    except msgspec.DecodeError as exc:
        first_error = exc
    try:
        raws = _RAW_LIST.decode(framed)
    except msgspec.DecodeError as exc:
        raise CorruptionError(
            f"corrupt run of {_type_name(op_type)} payloads: {first_error}"
        ) from exc
    out: list[Op] = []
    for index, raw in enumerate(raws):
        try:
            out.append(decode(op_type, raw))
        except CorruptionError as exc:
            raise CorruptionError(f"record {index} of a run: {exc}") from exc
    return out


def decode_records(result: Any, op_type: int, start: int, end: int) -> list[Op]:
    """Decode records ``[start, end)`` of a ``SegmentLog.read_new()`` result,
    all of ``op_type``.

    A run of PutPayloads is built natively (``ReadResult.decode_puts``: no
    framing copy, equal short strings shared); the records it does not take
    (a meta map, an unusual encoding, damage) and every other op type go
    through msgspec, which raises CorruptionError for a damaged payload.
    """
    if op_type == OpType.PutPayload:
        run: list[Op]
        run, fallback = result.decode_puts(start, end, PutPayload)
        for i in fallback:
            run[i - start] = decode(op_type, result.payload(i))
        return run
    return decode_run(op_type, result.framed(start, end))


def decode_put_columns(result: Any, start: int, end: int, sink: Any = None) -> Any:
    """Records ``[start, end)`` of a ``read_new()`` result, all PutPayloads, as a
    :class:`chitta.ops.put_columns.PutColumns` (``same_as`` the one ``from_puts`` makes
    of ``decode_records``). Built natively (``_core.decode_put_columns``): no
    Python object per plain record. Records the native parser does not take go
    through :func:`decode`, so a damaged one raises the same CorruptionError.
    ``sink(m, dim)`` may give the float32 matrix the m vectors are written into
    (it becomes ``vectors``; anything else and the decoder allocates its own)."""
    from chitta import _core
    from chitta.ops.put_columns import LABELS, LabelColumn, PutColumns

    def fallback(i: int) -> Op:
        return decode(OpType.PutPayload, result.payload(i))

    (
        ids,
        created,
        written,
        confidence,
        strength,
        codes,
        values,
        arena,
        offsets,
        vector_rows,
        vectors,
        extras,
        vector_seg,
        vector_at,
    ) = _core.decode_put_columns(result, start, end, fallback, sink)
    return PutColumns(
        ids=ids,
        created_ms=created,
        written_ms=written,
        confidence=confidence,
        strength=strength,
        labels={name: LabelColumn(codes[k], values[k]) for k, name in enumerate(LABELS)},
        text_arena=arena,
        text_offsets=offsets,
        vector_rows=vector_rows,
        vectors=vectors,
        extras=extras,
        vector_seg=vector_seg,
        vector_at=vector_at,
        vector_segments=tuple(result.segments),
    )


def validate(op: Op) -> None:
    """Check what the schema types cannot: enum fields hold documented values,
    float32 byte fields are whole floats, sparse activations match features,
    an encoder update's rows and atoms agree with its shape, and a Batch holds decodable, non-nested ops. Raises InvalidArgument.
    """
    name = type(op).__name__
    if isinstance(op, PutPayload) and op.id == RESERVED_ID:
        raise InvalidArgument("PutPayload.id 2**64-1 is reserved (the indexes' padding id)")
    for field, allowed in op.enums.items():
        value = getattr(op, field)
        if value is not None and value not in allowed:
            raise InvalidArgument(f"{name}.{field}={value!r} is not one of {sorted(allowed)}")
    for field in ("embedding", "centroid", "codebooks"):
        blob = getattr(op, field, None)
        if blob is not None and len(blob) % 4:
            raise InvalidArgument(f"{name}.{field} is {len(blob)} bytes, not whole float32s")
    if isinstance(op, UpdateSparseCode) and len(op.activations) != 4 * len(op.features):
        raise InvalidArgument(
            f"UpdateSparseCode has {len(op.features)} features but "
            f"{len(op.activations)} activation bytes"
        )
    if isinstance(op, UpdateSparseCodeU8):
        _validate_packed_code(op)
    if isinstance(op, UpdateSparseEncoder):
        _validate_sparse_encoder(op)
    if isinstance(op, Batch):
        try:
            inner = op.unpack()
        except CorruptionError as exc:
            raise InvalidArgument(f"invalid Batch: {exc}") from exc
        for item in inner:
            validate(item)


def _validate_packed_code(op: UpdateSparseCodeU8) -> None:
    if len(op.feature_deltas) != 2 * len(op.levels):
        raise InvalidArgument(
            f"UpdateSparseCodeU8 has {len(op.levels)} levels but "
            f"{len(op.feature_deltas)} feature_deltas bytes (want two per level)"
        )
    if any(d < 1 for d in np.frombuffer(op.feature_deltas, "<u2")[1:].tolist()):
        raise InvalidArgument("UpdateSparseCodeU8 feature ids must be ascending and unique")
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.float32(op.scale)
    if not (np.isfinite(scale) and scale >= 0):
        raise InvalidArgument(
            f"UpdateSparseCodeU8.scale={op.scale!r} is negative or not a finite float32"
        )


def _validate_sparse_encoder(op: UpdateSparseEncoder) -> None:
    if op.dim < 1 or op.n_features < 1 or not 1 <= op.active <= op.n_features:
        raise InvalidArgument(
            f"UpdateSparseEncoder shape is invalid: dim={op.dim}, "
            f"n_features={op.n_features}, active={op.active}"
        )
    if op.version == 0 and (op.rows or op.atoms):
        raise InvalidArgument("UpdateSparseEncoder version 0 (the initial op) carries no rows")
    rows = op.rows
    if any(r >= op.n_features for r in rows):
        raise InvalidArgument(f"UpdateSparseEncoder rows must be < n_features={op.n_features}")
    if any(b <= a for a, b in itertools.pairwise(rows)):
        raise InvalidArgument("UpdateSparseEncoder rows must be ascending and unique")
    if len(op.atoms) != 4 * len(rows) * op.dim:
        raise InvalidArgument(
            f"UpdateSparseEncoder has {len(rows)} rows of dim {op.dim} but "
            f"{len(op.atoms)} atom bytes (want {4 * len(rows) * op.dim})"
        )
    if op.thresholds and (op.version == 0 or len(op.thresholds) != 4 * op.n_features):
        raise InvalidArgument(
            f"UpdateSparseEncoder thresholds are {len(op.thresholds)} bytes; want none, or "
            f"{4 * op.n_features} (one float32 per atom) on a version >= 1 op"
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, msgspec.Struct):
        return {f: _jsonable(getattr(value, f)) for f in value.__struct_fields__}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, msgspec.msgpack.Ext):
        return {"ext": value.code, "data": _jsonable(value.data)}
    return value


def op_to_dict(op: Op) -> dict[str, Any]:
    """Field name -> JSON-friendly value, in field order (for ``chitta dump``).

    Bytes become base64 strings, tuples lists. A Batch's ``ops`` become
    ``{"op_type", "op", "fields"}`` dicts of the decoded inner ops (``"raw"``,
    base64, where an inner op does not decode).
    """
    if isinstance(op, Batch):
        items: list[dict[str, Any]] = []
        for code, raw in op.ops:
            item: dict[str, Any] = {"op_type": code, "op": _op_name(code)}
            try:
                if code == OpType.Batch:
                    raise CorruptionError("nested Batch")
                item["fields"] = op_to_dict(decode(code, raw))
            except CorruptionError:
                item["raw"] = _jsonable(bytes(raw))
            items.append(item)
        return {"ops": items}
    out: dict[str, Any] = _jsonable(op)
    return out


def f32_bytes(vector: npt.ArrayLike) -> bytes:
    """A vector as little-endian float32 bytes (the embedding field format)."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def f32_array(blob: bytes) -> npt.NDArray[np.float32]:
    """Little-endian float32 bytes as a read-only float32 array."""
    if len(blob) % 4:
        raise InvalidArgument(f"{len(blob)} bytes are not whole float32s")
    return np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)


__all__ = [
    "ANALYTICS_EVENTS",
    "BRANCH_EVENTS",
    "CONFIG_KEYS",
    "CURATED_EVENTS",
    "CURATED_PROVENANCE",
    "DEBT_STATUSES",
    "EDGE_KINDS",
    "I64",
    "MEMORY_KINDS",
    "OP_CLASSES",
    "PREDICTOR_EVENTS",
    "PROVENANCES",
    "PROVENANCE_EVENTS",
    "RESERVED_ID",
    "SESSION_EVENTS",
    "SYMBOL_EVENTS",
    "SYMBOL_KINDS",
    "TASK_EVENTS",
    "TASK_KINDS",
    "THEME_EVENTS",
    "TRANSCRIPT_EVENTS",
    "TRIGGER_EVENTS",
    "U32",
    "U64",
    "USER_MODEL_EVENTS",
    "USER_MODEL_KINDS",
    "WISDOM_STAGES",
    "WITNESS_SIGNALS",
    "AddAssocEdge",
    "AddSymCallEdge",
    "AddTriplet",
    "AnalyticsEvent",
    "AssertFact",
    "AttachDebtEvidence",
    "Batch",
    "BranchEvent",
    "ClearProject",
    "ConfigureField",
    "CuratedEvent",
    "DeleteMemory",
    "DemoteMemory",
    "FactorDelta",
    "InvalidateTriplet",
    "Op",
    "OpBase",
    "OpType",
    "PredictorEvent",
    "ProvenanceEvent",
    "PutPayload",
    "RecordFeedback",
    "RecordSurprise",
    "RegisterDebt",
    "RemoveSymCallEdge",
    "RemoveSymbol",
    "RetractFact",
    "SessionEvent",
    "TaskEvent",
    "ThemeEvent",
    "TrainPQ",
    "TranscriptEvent",
    "TriggerEvent",
    "UpdateDebt",
    "UpdateMemoryContent",
    "UpdateResidualPQ",
    "UpdateScorerModel",
    "UpdateSourceWeight",
    "UpdateSparseCode",
    "UpdateSparseCodeU8",
    "UpdateSparseEncoder",
    "UpdateState",
    "UpdateSurpriseCredit",
    "UpdateSymbolDescription",
    "UpdateWisdomLifecycle",
    "UpsertArtifact",
    "UpsertCodeFile",
    "UpsertSymbol",
    "UpsertWisdomCandidate",
    "UserModelEvent",
    "decode",
    "decode_put_columns",
    "decode_records",
    "decode_run",
    "encode",
    "f32_array",
    "f32_bytes",
    "op_to_dict",
    "validate",
]
