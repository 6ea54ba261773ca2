"""Combines the factors of :mod:`chitta.recall.factors` into one score.

score = (w_fused * fused + w_similarity * similarity)            relevance
        * (1 - w_a - w_f + w_a * activation + w_f * freshness)    context
        * confidence * strength * staged * tier * kind            multipliers

Relevance leads: the fused rank order of the lanes is kept unless the other
factors have a reason to change it (a near-tie of fused scores is broken by
cosine; a stale or doubtful memory loses a fixed share). An additive blend of
fused score and cosine would count the dense lane twice and let it undo what
the keyword lane found (measured on LoCoMo: see docs/DECISIONS.md D-021).
New factors are added to ``RELEVANCE``-style terms or to the multipliers.

Two forms of the same arithmetic: ``score`` takes one ``CandidateView`` and
explains it (the reference, and what ``explain=True`` shows); ``score_batch``
scores all of a query's candidates at once from a ``CandidateBatch`` in one
native call (csrc/scoring: the same operations in the same order, the C
library's log/exp/pow as Python's ``math``, no floating-point contraction, so
every value is bit-for-bit the one ``score`` computes). Recall ranks with
``score_batch`` (tests/unit/recall/test_recall_vectorised.py checks the two agree).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta import _core
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

    ``cosine`` holds NaN where a candidate has no vector. Candidate ``i``'s
    access times (creation first, as ``CandidateView.access_ms``) are
    ``access_ms[access_offsets[i]:access_offsets[i + 1]]``.
    """

    fused: F64
    cosine: F64
    access_offsets: npt.NDArray[np.int64]
    access_ms: npt.NDArray[np.int64]
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
        lo, hi = int(self.access_offsets[i]), int(self.access_offsets[i + 1])
        return CandidateView(
            fused=float(self.fused[i]),
            cosine=None if math.isnan(cos) else cos,
            access_ms=tuple(self.access_ms[lo:hi].tolist()),
            created_ms=int(self.created_ms[i]),
            confidence=float(self.confidence[i]),
            strength=float(self.strength[i]),
            staged=bool(self.staged[i]),
            tier=int(self.tier[i]),
            kind=self.kind[i],
            suppressed=float(self.suppressed[i]),
        )


def access_columns(
    traces: Sequence[Sequence[int]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(offsets, flat times)`` of per-candidate access traces, as ``CandidateBatch`` holds them."""
    offsets = np.zeros(len(traces) + 1, np.int64)
    np.cumsum([len(t) for t in traces], out=offsets[1:])
    flat = np.fromiter((t for trace in traces for t in trace), np.int64, count=int(offsets[-1]))
    return offsets, flat


class Scorer:
    def __init__(self, settings: f.FactorSettings | None = None) -> None:
        self.settings = settings or f.FactorSettings()

    def score(
        self, c: CandidateView, *, best_fused: float, now_ms: int
    ) -> tuple[float, tuple[Factor, ...]]:
        s = self.settings
        relevance = (
            ("fused", s.w_fused, f.fused(c.fused, best_fused)),
            ("similarity", s.w_similarity, f.similarity(c.cosine)),
        )
        act = f.activation(c.access_ms, now_ms, s.actr_decay)
        fresh = f.freshness(c.created_ms, now_ms, s.freshness_rate)
        context = (
            1.0 - s.w_activation - s.w_freshness + s.w_activation * act + s.w_freshness * fresh
        )
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
        explained.append(
            Factor("freshness", "context", fresh, s.w_freshness, s.w_freshness * fresh)
        )
        for name, m in multipliers:
            before = score
            score *= m
            explained.append(Factor(name, "multiplier", m, 1.0, score - before))
        return score, tuple(explained)

    def score_batch(self, c: CandidateBatch, *, best_fused: float, now_ms: int) -> F64:
        """``score(c.view(i), ...)[0]`` for every candidate ``i``, as one array."""
        s = self.settings
        kinds = s.kind_weights
        return _core._score_candidates(
            np.ascontiguousarray(c.fused, np.float64),
            np.ascontiguousarray(c.cosine, np.float64),
            c.created_ms,
            c.access_offsets,
            c.access_ms,
            c.confidence,
            c.strength,
            np.ascontiguousarray(c.staged, np.uint8),
            c.tier,
            np.array([kinds.get(k, 1.0) for k in c.kind], np.float64),
            c.suppressed,
            float(best_fused),
            int(now_ms),
            (
                s.w_fused,
                s.w_similarity,
                s.w_activation,
                s.w_freshness,
                s.freshness_rate,
                s.actr_decay,
                s.staged_multiplier,
                s.tier_step,
            ),
        )
