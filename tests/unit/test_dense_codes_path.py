"""The dense lane above the exact-scan size (``EXACT_DENSE_LIMIT`` 4,096 vectors at 384
dimensions, scaled by the width):
binary codes + exact rescoring of the Hamming top 400 ("auto" without a graph,
"hamming"), checked against a brute-force cosine oracle; ``dense_index="exact"``
scans exactly at any size and returns the oracle's order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.organs import recall_index
from chitta.organs.recall_index_dense import EXACT_DENSE_DIM, EXACT_DENSE_LIMIT

DIM = 384


def _clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(4, n // 100), DIM))
    x = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _oracle(ids: list[int], vecs: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    """Exact top k by cosine (float64), ties by smaller id."""
    sims = vecs.astype(np.float64) @ (q.astype(np.float64) / np.linalg.norm(q))
    order = np.lexsort((np.array(ids), -sims))[:k]
    return [ids[i] for i in order]


def _field(root: Path, vecs: np.ndarray, kind: str | None = None) -> tuple[chitta.Field, list[int]]:
    f = chitta.open(root, embedder=None)
    if kind is not None:
        f.set_dense_index(kind)
    ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
    return f, ids


def test_scan_size_default() -> None:
    assert (EXACT_DENSE_LIMIT, EXACT_DENSE_DIM) == (4096, 384)
    assert recall_index.RecallIndexOrgan().exact_limit == 4096


def test_narrow_vectors_scan_exactly_longer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index, "EXACT_DENSE_LIMIT", 100)  # 100 x 384 floats: 1,200 vectors of 32
    x = np.random.default_rng(9).standard_normal((1200, 32)).astype(np.float32)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(x)])
        assert f._index.stats()["dense_path"] == "exact"
        f.remember("one more", embedding=x[0])
        assert f._index.stats()["dense_path"] == "hamming+rescore"


@pytest.mark.parametrize("kind", [None, "hamming"])
def test_codes_path_above_the_scan_size_agrees_with_the_oracle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str | None
) -> None:
    monkeypatch.setattr(recall_index, "EXACT_DENSE_LIMIT", 100)
    vecs = _clustered(1000, seed=3)
    rng = np.random.default_rng(4)  # queries near stored vectors (noise about as long as the vector)
    queries = vecs[rng.integers(0, len(vecs), 40)] + 0.06 * rng.standard_normal((40, DIM)).astype(np.float32)
    f, ids = _field(tmp_path / "f", vecs, kind)
    with f:
        assert f._index.stats()["dense_path"] == "hamming+rescore"
        r10 = r50 = 0.0
        for q in queries:
            got, cos = f._index.dense(q / np.linalg.norm(q), 50, None)
            want = _oracle(ids, vecs, q, 50)
            r10 += len(set(got[:10].tolist()) & set(want[:10])) / 10
            r50 += len(set(got.tolist()) & set(want)) / 50
            exact = vecs[[ids.index(int(m)) for m in got]] @ (q / np.linalg.norm(q))
            assert np.allclose(cos, exact, atol=1e-5)  # rescored exactly
            assert list(cos) == sorted(cos, reverse=True)
        assert r10 / len(queries) >= 0.98
        assert r50 / len(queries) >= 0.95


def test_exact_kind_scans_at_any_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index, "EXACT_DENSE_LIMIT", 100)
    vecs = _clustered(1000, seed=5)
    f, ids = _field(tmp_path / "f", vecs, "exact")
    with f:
        assert f._index.stats()["dense_path"] == "exact"
        for q in _clustered(20, seed=6):
            got, _ = f._index.dense(q / np.linalg.norm(q), 50, None)
            assert got.tolist() == _oracle(ids, vecs, q, 50)
        f.checkpoint()
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:  # the setting survives a checkpoint
        assert g._index.stats()["dense_path"] == "exact"


def test_at_the_scan_size_the_lane_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index, "EXACT_DENSE_LIMIT", 100)
    vecs = _clustered(100, seed=7)  # 384-d: the size is the limit
    f, ids = _field(tmp_path / "f", vecs)
    with f:
        assert f._index.stats()["dense_path"] == "exact"
        for q in _clustered(10, seed=8):
            got, _ = f._index.dense(q / np.linalg.norm(q), 50, None)
            assert got.tolist() == _oracle(ids, vecs, q, 50)
        f.remember("one more", embedding=vecs[0])
        assert f._index.stats()["dense_path"] == "hamming+rescore"
