"""The dense lane below the exact-scan size (``EXACT_DENSE_LIMIT``): with
dense_index "auto", a field of ``AUTO_ANN_MIN`` vectors or more gets its HNSW
graph from a checkpoint and searches it (recall checked against a brute-force
cosine oracle); without a checkpoint's graph it scans exactly, as before; with
``dense_index="exact"`` it scans exactly at any size, graph or not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.field.checkpoint import store
from chitta.organs import dense_ann, recall_index, recall_index_dense

DIM = 32


def _vectors(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _oracle(ids: list[int], vecs: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    """Exact top k by cosine (float64), ties by smaller id."""
    sims = vecs.astype(np.float64) @ q.astype(np.float64)
    order = np.lexsort((np.array(ids), -sims))[:k]
    return [ids[i] for i in order]


def _lane(f: chitta.Field, q: np.ndarray, k: int = 50) -> list[int]:
    ids, _ = f.core.index.dense(q, k, None)
    return [int(x) for x in ids]


def test_defaults() -> None:
    assert recall_index.RecallIndexOrgan().exact_limit == 20_000
    assert dense_ann.AUTO_ANN_MIN == 4_096
    assert "exact" in dense_ann.DENSE_INDEX_KINDS


def test_auto_searches_a_checkpoint_graph_below_the_exact_scan_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 200)
    vecs, queries = _vectors(600, seed=1), _vectors(30, seed=2)
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        assert f.core.index.stats()["dense_path"] == "exact"  # no graph yet: the exact scan
        assert all(_lane(f, q) == _oracle(ids, vecs, q, 50) for q in queries)
        f.checkpoint()
    live = store.current(root)
    assert live is not None and "dense.hnsw" in {p.name for p in live.iterdir()}
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert g.core.index.stats()["dense_path"] == "hnsw"
        r10 = np.mean(
            [len(set(_lane(g, q)[:10]) & set(_oracle(ids, vecs, q, 10))) / 10 for q in queries]
        )
        assert r10 >= 0.95
    with chitta.open(
        root, embedder=None
    ) as h:  # written after the checkpoint: scanned exactly beside the graph
        new = h.remember("late", embedding=queries[0])
        assert _lane(h, queries[0], k=1) == [new]


def test_small_fields_build_no_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 200)
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember_many(
            [{"text": f"m{i}", "embedding": v} for i, v in enumerate(_vectors(150, seed=3))]
        )
        f.checkpoint()
        assert f.core.index.stats()["dense_path"] == "exact"
    live = store.current(root)
    assert live is not None and "dense.hnsw" not in {p.name for p in live.iterdir()}


def test_exact_kind_scans_at_any_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 200)
    monkeypatch.setattr(
        recall_index, "EXACT_DENSE_LIMIT", 100
    )  # above it "auto" would use codes or a graph
    vecs, queries = _vectors(600, seed=4), _vectors(20, seed=5)
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.set_dense_index("exact")
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        assert f.core.index.stats()["dense_path"] == "exact"
        assert all(_lane(f, q) == _oracle(ids, vecs, q, 50) for q in queries)
        f.checkpoint()
    with chitta.open(root, embedder=None, read_only=True) as g:  # the setting survives a checkpoint
        assert g.core.index.stats()["dense_path"] == "exact"
        assert all(_lane(g, q) == _oracle(ids, vecs, q, 50) for q in queries)
