"""The wisdom FSM: every transition, the promotion gate's edges, distillation."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import chitta
from chitta import ops
from chitta.errors import NotFound
from chitta.organs.wisdom import WisdomOrgan
from chitta.policies import distill, wisdom

STAGES = sorted(ops.WISDOM_STAGES)
ALLOWED = {
    ("candidate", "provisional"),
    ("provisional", "trusted"),
    ("provisional", "demoted"),
    ("trusted", "demoted"),
    ("demoted", "candidate"),
}


def _organ_at(stage_path: list[str]) -> WisdomOrgan:
    o = WisdomOrgan()
    o.apply(ops.UpsertWisdomCandidate(cluster_key="k", statement="s", at_ms=1))
    for i, stage in enumerate(stage_path):
        o.apply(ops.UpdateWisdomLifecycle(cluster_key="k", stage=stage, at_ms=2 + i))
    return o


PATH_TO = {
    "candidate": [],
    "provisional": ["provisional"],
    "trusted": ["provisional", "trusted"],
    "demoted": ["provisional", "demoted"],
}


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(STAGES, STAGES)))
def test_every_transition(src: str, dst: str) -> None:
    o = _organ_at(PATH_TO[src])
    assert o.candidates["k"][7] == src and o.ignored == 0
    o.apply(ops.UpdateWisdomLifecycle(cluster_key="k", stage=dst, at_ms=99, memory_id=5))
    if (src, dst) in ALLOWED:
        assert o.candidates["k"][7] == dst and o.candidates["k"][8] == 5 and o.ignored == 0
    else:
        assert o.candidates["k"][7] == src and o.ignored == 1
    assert wisdom.legal(src, dst) == ((src, dst) in ALLOWED)


def test_upsert_is_idempotent_and_keeps_the_stage() -> None:
    o = _organ_at(["provisional"])
    up = ops.UpsertWisdomCandidate(
        cluster_key="k", statement="t", at_ms=5, support=6, sessions=("a", "b"), score=0.8
    )
    o.apply(up)
    once = [list(x) if isinstance(x, list) else x for x in o.candidates["k"]]
    o.apply(up)
    assert o.candidates["k"] == once and once[7] == "provisional" and once[1] == 6


@pytest.mark.parametrize(
    ("support", "sessions", "score", "contradictions", "ok"),
    [
        (4, 2, 0.72, 0, True),
        (3, 2, 0.72, 0, False),
        (4, 1, 0.72, 0, False),
        (4, 2, 0.7199, 0, False),
        (4, 2, 0.72, 1, False),
        (40, 9, 1.0, 1, False),
    ],
)
def test_promotion_gate_edges(
    support: int, sessions: int, score: float, contradictions: int, ok: bool
) -> None:
    assert wisdom.promotable(support, sessions, score, contradictions) is ok
    step = wisdom.next_stage("candidate", support, sessions, score, contradictions)
    assert (step is not None and step[0] == "provisional") is ok


def test_next_stage_of_every_stage() -> None:
    assert wisdom.next_stage("provisional", 8, 3, 0.9, 0)[0] == "trusted"  # type: ignore[index]
    assert wisdom.next_stage("provisional", 7, 3, 0.9, 0) is None
    assert wisdom.next_stage("provisional", 8, 2, 0.9, 0) is None
    assert wisdom.next_stage("provisional", 9, 9, 0.9, 1)[0] == "demoted"  # type: ignore[index]
    assert wisdom.next_stage("trusted", 9, 9, 0.9, 1)[0] == "demoted"  # type: ignore[index]
    assert wisdom.next_stage("trusted", 9, 9, 0.9, 0) is None
    assert wisdom.next_stage("demoted", 9, 9, 0.9, 0) is None  # only a clear by hand moves it


def test_clusters_by_hand() -> None:
    rows = [
        (1, "Always run the migration before the deploy", "s1", None),
        (2, "always run migration before deploy!", "s2", None),
        (3, "lunch is at noon", "s1", None),
        (4, "run the migration before deploy, always", "s1", None),
    ]
    (c,) = distill.clusters(rows)
    assert c.key == "distill:1" and c.members == (1, 2, 4) and c.sessions == ("s1", "s2")
    assert c.score == pytest.approx(1.0)  # identical word sets {always, run, migration, deploy}
    assert distill.jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)


def _lessons(f: chitta.Field, n: int, sessions: int) -> list[int]:
    return [
        f.remember(
            f"lesson: rebase before pushing to main, take {i}",
            kind="lesson",
            session=f"s{i % sessions}",
        )
        for i in range(n)
    ]


def test_distill_promotes_writes_wisdom_and_replays(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        _lessons(f, 3, 2)
        assert f.call("distill") == {"upserted": 1, "promoted": 0, "trusted": 0, "demoted": 0}
        f.remember("lesson: rebase before pushing to main, take 3", kind="lesson", session="s1")
        assert f.call("distill")["promoted"] == 1
        (c,) = f.call("wisdom_candidates")["candidates"]
        m = f.get(int(c["memory_id"]))
        assert m.kind == "wisdom" and m.text.startswith("lesson: rebase")
        assert c["stage"] == "provisional" and c["support"] == 4
        assert f.call("distill") == {"upserted": 0, "promoted": 0, "trusted": 0, "demoted": 0}
        f.call("wisdom_contradict", cluster_key=c["cluster_key"])
        assert f.call("wisdom_candidates")["candidates"][0]["stage"] == "demoted"
        _lessons(f, 8, 3)
        f.call("distill")
        assert f.call("wisdom_candidates")["candidates"][0]["stage"] == "demoted"  # blocked
        cleared = f.call("wisdom_clear", cluster_key=c["cluster_key"])
        assert cleared["stage"] == "candidate" and cleared["contradictions"] == 0
        state = f.call("wisdom_candidates")
        with pytest.raises(NotFound):
            f.call("wisdom_clear", cluster_key="nope")
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.call("wisdom_candidates") == state
