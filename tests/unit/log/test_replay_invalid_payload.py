"""Every op type: a well-framed record whose payload decodes as msgpack but
breaks a rule of its op is damage at a location (FORMAT.md §5, invalid
payload): CorruptionError naming segment and offset under a strict open,
skipped and listed in ``Field.salvaged`` under salvage (issue 16, finding 2)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "format"))
from _op_samples import SAMPLES
from segment_oracle import parse_records_v2

import chitta
from chitta import _core, errors, ops
from chitta.ops import OpType

BAD_WORD = "not-a-documented-value"


def _fields(op: ops.Op) -> list[Any]:
    return list(msgspec.msgpack.decode(ops.encode(op)))


def _set(op: ops.Op, name: str, value: Any) -> bytes:
    values = _fields(op)
    values[type(op).__struct_fields__.index(name)] = value
    return msgspec.msgpack.encode(values)


def invalid_payload(op_type: OpType) -> bytes:
    """A payload of op_type that msgpack decodes but the op's rules refuse."""
    if op_type == OpType.Batch:  # a Batch holding an op with an undocumented enum value
        inner = invalid_payload(OpType.AddAssocEdge)
        return msgspec.msgpack.encode([[[int(OpType.AddAssocEdge), msgspec.Raw(inner)]]])
    if op_type == OpType.UpdateSparseEncoder:  # the trial's record: dim 0
        return msgspec.msgpack.encode([0, 0, 16384, 1])
    sample = next(op for op in SAMPLES if op.op_type == op_type)
    cls = type(sample)
    if cls.enums:
        return _set(sample, next(iter(cls.enums)), BAD_WORD)
    for blob in ("embedding", "centroid", "codebooks"):
        if blob in cls.__struct_fields__:
            return _set(sample, blob, b"\x00\x00\x80")  # not whole float32s
    if op_type == OpType.UpdateSparseCode:
        return _set(sample, "activations", b"\x00" * 3)
    if op_type == OpType.UpdateSparseCodeU8:  # two levels, three deltas
        return _set(sample, "levels", b"\x01\x02")
    return _set(sample, cls.__struct_fields__[0], -1)  # an id or count below zero


def _good(i: int) -> ops.PutPayload:
    return ops.PutPayload(
        id=(7 << 32) | i, text=f"good memory {i}", created_ms=1_700_000_000_000 + i
    )


@pytest.mark.parametrize("op_type", list(OpType), ids=lambda t: t.name)
def test_invalid_payload_is_located_corruption(tmp_path: Path, op_type: OpType) -> None:
    payload = invalid_payload(op_type)
    with pytest.raises(errors.ChittaError):  # the payload really is invalid as its op
        ops.validate(ops.decode(int(op_type), payload))
    root = tmp_path / "field"
    log = _core.SegmentLog(str(root), instance_id=7, durability="flush")
    log.append(int(OpType.PutPayload), ops.encode(_good(1)))
    log.append(int(op_type), payload)
    log.append(int(OpType.PutPayload), ops.encode(_good(2)))
    log.close()
    (seg,) = sorted((root / "segments").glob("*.seg"))
    records, _ = parse_records_v2(seg.read_bytes())
    bad_offset = records[1].offset
    with pytest.raises(errors.CorruptionError) as info:
        chitta.open(root, read_only=True)
    assert (info.value.segment, info.value.offset) == (seg.name, bad_offset)  # type: ignore[attr-defined]
    assert f"offset {bad_offset}" in str(info.value)
    with chitta.open(root, read_only=True, salvage=True) as f:
        assert [(d["segment"], d["offset"]) for d in f.salvaged] == [(seg.name, bad_offset)]
        assert sorted(f.ids()) == [(7 << 32) | 1, (7 << 32) | 2]


@pytest.mark.parametrize(
    "op_type", [OpType.UpdateSparseEncoder, OpType.Batch, OpType.PutPayload], ids=lambda t: t.name
)
def test_verify_reports_the_invalid_payload(tmp_path: Path, op_type: OpType) -> None:
    root = tmp_path / "field"
    log = _core.SegmentLog(str(root), instance_id=7, durability="flush")
    log.append(int(op_type), invalid_payload(op_type))
    log.close()
    (damage,) = chitta.field.inspect.verify(root)["damages"]
    assert damage["kind"] == "bad_payload" and damage["offset"] == 32
