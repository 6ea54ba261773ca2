"""Shared helpers for the HNSW tests: numpy brute-force truth and recall."""

from __future__ import annotations

import numpy as np


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def numpy_knn(
    data: np.ndarray,
    ids: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    metric: str = "cosine",
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest by a numpy scan (the independent oracle): ids, distances."""
    d = data.astype(np.float64)
    q = queries.astype(np.float64)
    if metric == "cosine":
        d = unit(d)
        q = unit(q)
    if mask is not None:
        d = d[mask]
        ids = ids[mask]
    dist = 1.0 - q @ d.T
    kk = min(k, dist.shape[1])
    part = np.argpartition(dist, kk - 1, axis=1)[:, :kk]
    part_dist = np.take_along_axis(dist, part, axis=1)
    order = np.lexsort((ids[part], part_dist), axis=1)
    top = np.take_along_axis(part, order, axis=1)
    return ids[top], np.take_along_axis(dist, top, axis=1)


def recall(truth: np.ndarray, got: np.ndarray) -> float:
    k = truth.shape[1]
    hits = sum(len(set(t.tolist()) & set(g.tolist())) for t, g in zip(truth, got))
    return hits / (len(truth) * k)
