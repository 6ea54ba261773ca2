"""Scoring factors against hand-computed values, and the scorer's arithmetic."""

from __future__ import annotations

import math

import pytest

from chitta.recall import factors as f
from chitta.recall.scorer import CandidateView, Scorer

NOW = 1_800_000_000_000  # ms


def test_actr_base_level_activation_by_hand() -> None:
    # accesses 1 s and 4 s ago, d = 0.5: B = ln(1^-0.5 + 4^-0.5) = ln(1.5)
    assert f.base_level_activation([NOW - 1000, NOW - 4000], NOW) == pytest.approx(math.log(1.5))
    # 100 s and 10000 s ago: ln(0.1 + 0.01)
    assert f.base_level_activation([NOW - 100_000, NOW - 10_000_000], NOW) == pytest.approx(
        math.log(0.11)
    )
    # an access "in the future" or right now counts as 1 s old
    assert f.base_level_activation([NOW + 5000], NOW) == pytest.approx(0.0)
    assert f.activation([], NOW) == 0.0
    assert f.activation([NOW - 1000], NOW) == pytest.approx(1 / (1 + math.exp(-2.0)))


def test_activation_rises_with_more_and_more_recent_access() -> None:
    old = f.activation([NOW - 86_400_000], NOW)
    recent = f.activation([NOW - 60_000], NOW)
    many = f.activation([NOW - 60_000, NOW - 120_000, NOW - 180_000], NOW)
    assert old < recent < many


def test_freshness_decays_one_percent_per_day() -> None:
    assert f.freshness(NOW, NOW) == 1.0
    assert f.freshness(NOW - 10 * 86_400_000, NOW) == pytest.approx(0.99**10)
    assert f.freshness(NOW - 365 * 86_400_000, NOW, rate=0.01) == pytest.approx(0.99**365)


def test_multipliers_by_hand() -> None:
    assert f.confidence_weight(0.4) == pytest.approx(0.7)
    assert f.confidence_weight(1.0) == 1.0
    assert f.strength_weight(1.0) == 1.0
    assert f.strength_weight(3.0) == pytest.approx(1.5)
    assert f.strength_weight(0.0) == 0.0
    assert f.staged_weight(True) == 0.80 and f.staged_weight(False) == 1.0
    assert f.tier_weight(0) == 1.0 and f.tier_weight(2) == pytest.approx(1 / 1.5)
    assert f.kind_weight("decision", f.DEFAULT_KIND_WEIGHTS) == 1.1
    assert f.kind_weight("unknown-kind", f.DEFAULT_KIND_WEIGHTS) == 1.0
    assert f.fused(0.02, 0.04) == 0.5 and f.fused(0.0, 0.0) == 0.0
    assert f.similarity(-0.3) == 0.0 and f.similarity(0.7) == 0.7 and f.similarity(None) == 0.0


def test_scorer_score_is_its_explained_arithmetic() -> None:
    view = CandidateView(
        fused=0.02,
        cosine=0.6,
        access_ms=(NOW - 3_600_000, NOW - 60_000),
        created_ms=NOW - 5 * 86_400_000,
        confidence=0.5,
        strength=2.0,
        staged=True,
        tier=1,
        kind="decision",
    )
    score, factors = Scorer().score(view, best_fused=0.04, now_ms=NOW)
    by_name = {x.name: x for x in factors}
    # every factor this issue names is present and explained
    for name in (
        "fused",
        "similarity",
        "activation",
        "freshness",
        "confidence",
        "strength",
        "staged",
        "tier",
        "kind",
    ):
        assert name in by_name
    additive = sum(x.weight * x.value for x in factors if x.kind == "additive")
    product = math.prod(x.value for x in factors if x.kind == "multiplier")
    assert score == pytest.approx(additive * product)
    # additive and multiplier contributions add up to the score; "context" entries
    # explain the ingredients of the context multiplier
    assert sum(x.contribution for x in factors if x.kind != "context") == pytest.approx(score)
    ctx = next(x for x in factors if x.name == "context" and x.kind == "multiplier")
    s = Scorer().settings
    expected_ctx = (
        1
        - s.w_activation
        - s.w_freshness
        + sum(x.weight * x.value for x in factors if x.kind == "context")
    )
    assert ctx.value == pytest.approx(expected_ctx)
    assert by_name["fused"].value == pytest.approx(0.5)
    assert by_name["similarity"].value == pytest.approx(0.6)
    assert by_name["freshness"].value == pytest.approx(0.99**5)
    assert by_name["confidence"].value == pytest.approx(0.75)
    assert by_name["strength"].value == pytest.approx(4 / 3)
    assert by_name["staged"].value == pytest.approx(0.8)
    assert by_name["tier"].value == pytest.approx(0.8)
    assert by_name["kind"].value == pytest.approx(1.1)
