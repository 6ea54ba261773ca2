"""The surprise-credit gate against hand-computed sequences (seed constants)."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument, NotFound
from chitta.policies import credit


def test_evidence_is_quadratic_above_the_floor() -> None:
    assert credit.evidence(0.20) == 0.0
    assert credit.evidence(0.10) == 0.0
    assert credit.evidence(0.60) == pytest.approx(0.25)  # ((0.6 - 0.2) / 0.8) ** 2
    assert credit.evidence(1.00) == pytest.approx(1.0)
    assert credit.evidence(0.52) == pytest.approx(0.16)  # (0.32 / 0.8) ** 2


def test_gate_fires_only_on_the_second_same_direction_signal() -> None:
    first = credit.step(0.0, 0, 1.0, -1)
    assert (first.credit, first.streak, first.delta) == (
        -1.0,
        -1,
        0.0,
    )  # |credit| >= 0.75, streak 1
    second = credit.step(first.credit, first.streak, 1.0, -1)
    # credit = 0.85 * -1 - 1 = -1.85, streak -2: fires -0.08, then bleeds to 0.35 * -1.85
    assert second.delta == pytest.approx(-0.08)
    assert second.streak == -2
    assert second.credit == pytest.approx(-0.6475)


def test_weak_signals_accumulate_until_the_gate() -> None:
    # s = 0.6: evidence 0.25 per event; credit 0.25, 0.4625, 0.643125, 0.79665625
    c, streak = 0.0, 0
    deltas = []
    for _ in range(4):
        out = credit.step(c, streak, 0.6, +1)
        c, streak = out.credit, out.streak
        deltas.append(out.delta)
    assert deltas[:3] == [0.0, 0.0, 0.0]
    assert deltas[3] == pytest.approx(0.08 * 0.79665625)  # delta scales with |credit| below 1
    assert c == pytest.approx(0.35 * 0.79665625)


def test_alternating_directions_never_fire() -> None:
    c, streak = 0.0, 0
    for i in range(20):
        out = credit.step(c, streak, 1.0, 1 if i % 2 == 0 else -1)
        assert out.delta == 0.0
        assert abs(out.streak) == 1
        c, streak = out.credit, out.streak


def test_low_surprise_only_decays() -> None:
    out = credit.step(0.8, 2, 0.1, -1)  # no evidence: decay, streak kept, below 0.75 now
    assert out.credit == pytest.approx(0.68) and out.streak == 2 and out.delta == 0.0


def test_bands() -> None:
    assert [credit.band(s) for s in (0.2, 0.5, 0.79, 0.8, 1.0)] == [
        "none",
        "soft",
        "soft",
        "hard",
        "hard",
    ]


def test_record_outcome_moves_strength_and_replays(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("the deploy needs the staging flag")
        strengths = []
        for _ in range(3):
            f.call("record_outcome", expected="deployed", actual="failed", memory_ids=[a])
            strengths.append(f.get(a).strength)
        ok = f.call("record_outcome", expected="ok", actual=" OK ", memory_ids=[a], surprise=1.0)
        assert ok["direction"] == 1  # a match, case and spacing aside; credit turns positive
        state = f.call("surprise_credit", id=a)
    assert strengths == pytest.approx([1.0, 0.92, 0.84])
    # hand: -0.6475 after the 2nd; 3rd: 0.85 * -0.6475 - 1 = -1.550375 -> bleed -0.54263125;
    # 4th (+1): 0.85 * -0.54263125 + 1 = 0.5387634375, streak +1, no fire
    assert state["credit"] == pytest.approx(0.5387634375)
    assert state["streak"] == 1 and state["hard"] == 4
    assert state["applied"] == pytest.approx(-0.16)
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.get(a).strength == pytest.approx(0.84)
        assert g.call("surprise_credit", id=a) == state


def test_record_outcome_bad_input_writes_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("x marks the spot")
        before = f.stats().max_seqno
        with pytest.raises(NotFound):
            f.call("record_outcome", expected="a", actual="b", memory_ids=[a, 12345])
        with pytest.raises(InvalidArgument):
            f.call("record_outcome", expected="a", actual="b", memory_ids=[a], surprise=1.5)
        with pytest.raises(InvalidArgument):
            f.call("record_outcome", expected="", actual="b", memory_ids=[a])
        with pytest.raises(InvalidArgument):
            f.call("record_outcome", expected="a", actual="b", memory_ids=[a, a])
        assert f.stats().max_seqno == before
        assert f.get(a).strength == 1.0
