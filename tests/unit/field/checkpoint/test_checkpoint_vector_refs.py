"""State 10: a checkpoint stores the memories' vectors as references into the log
(vectors.ref) instead of a copy (vectors.emb). Oracles: the same field replayed from its
log alone (every memory's vector, bit for bit), and the segment bytes read at each
reference with struct as FORMAT.md §8 lays vectors.ref out. A reference whose bytes are
gone or changed refuses the checkpoint; the field is then the log's."""

from __future__ import annotations

import os
import shutil
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _deferred_embedders import Gated
from fieldtools import segment_files

import chitta
from chitta.errors import CheckpointIgnored, CorruptionError
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import store, vector_refs
from chitta.field.checkpoint.snapshot import read
from chitta.ops import OpType

DIM = 16
NOW = 1_780_000_000.0
GOLDENS = Path(__file__).resolve().parents[3] / "format" / "golden"


def _vecs(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def _open(root: Path, **kw: object) -> chitta.Field:
    kw.setdefault("embedder", None)
    return chitta.open(root, clock=lambda: NOW, **kw)  # type: ignore[arg-type]


def _build(root: Path) -> list[int]:
    """Vectors from every record that carries one: a Batch of puts, single puts, an
    UpdateMemoryContent(embedding), and one from the background embedder."""
    with _open(root) as f:
        ids = f.remember_many(
            [{"text": f"memory {i}", "embedding": v} for i, v in enumerate(_vecs(40, 1))]
        )
        ids += [f.remember(f"single {i}", embedding=v) for i, v in enumerate(_vecs(5, 2))]
        f.update(ids[3], embedding=_vecs(1, 3)[0])
        f.forget(ids[7])
        ids.append(f.remember("no vector at all"))
    # embedded off the caller's thread (op 24), by an embedder of the same family
    with _open(root, embedder=Gated(DIM, family="caller-supplied-d16")) as f:
        ids.append(f.remember("embedded in the background"))
        assert f.wait_embedded(timeout=30)
    return ids


def _vectors(f: chitta.Field) -> dict[int, bytes | None]:
    return {
        m.id: None if m.embedding is None else np.asarray(m.embedding, "<f4").tobytes()
        for m in f.memories()
    }


def _replayed(root: Path, **kw: object) -> dict[int, bytes | None]:
    with _open(root, read_only=True, load_checkpoint=False, **kw) as f:
        return _vectors(f)


def _loaded(root: Path) -> dict[int, bytes | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(root, read_only=True) as f:
            assert f.checkpoint_loaded is not None
            return _vectors(f)


def _spec_refs(root: Path) -> dict[int, bytes]:
    """id -> the bytes each vectors.ref row names, read by FORMAT.md §8 with struct."""
    live = store.current(root.absolute())
    assert live is not None
    data = (live / "vectors.ref").read_bytes()
    magic, version, dim, count = struct.unpack_from("<8sIIQ", data, 0)
    assert (magic, version) == (b"CHITVREF", 1) and len(data) == 28 + 20 * count
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == fmt.crc32c(data[:-4])
    state = read(root.absolute())
    assert state is not None
    record = state.state["organs"]["memories"]["vector_refs"]
    out, crc = {}, 0
    for i in range(count):
        (mid,) = struct.unpack_from("<Q", data, 24 + 8 * i)
        (seg,) = struct.unpack_from("<I", data, 24 + 8 * count + 4 * i)
        (at,) = struct.unpack_from("<Q", data, 24 + 12 * count + 8 * i)
        raw = (root / "segments" / record["segments"][seg]).read_bytes()[at : at + 4 * dim]
        out[mid] = raw
        crc = fmt.crc32c(raw, crc)
    assert crc == record["crc"]
    return out


def test_checkpoint_references_the_log_and_loads_to_the_replayed_field(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None
    assert (live / "vectors.ref").exists() and not (live / "vectors.emb").exists()
    replayed = _replayed(root)
    assert _loaded(root) == replayed
    with_vec = {k: v for k, v in replayed.items() if v is not None}
    assert _spec_refs(root) == with_vec and len(with_vec) == 45  # 46 live, one without


def test_a_second_checkpoint_builds_on_the_first_references(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root) as f:
        f.checkpoint()
    with _open(root) as f:  # after the watermark: new vectors, a changed one, a forgotten one
        f.remember_many([{"text": f"late {i}", "embedding": v} for i, v in enumerate(_vecs(3, 9))])
        f.update(ids[0], embedding=_vecs(1, 10)[0])
        f.forget(ids[1])
        f.checkpoint()
    replayed = _replayed(root)
    assert _loaded(root) == replayed
    assert _spec_refs(root) == {k: v for k, v in replayed.items() if v is not None}


def test_a_state_9_checkpoint_is_followed_by_references(tmp_path: Path) -> None:
    """The first checkpoint after a state-9 one (vectors.emb) finds every vector in the
    whole log."""
    root = tmp_path / "f"
    shutil.copytree(GOLDENS / "checkpoint-v9", root)
    with _open(root, instance_id=1) as f:
        f.remember("after the golden", embedding=np.ones(4, np.float32))
        f.checkpoint()
    replayed = _replayed(root)
    assert _loaded(root) == replayed
    assert _spec_refs(root) == {k: v for k, v in replayed.items() if v is not None}


def _first_ref(root: Path) -> tuple[Path, int]:
    state = read(root.absolute())
    assert state is not None
    record = state.state["organs"]["memories"]["vector_refs"]
    refs, _dim = vector_refs.read_refs(
        state.path / "vectors.ref", record["segments"], state.state["watermark"]["positions"]
    )
    return root / "segments" / record["segments"][int(refs.seg[0])], int(refs.offsets[0])


def test_changed_referenced_bytes_refuse_the_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    seg, at = _first_ref(root)
    with open(seg, "r+b") as fh:  # one vector byte changed in place
        fh.seek(at + 5)
        b = fh.read(1)[0]
        fh.seek(at + 5)
        fh.write(bytes([b ^ 0x10]))
    with pytest.warns(CheckpointIgnored, match="CRC"):
        f = _open(root, read_only=True, salvage=True)
    with f:
        assert f.checkpoint_loaded is None
        observed = _vectors(f)
    assert observed == _replayed(root, salvage=True)  # the damaged record skipped by both


def test_a_missing_referenced_segment_refuses_the_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    seg, _at = _first_ref(root)
    assert seg in segment_files(root)
    seg.unlink()
    with pytest.warns(CheckpointIgnored):
        f = _open(root, read_only=True, salvage=True)
    with f:
        assert f.checkpoint_loaded is None
        observed = _vectors(f)
    assert observed == _replayed(root, salvage=True)


def test_copy_rows_copies_each_row_and_refuses_one_past_the_end() -> None:
    from chitta import _core
    from chitta.errors import InvalidArgument

    src = bytes(range(256)) * 4
    offsets = np.array([0, 7, 1000, 3], np.uint64)
    dst = np.zeros((4, 24), np.uint8)
    _core._copy_rows(src, offsets, dst)
    assert [bytes(r) for r in dst] == [src[o : o + 24] for o in (0, 7, 1000, 3)]
    with pytest.raises(InvalidArgument, match="past the end"):
        _core._copy_rows(src, np.array([len(src) - 23], np.uint64), dst[:1])


def test_a_vector_not_found_in_the_log_is_copied_into_vectors_emb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer trusts only references it read back equal: one wrong offset and the
    checkpoint keeps a copy of every vector instead (vectors.emb, as state 9 did)."""
    root = tmp_path / "f"
    _build(root)
    scan = vector_refs._scan

    def off_by_four(*a: object) -> dict[int, tuple[str, int]]:
        found = scan(*a)  # type: ignore[arg-type]
        mid = next(iter(found))
        found[mid] = (found[mid][0], found[mid][1] + 4)
        return found

    monkeypatch.setattr(vector_refs, "_scan", off_by_four)
    with _open(root) as f:
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None
    assert (live / "vectors.emb").exists() and not (live / "vectors.ref").exists()
    assert _loaded(root) == _replayed(root)


def _read_all(root: Path) -> object:
    from chitta import _core

    log = _core.SegmentLog(str(root), read_only=True, create=False)
    try:
        return log.read_new(commit=False)
    finally:
        log.close()


@pytest.mark.parametrize("golden", ["v1.0", "v2.0"])
def test_payload_offsets_point_at_each_payload_in_its_file(golden: str, tmp_path: Path) -> None:
    """Segment formats 1.0 and 2.0 have record heads of different sizes: the reader's
    payload offsets, of top-level records and of the ops inside a Batch, name exactly the
    file bytes the payload was read from."""
    from chitta import _core

    root = tmp_path / "f"
    shutil.copytree(GOLDENS / golden, root)
    if golden == "v2.0":  # and a Batch of puts with vectors, written now
        with _open(root, instance_id=9) as f:
            f.remember_many(
                [{"text": f"m {i}", "embedding": v} for i, v in enumerate(_vecs(5, 4)[:, :4])]
            )
    result: Any = _read_all(root)
    files = {n: (root / "segments" / n).read_bytes() for n in result.segments}
    batches = 0
    for i in range(len(result)):
        data = files[result.segments[int(result.segment_index[i])]]
        at, payload = int(result.payload_offsets[i]), result.payload(i)
        assert data[at : at + len(payload)] == payload
        inner = _core._unpack_batch(result, i) if result.op_types[i] == OpType.Batch else None
        if inner is not None:
            batches += 1
            for j in range(len(inner)):
                at_j = int(inner.payload_offsets[j])
                assert data[at_j : at_j + len(inner.payload(j))] == inner.payload(j)
    assert len(result) > 0 and (batches > 0 or golden == "v1.0")


def test_put_columns_report_where_each_vector_lies(tmp_path: Path) -> None:
    """decode_put_columns' vector_seg / vector_at against the segment bytes; a put the
    fallback decoder read (it has meta) has no offset."""
    from chitta import _core, ops
    from chitta.ops.put_columns import NO_OFFSET

    root = tmp_path / "f"
    with _open(root) as f:
        f.remember_many([{"text": f"b {i}", "embedding": v} for i, v in enumerate(_vecs(6, 5))])
        for i, v in enumerate(_vecs(3, 6)):
            f.remember(f"single {i}", embedding=v, meta={"n": i} if i == 1 else None)
    result: Any = _read_all(root)
    files = {n: (root / "segments" / n).read_bytes() for n in result.segments}
    seen, unplaced = 0, 0
    sources = [(result, lo, hi) for t, lo, hi in result.op_runs() if t == OpType.PutPayload]
    for i in range(len(result)):
        inner = _core._unpack_batch(result, i) if result.op_types[i] == OpType.Batch else None
        if inner is not None:
            sources += [(inner, lo, hi) for t, lo, hi in inner.op_runs() if t == OpType.PutPayload]
    for res, lo, hi in sources:
        cols = ops.decode_put_columns(res, lo, hi)
        assert cols.vector_at is not None and cols.vector_seg is not None
        for k, row in enumerate(cols.vector_rows.tolist()):
            want = np.ascontiguousarray(cols.vectors[k], "<f4").tobytes()
            if int(cols.vector_at[k]) == NO_OFFSET:
                unplaced += 1
                assert row in cols.extras and cols.extras[row].meta is not None
                continue
            data = files[res.segments[int(cols.vector_seg[k])]]
            at = int(cols.vector_at[k])
            assert data[at : at + len(want)] == want
            seen += 1
    assert (seen, unplaced) == (8, 1)


def test_unit_rows_at_equals_unit_rows_of_the_gathered_rows() -> None:
    """Rows at odd offsets of two buffers: normalised bit for bit as _unit_rows normalises
    the same rows gathered, zero and NaN rows skipped the same way; the CRC is the CRC-32C of
    the rows' bytes back to back. References outside their buffer are refused."""
    from chitta import _core
    from chitta.errors import InvalidArgument

    rng = np.random.default_rng(11)
    d = 7
    rows = rng.standard_normal((9, d)).astype("<f4")
    rows[2] = 0.0
    rows[5, 3] = np.nan
    bufs = [bytearray(rng.integers(0, 256, 400, dtype=np.uint8).tobytes()) for _ in range(2)]
    seg = np.array([0, 1, 0, 1, 1, 0, 0, 1, 0], np.uint32)
    at = np.array([1, 3, 61, 90, 40, 150, 205, 170, 259], np.uint64)  # no two overlap
    for r in range(9):
        bufs[seg[r]][at[r] : at[r] + 4 * d] = rows[r].tobytes()
    frozen = tuple(bytes(b) for b in bufs)
    want = np.zeros((9, d), np.float32)
    want_norms, want_n = _core._unit_rows(rows.astype(np.float32), want)
    got = np.zeros((9, d), np.float32)
    norms, n = _core._unit_rows_at(frozen, seg, at, got)
    assert n == want_n == 7
    assert got.tobytes() == want.tobytes()
    assert norms.tobytes() == want_norms.tobytes()
    assert _core._crc_rows_at(frozen, seg, at, 4 * d) == fmt.crc32c(rows.tobytes())
    with pytest.raises(InvalidArgument, match="past the end"):
        _core._unit_rows_at(frozen, seg[:1], np.array([400 - 4 * d + 1], np.uint64), got)
    with pytest.raises(InvalidArgument, match="not given"):
        _core._crc_rows_at(frozen, np.array([2], np.uint32), at[:1], 4)
    with pytest.raises(InvalidArgument, match="fewer rows"):
        _core._unit_rows_at(frozen, seg, at, got[:8])


def test_a_state_10_open_keeps_references_not_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memories organ holds the checkpoint's vectors as references into the mapped log
    (12 bytes a row), and every way of reading one gives the log's bytes."""
    from chitta.field.checkpoint import mapped_vectors
    from chitta.field.checkpoint.mapped_vectors import MappedVectors

    monkeypatch.setattr(mapped_vectors, "MIN_MAPPED_ROWS", 1)  # map this small field's segments

    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    replayed = _replayed(root)
    with _open(root, read_only=True) as f:
        organ: Any = f.organ("memories")
        store_ = organ._s
        base = store_.base
        assert isinstance(base, MappedVectors) and len(base) == 45
        assert organ.nbytes()["vectors"] == 12 * 45
        for mid, want in replayed.items():
            m = f.get(mid)
            assert m is not None
            got = None if m.embedding is None else np.asarray(m.embedding, "<f4").tobytes()
            assert got == want
        every = base[np.arange(len(base))]
        assert [base[i].tobytes() for i in range(len(base))] == [r.tobytes() for r in every]
        assert base[-1].tobytes() == every[-1].tobytes()
        with pytest.raises(IndexError):
            base[len(base)]


def _checkpointed_refs(root: Path) -> tuple[dict[str, Any], vector_refs.VectorRefs, int]:
    """Write a checkpoint; its memories map's vector_refs record, references and dim."""
    with _open(root) as f:
        f.checkpoint()
    state = read(root.absolute())
    assert state is not None
    record = state.state["organs"]["memories"]["vector_refs"]
    refs, dim = vector_refs.read_refs(state.path / "vectors.ref", record["segments"], [])
    return record, refs, dim


def test_mapped_vectors_read_the_spec_rows_and_refuse_a_missing_or_short_segment(
    tmp_path: Path,
) -> None:
    """Independently of the watermark check: the loader itself refuses references it cannot
    read whole."""
    from chitta.field.checkpoint.mapped_vectors import MappedVectors

    root = tmp_path / "f"
    _build(root)
    record, refs, dim = _checkpointed_refs(root)
    mapped = MappedVectors(root, refs.segments, refs.seg, refs.offsets, dim)
    assert mapped.crc() == record["crc"]
    spec = _spec_refs(root)
    rows = mapped[np.arange(len(refs.ids))]
    assert {int(m): r.tobytes() for m, r in zip(refs.ids, rows)} == spec
    assert mapped.first_different(rows) == -1
    rows[3, 1] += 1.0
    assert mapped.first_different(rows) == 3
    seg = root / "segments" / refs.segments[int(refs.seg[int(np.argmax(refs.offsets))])]
    with open(seg, "r+b") as fh:
        fh.truncate(int(refs.offsets.max()) + 4 * dim - 1)
    with pytest.raises(CorruptionError, match="shorter"):
        MappedVectors(root, refs.segments, refs.seg, refs.offsets, dim)
    seg.unlink()
    with pytest.raises(CorruptionError, match="cannot be read"):
        MappedVectors(root, refs.segments, refs.seg, refs.offsets, dim)


def test_segments_with_few_rows_are_copied_and_the_maps_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each map keeps a file descriptor: only the segments holding most rows stay mapped
    (MAX_MAPS of them, each with at least MIN_MAPPED_ROWS), the rows of the rest are copied;
    every row reads the same either way."""
    from chitta.field.checkpoint import mapped_vectors
    from chitta.field.checkpoint.mapped_vectors import MappedVectors

    root = tmp_path / "f"
    for inst, n in ((1, 30), (2, 3), (3, 12)):  # three writers, three segments of vectors
        with _open(root, instance_id=inst) as f:
            f.remember_many(
                [{"text": f"w{inst} {i}", "embedding": v} for i, v in enumerate(_vecs(n, inst))]
            )
    record, refs, dim = _checkpointed_refs(root)
    assert len(set(refs.seg.tolist())) == 3
    spec = _spec_refs(root)
    monkeypatch.setattr(mapped_vectors, "MAX_MAPS", 1)
    monkeypatch.setattr(mapped_vectors, "MIN_MAPPED_ROWS", 10)
    fds = len(os.listdir("/proc/self/fd"))
    mapped = MappedVectors(root, refs.segments, refs.seg, refs.offsets, dim)
    assert len(os.listdir("/proc/self/fd")) - fds == 1  # one segment mapped (the 30 rows)
    kinds = [type(b).__name__ for b in mapped._maps]
    assert kinds == ["mmap", "ndarray"]
    assert mapped.nbytes == 12 * 45 + 15 * 4 * DIM  # references + the 15 copied rows
    rows = mapped[np.arange(len(refs.ids))]
    assert {int(m): r.tobytes() for m, r in zip(refs.ids, rows)} == spec
    assert mapped.crc() == record["crc"]
    monkeypatch.setattr(mapped_vectors, "MIN_MAPPED_ROWS", 100)  # none holds 100: all copied
    copied = MappedVectors(root, refs.segments, refs.seg, refs.offsets, dim)
    assert [type(b).__name__ for b in copied._maps] == ["ndarray"]
    assert copied[np.arange(len(refs.ids))].tobytes() == rows.tobytes()
