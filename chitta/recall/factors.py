"""Scoring factors: named, composable functions with documented formulas.

Each returns a plain float; :mod:`chitta.recall.scorer` combines them. Times
are epoch milliseconds; ages are measured from ``now_ms``. Defaults live in
:class:`FactorSettings` and are settings, not constants (a later issue learns
them through the scorer model).

Relevance (what the query asked for):
- ``fused``: the hit's weighted-RRF score divided by the best fused score of
  the query (the top candidate gets 1). The main signal.
- ``similarity``: max(0, cosine(query vector, memory vector)); 0 without
  vectors. A small additive term: it breaks near-ties of the fused score.

Context (how alive the memory is; each in [0, 1], blended as one multiplier
``1 - w_a - w_f + w_a * activation + w_f * freshness``, so a stale, never
recalled memory keeps ``1 - w_a - w_f`` of its relevance):
- ``activation``: ACT-R base-level activation B = ln(sum_j t_j^-d) over the
  memory's access times (creation included), t_j = max(1 s, now - access_j)
  in seconds, d = 0.5; squashed to (0, 1) by the logistic 1 / (1 + e^-(B + 2)).
- ``freshness``: (1 - rate)^age_days with rate 0.01 per day (seed 004).

Multipliers:
- ``confidence``: 0.5 + 0.5 * confidence (an unverified memory keeps half).
- ``strength``: 2 * s / (1 + s) for strength s >= 0 (1 at the default 1.0, up to 2).
- ``staged``: 0.80 while the memory was never recalled (the write gate), else 1.
- ``tier``: 1 / (1 + 0.25 * tier) (demoted memories fade; tier 0 keeps 1).
- ``kind``: a weight per memory kind (decisions and lessons rank a little higher).
- ``suppression``: 0.3 when a live memory supersedes this one (an incoming
  ``Supersedes`` edge), else 0.6 when a live memory contradicts it (an incoming
  ``Contradicts`` edge), else 1. Edges from forgotten memories do not count.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping

MS_PER_DAY = 86_400_000.0

DEFAULT_KIND_WEIGHTS: Mapping[str, float] = {
    "observation": 1.0,
    "decision": 1.1,
    "lesson": 1.1,
    "wisdom": 1.1,
    "code_fact": 1.0,
    "thought": 0.9,
    "episode": 0.95,
    "alias": 0.95,
}


@dataclasses.dataclass(frozen=True)
class FactorSettings:
    w_fused: float = 1.0
    w_similarity: float = 0.02
    w_activation: float = 0.05
    w_freshness: float = 0.10
    freshness_rate: float = 0.01  # per day
    actr_decay: float = 0.5
    staged_multiplier: float = 0.80
    tier_step: float = 0.25
    kind_weights: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_KIND_WEIGHTS)
    )


def fused(score: float, best: float) -> float:
    return score / best if best > 0 else 0.0


def similarity(cosine: float | None) -> float:
    return max(0.0, cosine) if cosine is not None else 0.0


def base_level_activation(access_ms: Iterable[int], now_ms: int, decay: float = 0.5) -> float:
    """ACT-R B = ln(sum_j t_j^-decay), t_j in seconds, at least 1 s."""
    total = 0.0
    for t in access_ms:
        age_s = max(1.0, (now_ms - t) / 1000.0)
        total += age_s ** (-decay)
    return math.log(total) if total > 0 else float("-inf")


def activation(access_ms: Iterable[int], now_ms: int, decay: float = 0.5) -> float:
    b = base_level_activation(access_ms, now_ms, decay)
    if b == float("-inf"):
        return 0.0
    return 1.0 / (1.0 + math.exp(-(b + 2.0)))


def freshness(created_ms: int, now_ms: int, rate: float = 0.01) -> float:
    age_days = max(0.0, (now_ms - created_ms) / MS_PER_DAY)
    value: float = (1.0 - rate) ** age_days
    return value


def confidence_weight(confidence: float) -> float:
    return 0.5 + 0.5 * confidence


def strength_weight(strength: float) -> float:
    s = max(0.0, strength)
    return 2.0 * s / (1.0 + s)


def staged_weight(staged: bool, multiplier: float = 0.80) -> float:
    return multiplier if staged else 1.0


def tier_weight(tier: int, step: float = 0.25) -> float:
    return 1.0 / (1.0 + step * max(0, tier))


def kind_weight(kind: str, weights: Mapping[str, float]) -> float:
    return weights.get(kind, 1.0)


SUPERSEDED_MULTIPLIER = 0.3
CONTRADICTED_MULTIPLIER = 0.6


def suppression(
    neighbours: Iterable[tuple[int, str, bool, float]],
    is_live: Callable[[int], bool],
    superseded: float = SUPERSEDED_MULTIPLIER,
    contradicted: float = CONTRADICTED_MULTIPLIER,
) -> float:
    """The suppression multiplier from a memory's edges ``(other, kind, outgoing, weight)``."""
    value = 1.0
    for other, kind, outgoing, _w in neighbours:
        if outgoing or kind not in ("Supersedes", "Contradicts"):
            continue
        if not is_live(other):
            continue
        if kind == "Supersedes":
            return superseded
        value = contradicted
    return value
