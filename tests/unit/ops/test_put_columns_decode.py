"""ops.decode_put_columns (native, _core.decode_put_columns) builds the same
PutColumns as the reference: PutColumns.from_puts of the msgspec-decoded ops,
on random runs, unusual encodings (msgspec fallback rows) and damage."""

from __future__ import annotations

import os

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import _core, ops
from chitta.errors import CorruptionError
from chitta.ops import PutPayload as P
from chitta.ops.put_columns import PutColumns

ENC = msgspec.msgpack.Encoder().encode
labels = st.one_of(st.none(), st.sampled_from(["r", "s", "ünï", "x" * 70, ""]))
vectors = st.one_of(
    st.none(),
    st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=4).map(
        lambda xs: np.array(xs, "<f4").tobytes()
    ),
    st.sampled_from([b"", b"\x00\x00"]),  # no float / not whole floats: extras
)
texts = st.one_of(st.text(max_size=40), st.sampled_from(["", "a" * 300, "café ✓ 😀"]))
meta = st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers(-5, 5), max_size=2))
puts = st.builds(
    P,
    id=st.integers(0, 2**64 - 1),
    text=texts,
    kind=st.sampled_from(["observation", "decision", "thought", "ünï"]),
    created_ms=st.integers(-(2**63), 2**63 - 1),
    realm=labels,
    session=labels,
    source_tool=labels,
    harness=labels,
    tags=st.one_of(st.just(()), st.lists(st.text(max_size=4), max_size=2).map(tuple)),
    confidence=st.floats(allow_nan=False),
    strength=st.floats(allow_nan=False),
    embedding=vectors,
    meta=meta,
    artifacts=st.one_of(st.just(()), st.lists(st.text(max_size=4), max_size=2).map(tuple)),
    written_ms=st.integers(-(2**63), 2**63 - 1),
)


def _read(root: str):
    log = _core.SegmentLog(root, read_only=True)
    try:
        return log.read_new()
    finally:
        log.close()


def _write(root: str, payloads: list[bytes]):
    log = _core.SegmentLog(root, instance_id=1, durability="buffered")
    for p in payloads:
        log.append(0, p)
    log.close()
    return _read(root)


def _reference(result, start: int, end: int) -> PutColumns:
    return PutColumns.from_puts(ops.decode_records(result, 0, start, end))  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(puts, max_size=25), st.data())
def test_random_runs_equal_the_reference(
    tmp_path_factory: pytest.TempPathFactory, batch: list[P], data
) -> None:
    result = _write(str(tmp_path_factory.mktemp("f")), [ops.encode(p) for p in batch])
    n = len(result)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    got = ops.decode_put_columns(result, start, end)
    want = _reference(result, start, end)
    assert got.same_as(want)
    assert got.ops() == batch[start:end]
    assert got.vectors.dtype == np.float32 and got.ids.dtype == np.uint64


def _plain(i: int, changes: dict | None = None) -> list:
    fields = [
        i,
        f"text {i}",
        "observation",
        5,
        None,
        None,
        None,
        None,
        [],
        1.0,
        1.0,
        None,
        None,
        [],
        7,
    ]
    for k, v in (changes or {}).items():
        fields[k] = v
    return fields


FALLBACKS = [
    ENC(_plain(1, {9: 1})),  # an int where a float belongs
    ENC([2, "older writer"]),  # trailing fields missing
    ENC(_plain(3) + ["a newer writer's field"]),
    ENC(_plain(4, {12: {"k": [1, 2]}})),  # meta
    ENC(_plain(5, {8: ["t1", "t2"]})),  # tags
    ENC(_plain(6, {13: ["/a"]})),  # artifacts
    ENC(_plain(7, {11: np.ones(3, "<f4").tobytes()})),
    ENC(_plain(8, {11: np.ones(2, "<f4").tobytes()})),  # odd width
]


def test_fallback_rows_fill_their_columns_in_order(tmp_path: os.PathLike[str]) -> None:
    payloads = []
    for j, p in enumerate(FALLBACKS):
        payloads.append(ENC(_plain(100 + j, {3: j})))  # a plain row between each
        payloads.append(p)
    result = _write(str(tmp_path), payloads)
    got = ops.decode_put_columns(result, 0, len(result))
    assert got.same_as(_reference(result, 0, len(result)))
    assert sorted(got.extras) == [7, 9, 11, 15]  # meta, tags, artifacts, the odd vector
    assert got.text(3) == "older writer" and got.confidence[1] == 1.0


