"""The learned factors: their formulas by hand, neutral without state, and what they move."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import chitta
from chitta.field import learned_rerank
from chitta.recall import learned as lf

TEXTS = [
    "the build cache lives in tmp alpha",
    "the build cache lives in tmp beta",
    "lunch is at noon on fridays",
    "the deploy needs the vpn",
]


def test_formulas_and_neutral_points() -> None:
    assert lf.source_weight(0.5) == 1.0 and lf.source_weight(1.0) == 1.25
    assert lf.source_weight(0.0) == 0.75
    assert lf.epistemic_status(False, False) == 1.0
    assert lf.epistemic_status(True, True) == 1.10 and lf.epistemic_status(False, True) == 0.95
    assert lf.surprise_boost(0, 0) == 1.0
    assert lf.surprise_boost(1, 2) == pytest.approx(1.09)
    assert lf.surprise_boost(9, 9) == pytest.approx(1.20)  # capped
    assert lf.integration_kernel(0.0) == 1.0
    assert lf.integration_kernel(-1.0) == pytest.approx(1 - 0.1 * math.tanh(1.0))
    assert lf.prediction_boost(0.0) == 1.0 and lf.prediction_boost(0.5) == pytest.approx(1.1)


def _fill(root: Path) -> tuple[chitta.Field, list[int]]:
    f = chitta.open(root, embedder=None, clock=lambda: 1_700_000_000.0)  # one clock: equal scores
    return f, [f.remember(t) for t in TEXTS]


def _local(mid: int) -> int:
    return mid & 0xFFFFFFFF  # the same memory in two fields (their instance ids differ)


def _ranked(f: chitta.Field, q: str = "build cache lives tmp") -> list[tuple[int, float]]:
    return [(_local(h.id), h.score) for h in f.recall(q, k=2, touch=False)]


def test_unrelated_state_changes_no_ranking(tmp_path: Path) -> None:
    a, _ = _fill(tmp_path / "a")
    b, ids = _fill(tmp_path / "b")
    with a, b:
        assert not learned_rerank.active(a.core)
        b.call("feedback", memory_id=ids[3], useful=True, source="elsewhere")
        assert learned_rerank.active(b.core)  # state exists, but for no hit's pair
        assert _ranked(a) == _ranked(b)  # same order, same scores


def test_source_weight_and_prediction_move_hits(tmp_path: Path) -> None:
    a, _ = _fill(tmp_path / "a")
    b, ids = _fill(tmp_path / "b")
    with a, b:
        base = dict(_ranked(a))
        assert list(base) == [_local(ids[0]), _local(ids[1])]  # a tie, broken by id
        b.call("record_access", ids=[ids[3], ids[1], ids[3]])  # last access 3; P(3 -> 1) = 1
        top = b.recall("build cache lives tmp", k=2, touch=False, explain=True)
        assert top[0].id == ids[1]
        boost = {x.name: x.value for x in top[0].factors}["prediction_boost"]
        assert boost == pytest.approx(1.2)
        assert top[0].score == pytest.approx(base[_local(ids[1])] * 1.2)
        for _ in range(3):
            b.call("feedback", memory_id=ids[0], useful=True, source="grep")
        hits = b.recall("build cache lives tmp", k=2, touch=False, explain=True)
        # ids[0]'s pair (default, field) was never rated: its weight stays 1
        assert "source_weight" not in {x.name for x in hits[1].factors}
        b.call("feedback", memory_id=ids[1], useful=True)  # rates (default, field): every hit's
        hits = b.recall("build cache lives tmp", k=2, touch=False, explain=True)
        for h in hits:  # Beta(2, 1): weight 2/3 -> 0.75 + 0.5 * 2/3
            assert {x.name: x.value for x in h.factors}["source_weight"] == pytest.approx(
                0.75 + 1 / 3
            )


def test_frustration_escalation_by_hand(tmp_path: Path) -> None:
    assert lf.frustration_escalation(1, True) == 1.0  # one failure is not a pattern
    assert lf.frustration_escalation(3, True) == pytest.approx(1.15)
    assert lf.frustration_escalation(9, True) == pytest.approx(1.30)  # run capped at 6
    assert lf.frustration_escalation(5, False) == 1.0
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: 1_700_000_000.0) as f:
        note = f.remember("the build cache lives in tmp alpha")
        fix = f.remember("the build cache lives in tmp beta", kind="lesson")
        for _ in range(2):  # two failures in a row in session s1
            f.call("record_outcome", expected="green", actual="red", session="s1")
        hits = f.recall("build cache lives tmp", k=2, touch=False, explain=True)
        by = {h.id: {x.name: x.value for x in h.factors} for h in hits}
        assert by[fix]["frustration_escalation"] == pytest.approx(1.10)
        assert "frustration_escalation" not in by[note]
        f.call("record_outcome", expected="green", actual="Green", session="s1")  # a success
        assert f.organ("feedback").failure_run == 0
        assert not learned_rerank.active(f.core)
        f.call("record_outcome", expected="a", actual="b", session="s2")
        f.call("record_outcome", expected="a", actual="b", session="s1")  # another session: 1
        assert f.organ("feedback").failure_run == 1


def test_the_quick_path_gives_the_explained_ranking(tmp_path: Path) -> None:
    """Hits with no per-memory state skip factors_of (explain=False); the ranking and scores
    must equal the explained one, which multiplies every factor, on a field with every kind
    of state on some memories and none on most."""
    words = ["build", "cache", "tmp", "deploy", "vpn", "lunch", "noon", "tests"]
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: 1_700_000_000.0) as f:
        ids = []
        for i in range(120):
            text = " ".join(words[(i + j) % len(words)] for j in range(4)) + f" note {i}"
            kind = "lesson" if i % 17 == 0 else "observation"
            meta = {"valence": ((i % 5) - 2) / 2} if i % 11 == 0 else None
            ids.append(f.remember(text, kind=kind, meta=meta, realm="ops" if i % 3 else None))
        f.call("feedback", memory_id=ids[4], useful=True)
        f.call("feedback", memory_id=ids[5], useful=False, source="grep")
        f.call("record_access", ids=[ids[7], ids[8], ids[7], ids[9]])
        f.call("debt_register", question="which cache?", memory_ids=[ids[10], ids[12]])
        for _ in range(2):
            f.call("record_outcome", expected="green", actual="red", memory_ids=ids[20:23])
        assert learned_rerank.active(f.core)
        for q in ("build cache", "deploy vpn tests", "lunch noon", "tmp note"):
            for mood in (None, 0.8):
                quick = f.recall(q, k=15, touch=False, mood=mood)
                full = f.recall(q, k=15, touch=False, mood=mood, explain=True)
                assert [(h.id, h.score) for h in quick] == [(h.id, h.score) for h in full]


def test_a_uniform_factor_reranks_the_plain_candidates(tmp_path: Path) -> None:
    """With one rated pair for every memory (the same factor on every hit), each recall
    returns the plain field's ids in its order, each score times that factor: the pool is
    the plain recall's candidates ranked deeper (``depth_k``), and the rerank keeps order."""
    import random

    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]  # few words: a query matches far more than 50 memories
    texts = [" ".join(rng.sample(words, 6)) for _ in range(400)]
    plain = chitta.open(tmp_path / "plain", embedder=None, clock=lambda: 1_700_000_000.0)
    rated = chitta.open(tmp_path / "rated", embedder=None, clock=lambda: 1_700_000_000.0)
    with plain, rated:
        plain.remember_many(texts)
        ids = rated.remember_many(texts)
        rated.call("feedback", memory_id=ids[0], useful=True)  # rates (default, field)
        assert learned_rerank.active(rated._core)
        factor = lf.source_weight(
            rated._core.registry.by_name["source_weights"].weight("default", "field")
        )
        assert factor > 1.0
        for _ in range(30):
            q = " ".join(rng.sample(words, 2))
            a, b = plain.recall(q, k=10, touch=False), rated.recall(q, k=10, touch=False)
            assert [_local(h.id) for h in a] == [_local(h.id) for h in b]
            assert [h.score * factor for h in a] == pytest.approx([h.score for h in b], rel=1e-12)
