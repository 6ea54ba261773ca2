"""Segment format 1.0 against docs/FORMAT.md: its golden file still reads, and
one test per kind of damage with its exact outcome (2.0, the format writers
write: test_segment_format_v2.py)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from fieldtools import flip_byte, truncate_by, write_at
from golden import GOLDEN_INSTANCE, golden_ops, write_golden
from segment_oracle import (
    HEADER,
    crc32c,
    encode_record,
    only_segment,
    parse_header,
    parse_records,
    parse_records_v2,
)

import chitta
from chitta import _core, errors, ops

GOLDEN = Path(__file__).parent / "golden" / "v1.0"


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    shutil.copytree(GOLDEN, root)
    return root


def test_crc32c_native_equals_definition() -> None:
    assert crc32c(b"123456789") == 0xE3069283 == _core.crc32c(b"123456789")
    for n in range(70):
        data = bytes((i * 37 + n) & 0xFF for i in range(n))
        assert _core.crc32c(data) == crc32c(data)


def test_golden_header_and_records_match_the_spec() -> None:
    data = only_segment(GOLDEN).read_bytes()
    assert only_segment(GOLDEN).name == "00000001_000000000001.seg"
    assert parse_header(data) == (1, 0, GOLDEN_INSTANCE, 1)
    records = parse_records(data)
    expected = golden_ops()
    assert [r.seqno for r in records] == list(range(1, len(expected) + 1))
    assert [r.op_type for r in records] == [int(op.op_type) for op in expected]
    assert [ops.decode(r.op_type, r.payload) for r in records] == expected


def test_writer_reproduces_the_golden_bytes(tmp_path: Path) -> None:
    """Writers write 2.0 only: the 2.0 golden's bytes, segment by segment."""
    write_golden(tmp_path)
    mine = sorted((tmp_path / "segments").glob("*.seg"))
    golden = sorted((GOLDEN.parent / "v2.0" / "segments").glob("*.seg"))
    assert [p.name for p in mine] == [p.name for p in golden]
    assert [p.read_bytes() for p in mine] == [p.read_bytes() for p in golden]


def test_golden_field_replays_to_the_expected_state(field: Path) -> None:
    a, b, c = (1 << 32) | 1, (1 << 32) | 2, (1 << 32) | 3
    with chitta.open(field, read_only=True) as f:
        assert sorted(f.ids()) == [a, b]
        ma, mb = f.get(a), f.get(b)
        assert (ma.text, ma.confidence, ma.access_count, ma.kind) == (
            "the build uses ninja",
            0.9,
            1,
            "decision",
        )
        assert (mb.text, mb.strength, mb.meta) == (
            "staging listens on port 8081",
            2.0,
            {"host": "staging", "port": 8080},
        )
        assert mb.embedding is not None and mb.embedding.tolist() == [0.5, -0.5, 0.25, 1.0]
        assert c not in f
        assert f.stats().forgotten == 1


def test_named_instance_continues_after_the_golden_segment_in_2_0(field: Path) -> None:
    """A 1.0 segment is never appended to: its owner goes on in a new 2.0 one."""
    old = only_segment(field).read_bytes()
    with chitta.open(field, instance_id=GOLDEN_INSTANCE) as f:
        mid = f.remember("appended later")
    assert mid == (1 << 32) | 4
    first, second = sorted((field / "segments").glob("*.seg"))
    assert first.read_bytes() == old
    assert parse_header(second.read_bytes())[0] == 2
    records, seal = parse_records_v2(second.read_bytes())
    assert seal is None and records[-1].seqno == len(golden_ops()) + 1
    with chitta.open(field, read_only=True) as f:
        assert f.get(mid).text == "appended later" and len(f) == 3


def _offsets(field: Path) -> list[int]:
    return [r.offset for r in parse_records(only_segment(field).read_bytes())]


def test_flipped_byte_mid_log_is_crc_mismatch_with_segment_and_offset(field: Path) -> None:
    seg = only_segment(field)
    third = _offsets(field)[2]
    flip_byte(seg, third + 20)  # inside the payload of the third record
    with pytest.raises(errors.CrcMismatch) as info:
        chitta.open(field, read_only=True)
    assert info.value.segment == seg.name and info.value.offset == third
    assert f"offset {third}" in str(info.value)
    with chitta.open(field, read_only=True, salvage=True) as f:
        (dropped,) = f.salvaged
        assert (dropped["kind"], dropped["offset"], dropped["segment"]) == (
            "crc_mismatch",
            third,
            seg.name,
        )
        assert len(f) == 2  # the third memory's put was the damaged record; the rest applied
    assert chitta.field.inspect.verify(field)["damages"][0]["kind"] == "crc_mismatch"


def test_truncated_tail_is_an_unfinished_write(field: Path) -> None:
    truncate_by(only_segment(field), 5)  # cut into the last record (the edge)
    with chitta.open(field, read_only=True) as f:
        assert len(f) == 2  # everything before the cut is there
    (torn,) = chitta.field.inspect.verify(field)["damages"]
    assert torn["kind"] == "torn_tail" and torn["offset"] == _offsets_before_cut(field)
    with chitta.open(field, instance_id=GOLDEN_INSTANCE) as f:  # the owner cuts the tail off
        f.remember("after the crash")
    assert chitta.field.inspect.verify(field)["damages"] == []