def test_invalid_utf8_text_is_corruption(tmp_path: os.PathLike[str]) -> None:
    bad = bytearray(ENC(_plain(1, {1: "abcdefghij"})))
    bad[bad.index(b"abcdefghij") + 9] = 0xFF
    result = _write(str(tmp_path), [ENC(_plain(0)), bytes(bad)])
    with pytest.raises(CorruptionError):
        ops.decode_records(result, 0, 0, 2)
    with pytest.raises(CorruptionError):
        ops.decode_put_columns(result, 0, 2)
    assert ops.decode_put_columns(result, 0, 1).texts() == ["text 0"]


def test_invalid_utf8_label_is_corruption(tmp_path: os.PathLike[str]) -> None:
    bad = bytearray(ENC(_plain(1, {4: "realmXX"})))
    at = bad.index(b"realmXX")
    bad[at + 5 : at + 7] = b"\xed\xa0"  # a surrogate's lead bytes
    result = _write(str(tmp_path), [bytes(bad)])
    with pytest.raises(CorruptionError):
        ops.decode_put_columns(result, 0, 1)


@pytest.mark.parametrize(
    "payload",
    [
        b"\x9f\x01",  # cut short
        ENC([1]),  # too few fields for an id and text
        ENC(_plain(1, {0: -1})),  # a negative id
        ENC({"id": 1}),  # not an array
    ],
)
def test_damaged_record_raises_as_decode_records(
    tmp_path: os.PathLike[str], payload: bytes
) -> None:
    result = _write(str(tmp_path), [ENC(_plain(0)), payload])
    with pytest.raises(CorruptionError) as want:
        ops.decode_records(result, 0, 0, 2)
    with pytest.raises(CorruptionError) as got:
        ops.decode_put_columns(result, 0, 2)
    assert str(got.value) == str(want.value)


def test_bad_range_is_an_index_error(tmp_path: os.PathLike[str]) -> None:
    result = _write(str(tmp_path), [ENC(_plain(0))])
    with pytest.raises(IndexError):
        _core.decode_put_columns(result, 0, 2, lambda i: None)
    with pytest.raises(IndexError):
        _core.decode_put_columns(result, 1, 0, lambda i: None)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2**64 - 1), st.text(min_size=1, max_size=10), st.integers(0, 2**62)
        ),
        max_size=20,
    )
)
def test_pending_columns_equal_the_reference(run: list[tuple[int, str, int]]) -> None:
    from chitta.field.core import pending_columns

    want = PutColumns.from_puts([P(id=m, text=t, created_ms=ms, written_ms=ms) for m, t, ms in run])
    assert pending_columns(run).same_as(want)


def test_reopened_field_replays_columns_to_the_same_memories(tmp_path: os.PathLike[str]) -> None:
    import chitta

    root = str(tmp_path)
    with chitta.open(root, embedder="hashing") as f:
        ids = [f.remember(f"plain {i} ✓" if i % 3 else f"plain {i}") for i in range(5)]
        ids.append(
            f.remember("tagged", tags=("a",), meta={"speaker": "Ana"}, kind="decision", realm="r")
        )
        ids.append(f.remember("own vector", embedding=np.ones(384, np.float32)))
        ids += f.remember_many(["one", {"text": "two", "session": "s1"}])
        f.forget(ids[1])
        f.update(ids[2], text="changed", confidence=0.5)
        before = [
            (
                m.id,
                m.text,
                m.kind,
                m.realm,
                m.session,
                m.tags,
                m.meta,
                m.confidence,
                m.updated_ms,
                None if m.embedding is None else m.embedding.tobytes(),
            )
            for m in f.memories()
        ]
    with chitta.open(root, embedder="hashing", read_only=True) as f:
        after = [
            (
                m.id,
                m.text,
                m.kind,
                m.realm,
                m.session,
                m.tags,
                m.meta,
                m.confidence,
                m.updated_ms,
                None if m.embedding is None else m.embedding.tobytes(),
            )
            for m in f.memories()
        ]
    assert after == before and len(before) == len(ids) - 1
