"""Independent oracles for chitta.organs.index.PostingIndex (test helper, not collected).

``numpy_reference`` ranks by brute force over all stored rows with numpy;
``PyModel`` is a pure-Python model of the whole index (add/remove/compact/search)
used for randomised operation sequences. Both implement the documented
ranking: overlap count desc, summed stored activation desc, insertion order asc.
Test activations are chosen so every sum is exact in float64 whatever the
summation order (multiples of 2**-24 below 1, or quarters).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PAD = 2**64 - 1


def numpy_reference(
    ids: np.ndarray,
    feats: np.ndarray,
    acts: np.ndarray,
    live: np.ndarray,
    n_features: int,
    query: np.ndarray,
    k: int,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k over rows in insertion order (``live`` masks removed rows)."""
    qmask = np.zeros(n_features, dtype=bool)
    qmask[query] = True
    hit = qmask[feats]
    counts = hit.sum(axis=1)
    sums = np.where(hit, acts.astype(np.float64), 0.0).sum(axis=1)
    ok = live & (counts > 0)
    if allowed is not None:
        ok &= np.isin(ids, allowed)
    rows = np.flatnonzero(ok)
    order = np.lexsort((rows, -sums[rows], -counts[rows]))[:k]
    out_ids = np.full(k, PAD, dtype=np.uint64)
    out_counts = np.zeros(k, dtype=np.uint32)
    out_ids[: len(order)] = ids[rows[order]]
    out_counts[: len(order)] = counts[rows[order]]
    return out_ids, out_counts


@dataclass
class PyModel:
    """Pure-Python model of the index: a list of memories in insertion order."""

    n_features: int
    active: int
    rows: list[tuple[int, dict[int, float]]] = field(default_factory=list)  # live rows

    def add(self, ids: list[int], feats: list[list[int]], acts: list[list[float]] | None) -> None:
        for i, fid in enumerate(ids):
            a = acts[i] if acts is not None else [1.0] * self.active
            self.rows.append((fid, dict(zip(feats[i], a))))

    def remove(self, ids: list[int]) -> None:
        gone = set(ids)
        self.rows = [r for r in self.rows if r[0] not in gone]

    def ids(self) -> list[int]:
        return [r[0] for r in self.rows]

    def search(
        self, query: list[int], k: int, allowed: list[int] | None = None
    ) -> tuple[list[int], list[int]]:
        allow = None if allowed is None else set(allowed)
        qs = set(query)
        scored = []
        for pos, (rid, code) in enumerate(self.rows):
            if allow is not None and rid not in allow:
                continue
            shared = sorted(qs.intersection(code))
            if shared:
                total = 0.0
                for f in shared:
                    total += float(code[f])
                scored.append((-len(shared), -total, pos, rid))
        scored.sort()
        best = scored[:k]
        ids = [s[3] for s in best] + [PAD] * (k - len(best))
        counts = [-s[0] for s in best] + [0] * (k - len(best))
        return ids, counts