def _offsets_before_cut(field: Path) -> int:
    data = only_segment(field).read_bytes()
    pos = HEADER.size
    while True:
        (length,) = struct.unpack_from("<I", data, pos)
        if pos + 17 + length > len(data):
            return pos
        pos += 17 + length


def test_bad_length_is_corruption_and_never_allocated(field: Path) -> None:
    second = _offsets(field)[1]
    write_at(only_segment(field), second, struct.pack("<I", 0xFFFFFF00))
    with pytest.raises(errors.CorruptionError) as info:
        chitta.open(field, read_only=True)
    assert not isinstance(info.value, errors.CrcMismatch)
    assert "bad_length" in str(info.value) and info.value.offset == second
    with chitta.open(field, read_only=True, salvage=True) as f:
        assert [d["kind"] for d in f.salvaged] == ["bad_length"]
        assert len(f) == 1  # the first memory; the second put was lost, the third deleted


def test_wrong_magic(field: Path) -> None:
    write_at(only_segment(field), 0, b"NOTCHITA")
    with pytest.raises(errors.CorruptionError, match="bad_magic"):
        chitta.open(field, read_only=True)
    with chitta.open(field, read_only=True, salvage=True) as f:
        assert len(f) == 0 and f.salvaged[0]["kind"] == "bad_magic"


def test_future_major_version_is_refused(field: Path) -> None:
    seg = only_segment(field)
    header = bytearray(seg.read_bytes()[: HEADER.size])
    struct.pack_into("<H", header, 8, 3)
    struct.pack_into("<I", header, 28, crc32c(bytes(header[:28])))
    write_at(seg, 0, bytes(header))
    with pytest.raises(errors.UnsupportedFormat):
        chitta.open(field, read_only=True)


def test_unknown_op_type_is_reported_with_its_location(field: Path) -> None:
    seg = only_segment(field)
    end = seg.stat().st_size
    with open(seg, "ab") as f:
        f.write(encode_record(100, 33, b"\x90"))  # valid CRC, op type 33 is unassigned
    with pytest.raises(errors.UnknownOpType) as info:
        chitta.open(field, read_only=True)
    assert info.value.offset == end and info.value.segment == seg.name
    with chitta.open(field, read_only=True, salvage=True) as f:
        assert len(f) == 2
        assert f.salvaged[0]["kind"] == "UnknownOpType" and f.salvaged[0]["offset"] == end
    kinds = [d["kind"] for d in chitta.field.inspect.verify(field)["damages"]]
    assert kinds == ["unknown_op_type"]


def test_undecodable_payload_with_valid_crc_is_corruption(field: Path) -> None:
    seg = only_segment(field)
    with open(seg, "ab") as f:
        f.write(encode_record(100, int(ops.OpType.DeleteMemory), b"\xc1garbage"))
    with pytest.raises(errors.CorruptionError):
        chitta.open(field, read_only=True)


def test_batch_is_all_or_nothing_when_its_record_is_torn(field: Path) -> None:
    batch_offset = _offsets(field)[5]
    seg = only_segment(field)
    data = seg.read_bytes()
    seg.write_bytes(data[: batch_offset + 30])  # the Batch record cut in the middle
    with chitta.open(field, read_only=True) as f:
        m = f.get((1 << 32) | 2)
        assert (m.text, m.strength) == ("staging listens on port 8080", 1.0)  # neither half applied


def test_failed_refresh_applies_nothing_and_fails_again(field: Path) -> None:
    with chitta.open(field, read_only=True) as f:
        before = sorted(f.ids())
        seg = only_segment(field)
        with open(seg, "ab") as out:
            good = ops.PutPayload(id=(1 << 32) | 50, text="fine", created_ms=1)
            out.write(encode_record(100, 0, ops.encode(good)))
            out.write(encode_record(101, 33, b"\x90"))
        for _ in range(2):  # the same records come back, and fail the same way
            with pytest.raises(errors.UnknownOpType):
                f.refresh()
            assert sorted(f.ids()) == before


OLDER_PAYLOADS = Path(__file__).parent / "golden" / "v1.0-before-written_ms"


def test_records_written_before_a_new_optional_field_still_replay(tmp_path: Path) -> None:
    """PutPayload gained ``written_ms`` after this file was written: its records
    decode with the default, and the memory reports its event time instead."""
    root = tmp_path / "old"
    shutil.copytree(OLDER_PAYLOADS, root)
    with chitta.open(root, read_only=True) as f:
        m = f.get((1 << 32) | 1)
        assert m.text == "the build uses ninja" and m.written_ms == m.created_ms
    current = [
        ops.decode(r.op_type, r.payload) for r in parse_records(only_segment(GOLDEN).read_bytes())
    ]
    older = [
        ops.decode(r.op_type, r.payload) for r in parse_records(only_segment(root).read_bytes())
    ]
    assert older == current  # the same ops: the new field's default is what the writer wrote
