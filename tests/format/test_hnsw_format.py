"""The HNSW sidecar (csrc/hnsw/FORMAT.md) 1.0 and 2.0 against goldens
(tests/format/golden/hnsw/: one 12-node graph written both ways), read by an
independent parser (struct + the pure-Python CRC-32C). 2.0 is what checkpoint
state 9 writes as dense.hnsw: live vectors as references to the caller's rows."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from segment_oracle import crc32c

from chitta.errors import CorruptionError
from chitta.organs.index._hnsw_tiered import TieredHNSW

GOLDEN = Path(__file__).parent / "golden" / "hnsw"
N, DIM = 12, 4


def golden_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The caller's rows of the golden graph: ids 100..111, row i = id 111 - i
    (not node order), raw (not unit) vectors of small integers."""
    ids = np.arange(100, 100 + N, dtype=np.uint64)
    base = np.array([[i % 3 + 1, -(i % 5), (i * 7) % 4 - 1, 2] for i in range(N)], np.float32)
    matrix = base[::-1].copy()
    rows = (N - 1 - np.arange(N)).astype(np.int64)
    return ids, rows, matrix


def build() -> TieredHNSW:
    ids, _rows, matrix = golden_rows()
    g = TieredHNSW(DIM, M=4, ef_construction=16, threshold=1000)
    g.add(ids, matrix[::-1].copy(), num_threads=1)
    g.remove(np.array([103], np.uint64))  # a deleted node keeps its vector in the file
    return g


def write_goldens(out: Path) -> None:
    """How golden/hnsw was made (run once, with the 2.0 writer)."""
    g = build()
    g.save(out / "v1.0.hnsw")
    g.save(out / "v2.0.hnsw", rows=golden_rows())


def _prepared(v: np.ndarray) -> np.ndarray:
    """PrepareVector for cosine: each f32 times 1/sqrt(sum of squares), in double."""
    d = v.astype(np.float64)
    return (d * (1.0 / np.sqrt(np.sum(d * d)))).astype(np.float32)


def _parse(data: bytes) -> dict[str, object]:
    magic, major, minor, header_size, dim, m = struct.unpack_from("<8sHHIII", data, 0)
    assert magic == b"CHITHNSW"
    n, live, entry, max_level = struct.unpack_from("<QQIi", data, 32)
    refs, ref_crc = struct.unpack_from("<QI", data, 64) if major == 2 else (0, 0)
    assert header_size == (80 if major == 2 else 64)
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    assert crc == crc32c(data[8:-4])
    off = header_size
    labels = struct.unpack_from(f"<{n}Q", data, off)
    levels = data[off + 8 * n : off + 9 * n]
    flags = data[off + 9 * n : off + 10 * n]
    stored = [i for i in range(n) if not flags[i] & 2]
    vec_off = off + 10 * n
    vectors = np.frombuffer(data, "<f4", len(stored) * dim, vec_off).reshape(-1, dim)
    size = header_size + n * (10 + 4 * (1 + 2 * m)) + len(stored) * 4 * dim
    size += 4 * sum(levels) * (1 + m) + 4
    assert len(data) == size
    return {
        "major": major, "minor": minor, "n": n, "live": live, "entry": entry,
        "max_level": max_level, "refs": refs, "ref_crc": ref_crc, "labels": labels,
        "flags": bytes(flags), "stored": stored, "vectors": vectors,
        "links": data[vec_off + len(stored) * 4 * dim : -4],
    }  # fmt: skip


def test_both_goldens_match_the_spec_and_each_other() -> None:
    old = _parse((GOLDEN / "v1.0.hnsw").read_bytes())
    new = _parse((GOLDEN / "v2.0.hnsw").read_bytes())
    assert (old["major"], new["major"], new["minor"]) == (1, 2, 0)
    assert old["n"] == new["n"] == N and new["live"] == N - 1
    for key in ("labels", "entry", "max_level", "links"):
        assert old[key] == new[key]
    # 2.0: every live node refers to its row, the deleted one (id 103) stores its vector
    deleted = [i for i in range(N) if new["flags"][i] & 1]  # type: ignore[index]
    assert [new["labels"][i] for i in deleted] == [103]  # type: ignore[index]
    assert new["stored"] == deleted and new["refs"] == N - 1
    assert all(f in (1, 2) for f in new["flags"])  # type: ignore[union-attr]
    ids, rows, matrix = golden_rows()
    row_of = dict(zip(ids.tolist(), rows.tolist()))
    refs = [i for i in range(N) if i not in deleted]
    prepared = np.stack([_prepared(matrix[row_of[new["labels"][i]]]) for i in refs])  # type: ignore[index]
    old_vectors = old["vectors"]
    assert isinstance(old_vectors, np.ndarray)
    assert np.array_equal(prepared, old_vectors[refs])  # the 1.0 file's vectors, bit for bit
    assert new["ref_crc"] == crc32c(prepared.astype("<f4").tobytes())
    assert np.array_equal(new["vectors"], old_vectors[deleted])  # type: ignore[arg-type]


def test_goldens_load_to_the_same_graph_and_the_writer_reproduces_them(tmp_path: Path) -> None:
    q = _prepared(np.array([1, -1, 0, 2], np.float32))[None, :]
    old = TieredHNSW.load(GOLDEN / "v1.0.hnsw")
    new = TieredHNSW.load(GOLDEN / "v2.0.hnsw", rows=golden_rows())
    a, b = old.search(q, 5), new.search(q, 5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    write_goldens(tmp_path)
    for name in ("v1.0.hnsw", "v2.0.hnsw", "v1.0.delta.hnsw", "v2.0.delta.hnsw"):
        assert (tmp_path / name).read_bytes() == (GOLDEN / name).read_bytes(), name


def test_a_2_0_golden_without_its_rows_or_with_other_rows_is_refused() -> None:
    with pytest.raises(CorruptionError):
        TieredHNSW.load(GOLDEN / "v2.0.hnsw")
    ids, rows, matrix = golden_rows()
    other = matrix.copy()
    other[0, 0] *= 2.0
    with pytest.raises(CorruptionError):
        TieredHNSW.load(GOLDEN / "v2.0.hnsw", rows=(ids, rows, other))
