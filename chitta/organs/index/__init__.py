"""Native recall indexes: posting, Hamming, HNSW (+ tiers), BM25, rank fusion.

Each class wraps a C++ index from ``chitta._core``; bulk calls take and return
numpy arrays and release the GIL. Submodules load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PostingIndex": "chitta.organs.index.posting",
    "HammingIndex": "chitta.organs.index.hamming",
    "HammingRescoreIndex": "chitta.organs.index.hamming",
    "binarize": "chitta.organs.index.hamming",
    "HNSW": "chitta.organs.index.hnsw",
    "TieredHNSW": "chitta.organs.index.hnsw",
    "BruteForceIndex": "chitta.organs.index.hnsw",
    "BM25": "chitta.organs.index.bm25",
    "tokenize": "chitta.organs.index.bm25",
    "rrf_fuse": "chitta.organs.index.fusion",
    "RowMap": "chitta.organs.index.row_map",
    "simd_level": "chitta.organs.index.hamming",
}

__all__ = [
    "BM25",
    "HNSW",
    "BruteForceIndex",
    "HammingIndex",
    "HammingRescoreIndex",
    "PostingIndex",
    "RowMap",
    "TieredHNSW",
    "binarize",
    "rrf_fuse",
    "simd_level",
    "tokenize",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chitta.organs.index' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
