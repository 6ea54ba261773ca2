"""The recall scorer: fused rank leads, cosine breaks near-ties, context multiplies."""

from __future__ import annotations

import pytest

from chitta.recall.factors import FactorSettings
from chitta.recall.scorer import CandidateView, Scorer

NOW = 1_700_000_000_000
DAY = 86_400_000


def view(
    fused: float, cosine: float | None = None, *, age_days: float = 1000, staged: bool = False
) -> CandidateView:
    created = NOW - int(age_days * DAY)
    return CandidateView(
        fused=fused,
        cosine=cosine,
        access_ms=(created,),
        created_ms=created,
        confidence=1.0,
        strength=1.0,
        staged=staged,
        tier=0,
        kind="observation",
    )


def score(c: CandidateView, best: float = 1.0, settings: FactorSettings | None = None) -> float:
    return Scorer(settings).score(c, best_fused=best, now_ms=NOW)[0]


def test_a_clearly_better_fused_score_beats_a_higher_cosine() -> None:
    # fused 1.0 vs 0.9 (ten per cent apart); cosine 0.1 vs 0.9
    assert score(view(1.0, 0.1)) > score(view(0.9, 0.9))


def test_cosine_breaks_a_near_tie_of_fused_scores() -> None:
    assert score(view(0.999, 0.8)) > score(view(1.0, 0.2))


def test_a_stale_never_recalled_memory_keeps_the_context_floor() -> None:
    s = FactorSettings(w_similarity=0.0)
    old = score(view(1.0, age_days=10_000), settings=s)
    assert old == pytest.approx(1.0 - s.w_activation - s.w_freshness, abs=1e-3)


def test_fresh_memories_rank_above_equally_relevant_old_ones() -> None:
    assert score(view(1.0, 0.5, age_days=0.01)) > score(view(1.0, 0.5, age_days=300))


def test_staged_memories_get_the_write_gate_multiplier() -> None:
    assert score(view(1.0, 0.5, staged=True)) == pytest.approx(0.8 * score(view(1.0, 0.5)))


def test_explanation_names_every_factor_and_adds_up() -> None:
    total, factors = Scorer().score(view(0.5, 0.4, age_days=3), best_fused=1.0, now_ms=NOW)
    names = [f.name for f in factors]
    assert names[:4] == ["fused", "similarity", "activation", "freshness"]
    assert "context" in names and "staged" in names
    relevance = sum(f.contribution for f in factors if f.kind == "additive")
    assert relevance + sum(
        f.contribution for f in factors if f.kind == "multiplier"
    ) == pytest.approx(total)
