"""Every single-bit flip (each offset, 3 bits per byte, the bits rotating so
all 8 positions are covered every few bytes) and every truncation offset of a
small two-segment 2.0 field, classified against the records as written
(issue 16, findings 3 and 4). The oracle is the list of records appended.

Outcomes allowed: a flip is always a CorruptionError naming the segment and
an offset at or before the flipped byte; a cut of the sealed first segment is
always a CorruptionError; a cut of the last segment inside a record is a torn
tail (an unfinished write: the records before it read, ``verify`` says
torn_tail), a cut on a record boundary of the last segment is the shorter log
(no format can tell it from a log that ended there; FORMAT.md §5)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "format"))
from segment_oracle import parse_records_v2

from chitta import _core, errors, ops

INSTANCE = 9


def _write(root: Path) -> list[tuple[int, bytes]]:
    log = _core.SegmentLog(str(root), instance_id=INSTANCE, durability="flush", segment_bytes=1024)
    written = []
    for i in range(14):
        payload = ops.encode(
            ops.PutPayload(
                id=(INSTANCE << 32) | (i + 1),
                text=f"memory {i} " * 3,
                created_ms=1_700_000_000_000 + i,
            )
        )
        log.append(0, payload)
        written.append((0, payload))
    log.close()
    return written


def _read(root: Path) -> list[tuple[int, bytes]]:
    log = _core.SegmentLog(str(root), read_only=True)
    try:
        r = log.read_new()
        return [(int(r.op_types[i]), bytes(r.payload(i))) for i in range(len(r))]
    finally:
        log.close()


@pytest.fixture(scope="module")
def field(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[tuple[int, bytes]], list[Path]]:
    root = tmp_path_factory.mktemp("sweep") / "field"
    written = _write(root)
    segs = sorted((root / "segments").glob("*.seg"))
    assert len(segs) == 2
    assert parse_records_v2(segs[0].read_bytes())[1] is not None  # the first is sealed
    assert _read(root) == written
    return root, written, segs


def test_every_bit_flip_is_located_corruption(
    field: tuple[Path, list[tuple[int, bytes]], list[Path]],
) -> None:
    root, written, segs = field
    silent = []
    for seg in segs:
        original = seg.read_bytes()
        for at in range(len(original)):
            for k in range(3):
                bit = (at + 3 * k) % 8
                data = bytearray(original)
                data[at] ^= 1 << bit
                seg.write_bytes(data)
                try:
                    got = _read(root)
                except errors.CorruptionError as exc:
                    assert exc.segment == seg.name and exc.offset <= at  # type: ignore[attr-defined]
                    continue
                silent.append((seg.name, at, bit, len(got)))
        seg.write_bytes(original)
    assert silent == []
    assert _read(root) == written


def _boundaries(data: bytes) -> set[int]:
    records, seal = parse_records_v2(data)
    ends = {r.offset for r in records} | {0, 32}
    if seal is not None:
        ends.add(seal.offset)
    return ends | {len(data)}


def test_every_cut_is_corruption_or_a_torn_tail_of_the_last_segment(
    field: tuple[Path, list[tuple[int, bytes]], list[Path]],
) -> None:
    root, written, segs = field
    first, last = segs
    in_first = len(parse_records_v2(first.read_bytes())[0])
    for seg in segs:
        original = seg.read_bytes()
        starts = sorted(_boundaries(original))
        records, _ = parse_records_v2(original)
        for cut in range(len(original)):
            seg.write_bytes(original[:cut])
            if seg == first:  # sealed: no cut is an unfinished write
                with pytest.raises(errors.CorruptionError) as info:
                    _read(root)
                assert info.value.segment == first.name  # type: ignore[attr-defined]
                continue
            got = _read(root)  # the last segment: the records before the cut, no more
            kept = sum(1 for r in records if r.offset + 21 + len(r.payload) <= cut)
            assert got == written[: in_first + kept]
            torn = [
                d for d in _core.verify_segments(str(root))["damages"] if d["kind"] == "torn_tail"
            ]
            if cut in starts:
                assert torn == []
            else:
                assert [(d["segment"], d["offset"]) for d in torn] == [
                    (last.name, max(s for s in starts if s < cut))
                ]
        seg.write_bytes(original)
    assert _read(root) == written


def test_the_owner_keeps_what_it_cuts_and_refuses_damage(tmp_path: Path) -> None:
    """A torn tail goes to quarantine with its report before it is cut; a
    damaged length in the last record (the trial's silent loss) is refused."""
    import json

    root = tmp_path / "field"
    written = _write(root)
    last = max((root / "segments").glob("*.seg"))
    original = last.read_bytes()
    final = parse_records_v2(original)[0][-1]
    for bit in range(32):  # every bit of the last record's length
        data = bytearray(original)
        data[final.offset + bit // 8] ^= 1 << (bit % 8)
        last.write_bytes(data)
        with pytest.raises(errors.CorruptionError):
            _core.SegmentLog(str(root), instance_id=INSTANCE).close()
        assert last.read_bytes() == data and not (root / "quarantine").exists()
    last.write_bytes(original[:-5])
    _core.SegmentLog(str(root), instance_id=INSTANCE).close()
    assert last.read_bytes() == original[: final.offset]
    (report,) = (root / "quarantine").glob("*.json")
    meta = json.loads(report.read_text())
    assert (meta["segment"], meta["offset"], meta["bytes"]) == (
        last.name,
        final.offset,
        len(original) - 5 - final.offset,
    )
    assert report.with_suffix(".bin").read_bytes() == original[final.offset : -5]
    assert _read(root) == written[:-1]
