"""Randomised add/remove/search sequences against a numpy model.

With ef at least the number of nodes the search must be exact (HNSW then
scans every node): the distances must equal the model's k nearest, and every
returned id must be live with that distance. With a narrow ef the graph walk
must still return only live, unique ids with their true distances. Runs on HNSW,
on TieredHNSW with a tiny threshold (so both tiers and merges are exercised)
and on BruteForceIndex.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chitta.errors import InvalidArgument, NotFound
from chitta.organs.index import HNSW, BruteForceIndex, TieredHNSW
from chitta.organs.index.hnsw import NO_ID

DIM = 12
K = 7
STEPS = 150


def _make(kind: str, seed: int) -> Any:
    if kind == "hnsw":
        return HNSW(DIM, M=4, ef_construction=20, seed=seed)
    if kind == "tiered":
        return TieredHNSW(DIM, M=4, ef_construction=20, seed=seed, threshold=40, merge_ratio=0.2)
    return BruteForceIndex(DIM)


@pytest.mark.parametrize("kind", ["hnsw", "tiered", "brute"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_sequence_matches_model(kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    index = _make(kind, seed)
    model: dict[int, np.ndarray] = {}
    next_id = 0
    for _ in range(STEPS):
        op = rng.random()
        if op < 0.45 or len(model) < 5:
            n = int(rng.integers(1, 12))
            ids = list(range(next_id, next_id + n))
            # Sometimes re-use a removed id.
            if rng.random() < 0.3 and next_id > 0:
                old = int(rng.integers(0, next_id))
                if old not in model and old not in ids:
                    ids[0] = old
            next_id += n
            vecs = rng.standard_normal((n, DIM)).astype(np.float32)
            index.add(np.array(ids, dtype=np.uint64), vecs)
            model.update({i: v for i, v in zip(ids, vecs)})
        elif op < 0.65:
            live = sorted(model)
            gone = rng.choice(live, size=min(len(live) - 1, int(rng.integers(1, 6))), replace=False)
            index.remove(gone)
            for g in gone:
                del model[int(g)]
        elif op < 0.72 and kind == "tiered":
            index.merge(force=bool(rng.random() < 0.5))
        elif op < 0.78:
            # Rejected operations leave the model (and the index) unchanged.
            with pytest.raises(NotFound):
                index.remove([next_id + 1000])
            with pytest.raises(InvalidArgument):
                index.add([next(iter(model))], rng.standard_normal((1, DIM)).astype(np.float32))
        else:
            _check(index, model, rng)
        assert len(index) == len(model)
    _check(index, model, rng)


def _check(index: Any, model: dict[int, np.ndarray], rng: np.random.Generator) -> None:
    q = rng.standard_normal((4, DIM)).astype(np.float32)
    live = np.array(sorted(model), dtype=np.uint64)
    data = np.stack([model[int(i)] for i in live]).astype(np.float64)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    qq = q.astype(np.float64) / np.linalg.norm(q, axis=1, keepdims=True)
    dist = 1.0 - qq @ data.T
    k = K
    got, got_dist = index.search(q, k, ef=1000)
    for row in range(len(q)):
        truth = np.sort(dist[row])[:k]
        have = min(k, len(live))
        np.testing.assert_allclose(got_dist[row, :have], truth[:have], atol=1e-5)
        lookup = dict(zip(live.tolist(), dist[row].tolist()))
        for i, d in zip(got[row, :have].tolist(), got_dist[row, :have].tolist()):
            assert i in lookup and abs(lookup[i] - d) < 1e-5
        assert (got[row, have:] == NO_ID).all()
    # A narrow beam walks the graph: not necessarily exact, but every hit is
    # live, unique, sorted and carries its true distance.
    got, got_dist = index.search(q, k, ef=k)
    lookup = dict(zip(live.tolist(), range(len(live))))
    for row in range(len(q)):
        hits = [i for i in got[row].tolist() if i != NO_ID]
        assert len(hits) == len(set(hits)) == min(k, len(live))
        assert np.all(np.diff(got_dist[row, : len(hits)]) >= 0)
        for i, d in zip(hits, got_dist[row].tolist()):
            assert abs(dist[row, lookup[i]] - d) < 1e-5
    # A filtered search stays exact too.
    allowed = live[rng.random(len(live)) < 0.5]
    if len(allowed):
        got, got_dist = index.search(q, k, ef=1000, allowed=allowed)
        mask = np.isin(live, allowed)
        for row in range(len(q)):
            truth = np.sort(dist[row][mask])[:k]
            np.testing.assert_allclose(got_dist[row, : len(truth)], truth, atol=1e-5)
            assert np.isin(got[row, : len(truth)], allowed).all()
