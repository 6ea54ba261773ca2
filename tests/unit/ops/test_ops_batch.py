"""Tests of chitta.ops, continued: Batch, decode_run, op_to_dict and validate,
and that the module passes mypy --strict (the op table and round trips: test_ops.py)."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import msgspec
import numpy as np
import pytest
from _op_samples import EMB, PLAIN_CLASSES, SAMPLES, ops_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta import errors, ops
from chitta.ops import Batch, OpType, decode, decode_run, encode

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
    records = data.draw(st.lists(ops_of(cls), max_size=20))
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
    package = Path(__file__).resolve().parents[3] / "chitta"
    sources = [package / "ops"]
    assert all(p.exists() for p in sources), sources

    out, err, status = api.run(
        ["--strict", "--follow-imports=silent", "--cache-dir=/dev/null", "--no-incremental"]
        + [str(p) for p in sources]
    )
    assert status == 0, out + err
