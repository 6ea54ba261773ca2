"""Tests of chitta.ops: the op table, every schema's round trip, schema
evolution in both directions, and every way a payload can be bad (Batch,
decode_run, op_to_dict and validate: test_ops_batch.py; the samples: _op_samples.py)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from _op_samples import PLAIN_CLASSES, SAMPLES, plain_ops
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta import errors, ops
from chitta.ops import OP_CLASSES, Batch, OpType, decode, decode_run, encode

# The seed's Op table, copied by hand (name -> byte), plus chitta's own codes:
# Batch (64) and UpdateSparseEncoder (65).
SEED_TABLE = {
    "PutPayload": 0,
    "UpdateState": 1,
    "DeleteMemory": 2,
    "AddAssocEdge": 3,
    "UpsertArtifact": 4,
    "AddTriplet": 5,
    "InvalidateTriplet": 6,
    "UpsertSymbol": 7,
    "RemoveSymbol": 8,
    "AddSymCallEdge": 9,
    "RemoveSymCallEdge": 10,
    "UpsertCodeFile": 11,
    "UpdateSparseCode": 12,
    "DemoteMemory": 13,
    "TrainPQ": 14,
    "UpdateResidualPQ": 15,
    "SessionEvent": 16,
    "TranscriptEvent": 17,
    "TaskEvent": 18,
    "UserModelEvent": 19,
    "ThemeEvent": 20,
    "AnalyticsEvent": 21,
    "ClearProject": 22,
    "UpdateSymbolDescription": 23,
    "UpdateMemoryContent": 24,
    "AssertFact": 25,
    "RetractFact": 26,
    "BranchEvent": 27,
    "TriggerEvent": 28,
    "PredictorEvent": 29,
    "RecordSurprise": 39,
    "RegisterDebt": 40,
    "UpdateDebt": 41,
    "UpdateSourceWeight": 42,
    "RecordFeedback": 43,
    "UpdateSurpriseCredit": 44,
    "UpsertWisdomCandidate": 45,
    "UpdateWisdomLifecycle": 46,
    "UpdateScorerModel": 47,
    "AttachDebtEvidence": 48,
}

# chitta's own codes beside the seed's table (docs/OPS.md).
CHITTA_CODES = {
    "CuratedEvent": 49,
    "Batch": 64,
    "UpdateSparseEncoder": 65,
    "ConfigureField": 66,
    "ProvenanceEvent": 67,
    "UpdateSparseCodeU8": 68,
}

UNKNOWN_CODES = [*range(30, 39), 50, 63, 69, 128, 200, 255, -1, 256]


# ---------------------------------------------------------------- the table


def test_op_type_table_matches_seed() -> None:
    assert {t.name: t.value for t in OpType} == {**SEED_TABLE, **CHITTA_CODES}


def test_codes_30_to_38_are_unassigned() -> None:
    assert not {t.value for t in OpType} & set(range(30, 39))


def test_every_op_type_has_a_payload_class() -> None:
    assert set(OP_CLASSES) == set(OpType)
    for code, cls in OP_CLASSES.items():
        assert cls.op_type is code
        assert cls.__name__ == code.name


@pytest.mark.parametrize("cls", list(OP_CLASSES.values()), ids=lambda c: c.__name__)
def test_payload_classes_are_frozen_positional_structs(cls: type[ops.OpBase]) -> None:
    config = cls.__struct_config__
    assert config.frozen and config.array_like and not config.forbid_unknown_fields
    required = [f for f in msgspec.structs.fields(cls) if f.required]
    with pytest.raises(TypeError):  # keyword-only
        cls(*range(len(required) or 1))
    # required fields come first: evolution appends optional ones only
    seen_optional = False
    for f in msgspec.structs.fields(cls):
        seen_optional |= not f.required
        assert not (seen_optional and f.required), (
            f"{cls.__name__}.{f.name} after an optional field"
        )


def _schema(cls: type[Any]) -> list[tuple[str, Any]]:
    return [(f.name, "REQUIRED" if f.required else f.default) for f in msgspec.structs.fields(cls)]


def test_required_schemas_are_exact() -> None:
    assert _schema(ops.PutPayload) == [
        ("id", "REQUIRED"),
        ("text", "REQUIRED"),
        ("kind", "observation"),
        ("created_ms", 0),
        ("realm", None),
        ("session", None),
        ("source_tool", None),
        ("harness", None),
        ("tags", ()),
        ("confidence", 1.0),
        ("strength", 1.0),
        ("embedding", None),
        ("meta", None),
        ("artifacts", ()),
        ("written_ms", 0),
    ]
    assert _schema(ops.UpdateState) == [
        ("id", "REQUIRED"),
        ("at_ms", "REQUIRED"),
        ("strength", None),
        ("confidence", None),
        ("decay_rate", None),
        ("touch", False),
    ]
    assert _schema(ops.DeleteMemory) == [("id", "REQUIRED"), ("at_ms", "REQUIRED")]
    assert _schema(ops.UpdateMemoryContent) == [
        ("id", "REQUIRED"),
        ("at_ms", "REQUIRED"),
        ("text", None),
        ("embedding", None),
        ("tags", None),
        ("meta", None),
    ]
    assert _schema(ops.AddAssocEdge) == [
        ("src", "REQUIRED"),
        ("dst", "REQUIRED"),
        ("edge", "REQUIRED"),
        ("weight", 1.0),
        ("at_ms", 0),
    ]
    assert _schema(ops.DemoteMemory) == [
        ("id", "REQUIRED"),
        ("tier", "REQUIRED"),
        ("at_ms", "REQUIRED"),
    ]
    assert _schema(ops.UpdateSparseCode) == [
        ("id", "REQUIRED"),
        ("features", "REQUIRED"),
        ("activations", "REQUIRED"),
        ("encoder_version", 0),
    ]
    assert _schema(Batch) == [("ops", "REQUIRED")]
    assert {"DerivedFrom", "SameSession", "CoRetrieved", "Contradicts", "Supports"} <= (
        ops.EDGE_KINDS
    )
    assert {"Supersedes", "Confirms", "AliasOf"} <= ops.EDGE_KINDS


def test_samples_cover_every_plain_op_type() -> None:
    assert sorted(type(s).op_type for s in SAMPLES) == sorted(c.op_type for c in PLAIN_CLASSES)


def _non_default_everywhere(op: ops.Op) -> bool:
    return all(
        f.required or getattr(op, f.name) != f.default for f in msgspec.structs.fields(type(op))
    )


# ------------------------------------------------------------- round trips


@pytest.mark.parametrize("op", SAMPLES, ids=lambda o: type(o).__name__)
def test_sample_round_trips(op: ops.Op) -> None:
    assert _non_default_everywhere(op)
    ops.validate(op)
    data = encode(op)
    back = decode(type(op).op_type, data)
    assert back == op
    assert type(back) is type(op)
    assert encode(back) == data


@given(plain_ops())
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_any_op_round_trips(op: ops.Op) -> None:
    data = encode(op)
    back = decode(type(op).op_type, data)
    assert back == op
    assert encode(back) == data


def test_encoding_is_deterministic() -> None:
    for op in SAMPLES:
        assert encode(op) == encode(op)
    a = ops.PutPayload(id=1, text="x", meta={"b": 1, "a": {"y": 2, "x": 1}})
    b = ops.PutPayload(id=1, text="x", meta={"a": {"x": 1, "y": 2}, "b": 1})
    assert encode(a) == encode(b)


def test_payload_is_a_positional_array() -> None:
    assert msgspec.msgpack.decode(encode(ops.DeleteMemory(id=7, at_ms=9))) == [7, 9]


# -------------------------------------------------------- schema evolution


@pytest.mark.parametrize("op", SAMPLES, ids=lambda o: type(o).__name__)
def test_old_record_without_optional_fields_decodes_with_defaults(op: ops.Op) -> None:
    cls = type(op)
    required = [f.name for f in msgspec.structs.fields(cls) if f.required]
    old = msgspec.msgpack.encode([getattr(op, n) for n in required])
    back = decode(cls.op_type, old)
    assert back == cls(**{n: getattr(op, n) for n in required})


def test_old_put_payload_written_before_artifacts_existed() -> None:
    old = msgspec.msgpack.encode([7, "hello", "thought", 123])
    assert decode(OpType.PutPayload, old) == ops.PutPayload(
        id=7, text="hello", kind="thought", created_ms=123
    )


@pytest.mark.parametrize("op", SAMPLES, ids=lambda o: type(o).__name__)
def test_newer_record_with_extra_trailing_fields_drops_them(op: ops.Op) -> None:
    fields = msgspec.msgpack.decode(encode(op))
    newer = msgspec.msgpack.encode([*fields, "future", 42, {"x": [1, 2]}, None])
    assert decode(type(op).op_type, newer) == op


def test_newer_nested_struct_with_extra_fields_drops_them() -> None:
    newer = msgspec.msgpack.encode([3, 1, 5, [["recency", 0.1, -0.2, 0.2, "extra"]], 0.5, 2, "x"])
    assert decode(OpType.UpdateScorerModel, newer) == ops.UpdateScorerModel(
        model_version=3,
        baseline_version=1,
        at_ms=5,
        factors=(ops.FactorDelta(factor="recency", delta=0.1, min_delta=-0.2, max_delta=0.2),),
        ewma_loss=0.5,
        outcome_count=2,
    )


def test_run_mixing_old_current_and_newer_records_decodes() -> None:
    old = msgspec.msgpack.encode([1, "a"])
    cur = encode(ops.PutPayload(id=2, text="b", tags=("t",)))
    fields = msgspec.msgpack.decode(cur)
    newer = msgspec.msgpack.encode([*fields, "future"])
    got = decode_run(OpType.PutPayload, b"\x93" + old + cur + newer)
    assert got == [
        ops.PutPayload(id=1, text="a"),
        ops.PutPayload(id=2, text="b", tags=("t",)),
        ops.PutPayload(id=2, text="b", tags=("t",)),
    ]


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("code", UNKNOWN_CODES)
def test_unknown_op_type_raises_unknown_op_type(code: int) -> None:
    payload = encode(ops.DeleteMemory(id=1, at_ms=1))
    with pytest.raises(errors.UnknownOpType, match=str(code)):
        decode(code, payload)
    with pytest.raises(errors.UnknownOpType):
        decode_run(code, b"\x91" + payload)


def test_unknown_op_type_is_a_corruption_error() -> None:
    with pytest.raises(errors.CorruptionError):
        decode(35, b"\x90")


GARBAGE = [
    b"",  # nothing
    b"\xc1",  # the byte msgpack never uses
    b"\x92\x01",  # array of 2, one element: cut short
    b"\xff\xff\xff",  # negative fixints, not an array
    b"\x80",  # a map, not an array
    b"\x90",  # empty array: required fields missing
    msgspec.msgpack.encode(["1", 2]),  # id is a string
    msgspec.msgpack.encode([-1, 2]),  # id is negative
    msgspec.msgpack.encode([1.5, 2]),  # id is a float
    msgspec.msgpack.encode([1, 2]) + b"\x00",  # trailing bytes
    msgspec.msgpack.encode([1, 2**63]),  # time beyond int64
]


@pytest.mark.parametrize("payload", GARBAGE)
def test_garbage_payload_raises_corruption_error_naming_the_op(payload: bytes) -> None:
    with pytest.raises(errors.CorruptionError, match="DeleteMemory") as info:
        decode(OpType.DeleteMemory, payload)
    assert not isinstance(info.value, msgspec.MsgspecError)
    assert type(info.value) is errors.CorruptionError


@given(st.binary(max_size=64), st.sampled_from(list(OP_CLASSES)))
@settings(max_examples=500)
def test_random_bytes_never_escape_as_a_foreign_error(payload: bytes, code: OpType) -> None:
    try:
        op = decode(code, payload)
    except errors.CorruptionError as exc:
        assert code.name in str(exc)
    else:
        assert isinstance(op, OP_CLASSES[code])


def test_wrong_field_types_are_rejected() -> None:
    cases = [
        (OpType.PutPayload, [1, 2]),  # text is an int
        (OpType.PutPayload, [1, "x", "observation", 0, None, None, None, None, "tag"]),
        (OpType.PutPayload, [1, "x", "observation", 0, None, None, None, None, [], 1.0, 1.0, "e"]),
        (OpType.UpdateState, [1, 2, "strong"]),
        (OpType.UpdateState, [1, 2, None, None, None, 1]),  # touch must be a bool
        (OpType.AddAssocEdge, [1, 2, 3]),  # edge is a string
        (OpType.UpdateSparseCode, [1, [1, -2], b""]),  # feature ids are unsigned
        (OpType.UpdateSparseCode, [1, [1], "not bytes"]),
        (OpType.UpdateScorerModel, [1, 1, 1, [["f", "x", 0.0, 0.0]]]),
    ]
    for code, fields in cases:
        with pytest.raises(errors.CorruptionError, match=code.name):
            decode(code, msgspec.msgpack.encode(fields))


def test_encode_rejects_what_msgpack_cannot_carry() -> None:
    with pytest.raises(errors.InvalidArgument):
        encode(ops.PutPayload(id=2**64, text="x"))
    with pytest.raises(errors.InvalidArgument):
        encode(ops.PutPayload(id=1, text="x", meta={"o": object()}))
    with pytest.raises(errors.InvalidArgument):
        encode("not an op")  # type: ignore[arg-type]
