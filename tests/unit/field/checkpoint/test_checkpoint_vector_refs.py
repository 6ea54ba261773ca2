"""State 10: a checkpoint stores the memories' vectors as references into the log
(vectors.ref) instead of a copy (vectors.emb). Oracles: the same field replayed from its
log alone (every memory's vector, bit for bit), and the segment bytes read at each
reference with struct as FORMAT.md §8 lays vectors.ref out. A reference whose bytes are
gone or changed refuses the checkpoint; the field is then the log's."""

from __future__ import annotations

import shutil
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from _deferred_embedders import Gated
from fieldtools import segment_files

import chitta
from chitta.errors import CheckpointIgnored, CorruptionError
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import store, vector_refs
from chitta.field.checkpoint.snapshot import read

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


def test_gather_refuses_a_missing_or_short_segment(tmp_path: Path) -> None:
    """Independently of the watermark check: the loader itself refuses references it cannot
    read whole."""
    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    state = read(root.absolute())
    assert state is not None
    record = state.state["organs"]["memories"]["vector_refs"]
    refs, dim = vector_refs.read_refs(state.path / "vectors.ref", record["segments"], [])
    back, crc = vector_refs.gather(root, refs, dim)
    assert crc == record["crc"] and back.shape == (len(refs.ids), DIM)
    seg = root / "segments" / refs.segments[int(refs.seg[int(np.argmax(refs.offsets))])]
    keep = int(refs.offsets.max()) + 4 * dim - 1
    with open(seg, "r+b") as fh:
        fh.truncate(keep)
    with pytest.raises(CorruptionError, match="shorter"):
        vector_refs.gather(root, refs, dim)
    seg.unlink()
    with pytest.raises(CorruptionError, match="cannot be read"):
        vector_refs.gather(root, refs, dim)


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
