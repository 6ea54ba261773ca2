"""Sparse-code records against docs/OPS.md (ops 12 and 68): the golden's bytes
are what the writer writes, its records hold what the spec says (read by the
test's own parser), and a field replays each op's values: op 12's float32 as
written, op 68's levels times its scale."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import msgspec
from golden_codes import code_ids, codes_golden_ops, write_codes_golden
from segment_oracle import only_segment, parse_records_v2

import chitta
from chitta import ops

GOLDEN = Path(__file__).parent / "golden" / "v2.0-sparse-codes"


def test_writer_reproduces_the_golden_bytes(tmp_path: Path) -> None:
    write_codes_golden(tmp_path)
    assert only_segment(tmp_path).read_bytes() == only_segment(GOLDEN).read_bytes()


def test_golden_records_hold_what_the_spec_says() -> None:
    records, _ = parse_records_v2(only_segment(GOLDEN).read_bytes())
    kinds = [r.op_type for r in records if r.op_type < 200]
    assert kinds == [0, 0, 0, 0, 12, 68, 64]
    plain = msgspec.msgpack.decode(records[4].payload)
    packed = msgspec.msgpack.decode(records[5].payload)
    assert len(plain) == 4 and len(plain[1]) == 64 and len(plain[2]) == 256
    mid, deltas, levels, scale, version = packed
    assert (mid, version, len(deltas), len(levels)) == (code_ids()[1], 0, 128, 64)
    steps = struct.unpack("<64H", deltas)
    assert all(s >= 1 for s in steps[1:])
    assert struct.unpack("<f", struct.pack("<f", scale))[0] == scale  # a float32 value
    assert max(levels) == 255
    # the decoded ops equal the ops the golden was written from
    decoded = [ops.decode(r.op_type, r.payload) for r in records if r.op_type < 200]
    assert decoded == codes_golden_ops()


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_a_field_replays_op_12_as_written_and_op_68_dequantised(tmp_path: Path) -> None:
    root = tmp_path / "field"
    shutil.copytree(GOLDEN, root)
    records, _ = parse_records_v2(only_segment(GOLDEN).read_bytes())
    want: dict[int, tuple[list[int], list[float]]] = {}
    for r in records:
        if r.op_type == 64:  # a Batch: [[[op_type, payload value], ...]], each payload inline
            inner = [(t, v) for t, v in msgspec.msgpack.decode(r.payload)[0]]
        else:
            inner = [(r.op_type, msgspec.msgpack.decode(r.payload))]
        for t, value in inner:
            if t == 12:
                mid, feats, acts, _ = value
                want[mid] = (feats, list(struct.unpack(f"<{len(feats)}f", acts)))
            elif t == 68:
                mid, deltas, levels, scale, _ = value
                steps = struct.unpack(f"<{len(levels)}H", deltas)
                feats = [sum(steps[: i + 1]) for i in range(len(steps))]
                want[mid] = (feats, [_f32(_f32(level) * _f32(scale)) for level in levels])
    assert sorted(want) == code_ids()
    with chitta.open(root, read_only=True, embedder=None) as f:
        index = f.core.index
        index._flush_codes()
        got = {}
        for mid in code_ids():
            feats, acts = index._posting.get(mid)
            got[mid] = (feats.tolist(), [float(a) for a in acts])
    assert got == want
