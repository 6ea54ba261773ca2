"""Independent numpy references for the Hamming tests (not imported by chitta)."""

from __future__ import annotations

import numpy as np

PAD = np.uint64(2**64 - 1)


def tied_codes(n: int, words: int, rng: np.random.Generator, patterns: int = 4) -> np.ndarray:
    """Codes copied from a few random patterns with 0-2 bits flipped: many equal distances."""
    base = rng.integers(0, 2**64, size=(patterns, words), dtype=np.uint64)
    codes = base[rng.integers(0, patterns, size=n)].copy()
    for _ in range(2):
        flip = rng.random(n) < 0.5
        bit = rng.integers(0, 64 * words, size=n)
        rows = np.nonzero(flip)[0]
        codes[rows, bit[rows] // 64] ^= np.left_shift(
            np.uint64(1), (bit[rows] % 64).astype(np.uint64)
        )
    return codes


def hamming_topk(
    ids: np.ndarray, codes: np.ndarray, queries: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k by popcount(xor), ties by position (insertion order); padded like chitta."""
    bits = 64 * codes.shape[1]
    out_ids = np.full((len(queries), k), PAD, dtype=np.uint64)
    out_d = np.full((len(queries), k), bits + 1, dtype=np.uint32)
    for i, q in enumerate(queries):
        d = np.bitwise_count(codes ^ q).sum(axis=1, dtype=np.uint32)
        order = np.argsort(d, kind="stable")[:k]
        out_ids[i, : len(order)] = ids[order]
        out_d[i, : len(order)] = d[order]
    return out_ids, out_d
