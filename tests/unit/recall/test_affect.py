"""Affect valence and mood congruence (chitta.recall.learned, D-048).

Oracles: the formulas written out here, and the same field recalled without the
affect state (a field with no valence ranks exactly as before, mood or not).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clitools import run

import chitta
from chitta.errors import InvalidArgument
from chitta.recall import learned as lf
from chitta.server.schemas import RECALL_SCHEMA


def test_the_formulas() -> None:
    for v in (-1.0, -0.4, 0.0, 0.3, 1.0):
        assert lf.affect_valence(v) == pytest.approx(1 + 0.05 * abs(v))
        for mood in (-1.0, -0.5, 0.0, 0.7, 1.0):
            assert lf.mood_congruence(v, mood) == pytest.approx(1 + 0.10 * v * mood)
    assert lf.memory_valence({"valence": 0.5}) == 0.5
    for meta in (
        None,
        {},
        {"valence": "sad"},
        {"valence": True},
        {"valence": 3},
        {"valence": float("nan")},
    ):
        assert lf.memory_valence(meta) is None  # absent or unusable: neutral


def _ranking(field: chitta.Field, **kw: object) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in field.recall("the deploy on friday", k=5, touch=False, **kw)]


def test_a_field_without_valence_ranks_as_before(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        for i in range(12):
            f.remember(f"the deploy on friday number {i} went out at {i} pm")
        plain = _ranking(f)
        for mood in (0.9, -1):
            again = _ranking(f, mood=mood)
            assert [i for i, _ in again] == [i for i, _ in plain]
            # equal up to the recency factor's drift with the clock between the calls
            assert [s for _, s in again] == pytest.approx([s for _, s in plain], rel=1e-6)


def test_mood_lifts_the_congruent_memory_by_the_formula(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        good = f.remember("the deploy on friday went out", meta={"valence": 0.8})
        bad = f.remember("the deploy on friday went out", meta={"valence": -0.8}, realm="other")
        f.remember("lunch was on thursday")
        for mood, first in ((1.0, good), (-1.0, bad)):
            hits = f.recall("the deploy on friday", k=3, touch=False, mood=mood, explain=True)
            assert hits[0].id == first
            for h in hits:
                v = lf.memory_valence(h.memory.meta)
                if v is None:
                    continue
                factors = {x.name: x.value for x in h.factors}
                assert factors["affect_valence"] == pytest.approx(1 + 0.05 * abs(v))
                assert factors["mood_congruence"] == pytest.approx(1 + 0.10 * v * mood)
        no_mood = f.recall("the deploy on friday", k=3, touch=False, explain=True)
        assert all("mood_congruence" not in {x.name for x in h.factors} for h in no_mood)


def test_valence_survives_reopen(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        mid = f.remember("shipped it", meta={"valence": 0.6})
    with chitta.open(tmp_path / "f", embedder="hashing", read_only=True) as again:
        assert again.get(mid).meta == {"valence": 0.6}


@pytest.mark.parametrize("bad", [2, -1.5, "happy", True, float("inf")])
def test_bad_valence_and_mood_are_refused_and_change_nothing(tmp_path: Path, bad: object) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        f.remember("one memory")
        with pytest.raises(InvalidArgument, match="valence"):
            f.remember("charged", meta={"valence": bad})
        with pytest.raises(InvalidArgument, match="mood"):
            f.recall("memory", mood=bad)  # type: ignore[arg-type]
        assert len(f) == 1


def test_mood_on_the_other_doors(tmp_path: Path) -> None:
    assert RECALL_SCHEMA["properties"]["mood"]["maximum"] == 1  # MCP and the JSON doors check it
    field = tmp_path / "f"
    with chitta.open(field, embedder="hashing") as f:
        f.remember("the deploy on friday went out", meta={"valence": 0.8})
    ok = run("--path", str(field), "recall", "deploy", "--mood", "0.5", "--no-touch")
    assert ok.returncode == 0 and "deploy" in ok.stdout, ok.stderr
    bad = run("--path", str(field), "recall", "deploy", "--mood", "2")
    assert bad.returncode == 2 and "mood" in bad.stderr.lower()
