"""Epistemic debts: noisy-OR support by hand, auto-resolve at 0.70, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument, NotFound
from chitta.policies import debts


def test_support_and_threshold_by_hand() -> None:
    assert debts.support([0.5, 0.4]) == pytest.approx(0.7)  # 1 - 0.5 * 0.6
    v = debts.ready(["gc", "io"], [(0.5, 0, [1]), (0.4, 0, [2]), (0.3, 1, [3])])
    assert v is not None and v.hypothesis == 0 and v.pieces == 2 and v.memory_ids == (1, 2)
    assert debts.ready(["gc", "io"], [(0.5, 0, [1]), (0.3, 0, [2])]) is None  # 0.65 < 0.70
    assert (
        debts.ready(["gc", "io"], [(0.8, 0, [1]), (0.8, 1, [2])]) is None
    )  # a tie settles nothing
    assert debts.ready([], [(0.7, None, [1])]) is not None  # the question as a whole
    assert debts.ready(["gc"], [(0.9, None, [1])]) is None  # whole-question evidence picks no side
    assert debts.ready(["gc"], [(0.6, 0, [1])], threshold=0.5) is not None


def test_auto_resolve_through_the_field(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b, c = (f.remember(t) for t in ("gc pauses 40 ms", "io waits 2 ms", "gc log shows it"))
        d = f.call(
            "debt_register",
            question="why is replay slow?",
            hypotheses=["gc", "io"],
            tests=["run with gc disabled"],
            memory_ids=[a],
        )
        f.call("debt_evidence", debt_id=d["id"], memory_ids=[a], confidence=0.5, hypothesis=0)
        assert f.call("debt_auto_resolve") == {"resolved": 0}  # 0.5 < 0.70
        f.call(
            "debt_evidence",
            debt_id=d["id"],
            memory_ids=[c],
            confidence=0.4,
            hypothesis=0,
            note="the gc log",
        )
        f.call("debt_evidence", debt_id=d["id"], memory_ids=[b], confidence=0.2, hypothesis=1)
        assert f.call("debt_auto_resolve") == {"resolved": 1}
        (row,) = f.call("debts", status="resolved")["debts"]
        assert row["resolution"].startswith("hypothesis 0: 'gc' holds (confidence 0.70")
        assert f.call("debt_auto_resolve") == {"resolved": 0}  # already resolved
        state = f.call("debts")
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.call("debts") == state


def test_maintenance_scans_and_cadence(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("the answer is 42")
        d = f.call("debt_register", question="what is the answer?")
        f.call("debt_evidence", debt_id=d["id"], memory_ids=[a], confidence=0.9)
        assert f.maintain()["debts.auto_resolve"] == 1
        d2 = f.call("debt_register", question="and the question?")
        f.call("debt_evidence", debt_id=d2["id"], memory_ids=[a], confidence=0.9)
        assert "debts.auto_resolve" not in f.maintain()  # every 30 minutes, not on every call
        assert f.organ("debts").maintenance[0].every_s == 1800.0
        f.call("set_maintenance_every", name="debts.auto_resolve", every_s=0)  # the setting
        assert f.maintain()["debts.auto_resolve"] == 1
        with pytest.raises(InvalidArgument):
            f.call("set_maintenance_every", name="debts.nope", every_s=5)
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.core.settings.get("maintenance_every_s") == {"debts.auto_resolve": 0.0}


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("evidence")
        d = f.call("debt_register", question="q?", hypotheses=["x"])
        before = f.stats().max_seqno
        for bad in (1.2, -0.1, float("nan"), "0.5", True):
            with pytest.raises(InvalidArgument):
                f.call("debt_evidence", debt_id=d["id"], memory_ids=[a], confidence=bad)
        with pytest.raises(InvalidArgument):
            f.call("debt_evidence", debt_id=d["id"], memory_ids=[a], confidence=0.5, hypothesis=1)
        with pytest.raises(InvalidArgument):
            f.call("debt_evidence", debt_id=d["id"], memory_ids=[], confidence=0.5)
        with pytest.raises(NotFound):
            f.call("debt_evidence", debt_id=d["id"], memory_ids=[777], confidence=0.5)
        with pytest.raises(NotFound):
            f.call("debt_evidence", debt_id=424242, memory_ids=[a], confidence=0.5)
        with pytest.raises(InvalidArgument):
            f.call("debt_update", debt_id=d["id"], status="resolved")  # no resolution
        with pytest.raises(InvalidArgument):
            f.call("debt_update", debt_id=d["id"], status="done")
        assert f.stats().max_seqno == before
        assert f.call("debts")["debts"][0]["evidence"] == []
