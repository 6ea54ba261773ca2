"""The per-candidate recall scoring loop that chitta.recall.engine replaced.

Kept as the oracle of tests/unit/recall/test_recall_vectorised.py: it scores every
fused candidate with one ``Scorer.score`` call on a ``CandidateView`` (the
documented formulas, one Python float at a time) and computes each cosine as
its own dot product. The engine's vectorised path must return the same ids,
scores (within 1e-9), lanes, fused scores and factors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chitta.organs.index.fusion import rrf_fuse
from chitta.recall.engine import RecallEngine
from chitta.recall.factors import suppression
from chitta.recall.hit import Hit
from chitta.recall.scorer import CandidateView


def reference_recall(
    engine: RecallEngine,
    *,
    text: str | None,
    vector: Any,
    code: Any,
    k: int,
    allowed: Any,
    now_ms: int,
    explain: bool = False,
) -> list[Hit]:
    lane_pool = max(engine.settings.pool, 5 * k)
    convex = engine.settings.fusion_alpha is not None and vector is not None
    pool = (
        max(lane_pool, engine.settings.keyword_pool) if convex else lane_pool
    )  # keyword depth, fusion limit
    lanes = engine.lanes(
        text=text, vector=vector, code=code, pool=lane_pool, allowed=allowed, keyword_pool=pool
    )
    names = [n for n in lanes if len(lanes[n])]
    if not names:
        return []
    ids, fused, ranks = rrf_fuse(
        [lanes[n] for n in names],
        k=engine.settings.rrf_k,
        weights=[engine.settings.lane_weights.get(n, 0.0) for n in names],
        limit=pool,
        return_ranks=True,
    )
    id_list = [int(i) for i in ids]
    cos: dict[int, float] = {}
    if vector is not None:
        for mid in id_list:
            row = engine.index.vector(mid)  # type: ignore[attr-defined]
            if row is not None:
                cos[mid] = float(row @ vector)
    best = float(fused[0]) if len(fused) else 0.0
    is_live = engine.memories.is_live
    scored: list[tuple[float, int, int, tuple[Any, ...]]] = []
    for pos, mid in enumerate(id_list):
        state = engine.memories.scoring_state(mid)
        if state is None:
            continue
        kind, created_ms, confidence, strength, tier = state
        edges = engine.graph.neighbours(mid)
        view = CandidateView(
            fused=float(fused[pos]),
            cosine=cos.get(mid),
            access_ms=engine.memories.access_times(mid),
            created_ms=created_ms,
            confidence=confidence,
            strength=strength,
            staged=engine.index.is_staged(mid),
            tier=tier,
            kind=kind,
            suppressed=suppression(edges, is_live) if edges else 1.0,
        )
        score, factors = engine.scorer.score(view, best_fused=best, now_ms=now_ms)
        scored.append((-score, mid, pos, factors))
    scored.sort(key=lambda t: (t[0], t[1]))
    hits: list[Hit] = []
    for neg_score, mid, pos, factors in scored[:k]:
        memory = engine.memories.get(mid)
        if memory is None:
            continue
        lane_ranks = {names[j]: int(ranks[pos, j]) for j in range(len(names)) if ranks[pos, j] > 0}
        hits.append(
            Hit(
                id=mid,
                text=memory.text,
                score=-neg_score,
                memory=memory,
                lanes=lane_ranks,
                fused=float(fused[pos]),
                factors=factors if explain else (),
            )
        )
    return hits


def as_rows(hits: list[Hit]) -> list[tuple[int, float, dict[str, int], float]]:
    return [(h.id, h.score, h.lanes, h.fused) for h in hits]


def same_hits(new: list[Hit], ref: list[Hit], tol: float = 1e-9) -> None:
    assert [h.id for h in new] == [h.id for h in ref]
    for a, b in zip(new, ref):
        assert abs(a.score - b.score) <= tol, (a.id, a.score, b.score)
        assert a.lanes == b.lanes and a.fused == b.fused
        assert a.memory == b.memory
        assert len(a.factors) == len(b.factors)
        for fa, fb in zip(a.factors, b.factors):
            assert (fa.name, fa.kind, fa.weight) == (fb.name, fb.kind, fb.weight)
            assert abs(fa.value - fb.value) <= tol and abs(fa.contribution - fb.contribution) <= tol
    assert np.isfinite([h.score for h in new]).all()
