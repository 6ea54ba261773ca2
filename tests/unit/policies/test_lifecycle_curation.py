"""Curation (seed 004): expiry, exact dedupe keeper rule, confidence decay at
0.01/day with floor 0.05, report counts, idempotence, replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from _lifecycle_helpers import DAY, T0, Clock, assert_replays_same, open_field

import chitta
from chitta.policies.curation import DECAY_PER_DAY, FLOOR


def test_report_counts_each_pass(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    expired = f.remember("promo ends friday", meta={"expires_at": T0 + 1 * DAY})
    future = f.remember(
        "promo ends next year", meta={"expires_at": T0 + 365 * DAY, "verified": True}
    )
    bad = f.remember("odd expiry", meta={"expires_at": "tomorrow", "verified": True})
    keep = f.remember("Use uv for installs", meta={"verified": True}, confidence=0.4)
    dup1 = f.remember("use uv for installs", confidence=0.9)
    dup2 = f.remember("use uv  for installs")
    plain = f.remember("the office is closed on mondays", confidence=0.8)
    clock.advance(10)
    report = f.curate()
    assert (
        report.examined,
        report.expired,
        report.deduplicated,
        report.decayed,
        report.bad_expiry,
    ) == (7, 1, 2, 1, 1)
    assert report.at_ms == int(clock.t * 1000)
    assert expired not in f and dup1 not in f and dup2 not in f
    assert {future, bad, keep, plain} == set(f.ids())
    assert f.get(keep).meta["merged_from"] == sorted([dup1, dup2])  # verified beats more confident
    assert f.get(keep).confidence == 0.4  # verified: never decays
    assert f.get(plain).confidence == pytest.approx(0.8 - 10 * DECAY_PER_DAY)
    assert report.as_dict()["expired"] == 1
    assert_replays_same(f)


def test_dedupe_keeper_prefers_confident_then_oldest(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    low = f.remember("same words", confidence=0.5)
    clock.advance(1)
    high_new = f.remember("same words", confidence=0.9)
    report = f.curate()
    assert report.deduplicated == 1 and f.ids() == [high_new] and low not in f
    clock.advance(1)
    older = f.remember("other words", confidence=0.7)
    clock.advance(1)
    newer = f.remember("other words", confidence=0.7)
    f.curate()
    assert older in f and newer not in f


def test_decay_stops_at_the_floor(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    mid = f.remember("an unverified rumour", confidence=0.3)
    clock.advance(1000)
    assert f.curate().decayed == 1
    assert f.get(mid).confidence == FLOOR
    clock.advance(10)
    assert f.curate().decayed == 0  # at the floor: nothing logged
    assert f.get(mid).confidence == FLOOR


def test_curation_is_idempotent_per_elapsed_time(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    a = f.remember("decays in steps", confidence=0.9)
    clock.advance(3)
    f.curate()
    records = f.stats().records_applied
    again = f.curate()  # same instant: nothing more to do
    assert again.decayed == 0 and f.stats().records_applied == records
    clock.advance(4.5)
    f.curate()
    clock.advance(2.5)
    f.curate()
    assert f.get(a).confidence == pytest.approx(0.9 - 10 * DECAY_PER_DAY, abs=1e-9)
    g = open_field(tmp_path / "g", Clock())
    b = g.remember("decays at once", confidence=0.9)
    g.curate(now=T0 + 10 * DAY)
    assert g.get(b).confidence == pytest.approx(f.get(a).confidence, abs=1e-9)
    assert_replays_same(f)
    g.close()


def test_curate_bad_now_leaves_the_store_unchanged(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    f.remember("x", meta={"expires_at": 0})
    records = f.stats().records_applied
    for bad in ("now", float("nan"), True):
        with pytest.raises(chitta.InvalidArgument):
            f.curate(now=bad)  # type: ignore[arg-type]
    assert f.stats().records_applied == records and len(f) == 1
