"""Demotion tiers: moves driven by a controllable clock, logged as DemoteMemory,
restored by replay, undone one step per access."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _lifecycle_helpers import Clock, assert_replays_same, open_field

import chitta
from chitta.field.inspect import iter_records
from chitta.policies import tiers


def _demotes(root: Path) -> list[tuple[int, int]]:
    out = []
    for rec in iter_records(root):
        items = rec["fields"]["ops"] if rec["op"] == "Batch" else [rec]
        for item in items:
            if item["op"] == "DemoteMemory":
                out.append((item["fields"]["id"], item["fields"]["tier"]))
    return out


def test_target_tier_thresholds_by_hand() -> None:
    day = 86_400_000
    for idle, want in [(0, 0), (6.9, 0), (7, 1), (29.9, 1), (30, 2), (89, 2), (90, 3), (1000, 3)]:
        got = tiers.target_tier(
            now_ms=int(idle * day), written_ms=0, last_access_ms=0, access_count=0
        )
        assert got == want, idle
    # ten accesses stretch every threshold by 1 + ln(11)
    stretch = 1 + math.log(11)
    assert (
        tiers.target_tier(
            now_ms=int(7 * stretch * day) - 1, written_ms=0, last_access_ms=0, access_count=10
        )
        == 0
    )
    assert (
        tiers.target_tier(
            now_ms=int(7 * stretch * day) + 1, written_ms=0, last_access_ms=0, access_count=10
        )
        == 1
    )
    # a decay rate of 2 reaches the week in 3.5 days
    assert (
        tiers.target_tier(
            now_ms=int(3.6 * day), written_ms=0, last_access_ms=0, access_count=0, rate=2.0
        )
        == 1
    )


def test_idle_memory_slides_down_the_tiers(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    mid = f.remember("cold fact")
    assert f.demote_pass() == 0
    clock.advance(8)
    assert f.demote_pass() == 1
    assert f.get(mid).tier == 1
    assert f.demote_pass() == 0  # same tier: nothing logged
    clock.advance(100)
    assert f.demote_pass() == 1
    assert f.get(mid).tier == 3  # jumps straight to what it earned
    assert _demotes(tmp_path / "f") == [(mid, 1), (mid, 3)]
    assert_replays_same(f)


def test_tier_is_persisted_not_recomputed(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    mid = f.remember("old news")
    clock.advance(40)
    f.demote_pass()
    f.close()
    clock.t -= 40 * 86_400  # a clock that went back cannot make it warm again on load
    with open_field(tmp_path / "f", clock) as g:
        assert g.get(mid).tier == 2


def test_access_promotes_one_tier_toward_zero(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    mid = f.remember("the deploy key lives in vault")
    clock.advance(100)
    f.demote_pass()
    assert f.get(mid).tier == 3
    f.recall("deploy key")
    assert f.get(mid).tier == 2
    f.recall("deploy key")
    f.recall("deploy key")
    assert f.get(mid).tier == 0
    f.recall("deploy key")
    assert f.get(mid).tier == 0
    assert f.demote_pass() == 0  # just accessed: not idle
    f.recall("deploy key", touch=False)
    assert_replays_same(f)


def test_frequent_access_resists_demotion(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    used = f.remember("the linter is ruff")
    unused = f.remember("the wiki moved to confluence")
    for _ in range(10):
        assert [h.id for h in f.recall("linter ruff")] == [used]
    clock.advance(10)
    f.demote_pass()
    assert f.get(unused).tier == 1
    assert f.get(used).tier == 0


def test_maintain_runs_the_demotion_pass(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    f.remember("x marks the spot")
    f.recall("spot")  # recalled once: the write gate keeps it; it cools after 7 * (1 + ln 2) days
    clock.advance(12)
    report = f.maintain()
    assert report["demoted"] == 1 and report["surprise_updated"] == 0  # no vectors: no surprise


def test_demote_pass_on_read_only_field_is_refused(tmp_path: Path) -> None:
    chitta.open(tmp_path / "f").close()
    with chitta.open(tmp_path / "f", read_only=True) as f, pytest.raises(chitta.InvalidArgument):
        f.demote_pass()
