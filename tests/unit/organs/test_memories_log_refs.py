"""A handle keeps the vectors it writes itself as references into its log segments, not
as a second copy in memory (D-088). Oracles: the vectors as the caller gave them; the
segment bytes read with plain file I/O at each reference; the same field replayed from
its log alone by a fresh handle (which copies, as replay does)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _deferred_embedders import Gated

import chitta
from chitta.field.checkpoint.mapped_vectors import MappedVectors

DIM = 16
NOW = 1_780_000_000.0


def _vecs(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def _open(root: Path, **kw: object) -> chitta.Field:
    kw.setdefault("embedder", None)
    return chitta.open(root, clock=lambda: NOW, **kw)  # type: ignore[arg-type]


def _vectors(f: chitta.Field) -> dict[int, bytes | None]:
    return {
        m.id: None if m.embedding is None else np.asarray(m.embedding, "<f4").tobytes()
        for m in f.memories()
    }


def _refs_on_disk(f: chitta.Field, root: Path) -> dict[int, bytes]:
    """id -> the bytes at each referenced (segment, offset), read from the files."""
    s = f.core.memories._s
    base = s.base
    assert isinstance(base, MappedVectors)
    names = {k: name for name, k in base._names.items()}
    out = {}
    ids = s.map.ids()
    for row in range(s.n):
        v = int(s.c["vec"][row])
        if v <= -2 and not s.c["dead"][row]:
            r = -2 - v
            seg = names[int(base._seg[r])]
            at = int(base._at[r])
            with open(root / "segments" / seg, "rb") as fh:
                fh.seek(at)
                out[int(ids[row])] = fh.read(4 * DIM)
    return out


def _write_every_kind(f: chitta.Field) -> dict[int, bytes]:
    """Vectors from a large Batch of puts (applied as columns), a small one, single
    puts and an update; returns id -> the bytes each memory's vector should hold."""
    want: dict[int, bytes] = {}
    big = _vecs(300, 1)
    for mid, v in zip(
        f.remember_many([{"text": f"big {i}", "embedding": v} for i, v in enumerate(big)]), big
    ):
        want[mid] = v.tobytes()
    small = _vecs(20, 2)
    for mid, v in zip(
        f.remember_many([{"text": f"small {i}", "embedding": v} for i, v in enumerate(small)]),
        small,
    ):
        want[mid] = v.tobytes()
    for i, v in enumerate(_vecs(3, 3)):
        want[f.remember(f"single {i}", embedding=v)] = v.tobytes()
    first = next(iter(want))
    new = _vecs(1, 4)[0]
    f.update(first, embedding=new)
    want[first] = new.tobytes()
    return want


@pytest.mark.parametrize("durability", ["flush", "fsync"])
def test_own_writes_are_referenced_where_the_log_holds_them(
    tmp_path: Path, durability: str
) -> None:
    root = tmp_path / "f"
    with _open(root, durability=durability) as f:
        want = _write_every_kind(f)
        s = f.core.memories._s
        assert s.nvec == 0  # no vector copied into the organ's own matrix
        assert isinstance(s.base, MappedVectors) and len(s.base) == 300 + 20 + 3 + 1
        assert _vectors(f) == want
        assert _refs_on_disk(f, root) == want
        got = f.core.memories.vectors_of(list(want))[1]
        assert got.tobytes() == b"".join(want.values())
    with _open(root, read_only=True, load_checkpoint=False) as g:  # the log alone, replayed
        assert _vectors(g) == want


def test_references_follow_the_log_across_segments(tmp_path: Path) -> None:
    """Small segments: the writer rotates, each segment is mapped, and the one being
    written is mapped again as it grows past its map."""
    root = tmp_path / "f"
    with _open(root, segment_bytes=64 * 1024) as f:
        want: dict[int, bytes] = {}
        for b in range(12):
            vecs = _vecs(50, 10 + b)
            ids = f.remember_many(
                [{"text": f"batch {b} item {i}", "embedding": v} for i, v in enumerate(vecs)]
            )
            want.update(zip(ids, (v.tobytes() for v in vecs)))
            assert _vectors(f) == want  # read back after every batch: the maps keep up
        base = f.core.memories._s.base
        assert len(base._names) >= 3 and f.core.memories._s.nvec == 0
        assert _refs_on_disk(f, root) == want
    with _open(root, read_only=True, load_checkpoint=False) as g:
        assert _vectors(g) == want


def test_buffered_writes_keep_copies(tmp_path: Path) -> None:
    """In buffered mode the bytes reach the file only at a flush: nothing is referenced."""
    root = tmp_path / "f"
    with _open(root, durability="buffered") as f:
        vecs = _vecs(200, 5)
        ids = f.remember_many([{"text": f"m {i}", "embedding": v} for i, v in enumerate(vecs)])
        s = f.core.memories._s
        assert s.nvec == 200 and len(s.base) == 0
        assert _vectors(f) == dict(zip(ids, (v.tobytes() for v in vecs)))


