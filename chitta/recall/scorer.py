"""Combines the factors of :mod:`chitta.recall.factors` into one score.

score = (w_fused*fused + w_similarity*similarity + w_activation*activation
         + w_freshness*freshness) * confidence * strength * staged * tier * kind

The additive weights sum to 1, so a perfect match with neutral multipliers
scores 1. New factors (surprise, contradiction suppression, ...) are added by
appending to ``ADDITIVE`` or ``MULTIPLIERS`` with their value functions.
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
        additive = (
            ("fused", s.w_fused, f.fused(c.fused, best_fused)),
            ("similarity", s.w_similarity, f.similarity(c.cosine)),
            ("activation", s.w_activation, f.activation(c.access_ms, now_ms, s.actr_decay)),
            ("freshness", s.w_freshness, f.freshness(c.created_ms, now_ms, s.freshness_rate)),
        )
        multipliers = (
            ("confidence", f.confidence_weight(c.confidence)),
            ("strength", f.strength_weight(c.strength)),
            ("staged", f.staged_weight(c.staged, s.staged_multiplier)),
            ("tier", f.tier_weight(c.tier, s.tier_step)),
            ("kind", f.kind_weight(c.kind, s.kind_weights)),
            ("suppression", c.suppressed),
        )
        base = sum(w * v for _, w, v in additive)
        explained = [Factor(name, "additive", v, w, w * v) for name, w, v in additive]
        score = base
        for name, m in multipliers:
            before = score
            score *= m
            explained.append(Factor(name, "multiplier", m, 1.0, score - before))
        return score, tuple(explained)
