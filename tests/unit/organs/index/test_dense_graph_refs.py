"""The checkpoint's dense graph in HNSW format 2.0 (state 9): links only, its live
vectors references to the dense lane's unit rows. Oracles: the same field replayed
from the log alone (no checkpoint), and the same graph saved with every vector
(format 1.0), which the code wrote before."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.errors import CheckpointIgnored, CorruptionError
from chitta.field.checkpoint import store
from chitta.organs import recall_index_dense
from chitta.organs.dense_ann import DenseANN
from chitta.organs.index._hnsw_tiered import TieredHNSW

N, DIM = 400, 32


@pytest.fixture(autouse=True)
def _small_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)  # "auto" builds from 60 vectors


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _dense(f: chitta.Field, q: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in f.recall(vector=q, k=k, lanes=("dense",), touch=False)]


def _header(path: Path) -> tuple[int, int, int]:
    """(major, node_count, ref_count) as csrc/hnsw/FORMAT.md places them."""
    b = path.read_bytes()
    major = struct.unpack_from("<H", b, 8)[0]
    nodes = struct.unpack_from("<Q", b, 32)[0]
    refs = struct.unpack_from("<Q", b, 64)[0] if major == 2 else 0
    return major, nodes, refs


def _field(root: Path) -> list[int]:
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many(
            [{"text": f"m{i}", "embedding": v} for i, v in enumerate(_vectors(N))]
        )
        f.checkpoint()
    return ids


def test_the_graph_file_holds_links_and_loads_to_the_replayed_answers(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _field(root)
    live = store.current(root)
    assert live is not None
    major, nodes, refs = _header(live / "dense.hnsw")
    assert (major, nodes, refs) == (2, N, N)  # every vector a reference
    # links only: the size csrc/hnsw/FORMAT.md gives a 2.0 file with no stored vector
    b = (live / "dense.hnsw").read_bytes()
    m = struct.unpack_from("<I", b, 20)[0]
    levels = sum(b[80 + 8 * N : 80 + 9 * N])
    assert len(b) == 80 + N * (10 + 4 * (1 + 2 * m)) + 4 * levels * (1 + m) + 4
    queries = _vectors(20, seed=1)
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert g.checkpoint_loaded == live.name and g.core.index.stats()["dense_path"] == "hnsw"
        got = [_dense(g, q) for q in queries]
        assert g.core.index._ann is not None and len(g.core.index._ann.graph) == N
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as r:
        assert r.checkpoint_loaded is None
        # the replayed field has no graph ("auto" builds it only in a checkpoint): its
        # exact lane must agree with the graph's on these well-separated queries
        exact = [_dense(r, q) for q in queries]
    overlap = np.mean([len({i for i, _ in a} & {i for i, _ in b}) / 10 for a, b in zip(got, exact)])
    assert overlap >= 0.95
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert [i for i, _ in _dense(g, _vectors(N)[9], k=1)] == [ids[9]]


def test_answers_equal_those_of_the_same_graph_with_its_vectors_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Format 2.0 vs 1.0 of one graph, with changes after the watermark to rows the graph
    refers to (update, forget) before the first recall reads it."""
    add = TieredHNSW.add  # one insert thread: both fields build the same graph

    def add_one(
        self: TieredHNSW, ids: np.ndarray, vectors: np.ndarray, num_threads: int = 1
    ) -> None:
        add(self, ids, vectors, num_threads=1)

    monkeypatch.setattr(TieredHNSW, "add", add_one)
    queries = _vectors(20, seed=1)
    answers = []
    for stored in (False, True):
        root = tmp_path / f"f{int(stored)}"
        with monkeypatch.context() as m:
            if stored:  # the code before state 9: every vector in the file
                m.setattr(DenseANN, "save", _save_stored)
            ids = _field(root)
        live = store.current(root)
        assert live is not None and _header(live / "dense.hnsw")[0] == (1 if stored else 2)
        with chitta.open(root, embedder=None) as h:
            assert h.core.index._ann is not None and not h.core.index._ann.loaded
            h.update(ids[5], embedding=-_vectors(N)[5])
            h.forget(ids[6])
            late = h.remember("late", embedding=queries[0])
            at = {mid: i for i, mid in enumerate([*ids, late])}  # ids differ per field
            got = [*(_dense(h, q) for q in queries), _dense(h, -_vectors(N)[5], k=1)]
            answers.append([[(at[mid], s) for mid, s in hits] for hits in got])
        with chitta.open(root, embedder=None, read_only=True) as g:
            got = [_dense(g, q) for q in queries]
            answers.append([[(at[mid], s) for mid, s in hits] for hits in got])
    for a, b in ((answers[0], answers[2]), (answers[1], answers[3])):
        assert [[i for i, _ in hits] for hits in a] == [[i for i, _ in hits] for hits in b]
        # scores carry the recency of each field's own write times: equal to ~1e-8
        for ha, hb in zip(a, b):
            assert np.allclose([s for _, s in ha], [s for _, s in hb], rtol=0, atol=1e-6)


def _save_stored(self: DenseANN, path: str, rows: object = None) -> list[str]:
    self.graph.merge()
    self.graph.save(path)
    return [path, path[: -len(".hnsw")] + ".delta.hnsw"]


def test_rows_other_than_the_saved_ones_drop_the_graph_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    ids = _field(root)
    vecs = _vectors(N)
    with chitta.open(root, embedder=None, read_only=True) as g:
        lane = g.core.index
        ids_, rows, matrix = lane.row_refs()
        bent = matrix.copy()
        bent[3, 0] += 1e-3  # CRC-valid files, a referenced row that is not the saved one
        monkeypatch.setattr(lane, "row_refs", lambda: (ids_, rows, bent))
        assert lane._ann is not None
        lane._ann._rows = lane.row_refs
        with pytest.warns(CheckpointIgnored, match="saved graph"):
            assert [i for i, _ in _dense(g, vecs[7], k=1)] == [ids[7]]
        assert lane._ann is None and lane.stats()["dense_path"] == "exact"  # below the scan size


def test_tiered_graph_refuses_missing_or_changed_rows(tmp_path: Path) -> None:
    vecs = _vectors(200, seed=3)
    ids = np.arange(1, 201, dtype=np.uint64)
    g = TieredHNSW(DIM, threshold=150)  # a base and a delta, both written in 2.0
    g.add(ids, vecs)
    refs = (ids, np.arange(200, dtype=np.int64), vecs)
    path = tmp_path / "g.hnsw"
    g.save(path, rows=refs)
    assert _header(path)[0] == 2 and _header(tmp_path / "g.delta.hnsw")[2] == 50
    back = TieredHNSW.load(path, rows=refs)
    q = _vectors(10, seed=4)
    a, b = g.search(q, 10), back.search(q, 10)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(CorruptionError):
        TieredHNSW.load(path)  # the rows it refers to are not given
    missing = (ids, np.where(ids == 7, -1, np.arange(200)).astype(np.int64), vecs)
    with pytest.raises(CorruptionError):
        TieredHNSW.load(path, rows=missing)
    changed = vecs.copy()
    changed[160, 1] = -changed[160, 1]
    with pytest.raises(CorruptionError):
        TieredHNSW.load(path, rows=(ids, refs[1], changed))
