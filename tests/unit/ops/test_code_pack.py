"""Packed sparse codes (op 68, UpdateSparseCodeU8) against plain-Python oracles:
the u16 delta ids and u8 levels written, what the op gives back, the run decoder
(equal, bit for bit, to the op's own properties), the fallback to op 12, the
rules validate() checks, the native run decoder against the reference, and the
size against op 12."""

from __future__ import annotations

import itertools
import struct
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import _core, ops
from chitta.errors import CorruptionError, InvalidArgument
from chitta.ops.code_columns import decode_packed_run
from chitta.ops.code_pack import code_ops_of, packed_columns

ACTIVE = 64


def _codes(seed: int, n: int, k: int = ACTIVE) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    feats = np.stack([np.sort(rng.choice(16384, k, replace=False)) for _ in range(n)])
    acts = (rng.random((n, k)) * rng.uniform(0.01, 3.0, (n, 1))).astype(np.float32)
    return feats, acts


def _oracle(features: list[int], acts: list[float]) -> tuple[bytes, bytes, float]:
    """The bytes op 68 holds, computed one value at a time (struct, round, float32)."""

    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    deltas = [features[0]] + [b - a for a, b in itertools.pairwise(features)]
    scale = f32(f32(max(acts)) / 255.0)
    levels = [min(255, max(0, round(f32(f32(a) / scale)))) if scale > 0 else 0 for a in acts]
    return struct.pack(f"<{len(deltas)}H", *deltas), bytes(levels), scale


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 80))
def test_packed_op_holds_the_oracle_bytes_and_gives_the_code_back(seed: int, k: int) -> None:
    feats, acts = _codes(seed, 3, k)
    for row, op in enumerate(code_ops_of([10, 11, 12], feats, acts, 4)):
        assert type(op) is ops.UpdateSparseCodeU8 and op.encoder_version == 4
        deltas, levels, scale = _oracle(feats[row].tolist(), acts[row].tolist())
        assert op.feature_deltas == deltas
        # numpy rounds half to even, the oracle's round() too: identical levels
        assert op.levels == levels and op.scale == scale
        assert op.features == tuple(feats[row].tolist())
        got = np.frombuffer(op.activations, "<f4")
        want = np.array([np.float32(v) * np.float32(scale) for v in levels], np.float32)
        assert got.tobytes() == want.tobytes()  # the dequantised values, one float32 product
        assert np.abs(got - acts[row]).max() <= scale / 2 * 1.0001  # half a level at most


def test_packed_op_round_trips_through_the_codec() -> None:
    feats, acts = _codes(1, 5)
    for op in code_ops_of(list(range(5)), feats, acts, 2):
        again = ops.decode(int(op.op_type), ops.encode(op))
        assert again == op and again.activations == op.activations
        ops.validate(op)


def test_the_run_decoder_equals_the_ops_properties_bit_for_bit() -> None:
    feats, acts = _codes(2, 50)
    run = code_ops_of([(3 << 32) | i for i in range(50)], feats, acts, 7)
    cols, rest = packed_columns(run, ACTIVE)  # type: ignore[arg-type]
    assert rest == []
    assert cols.ids.tolist() == [op.id for op in run]
    assert cols.versions.tolist() == [7] * 50
    assert cols.features.tolist() == [list(op.features) for op in run]
    assert cols.activations.astype("<f4").tobytes() == b"".join(op.activations for op in run)
    assert cols.ops() == [
        ops.UpdateSparseCode(
            id=op.id, features=op.features, activations=op.activations, encoder_version=7
        )
        for op in run
    ]


def test_the_run_decoder_sets_aside_codes_of_another_width() -> None:
    a = code_ops_of([1], *_codes(3, 1), 1)
    b = code_ops_of([2], *_codes(4, 1, 5), 1)
    cols, rest = packed_columns([a[0], b[0], a[0]], ACTIVE)  # type: ignore[list-item]
    assert rest == [1] and cols.ids.tolist() == [1, 1]


def test_codes_that_do_not_pack_are_written_as_op_12_exactly() -> None:
    feats, acts = _codes(5, 4)
    feats[1, -1] = feats[1, -2] + 70_000  # a step beyond u16
    feats[2, :2] = feats[2, 1::-1]  # not ascending
    acts[3, 0] = -1.0  # a negative activation (the encoder never makes one)
    out = code_ops_of([1, 2, 3, 4], feats, acts, 3)
    assert [type(op) for op in out] == [
        ops.UpdateSparseCodeU8,
        ops.UpdateSparseCode,
        ops.UpdateSparseCode,
        ops.UpdateSparseCode,
    ]
    for row in (1, 2, 3):
        assert out[row].features == tuple(feats[row].tolist())
        assert out[row].activations == acts[row].astype("<f4").tobytes()


def test_an_all_zero_code_packs_with_scale_zero() -> None:
    (op,) = code_ops_of([1], np.arange(ACTIVE)[None, :], np.zeros((1, ACTIVE), np.float32), 1)
    assert type(op) is ops.UpdateSparseCodeU8 and op.scale == 0.0
    assert op.activations == bytes(4 * ACTIVE)


def test_packed_op_is_under_half_the_bytes_of_op_12() -> None:
    feats, acts = _codes(6, 1)
    (packed,) = code_ops_of([99_999], feats, acts, 1)
    plain = ops.UpdateSparseCode(
        id=99_999, features=packed.features, activations=acts[0].tobytes(), encoder_version=1
    )
    assert len(ops.encode(packed)) <= 2 * ACTIVE + ACTIVE + 24
    assert len(ops.encode(packed)) < 0.5 * len(ops.encode(plain))


