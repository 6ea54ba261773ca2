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

Two forms of the same arithmetic: ``score`` takes one ``CandidateView`` and
explains it (the reference, and what ``explain=True`` shows); ``score_batch``
scores all of a query's candidates at once from a ``CandidateBatch`` (numpy
for the arithmetic, Python's ``math`` for the powers, logarithms and
exponentials so that every value is bit-for-bit the one ``score`` computes).
Recall ranks with ``score_batch`` (tests/unit/test_recall_vectorised.py checks
the two agree).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta.recall import factors as f
from chitta.recall.hit import Factor

F64 = npt.NDArray[np.float64]


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


@dataclasses.dataclass(frozen=True, slots=True)
class CandidateBatch:
    """What the scorer needs to know about ``n`` candidates, column by column.

    ``cosine`` holds NaN where a candidate has no vector; ``access_ms`` is each
    candidate's access times (creation first), as ``CandidateView.access_ms``.
    """

    fused: F64
    cosine: F64
    access_ms: Sequence[tuple[int, ...]]
    created_ms: npt.NDArray[np.int64]
    confidence: F64
    strength: F64
    staged: npt.NDArray[np.bool_]
    tier: npt.NDArray[np.int64]
    kind: Sequence[str]
    suppressed: F64

    def __len__(self) -> int:
        return len(self.kind)

    def view(self, i: int) -> CandidateView:
        cos = float(self.cosine[i])
        return CandidateView(
            fused=float(self.fused[i]), cosine=None if math.isnan(cos) else cos, access_ms=self.access_ms[i],
            created_ms=int(self.created_ms[i]), confidence=float(self.confidence[i]),
            strength=float(self.strength[i]), staged=bool(self.staged[i]), tier=int(self.tier[i]),
            kind=self.kind[i], suppressed=float(self.suppressed[i]),
        )


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

    def score_batch(self, c: CandidateBatch, *, best_fused: float, now_ms: int) -> F64:
        """``score(c.view(i), ...)[0]`` for every candidate ``i``, as one array."""
        s = self.settings
        n = len(c)
        if n == 0:
            return np.zeros(0, np.float64)
        fused = c.fused / best_fused if best_fused > 0 else np.zeros(n, np.float64)
        cos = c.cosine
        similarity = np.where(np.isnan(cos), 0.0, np.maximum(0.0, np.nan_to_num(cos)))
        score = s.w_fused * fused + s.w_similarity * similarity
        act = np.array(_activations(c.access_ms, now_ms, s.actr_decay), np.float64)
        age_days = np.maximum(0.0, (now_ms - c.created_ms) / f.MS_PER_DAY).tolist()
        base = 1.0 - s.freshness_rate
        fresh = np.array([base**a for a in age_days], np.float64)
        context = 1.0 - s.w_activation - s.w_freshness + s.w_activation * act + s.w_freshness * fresh
        strength = np.maximum(0.0, c.strength)
        kinds = s.kind_weights
        score *= context
        score *= 0.5 + 0.5 * c.confidence
        score *= 2.0 * strength / (1.0 + strength)
        score *= np.where(c.staged, s.staged_multiplier, 1.0)
        score *= 1.0 / (1.0 + s.tier_step * np.maximum(0, c.tier))
        score *= np.array([kinds.get(k, 1.0) for k in c.kind], np.float64)
        score *= c.suppressed
        return score


def _activations(access: Sequence[tuple[int, ...]], now_ms: int, decay: float) -> list[float]:
    """``factors.activation`` of each access trace (same operations, same order)."""
    nd = -decay
    log, exp = math.log, math.exp
    out: list[float] = []
    for times in access:
        total = 0.0
        for t in times:
            age = (now_ms - t) / 1000.0
            total += max(1.0, age) ** nd
        if total > 0:
            out.append(1.0 / (1.0 + exp(-(log(total) + 2.0))))
        else:
            out.append(0.0)
    return out
