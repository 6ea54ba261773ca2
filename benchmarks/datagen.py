"""Deterministic synthetic data for index benchmarks and tests.

``clustered_vectors`` draws unit vectors around random cluster centres (the
shape of real embedding sets: many near neighbours, some far). ``sparse_codes``
gives each memory exactly ``active`` of ``n_features`` feature ids: most drawn
from a pool owned by its cluster, the rest at random, so memories of one
cluster share features the way learned sparse codes do. Everything is a pure
function of the seed.
"""

from __future__ import annotations

import numpy as np


def cluster_assignments(n: int, n_clusters: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_clusters, size=n, dtype=np.int64)


def clustered_vectors(
    n: int, dim: int = 256, *, n_clusters: int = 1000, spread: float = 0.35, seed: int = 0
) -> np.ndarray:
    """``n`` float32 unit vectors of ``dim`` around ``n_clusters`` centres."""
    rng = np.random.default_rng(seed + 1)
    centres = rng.standard_normal((n_clusters, dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    assign = cluster_assignments(n, n_clusters, seed)
    out = np.empty((n, dim), dtype=np.float32)
    step = 65536
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        noise = rng.standard_normal((hi - lo, dim), dtype=np.float32)
        noise *= spread / np.sqrt(dim, dtype=np.float32)
        block = centres[assign[lo:hi]] + noise
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[lo:hi] = block
    return out


def queries_near(vectors: np.ndarray, nq: int, *, noise: float = 0.2, seed: int = 99) -> np.ndarray:
    """Queries made by perturbing ``nq`` stored vectors (so true neighbours exist)."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(vectors), size=nq)
    q = vectors[pick] + rng.standard_normal((nq, vectors.shape[1]), dtype=np.float32) * (
        noise / np.sqrt(vectors.shape[1], dtype=np.float32)
    )
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(np.float32)


def sparse_codes(
    n: int,
    *,
    n_features: int = 16384,
    active: int = 64,
    n_clusters: int = 1000,
    pool: int = 128,
    from_pool: int = 48,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(features uint32[n, active] sorted and unique per row, activations float32[n, active])."""
    rng = np.random.default_rng(seed + 2)
    pools = np.stack([rng.choice(n_features, size=pool, replace=False) for _ in range(n_clusters)])
    assign = cluster_assignments(n, n_clusters, seed)
    feats = np.empty((n, active), dtype=np.uint32)
    for i in range(n):
        own = rng.choice(pools[assign[i]], size=from_pool, replace=False)
        rest = rng.choice(n_features, size=active * 2, replace=False)
        row = np.unique(np.concatenate([own, rest]))
        extra = np.setdiff1d(row, own, assume_unique=True)
        row = np.sort(np.concatenate([own, extra[: active - from_pool]]))
        feats[i] = row
    acts = rng.random((n, active), dtype=np.float32)
    return feats, acts


def sign_codes(vectors: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
    """Sign bits of the mean-centred vectors packed into uint64 words (little-endian bit order)."""
    centred = vectors - (vectors.mean(axis=0) if mean is None else mean)
    bits = np.packbits(centred > 0, axis=1, bitorder="little")
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return bits.view(np.uint64)