def test_a_checkpoints_references_and_new_writes_share_one_base(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with _open(root) as f:
        want = _write_every_kind(f)
        f.checkpoint()
    with _open(root) as f:
        assert f.checkpoint_loaded is not None
        more = _vecs(150, 6)
        ids = f.remember_many([{"text": f"after {i}", "embedding": v} for i, v in enumerate(more)])
        want.update(zip(ids, (v.tobytes() for v in more)))
        s = f.core.memories._s
        assert s.nvec == 0 and len(s.base) == len(want)  # the checkpoint kept current vectors only
        assert _vectors(f) == want
        f.checkpoint()
    with _open(root, read_only=True) as g:
        assert g.checkpoint_loaded is not None
        assert _vectors(g) == want


def test_background_embedded_vectors_are_referenced(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with _open(root, embedder=Gated(DIM, family="caller-supplied-d16")) as f:
        ids = [f.remember(f"embedded later {i}") for i in range(5)]
        assert f.wait_embedded(timeout=30)
        s = f.core.memories._s
        got = _vectors(f)
        assert all(got[i] is not None for i in ids)
        assert s.nvec == 0 and len(s.base) == 5
        assert _refs_on_disk(f, root) == {i: got[i] for i in ids}
    with _open(root, read_only=True, load_checkpoint=False, embedder=None) as g:
        assert {i: _vectors(g)[i] for i in ids} == {i: got[i] for i in ids}


def _one(at: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(1, np.uint32), np.array([at], np.uint64)


def test_mapped_vectors_extend_refuses_what_it_cannot_reference(tmp_path: Path) -> None:
    seg_dir = tmp_path / "segments"
    seg_dir.mkdir()
    rows = _vecs(4, 7)
    (seg_dir / "a.seg").write_bytes(b"x" * 10 + rows.tobytes())
    (seg_dir / "b.seg").write_bytes(rows[3:].tobytes())
    mv = MappedVectors.empty(tmp_path, DIM)
    two = np.array([10, 10 + 4 * DIM], np.uint64)
    assert mv.extend(tmp_path, ["a.seg"], np.zeros(2, np.uint32), two) == 0
    assert mv.extend(tmp_path / "other", ["a.seg"], *_one(10)) is None  # another log
    assert mv.extend(tmp_path, ["missing.seg"], *_one(0)) is None
    past = 10 + 4 * 4 * DIM  # one row past the file's end
    assert mv.extend(tmp_path, ["a.seg"], *_one(past)) is None
    # all or nothing: a good row in b.seg beside a row past a.seg's end adds neither
    both = np.array([0, past], np.uint64)
    assert mv.extend(tmp_path, ["b.seg", "a.seg"], np.array([0, 1], np.uint32), both) is None
    # a segment not mapped yet is mapped only for enough rows
    assert mv.extend(tmp_path, ["b.seg"], *_one(0), min_new=2) is None
    assert len(mv) == 2
    # the file grows: the map is taken again and the new row is read
    with open(seg_dir / "a.seg", "ab") as fh:
        fh.write(rows[:1].tobytes())
    assert mv.extend(tmp_path, ["a.seg"], *_one(past)) == 2
    assert mv.extend(tmp_path, ["b.seg", "a.seg"], np.array([0, 1], np.uint32), both) == 3
    want = rows[:2].tobytes() + rows[:1].tobytes() + rows[3:].tobytes() + rows[:1].tobytes()
    assert mv[np.arange(5)].tobytes() == want
    assert mv[2].tobytes() == rows[0].tobytes()


def test_a_replayed_log_is_referenced_not_copied(tmp_path: Path) -> None:
    """Reopened without a checkpoint, and a second handle's writes read by refresh: the
    vectors replayed from the files are referenced where they lie (runs of at least
    REPLAY_MAP_MIN vectors map their segment; a short run of a new segment is copied)."""
    root = tmp_path / "f"
    with _open(root) as f:
        want = _write_every_kind(f)
    with _open(root) as f:  # a replay of the whole log
        s = f.core.memories._s
        assert _vectors(f) == want
        assert isinstance(s.base, MappedVectors) and len(s.base) >= 300
        refs = _refs_on_disk(f, root)
        assert len(refs) >= 300 and all(refs[k] == want[k] for k in refs)
        with _open(root) as other:  # another writer (its own instance and segment)
            vecs = _vecs(200, 9)
            ids = other.remember_many(
                [{"text": f"other {i}", "embedding": v} for i, v in enumerate(vecs)]
            )
            with _open(root) as third:  # and a third, with a short run in a segment of its own
                few = _vecs(3, 10)
                ids += third.remember_many(
                    [{"text": f"few {i}", "embedding": v} for i, v in enumerate(few)]
                )
        before, copies = len(s.base), s.nvec
        f.refresh()
        want.update(zip(ids, (v.tobytes() for v in np.concatenate([vecs, few]))))
        assert _vectors(f) == want
        assert len(s.base) == before + 200  # the run of 200 referenced; the 3 copied
        assert s.nvec == copies + 3
        refs = _refs_on_disk(f, root)
        assert all(refs[i] == want[i] for i in ids[:200])
        assert not any(i in refs for i in ids[200:])
