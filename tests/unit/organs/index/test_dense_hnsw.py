"""The dense lane's HNSW path (field setting dense_index="hnsw"): results agree
with the exact scan, follow updates and forgets, and a checkpoint saves the graph
(dense.hnsw + dense.delta.hnsw) so that an open loads it instead of rebuilding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fieldtools import flip_byte

import chitta
from chitta.errors import CheckpointIgnored, InvalidArgument
from chitta.field.checkpoint import store
from chitta.organs import recall_index, recall_index_dense
from chitta.organs.dense_ann import DenseANN

N, DIM = 400, 32


@pytest.fixture(autouse=True)
def _small_exact_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        recall_index, "EXACT_DENSE_LIMIT", 50
    )  # the graph serves fields above 50 vectors


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _dense(f: chitta.Field, q: np.ndarray, k: int = 10) -> list[int]:
    return [h.id for h in f.recall(vector=q, k=k, lanes=("dense",), touch=False)]


def _exact(ids: list[int], vecs: np.ndarray, q: np.ndarray, k: int = 10) -> list[int]:
    order = np.argsort(-(vecs @ q), kind="stable")[:k]
    return [ids[i] for i in order]


def test_hnsw_lane_matches_exact_scan_and_survives_a_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "f"
    vecs = _vectors(N)
    queries = _vectors(30, seed=1)
    with chitta.open(root, embedder=None) as f:
        f.set_dense_index("hnsw")
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        assert f.core.index.stats()["dense_path"] == "hnsw"
        got = [_dense(f, q) for q in queries]
        overlap = np.mean(
            [len(set(g) & set(_exact(ids, vecs, q))) / 10 for g, q in zip(got, queries)]
        )
        assert overlap >= 0.95
        f.forget(ids[0])
        f.update(ids[1], embedding=-vecs[1])
        assert ids[0] not in _dense(f, vecs[0], k=N)
        assert _dense(f, -vecs[1], k=1) == [ids[1]]
        got = [_dense(f, q) for q in queries]
        f.checkpoint()
    live = store.current(root)
    assert live is not None and {"dense.hnsw", "dense.delta.hnsw"} <= {
        p.name for p in live.iterdir()
    }
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert g.checkpoint_loaded == live.name
        assert (
            g.core.index._ann is not None and len(g.core.index._ann.graph) > 0
        )  # loaded, not rebuilt
        assert [_dense(g, q) for q in queries] == got
    with chitta.open(
        root, embedder=None
    ) as h:  # changes after the watermark reach the loaded graph
        new = h.remember("late", embedding=queries[0])
        h.forget(ids[2])
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert _dense(g, queries[0], k=1) == [new]
        assert ids[2] not in _dense(g, vecs[2], k=N)


def test_auto_uses_codes_below_the_graph_size(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(_vectors(100))])
        assert f.core.index.stats()["dense_path"] == "hamming+rescore"
        f.checkpoint()  # 100 vectors < AUTO_ANN_MIN: no graph
    live = store.current(tmp_path / "f")
    assert live is not None and not (live / "dense.hnsw").exists()


def test_hamming_setting_never_builds_a_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.set_dense_index("hamming")
        f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(_vectors(100))])
        f.checkpoint()
    live = store.current(tmp_path / "f")
    assert live is not None and not (live / "dense.hnsw").exists()


def test_auto_graph_is_built_by_a_checkpoint_and_newer_vectors_are_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    root = tmp_path / "f"
    vecs = _vectors(N)
    queries = _vectors(30, seed=1)
    with chitta.open(root, embedder=None) as f:  # dense_index stays "auto"
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        assert (
            f.core.index.stats()["dense_path"] == "hamming+rescore"
        )  # no graph until a checkpoint builds one
        f.recall(vector=queries[0], lanes=("dense",), touch=False)
        assert f.core.index._ann is None  # queries never build it
        f.checkpoint()
    live = store.current(root)
    assert live is not None and (live / "dense.hnsw").exists()
    late = _vectors(40, seed=2)
    with chitta.open(root, embedder=None) as f:
        assert f.core.index.stats()["dense_path"] == "hnsw" and f.core.index._ann is not None
        assert (
            not f.core.index._ann.loaded
        )  # the open does not read the graph; the first dense query does
        graph_size = len(f.core.index._ann.graph)
        late_ids = f.remember_many(
            [{"text": f"late{i}", "embedding": v} for i, v in enumerate(late)]
        )
        f.update(
            ids[5], embedding=-vecs[5]
        )  # a stale graph entry: the exact scan has the new vector
        f.forget(ids[6])
        all_ids = [*ids, *late_ids]
        now = np.concatenate([vecs, late])
        now[5] = -vecs[5]
        live_ids = [i for i in all_ids if i != ids[6]]
        live_vecs = np.array([now[all_ids.index(i)] for i in live_ids])
        got = [_dense(f, q) for q in queries]
        overlap = np.mean(
            [len(set(g) & set(_exact(live_ids, live_vecs, q))) / 10 for g, q in zip(got, queries)]
        )
        assert overlap >= 0.95
        for j in (0, 17, 39):  # each newer vector is found exactly, though it is not in the graph
            assert _dense(f, late[j], k=1) == [late_ids[j]]
        assert _dense(f, -vecs[5], k=1) == [ids[5]]
        assert ids[6] not in _dense(f, vecs[6], k=N)
        assert len(f.core.index._ann.graph) <= graph_size  # nothing was inserted at query time
        assert (
            ids[5] not in f.core.index._ann.graph
        )  # its old vector left the graph when it changed
        monkeypatch.setattr(
            recall_index_dense, "AUTO_PENDING_EXACT", 10
        )  # too many newer vectors: codes instead
        assert f.core.index.stats()["dense_path"] == "hamming+rescore"
        assert _dense(f, late[3], k=1) == [late_ids[3]]


def test_a_bad_dense_index_kind_is_refused_and_logs_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        before = f.stats().records_applied
        for bad in ("faiss", "", None, 3):
            with pytest.raises(InvalidArgument):
                f.set_dense_index(bad)  # type: ignore[arg-type]
        assert f.stats().records_applied == before


@pytest.mark.parametrize("kind", ["auto", "hnsw"])
def test_a_damaged_graph_is_dropped_with_a_warning_and_recall_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    root = tmp_path / "f"
    vecs = _vectors(N)
    with chitta.open(root, embedder=None) as f:
        if kind == "hnsw":
            f.set_dense_index("hnsw")
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        f.checkpoint()
    live = store.current(root)
    assert live is not None
    flip_byte(
        live / "dense.hnsw", (live / "dense.hnsw").stat().st_size // 2
    )  # the open checks only its trailer
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert g.checkpoint_loaded == live.name
        with pytest.warns(CheckpointIgnored, match="saved graph"):
            assert _dense(g, vecs[7], k=1) == [ids[7]]
        want = "hamming+rescore" if kind == "auto" else "hnsw"  # "hnsw" builds its graph anew
        assert g.core.index.stats()["dense_path"] == want
        assert [_dense(g, vecs[j], k=1) for j in (0, 99, 321)] == [[ids[0]], [ids[99]], [ids[321]]]


def test_auto_graph_grows_by_a_bounded_step_per_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    monkeypatch.setattr(recall_index_dense, "AUTO_BUILD_STEP", 150)
    monkeypatch.setattr(recall_index_dense, "AUTO_PENDING_EXACT", 40)
    root = tmp_path / "f"
    vecs = _vectors(N)  # 400 vectors: 150 + 150 + 100 over three checkpoints
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
    for in_graph in (150, 300, 400):
        with chitta.open(root, embedder=None) as f:
            f.checkpoint()
        with chitta.open(root, embedder=None, read_only=True) as g:
            ann = g.core.index._ann
            assert ann is not None and ann.pending == N - in_graph
            assert len(ann.graph) == in_graph
            # a graph missing more than AUTO_PENDING_EXACT vectors is not searched: codes instead
            assert g.core.index.stats()["dense_path"] == (
                "hnsw" if N - in_graph <= 40 else "hamming+rescore"
            )
            assert [_dense(g, vecs[j], k=1) for j in (0, 200, 399)] == [
                [ids[0]],
                [ids[200]],
                [ids[399]],
            ]


def test_auto_graph_step_stops_at_its_time_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A budget of 0 s: each checkpoint inserts one chunk (the chunk that passes the
    budget), the rest stays pending and the next checkpoint continues from it."""
    from chitta.organs import dense_ann

    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    monkeypatch.setattr(recall_index_dense, "AUTO_BUILD_SECONDS", 0.0)
    monkeypatch.setattr(dense_ann, "AUTO_BUILD_CHUNK", 128)
    monkeypatch.setattr(recall_index_dense, "AUTO_PENDING_EXACT", 40)
    root = tmp_path / "f"
    vecs = _vectors(N)  # 400 vectors: 128 + 128 + 128 + 16 over four checkpoints
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
    for in_graph in (128, 256, 384, 400):
        with chitta.open(root, embedder=None) as f:
            f.checkpoint()
        with chitta.open(root, embedder=None, read_only=True) as g:
            ann = g.core.index._ann
            assert ann is not None and len(ann.graph) == in_graph
            assert ann.pending == N - in_graph
            assert ann.pending_ids().tolist() == sorted(ids)[in_graph:]  # smallest ids first
            assert [_dense(g, vecs[j], k=1) for j in (0, 200, 399)] == [
                [ids[0]],
                [ids[200]],
                [ids[399]],
            ]


def test_search_with_pending_drops_a_stale_graph_entry() -> None:
    vecs = _vectors(200)
    ann = DenseANN(DIM)
    for i in range(200):
        ann.vector_set(i + 1)
    ann.catch_up(lambda ids: vecs[[i - 1 for i in ids]])
    moved = vecs.copy()
    moved[9] = -vecs[9]  # id 10 gets a new vector; the graph still holds the old one
    ann.vector_set(10)
    assert ann.pending == 1 and ann._stale == {10}
    ids, cos = ann.search_with_pending(vecs[9], 5, lambda ids: moved[[i - 1 for i in ids]])
    assert 10 not in ids.tolist()  # the old vector is not returned
    ids, cos = ann.search_with_pending(-vecs[9], 1, lambda ids: moved[[i - 1 for i in ids]])
    assert ids.tolist() == [10] and cos[0] == pytest.approx(1.0, abs=1e-5)