def _payload(deltas: bytes, levels: bytes, scale: float) -> bytes:
    return msgspec.msgpack.encode([5, deltas, levels, scale, 1])


@pytest.mark.parametrize(
    "payload",
    [
        _payload(b"\x01\x00\x02", b"\x01\x02", 1.0),  # odd delta bytes
        _payload(np.array([3, 1, 1], "<u2").tobytes(), b"\x01\x02", 1.0),  # 3 ids, 2 levels
        _payload(np.array([3, 0], "<u2").tobytes(), b"\x01\x02", 1.0),  # a repeated id
        _payload(np.array([3, 1], "<u2").tobytes(), b"\x01\x02", -0.5),  # negative scale
        _payload(np.array([3, 1], "<u2").tobytes(), b"\x01\x02", float("nan")),
        _payload(np.array([3, 1], "<u2").tobytes(), b"\x01\x02", 1e300),  # inf as float32
    ],
)
def test_validate_refuses_what_op_68_forbids(payload: bytes) -> None:
    op = ops.decode(int(ops.OpType.UpdateSparseCodeU8), payload)
    with pytest.raises(InvalidArgument):
        ops.validate(op)


def test_the_run_decoder_refuses_damage_the_per_record_path_then_names() -> None:
    good = code_ops_of([1], *_codes(7, 1), 1)[0]
    bad_ids = ops.UpdateSparseCodeU8(
        id=2, feature_deltas=bytes(2 * ACTIVE), levels=good.levels, scale=1.0
    )
    bad_scale = ops.UpdateSparseCodeU8(
        id=3, feature_deltas=good.feature_deltas, levels=good.levels, scale=-1.0
    )
    for bad in (bad_ids, bad_scale):
        with pytest.raises(CorruptionError):
            packed_columns([good, bad], ACTIVE)  # type: ignore[list-item]


def _read(tmp_path: Any, payloads: list[bytes]) -> Any:
    log = _core.SegmentLog(str(tmp_path), instance_id=1, durability="flush")
    for p in payloads:
        log.append(int(ops.OpType.UpdateSparseCodeU8), p)
    log.close()
    reader = _core.SegmentLog(str(tmp_path), instance_id=2, read_only=True)
    try:
        return reader.read_new(commit=False)
    finally:
        reader.close()


def test_the_native_run_decoder_equals_the_reference_bit_for_bit(tmp_path: Any) -> None:
    feats, acts = _codes(8, 40)
    acts[3] *= 1e-30  # tiny and
    acts[4] *= 1e30  # huge scales
    acts[5] = 0  # scale 0
    run = code_ops_of([(2 << 32) | i for i in range(40)], feats, acts, 3)
    result = _read(tmp_path, [ops.encode(op) for op in run])
    cols, others = decode_packed_run(result, 0, len(result), ACTIVE)
    ref, rest = packed_columns(run, ACTIVE)  # type: ignore[arg-type]
    assert others == [] and rest == []
    assert cols.ids.tolist() == ref.ids.tolist() and cols.versions.tolist() == [3] * 40
    assert cols.features.tolist() == ref.features.tolist()
    assert cols.activations.tobytes() == ref.activations.tobytes()


def test_the_native_run_decoder_leaves_what_it_refuses_to_msgspec(tmp_path: Any) -> None:
    good = code_ops_of([1], *_codes(9, 1), 1)[0]
    assert isinstance(good, ops.UpdateSparseCodeU8)
    fields = [good.id, good.feature_deltas, good.levels, good.scale, 1]
    as_f32 = (
        b"\x95"
        + msgspec.msgpack.encode(good.id)
        + msgspec.msgpack.encode(good.feature_deltas)
        + msgspec.msgpack.encode(good.levels)
        + b"\xca"
        + struct.pack(">f", good.scale)
        + b"\x01"
    )
    repeated = bytearray(good.feature_deltas)
    repeated[2:4] = b"\x00\x00"
    payloads = [
        msgspec.msgpack.encode(fields),  # 0 plain
        as_f32,  # 1 a float32 scale: taken, same value
        msgspec.msgpack.encode([*fields[:3], -1.0, 1]),  # 2 negative scale
        msgspec.msgpack.encode([fields[0], bytes(repeated), *fields[2:]]),  # 3 a repeated id
        msgspec.msgpack.encode([*fields[:3], 1, 1]),  # 4 an int scale (msgspec takes it)
        msgspec.msgpack.encode([fields[0], b"\x01\x00", b"\x02", 1.0]),  # 5 another width
        msgspec.msgpack.encode(fields)[:-1],  # 6 cut short
    ]
    result = _read(tmp_path, payloads)
    cols, _ = decode_packed_run(result, 0, 2, ACTIVE)
    assert cols.activations[0].tobytes() == cols.activations[1].tobytes() == good.activations
    with pytest.raises(CorruptionError):
        decode_packed_run(result, 0, len(result), ACTIVE)  # record 6 does not decode at all
    cols, others = decode_packed_run(result, 0, 6, ACTIVE)
    assert len(cols) == 2 and [i for i, _ in others] == [2, 3, 4, 5]
    for i, op in others:
        if i in (2, 3):
            with pytest.raises(InvalidArgument):
                ops.validate(op)
        else:
            ops.validate(op)
