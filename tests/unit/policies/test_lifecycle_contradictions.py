"""Contradiction edges and their suppression in recall (explained per hit),
and the reconciler R0 (scores 0.6 / 0.4, the 50-pair cap)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _lifecycle_helpers import Clock, assert_replays_same, open_field

import chitta
from chitta.policies.contradictions import DIVERGENCE, KIND_MISMATCH, MAX_PAIRS
from chitta.recall.hit import Hit


def _factor(hit: Hit, name: str) -> float:
    (value,) = [f.value for f in hit.factors if f.name == name]
    return value


def _hit(f: chitta.Field, query: str, mid: int) -> Hit:
    (hit,) = [h for h in f.recall(query, explain=True, touch=False) if h.id == mid]
    return hit


def test_superseded_memory_is_suppressed_and_explained(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    old = f.remember("the api listens on port 8080")
    new = f.remember("the api now listens on port 9090")
    before = _hit(f, "api port", old)
    assert _factor(before, "suppression") == 1.0
    f.supersede(old, new)
    after = _hit(f, "api port", old)
    assert _factor(after, "suppression") == 0.3
    assert after.score == pytest.approx(before.score * 0.3)
    assert "suppression" in after.explain()
    assert _factor(_hit(f, "api port", new), "suppression") == 1.0
    assert f.get(old).text == "the api listens on port 8080"  # still retrievable
    assert any(
        r["op"] == "AddAssocEdge" and r["fields"]["edge"] == "Supersedes" for r in f.history(old)
    )
    assert_replays_same(f)
    with chitta.open(tmp_path / "f") as g:
        assert _factor(_hit(g, "api port", old), "suppression") == 0.3


def test_contradicted_memory_scores_less_and_supersede_wins(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    a = f.remember("the cache is redis")
    b = f.remember("the cache is memcached")
    c = f.remember("the cache is valkey now")
    f.contradict(a, b)
    assert _factor(_hit(f, "cache", b), "suppression") == 0.6
    assert _factor(_hit(f, "cache", a), "suppression") == 1.0
    f.supersede(b, c)
    assert _factor(_hit(f, "cache", b), "suppression") == 0.3


def test_suppression_lifts_when_the_superseder_is_forgotten(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    old = f.remember("deploys go through jenkins")
    new = f.remember("deploys go through github actions")
    f.supersede(old, new)
    f.forget(new)
    assert _factor(_hit(f, "deploys", old), "suppression") == 1.0


def test_confirm_adds_an_edge_and_no_suppression(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    a = f.remember("the build uses ninja")
    b = f.remember("confirmed: the build uses ninja")
    f.confirm(b, a)
    assert f.core.graph.has_edge(b, a, "Confirms")
    assert _factor(_hit(f, "ninja", a), "suppression") == 1.0


@pytest.mark.parametrize("method", ["supersede", "contradict", "confirm"])
def test_bad_edge_arguments_leave_the_store_unchanged(tmp_path: Path, method: str) -> None:
    f = open_field(tmp_path / "f", Clock())
    a = f.remember("one")
    gone = f.remember("two")
    f.forget(gone)
    records = f.stats().records_applied
    call = getattr(f, method)
    with pytest.raises(chitta.InvalidArgument):
        call(a, a)
    with pytest.raises(chitta.NotFound):
        call(a, gone)
    with pytest.raises(chitta.NotFound):
        call(12345, a)
    with pytest.raises(chitta.InvalidArgument):
        call("x", a)
    assert f.stats().records_applied == records
    assert f.core.graph.edges == 0


def test_reconciler_scores_kind_mismatch_and_divergence(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    obs = f.remember("The deploy target for the api is fly.io", kind="observation")
    dec = f.remember("the deploy target for the API: render", kind="decision")
    div = f.remember("the deploy target for the api is heroku", kind="observation")
    f.remember(
        "the deploy target for the api is fly.io", kind="observation"
    )  # duplicate of obs: skipped
    f.remember("the deploy target for the api is aws", realm="other")  # another realm
    f.remember("short")
    pairs = f.detect_contradictions()
    got = {(p.a, p.b): (p.score, p.reason) for p in pairs}
    dup = f.ids()[3]
    assert got == {
        (obs, dec): (KIND_MISMATCH, "kind_mismatch"),
        (dec, div): (KIND_MISMATCH, "kind_mismatch"),
        (dec, dup): (KIND_MISMATCH, "kind_mismatch"),
        (obs, div): (DIVERGENCE, "divergence"),
        (div, dup): (DIVERGENCE, "divergence"),
    }
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert pairs[0].prefix == "the deploy target for the api"
    f.supersede(div, obs)  # resolved pairs are not proposed again
    assert (obs, div) not in {(p.a, p.b) for p in f.detect_contradictions()}


def test_reconciler_caps_at_fifty_pairs(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    f.remember_many([f"one two three four five six variant {i}" for i in range(20)])  # 190 pairs
    records = f.stats().records_applied
    pairs = f.detect_contradictions()
    assert len(pairs) == MAX_PAIRS
    assert all(p.score == DIVERGENCE for p in pairs)
    # each pair is logged to the KG once (issue 20): one AddTriplet per pair, then nothing more
    assert f.stats().records_applied == records + MAX_PAIRS
    assert f.detect_contradictions() == pairs
    assert f.stats().records_applied == records + MAX_PAIRS
