"""Combines the factors of :mod:`chitta.recall.factors` into one score.

score = (w_fused * fused + w_similarity * similarity)            relevance
        * (1 - w_a - w_f + w_a * activation + w_f * freshness)    context
        * confidence * strength * staged * tier * kind            multipliers

Relevance leads: the fused rank order of the lanes is kept unless the other
factors have a reason to change it (a near-tie of fused scores is broken by
cosine; a stale or doubtful memory loses a fixed share). An additive blend of
fused score and cosine would count the dense lane twice and let it undo what
the keyword lane found (measured on LoCoMo: benchmarks/RESULTS.md, locomo).
New factors are added to ``RELEVANCE``-style terms or to the multipliers.
"""

from __future__ import annotations

import dataclasses

from chitta.recall import factors as f
from chitta.recall.hit import Factor


@dataclasses.dataclass(frozen=True, slots=True)
class CandidateView:
    """What the scorer needs to know about one candidate."""

    fused: float
    cosine: float | None
    access_ms: tuple[int, ...]
    created_ms: int
    confidence: float
    strength: float
    staged: bool
    tier: int
    kind: str
    suppressed: float = 1.0  # chitta.recall.factors.suppression


class Scorer:
    def __init__(self, settings: f.FactorSettings | None = None) -> None:
        self.settings = settings or f.FactorSettings()

    def score(self, c: CandidateView, *, best_fused: float, now_ms: int) -> tuple[float, tuple[Factor, ...]]:
        s = self.settings
        relevance = (
            ("fused", s.w_fused, f.fused(c.fused, best_fused)),
            ("similarity", s.w_similarity, f.similarity(c.cosine)),
        )
        act = f.activation(c.access_ms, now_ms, s.actr_decay)
        fresh = f.freshness(c.created_ms, now_ms, s.freshness_rate)
        context = 1.0 - s.w_activation - s.w_freshness + s.w_activation * act + s.w_freshness * fresh
        multipliers = (
            ("context", context),
            ("confidence", f.confidence_weight(c.confidence)),
            ("strength", f.strength_weight(c.strength)),
            ("staged", f.staged_weight(c.staged, s.staged_multiplier)),
            ("tier", f.tier_weight(c.tier, s.tier_step)),
            ("kind", f.kind_weight(c.kind, s.kind_weights)),
            ("suppression", c.suppressed),
        )
        score = sum(w * v for _, w, v in relevance)
        explained = [Factor(name, "additive", v, w, w * v) for name, w, v in relevance]
        explained.append(Factor("activation", "context", act, s.w_activation, s.w_activation * act))
        explained.append(Factor("freshness", "context", fresh, s.w_freshness, s.w_freshness * fresh))
        for name, m in multipliers:
            before = score
            score *= m
            explained.append(Factor(name, "multiplier", m, 1.0, score - before))
        return score, tuple(explained)
