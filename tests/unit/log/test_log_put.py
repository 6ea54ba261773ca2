"""The PutPayload fast paths against the Python codec (the oracle):
``_core.encode_put`` / ``SegmentLog.put_appender`` write exactly the bytes of
``chitta.ops.encode``; ``ReadResult.decode_puts`` (via ``ops.decode_records``)
builds structs equal to msgspec's, field types included; group commit acknowledges
every record once, durably and readably."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chitta
from chitta import _core, ops
from chitta.errors import CorruptionError, InvalidArgument

P = ops.PutPayload
ENC = ops._ENCODER.encode
FIELDS = P.__struct_fields__

texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=300)
names = st.none() | st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | texts,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(texts, kids, max_size=3),
    max_leaves=8,
)
puts = st.builds(
    P,
    id=st.integers(0, 2**64 - 1),
    text=texts,
    kind=st.sampled_from(sorted(ops.MEMORY_KINDS)) | texts,
    created_ms=st.integers(-(2**63), 2**63 - 1),
    realm=names,
    session=names,
    source_tool=names,
    harness=names,
    tags=st.lists(texts, max_size=5).map(tuple),
    confidence=st.floats(allow_nan=False),
    strength=st.floats(allow_nan=False),
    embedding=st.none() | st.binary(max_size=600),
    meta=st.none() | st.dictionaries(texts, json_values, max_size=4),
    artifacts=st.lists(texts, max_size=3).map(tuple),
    written_ms=st.integers(-(2**63), 2**63 - 1),
)


def args15(p: P) -> tuple:
    meta = None if p.meta is None else ENC(p.meta)
    return (
        p.id,
        p.text,
        p.kind,
        p.created_ms,
        p.realm,
        p.session,
        p.source_tool,
        p.harness,
        p.tags,
        p.confidence,
        p.strength,
        p.embedding,
        meta,
        p.artifacts,
        p.written_ms,
    )


@settings(max_examples=300, deadline=None)
@given(puts)
def test_encode_put_is_byte_identical_to_ops_encode(p: P) -> None:
    assert _core.encode_put(*args15(p)) == ops.encode(p)


@given(
    st.integers(0, 2**64 - 1),
    texts,
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**63), 2**63 - 1),
)
def test_simple_form_is_byte_identical_to_defaults(
    mid: int, text: str, created: int, written: int
) -> None:
    want = ops.encode(P(id=mid, text=text, created_ms=created, written_ms=written))
    assert _core.encode_put(mid, text, created, written) == want


@pytest.mark.parametrize(
    "text", ["a", "x" * 31, "x" * 32, "x" * 255, "x" * 256, "x" * 65536, "é" * 100, "𝄞✓"]
)
def test_encode_put_string_length_formats(text: str) -> None:
    assert _core.encode_put(1, text, 0, 0) == ops.encode(P(id=1, text=text))


@pytest.mark.parametrize(
    ("index", "value"),
    [
        (0, -1),
        (0, 2**64),
        (0, "1"),
        (1, b"x"),
        (1, "\ud800"),
        (3, 2**63),
        (8, "tag"),
        (8, (1,)),
        (9, 1),
        (10, "1.0"),
        (11, "vec"),
        (12, b"\x01"),
        (13, None),
        (14, 1.5),
    ],
)
def test_encode_put_bad_argument_is_invalid_argument(index: int, value: object) -> None:
    args = list(args15(P(id=1, text="t")))
    args[index] = value
    with pytest.raises(InvalidArgument):
        _core.encode_put(*args)


def test_encode_put_wrong_arity_is_invalid_argument() -> None:
    with pytest.raises(InvalidArgument):
        _core.encode_put(1, "t")


def _read(root: str):
    log = _core.SegmentLog(root, read_only=True)
    try:
        return log.read_new()
    finally:
        log.close()


@settings(max_examples=30, deadline=None)
@given(st.lists(puts, min_size=1, max_size=20))
def test_decode_records_equals_msgspec(
    tmp_path_factory: pytest.TempPathFactory, batch: list[P]
) -> None:
    root = str(tmp_path_factory.mktemp("f"))
    log = _core.SegmentLog(root, instance_id=1, durability="buffered")
    for p in batch:
        log.append(0, ops.encode(p))
    log.close()
    result = _read(root)
    got = ops.decode_records(result, 0, 0, len(result))
    want = ops.decode_run(0, result.framed(0, len(result)))
    assert got == want
    for a, b in zip(got, want):
        assert [type(getattr(a, f)) for f in FIELDS] == [type(getattr(b, f)) for f in FIELDS]
    structs, fallback = result.decode_puts(0, len(result), P)
    assert all((s is None) == (i in fallback) for i, s in enumerate(structs))
    assert all(batch[i].meta is not None or structs[i] is not None for i in range(len(batch)))


@pytest.mark.parametrize(
    "payload",
    [
        ENC(
            [1, "t", "observation", 5, None, None, None, None, [], 1, 1.0, None, None, [], 0]
        ),  # int confidence
        ENC([1, "t"]),  # an older writer: trailing fields missing
        ENC(
            [1, "t", "thought", 5, None, None, None, None, [], 1.0, 1.0, None, None, [], 0, "new"]
        ),  # newer
        ENC(
            [1, "t", "observation", 5, None, None, None, None, [], 1.0, 1.0, None, {"k": 1}, [], 0]
        ),
        b"\x9f\x01\xa1\xff"
        + ENC(["observation", 5, None, None, None, None, [], 1.0, 1.0, None, None, [], 0])[1:],
    ],
)
def test_unusual_payloads_decode_as_msgspec_does(
    tmp_path: os.PathLike[str], payload: bytes
) -> None:
    log = _core.SegmentLog(str(tmp_path), instance_id=1)
    log.append(0, payload)
    log.close()
    result = _read(str(tmp_path))
    try:
        want = ops.decode(0, payload)
    except CorruptionError:
        with pytest.raises(CorruptionError):
            ops.decode_records(result, 0, 0, 1)
        return
    assert ops.decode_records(result, 0, 0, 1) == [want]


def test_damaged_put_raises_corruption(tmp_path: os.PathLike[str]) -> None:
    log = _core.SegmentLog(str(tmp_path), instance_id=1)
    log.append(0, ops.encode(P(id=1, text="fine")))
    log.append(0, ops.encode(P(id=2, text="cut short"))[:-3])
    log.close()
    result = _read(str(tmp_path))
    with pytest.raises(CorruptionError):
        ops.decode_records(result, 0, 0, 2)


def test_remember_fast_path_writes_the_ops_encode_bytes(tmp_path: os.PathLike[str]) -> None:
    root = os.path.join(tmp_path, "f")
    with chitta.open(root, embedder=None, clock=lambda: 1_700_000_000.123) as f:
        mid = f.remember("héllo wörld")  # non-ASCII: validated the general way, still the fast path
        mid2 = f.remember("plain ascii")
        mid3 = f.remember("with a tag", tags=["t"])  # general path
        assert f.get(mid).text == "héllo wörld"
    result = _read(root)
    assert [bytes(result.payload(i)) for i in range(3)] == [
        ops.encode(
            P(
                id=mid,
                text="héllo wörld",
                created_ms=1_700_000_000_123,
                written_ms=1_700_000_000_123,
            )
        ),
        ops.encode(
            P(
                id=mid2,
                text="plain ascii",
                created_ms=1_700_000_000_123,
                written_ms=1_700_000_000_123,
            )
        ),
        ops.encode(
            P(
                id=mid3,
                text="with a tag",
                tags=("t",),
                created_ms=1_700_000_000_123,
                written_ms=1_700_000_000_123,
            )
        ),
    ]
    with chitta.open(root, read_only=True, embedder=None) as g:
        assert [g.get(m).text for m in (mid, mid2, mid3)] == [
            "héllo wörld",
            "plain ascii",
            "with a tag",
        ]
        assert g.get(mid).created_ms == 1_700_000_000_123


def test_remember_fast_path_refuses_bad_text(tmp_path: os.PathLike[str]) -> None:
    with chitta.open(os.path.join(tmp_path, "f"), embedder=None) as f:
        for bad in ("", "   ", 5, b"bytes", "\ud800"):
            with pytest.raises(InvalidArgument):
                f.remember(bad)  # type: ignore[arg-type]
        assert len(f) == 0
    assert len(_read(os.path.join(tmp_path, "f"))) == 0


# ---- group commit ---------------------------------------------------------------------
def _hammer(threads: int, per: int, append) -> list[list[int]]:
    seqnos: list[list[int]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def body(t: int) -> None:
        barrier.wait()
        try:
            for i in range(per):
                seqnos[t].append(append(t, i))
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    pool = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    if errors:
        raise errors[0]
    return seqnos


@pytest.mark.parametrize("threads", [1, 8, 32])
def test_group_commit_acknowledges_each_record_once_and_durably(
    tmp_path: os.PathLike[str], threads: int
) -> None:
    per = 40
    log = _core.SegmentLog(str(tmp_path), instance_id=9, durability="fsync")
    ap = log.put_appender()
    seqnos = _hammer(threads, per, lambda t, i: ap((t << 16) | i, f"thread {t} record {i}", t, i))
    stats = log.sync_stats()
    log.close()
    flat = sorted(s for run in seqnos for s in run)
    assert flat == list(range(1, threads * per + 1))  # no seqno lost or given twice
    for run in seqnos:
        assert run == sorted(run)  # each thread's records in its own order
    assert stats["records"] == threads * per  # every acknowledged record went through a sync
    assert 1 <= stats["syncs"] <= threads * per
    assert sum(stats["per_sync"]) == stats["syncs"]
    result = _read(str(tmp_path))
    got = ops.decode_records(result, 0, 0, len(result))
    by_seq = dict(zip(result.seqnos.tolist(), got))
    for t, run in enumerate(seqnos):
        for i, s in enumerate(run):
            assert by_seq[s].id == (t << 16) | i and by_seq[s].text == f"thread {t} record {i}"


def test_fsync_remember_from_threads_replays_every_id(tmp_path: os.PathLike[str]) -> None:
    root = os.path.join(tmp_path, "f")
    with chitta.open(root, durability="fsync", embedder=None) as f:
        ids = _hammer(8, 25, lambda t, i: f.remember(f"t{t} i{i}"))
        stats = f.core.log.sync_stats()
    flat = [m for run in ids for m in run]
    assert len(set(flat)) == 200 and stats["records"] == 200
    with chitta.open(root, read_only=True, embedder=None) as g:
        assert sorted(g.ids()) == sorted(flat)
        assert {g.get(m).text for m in flat} == {f"t{t} i{i}" for t in range(8) for i in range(25)}


def test_sync_stats_of_a_flush_log_are_zero(tmp_path: os.PathLike[str]) -> None:
    log = _core.SegmentLog(str(tmp_path), instance_id=1)
    log.put_appender()(1, "x", 0, 0)
    assert log.sync_stats()["syncs"] == 0
    log.close()
