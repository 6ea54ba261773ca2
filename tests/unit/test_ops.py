"""Tests of chitta.ops: the op table, every schema's round trip, schema
evolution in both directions, and every way a payload can be bad."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
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
CHITTA_CODES = {"Batch": 64, "UpdateSparseEncoder": 65, "ConfigureField": 66}

UNKNOWN_CODES = [*range(30, 39), 49, 63, 67, 128, 200, 255, -1, 256]

EMB = np.arange(8, dtype="<f4").tobytes()


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


# ------------------------------------------------------- value generation


def _json_values() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63 - 1)
        | st.floats(allow_nan=False)
        | st.text(max_size=8)
        | st.binary(max_size=8)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    )


def _strategy(t: msgspec.inspect.Type) -> st.SearchStrategy[Any]:
    mi = msgspec.inspect
    if isinstance(t, mi.IntType):
        lo = t.ge if t.ge is not None else -(2**63)
        hi = t.le if t.le is not None else (2**64 - 1 if lo == 0 else 2**63 - 1)
        return st.integers(lo, hi)
    if isinstance(t, mi.FloatType):
        return st.floats(allow_nan=False)
    if isinstance(t, mi.StrType):
        return st.text(max_size=20)
    if isinstance(t, mi.BytesType):
        return st.binary(max_size=32)
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.UnionType):
        return st.one_of(*[_strategy(x) for x in t.types])
    if isinstance(t, mi.VarTupleType):
        return st.lists(_strategy(t.item_type), max_size=4).map(tuple)
    if isinstance(t, mi.DictType):
        return st.dictionaries(st.text(max_size=6), _json_values(), max_size=3)
    if isinstance(t, mi.AnyType):
        return _json_values()
    if isinstance(t, mi.StructType):
        return st.builds(t.cls, **{f.name: _strategy(f.type) for f in t.fields})
    raise NotImplementedError(t)


PLAIN_CLASSES = [cls for cls in OP_CLASSES.values() if cls is not Batch]


@st.composite
def plain_ops(draw: st.DrawFn) -> ops.Op:
    cls = draw(st.sampled_from(PLAIN_CLASSES))
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    op: ops.Op = draw(st.builds(cls, **{f.name: _strategy(f.type) for f in info.fields}))
    return op


# One hand-written op per type, every field set away from its default.
SAMPLES: list[ops.Op] = [
    ops.PutPayload(
        id=2**64 - 1,
        text="the build uses scikit-build-core",
        kind="decision",
        created_ms=1_700_000_000_000,
        realm="proj:chitta",
        session="s-1",
        source_tool="codex-cli",
        harness="codex",
        tags=("build", "python"),
        confidence=0.8,
        strength=0.5,
        embedding=EMB,
        meta={"b": [1, 2.5, None], "a": {"nested": b"\x00\x01"}},
        artifacts=("pyproject.toml",),
        written_ms=1700000000123,
    ),
    ops.UpdateState(id=1, at_ms=5, strength=0.9, confidence=0.1, decay_rate=0.01, touch=True),
    ops.DeleteMemory(id=3, at_ms=-1),
    ops.AddAssocEdge(src=1, dst=2, edge="Contradicts", weight=0.3, at_ms=9),
    ops.UpsertArtifact(path="src/a.py", repo_root="/repo", content_hash="abc", at_ms=4),
    ops.AddTriplet(
        subject="jeff",
        predicate="uses",
        object="rust",
        weight=2.0,
        valid_from_ms=7,
        source_memory_id=11,
        confidence=0.7,
    ),
    ops.InvalidateTriplet(subject="jeff", predicate="uses", object="rust", at_ms=8, reason="moved"),
    ops.UpsertSymbol(
        name="chitta.ops.decode",
        kind="function",
        file_path="chitta/ops.py",
        project="chitta",
        line_start=10,
        line_end=20,
        signature="def decode(op_type, payload)",
        description="decode one payload",
        embedding=EMB,
        at_ms=3,
        session="s",
        harness="claude-code",
        memory_id=4,
    ),
    ops.RemoveSymbol(name="chitta.ops.decode", at_ms=3),
    ops.AddSymCallEdge(caller="a", callee="b", at_ms=1),
    ops.RemoveSymCallEdge(caller="a", callee="b", at_ms=2),
    ops.UpsertCodeFile(
        path="chitta/ops.py", project="chitta", mtime_ms=5, content_hash="h", language="python"
    ),
    ops.UpdateSparseCode(
        id=5, features=(3, 70, 16383), activations=np.ones(3, "<f4").tobytes(), encoder_version=2
    ),
    ops.DemoteMemory(id=5, tier=2, at_ms=6),
    ops.TrainPQ(
        version=1,
        dim=8,
        subquantizers=2,
        bits=1,
        codebooks=np.zeros(16, "<f4").tobytes(),
        trained_ms=3,
        sample_count=100,
    ),
    ops.UpdateResidualPQ(id=5, codes=bytes(32), pq_version=1),
    ops.SessionEvent(
        event="message_send",
        session="s1",
        at_ms=1,
        harness="codex",
        pid=42,
        cwd="/w",
        message_id=7,
        to_session="s2",
        body="hi",
    ),
    ops.TranscriptEvent(
        event="create_episode",
        transcript="t1",
        at_ms=1,
        session="s1",
        path="/t.jsonl",
        offset=100,
        turn=3,
        role="user",
        text="hello",
        first_turn=1,
        last_turn=3,
        memory_id=9,
    ),
    ops.TaskEvent(
        event="progress",
        task="dream-1",
        at_ms=1,
        kind="dream",
        session="s",
        title="consolidate",
        progress=0.5,
        detail="half",
        meta={"k": 1},
    ),
    ops.UserModelEvent(
        event="upsert", kind="person", key="ada", at_ms=1, payload={"x": [1]}, confidence=0.9
    ),
    ops.ThemeEvent(
        event="assign_member",
        theme=3,
        at_ms=1,
        label="builds",
        centroid=EMB,
        coherence=0.8,
        member=10,
        realm="r",
    ),
    ops.AnalyticsEvent(
        event="symbol_event",
        at_ms=1,
        session="s",
        harness="codex",
        memory_ids=(1, 2),
        query="q",
        outcome="TestFailed",
        value=1.5,
        symbol="a.b",
        file_path="a.py",
        ref="deadbeef",
    ),
    ops.ClearProject(project="chitta", at_ms=5),
    ops.UpdateSymbolDescription(name="a.b", description="does b", at_ms=2),
    ops.UpdateMemoryContent(id=1, at_ms=2, text="new", embedding=EMB, tags=(), meta={"z": 0}),
    ops.AssertFact(
        id=1, predicate="depends_on", args=("a", "b"), at_ms=1, source_memory_id=2, confidence=0.5
    ),
    ops.RetractFact(id=1, at_ms=2),
    ops.BranchEvent(
        event="resolve",
        branch=2,
        at_ms=1,
        parent=1,
        hypothesis="h",
        outcome="won",
        memory_ids=(4,),
    ),
    ops.TriggerEvent(
        event="fire", trigger=1, at_ms=1, pattern="p", action="a", memory_id=3, context="c"
    ),
    ops.PredictorEvent(event="transition", to_id=2, at_ms=1, from_id=1, delta=0.25),
    ops.RecordSurprise(
        expected="ok",
        actual="error",
        surprise=0.8,
        at_ms=1,
        source="patch_file",
        memory_ids=(1,),
        latency_ms=300,
        expected_latency_ms=100,
        uncertainty=0.2,
        session="s",
    ),
    ops.RegisterDebt(
        id=1,
        question="why is replay slow?",
        at_ms=1,
        hypotheses=("gc", "io"),
        tests=("disable gc",),
        memory_ids=(3,),
        priority=0.9,
        realm="r",
    ),
    ops.UpdateDebt(
        id=1, status="deferred", at_ms=2, resolution="-", defer_until_ms=9, priority=0.1
    ),
    ops.UpdateSourceWeight(domain="code", source="bm25", weight=0.7, at_ms=1, alpha=3.0, beta=2.0),
    ops.RecordFeedback(
        domain="code", source="bm25", useful=True, at_ms=1, memory_id=2, query="q", session="s"
    ),
    ops.UpdateSurpriseCredit(
        id=1, credit=-0.8, streak=-2, at_ms=1, strength_delta=-0.08, surprise=0.9
    ),
    ops.UpsertWisdomCandidate(
        cluster_key="k",
        statement="small hunks apply cleanly",
        at_ms=1,
        support=4,
        sessions=("s1", "s2"),
        contradictions=1,
        score=0.75,
        evidence=(1, 2),
        realm="r",
    ),
    ops.UpdateWisdomLifecycle(
        cluster_key="k", stage="trusted", at_ms=2, memory_id=12, reason="promoted"
    ),
    ops.UpdateScorerModel(
        model_version=3,
        baseline_version=1,
        at_ms=1,
        factors=(ops.FactorDelta(factor="recency", delta=0.1, min_delta=-0.2, max_delta=0.2),),
        ewma_loss=0.3,
        outcome_count=17,
    ),
    ops.AttachDebtEvidence(
        debt_id=1, memory_ids=(2, 3), confidence=0.75, at_ms=1, note="n", hypothesis=1
    ),
    ops.UpdateSparseEncoder(
        version=3,
        dim=2,
        n_features=16,
        seed=7,
        rows=(1, 9),
        atoms=np.array([[0.6, 0.8], [1.0, 0.0]], "<f4").tobytes(),
        active=4,
        at_ms=5,
        thresholds=np.linspace(-0.5, 0.5, 16, dtype="<f4").tobytes(),
    ),
    ops.ConfigureField(key="embedder", value={"name": "m@abc", "family": "f", "dim": 384}, at_ms=1),
]


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


# ------------------------------------------------------------------ Batch


def test_batch_round_trips() -> None:
    batch = Batch.of(*SAMPLES)
    back = decode(OpType.Batch, encode(batch))
    assert isinstance(back, Batch)
    assert back == batch
    assert back.unpack() == SAMPLES
    assert encode(back) == encode(batch)
    ops.validate(back)


def test_batch_item_is_op_type_and_encoded_payload() -> None:
    put = ops.PutPayload(id=1, text="a")
    outer = msgspec.msgpack.decode(encode(Batch.of(put)))
    assert outer == [[[0, msgspec.msgpack.decode(encode(put))]]]


def test_batch_of_rejects_nesting_and_emptiness() -> None:
    inner = Batch.of(ops.DeleteMemory(id=1, at_ms=1))
    with pytest.raises(errors.InvalidArgument, match="Batch"):
        Batch.of(inner)
    with pytest.raises(errors.InvalidArgument):
        Batch.of()


def test_batch_unpack_rejects_a_nested_batch_on_disk() -> None:
    inner = Batch.of(ops.DeleteMemory(id=1, at_ms=1))
    nested = Batch(ops=((int(OpType.Batch), msgspec.Raw(encode(inner))),))
    back = decode(OpType.Batch, encode(nested))
    assert isinstance(back, Batch)
    with pytest.raises(errors.CorruptionError, match="nest"):
        back.unpack()
    with pytest.raises(errors.InvalidArgument):
        ops.validate(back)


def test_batch_unpack_rejects_unknown_or_damaged_inner_ops() -> None:
    unknown = Batch(ops=((33, msgspec.Raw(b"\x90")),))
    with pytest.raises(errors.UnknownOpType):
        decode(OpType.Batch, encode(unknown)).unpack()  # type: ignore[attr-defined]
    damaged = Batch(ops=((int(OpType.DeleteMemory), msgspec.Raw(msgspec.msgpack.encode(["x"]))),))
    with pytest.raises(errors.CorruptionError, match="DeleteMemory"):
        decode(OpType.Batch, encode(damaged)).unpack()  # type: ignore[attr-defined]


def test_batch_with_a_truncated_inner_payload_is_corrupt() -> None:
    data = encode(Batch.of(ops.PutPayload(id=1, text="hello")))
    with pytest.raises(errors.CorruptionError, match="Batch"):
        decode(OpType.Batch, data[:-2])


# ------------------------------------------------------------- decode_run


def _frame(payloads: list[bytes]) -> bytes:
    n = len(payloads)
    header = bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
    return header + b"".join(payloads)


@given(st.data())
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
def test_decode_run_equals_per_record_decode(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(PLAIN_CLASSES))
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    strategy = st.builds(cls, **{f.name: _strategy(f.type) for f in info.fields})
    records = data.draw(st.lists(strategy, max_size=20))
    payloads = [encode(r) for r in records]
    assert decode_run(cls.op_type, _frame(payloads)) == [decode(cls.op_type, p) for p in payloads]


def test_decode_run_of_batches() -> None:
    batches = [Batch.of(s) for s in SAMPLES[:5]]
    got = decode_run(OpType.Batch, _frame([encode(b) for b in batches]))
    assert got == batches


def test_decode_run_of_nothing() -> None:
    assert decode_run(OpType.DeleteMemory, b"\x90") == []


def test_decode_run_names_the_damaged_record() -> None:
    good = encode(ops.DeleteMemory(id=1, at_ms=1))
    bad = msgspec.msgpack.encode(["one", 1])
    with pytest.raises(errors.CorruptionError, match=r"record 2 .*DeleteMemory"):
        decode_run(OpType.DeleteMemory, _frame([good, good, bad, good]))


@pytest.mark.parametrize(
    "framed",
    [b"", b"\x92" + encode(ops.DeleteMemory(id=1, at_ms=1)), b"\x91\x92\x01\x02\x03", b"\xc1"],
    ids=["empty", "short-count", "trailing", "invalid"],
)
def test_decode_run_rejects_bad_framing(framed: bytes) -> None:
    with pytest.raises(errors.CorruptionError, match="DeleteMemory"):
        decode_run(OpType.DeleteMemory, framed)


# ------------------------------------------------------- dict, validation


@pytest.mark.parametrize("op", SAMPLES, ids=lambda o: type(o).__name__)
def test_op_to_dict_is_json_friendly_and_in_field_order(op: ops.Op) -> None:
    d = ops.op_to_dict(op)
    assert list(d) == [f.name for f in msgspec.structs.fields(type(op))]
    json.dumps(d, allow_nan=False)


def test_op_to_dict_writes_bytes_as_base64() -> None:
    d = ops.op_to_dict(ops.PutPayload(id=1, text="x", embedding=EMB, meta={"b": b"\x01"}))
    assert base64.b64decode(d["embedding"]) == EMB
    assert d["meta"] == {"b": "AQ=="}


def test_op_to_dict_of_a_batch_shows_the_inner_ops() -> None:
    broken = Batch(
        ops=(
            (int(OpType.DeleteMemory), msgspec.Raw(encode(ops.DeleteMemory(id=4, at_ms=2)))),
            (33, msgspec.Raw(b"\x90")),
        )
    )
    d = ops.op_to_dict(broken)
    assert d["ops"][0] == {"op_type": 2, "op": "DeleteMemory", "fields": {"id": 4, "at_ms": 2}}
    assert d["ops"][1] == {"op_type": 33, "op": None, "raw": "kA=="}
    json.dumps(d)


def test_validate_rejects_values_outside_the_documented_sets() -> None:
    with pytest.raises(errors.InvalidArgument, match="edge"):
        ops.validate(ops.AddAssocEdge(src=1, dst=2, edge="Likes"))
    with pytest.raises(errors.InvalidArgument, match="kind"):
        ops.validate(ops.PutPayload(id=1, text="x", kind="rumour"))
    with pytest.raises(errors.InvalidArgument, match="status"):
        ops.validate(ops.UpdateDebt(id=1, status="maybe", at_ms=1))
    ops.validate(ops.TaskEvent(event="create", task="t", at_ms=1))  # optional enum left unset


def test_validate_checks_float32_blobs() -> None:
    with pytest.raises(errors.InvalidArgument, match="embedding"):
        ops.validate(ops.PutPayload(id=1, text="x", embedding=b"\x00" * 6))
    with pytest.raises(errors.InvalidArgument, match="activation"):
        ops.validate(ops.UpdateSparseCode(id=1, features=(1, 2), activations=bytes(4)))


def test_validate_checks_inside_a_batch() -> None:
    with pytest.raises(errors.InvalidArgument, match="edge"):
        ops.validate(Batch.of(ops.AddAssocEdge(src=1, dst=2, edge="nope")))


def test_f32_helpers_round_trip() -> None:
    v = np.array([0.5, -1.0, math.pi], dtype=np.float64)
    blob = ops.f32_bytes(v)
    assert blob == v.astype("<f4").tobytes()
    np.testing.assert_array_equal(ops.f32_array(blob), v.astype(np.float32))
    with pytest.raises(errors.InvalidArgument):
        ops.f32_array(b"\x00" * 3)


# ------------------------------------------------------------------ typing


@pytest.mark.slow
def test_ops_module_passes_mypy_strict() -> None:
    api = pytest.importorskip("mypy.api")
    # Check the source tree, not the installed copy: mypy refuses a file that sits
    # in site-packages (its neighbours there shadow library modules).
    package = Path(__file__).resolve().parents[2] / "chitta"
    sources = [package / "ops.py", package / "_ops"]
    assert all(p.exists() for p in sources), sources

    out, err, status = api.run(
        ["--strict", "--follow-imports=silent", "--cache-dir=/dev/null", "--no-incremental"]
        + [str(p) for p in sources]
    )
    assert status == 0, out + err
