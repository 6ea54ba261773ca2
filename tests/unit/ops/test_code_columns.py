"""The native UpdateSparseCode run decoder equals msgspec's decoding of the same
records (hypothesis), and leaves every record it does not take to msgspec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import _core, ops
from chitta.errors import CorruptionError
from chitta.ops.code_columns import CodeColumns, decode_code_run

ACTIVE = 4


@st.composite
def codes(draw: st.DrawFn) -> ops.UpdateSparseCode:
    n = draw(st.sampled_from([ACTIVE, ACTIVE, ACTIVE, 1, 6]))  # mostly the run's count, some others
    feats = tuple(
        sorted(draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n, unique=True)))
    )
    acts = np.array(
        draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=n, max_size=n)), "<f4"
    ).tobytes()
    return ops.UpdateSparseCode(
        id=draw(st.integers(0, 2**64 - 1)),
        features=feats,
        activations=acts,
        encoder_version=draw(st.integers(0, 2**32 - 1)),
    )


def _read(root: str, payloads: list[bytes]):
    log = _core.SegmentLog(root, instance_id=1, durability="buffered")
    for p in payloads:
        log.append(int(ops.OpType.UpdateSparseCode), p)
    log.close()
    reader = _core.SegmentLog(root, read_only=True)
    try:
        return reader.read_new()
    finally:
        reader.close()


@settings(max_examples=40, deadline=None)
@given(batch=st.lists(codes(), min_size=0, max_size=30))
def test_native_run_equals_msgspec(
    tmp_path_factory: pytest.TempPathFactory, batch: list[ops.UpdateSparseCode]
) -> None:
    result = _read(str(tmp_path_factory.mktemp("codes")), [ops.encode(op) for op in batch])
    cols, others = decode_code_run(result, 0, len(batch), ACTIVE)
    reference, rest = CodeColumns.from_ops(batch, ACTIVE)
    assert cols.ops() == reference.ops()
    assert [op for _, op in others] == rest
    assert [batch[i] for i, _ in others] == rest  # record indices point at those ops
    assert cols.features.dtype == np.uint32 and cols.activations.dtype == np.float32


def test_damaged_records_go_to_msgspec(tmp_path) -> None:
    good = ops.UpdateSparseCode(
        id=5, features=(1, 2, 3, 4), activations=bytes(16), encoder_version=2
    )
    raw = ops.encode(good)
    damaged = [raw + b"\x00", raw[:-3], b"\x94\xff" + raw[2:], raw]
    result = _read(str(tmp_path / "f"), damaged)
    ids, _f, _a, _v, fallback = _core._decode_sparse_codes(result, 0, len(damaged), ACTIVE)
    assert ids.tolist() == [5] and fallback == [0, 1, 2]
    with pytest.raises(CorruptionError):
        decode_code_run(result, 0, len(damaged), ACTIVE)


def test_bad_arguments(tmp_path) -> None:
    result = _read(str(tmp_path / "f"), [])
    with pytest.raises(IndexError):
        _core._decode_sparse_codes(result, 0, 1, ACTIVE)
    from chitta.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        _core._decode_sparse_codes(result, 0, 0, 0)


def _batch_log(tmp_path, batches: list[bytes]):
    log = _core.SegmentLog(str(tmp_path / "b"), instance_id=3, durability="buffered")
    for p in batches:
        log.append(int(ops.OpType.Batch), p)
    log.close()
    reader = _core.SegmentLog(str(tmp_path / "b"), read_only=True)
    try:
        return reader.read_new()
    finally:
        reader.close()


def test_unpack_batch_equals_batch_unpack(tmp_path) -> None:
    inner = [
        ops.PutPayload(
            id=(3 << 32) | 1, text="one", meta={"speaker": "Ana", "n": [1, {"x": None}]}
        ),
        ops.UpdateSparseCode(id=(3 << 32) | 1, features=(1, 2, 3, 4), activations=bytes(16)),
        ops.PutPayload(id=(3 << 32) | 2, text="two", embedding=np.ones(3, "<f4").tobytes()),
        ops.ConfigureField(key="k", value=b"\x00\x01"),
        ops.DeleteMemory(id=(3 << 32) | 2, at_ms=7),
    ]
    batches = [ops.Batch.of(*inner), ops.Batch.of(inner[3])]
    result = _batch_log(tmp_path, [ops.encode(b) for b in batches])
    for index, batch in enumerate(batches):
        unpacked = _core._unpack_batch(result, index)
        assert len(unpacked) == len(batch.ops)
        assert list(unpacked.op_types) == [code for code, _ in batch.ops]
        assert [unpacked.payload(i) for i in range(len(unpacked))] == [
            bytes(raw) for _, raw in batch.ops
        ]
        assert list(unpacked.seqnos) == [result.seqnos[index]] * len(
            unpacked
        )  # the Batch's own place
        assert list(unpacked.offsets) == [result.offsets[index]] * len(unpacked)
        decoded = [
            op
            for code, s, e in unpacked.op_runs()
            for op in ops.decode_records(unpacked, code, s, e)
        ]
        assert decoded == batch.unpack()


def test_payloads_outlive_the_parent_result_and_the_segment_files(tmp_path) -> None:
    """Read results point into the segments' maps instead of copying: an unpacked
    Batch must keep them alive after its parent result is gone and the files are
    removed (pruned segments, a closed log)."""
    import gc
    import shutil

    inner = [
        ops.PutPayload(
            id=(3 << 32) | i, text=f"t{i}" * 50, embedding=np.full(8, i, "<f4").tobytes()
        )
        for i in range(1, 40)
    ]
    batch = ops.Batch.of(*inner)
    result = _batch_log(tmp_path / "f", [ops.encode(batch)])
    plain = result.payload(0)
    unpacked = _core._unpack_batch(result, 0)
    del result
    gc.collect()
    shutil.rmtree(tmp_path / "f")
    np.ones(1 << 20).sum()  # churn the heap a little
    assert [unpacked.payload(i) for i in range(len(unpacked))] == [
        bytes(raw) for _, raw in batch.ops
    ]
    assert ops.decode(ops.OpType.Batch, plain).unpack() == inner


def test_unpack_batch_refuses_other_shapes(tmp_path) -> None:
    good = ops.encode(ops.Batch.of(ops.DeleteMemory(id=1, at_ms=2)))
    nested = b"\x91\x91\x92\x40" + good  # an inner op of type Batch (64)
    result = _batch_log(
        tmp_path, [good + b"\x00", good[:-1], nested, b"\x91\x91\x92\x05\xc1", good]
    )
    for index in range(4):
        assert _core._unpack_batch(result, index) is None, index
        with pytest.raises(CorruptionError):
            ops.decode(ops.OpType.Batch, result.payload(index)).unpack()
    assert len(_core._unpack_batch(result, 4)) == 1
    with pytest.raises(IndexError):
        _core._unpack_batch(result, 5)
    plain = _read(
        str(tmp_path / "plain"),
        [ops.encode(ops.UpdateSparseCode(id=1, features=(1,), activations=bytes(4)))],
    )
    from chitta.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        _core._unpack_batch(plain, 0)
