"""Packed sparse codes (op 68, UpdateSparseCodeU8) against plain-Python oracles:
the u16 delta ids and u8 levels written, what the op gives back, the run decoder
(equal, bit for bit, to the op's own properties), the fallback to op 12, the
rules validate() checks, and the size against op 12."""

from __future__ import annotations

import itertools
import struct

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import ops
from chitta.errors import CorruptionError, InvalidArgument
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
