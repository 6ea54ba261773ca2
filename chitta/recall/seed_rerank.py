"""Seed 004's retrieval reranker, an option beside the scorer (``RecallSettings.reranker``).

The seed's memory store ranks keyword candidates by one composite, each signal in [0, 1]
within the candidate batch:

    score = 0.50 * relevance + 0.25 * verified + 0.15 * confidence + 0.10 * recency

``relevance``: the keyword lane's order (the first 1, then down in equal steps to 1/n);
``verified``: 1 when the memory's ``meta["verified"]`` is true; ``confidence``: as stored;
``recency``: the candidate's event time ranked within the batch (the newest 1, the oldest 0).
With ``reranker="seed004"`` recall asks the keyword lane alone for 3x ``k`` candidates (the
seed's FTS5 query) and keeps the ``k`` best by this score (ties: the keyword order).
Measured against the scorer on LoCoMo dev: benchmarks/RESULTS.md (D-056).
"""

from __future__ import annotations

import dataclasses

from chitta.policies.dedup import is_verified
from chitta.recall.hit import Factor, Hit

WEIGHTS = {"relevance": 0.50, "verified": 0.25, "confidence": 0.15, "recency": 0.10}
POOL_FACTOR = 3
NAME = "seed004"
RERANKERS = ("scorer", NAME)


def rerank(hits: list[Hit], k: int, explain: bool = False) -> list[Hit]:
    """The ``k`` best of ``hits`` by the composite score (relevance: their keyword-lane rank)."""
    hits = sorted(hits, key=lambda h: (h.lanes.get("bm25", 1 << 30), h.id))
    n = len(hits)
    if n == 0:
        return []
    by_time = sorted(range(n), key=lambda i: (hits[i].memory.created_ms, hits[i].id))
    recency = [0.0] * n
    for place, i in enumerate(by_time):
        recency[i] = place / (n - 1) if n > 1 else 1.0
    scored = []
    for i, h in enumerate(hits):
        signals = {
            "relevance": (n - i) / n,
            "verified": 1.0 if is_verified(h.memory) else 0.0,
            "confidence": min(1.0, max(0.0, h.memory.confidence)),
            "recency": recency[i],
        }
        score = sum(WEIGHTS[name] * value for name, value in signals.items())
        factors = (
            tuple(
                Factor(name, "additive", value, WEIGHTS[name], WEIGHTS[name] * value)
                for name, value in signals.items()
            )
            if explain
            else ()
        )
        scored.append((-score, i, dataclasses.replace(h, score=score, factors=factors)))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [h for _, _, h in scored[:k]]


__all__ = ["NAME", "POOL_FACTOR", "RERANKERS", "WEIGHTS", "rerank"]
