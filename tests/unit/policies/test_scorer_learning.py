"""The learned scorer: the documented rule by hand, clamps, staleness, replay."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument, NotFound
from chitta.policies import scorer_learning as sl
from chitta.recall.factors import FactorSettings

B = sl.baseline_version()


def test_rule_by_hand_and_clamps() -> None:
    m = sl.Model()
    seen = []
    for _ in range(5):  # useful, predicted 0: error 1; similarity x=1 -> +0.05 * 0.5 per step
        m = sl.learn(m, {"similarity": 1.0, "activation": 0.0, "freshness": 0.5}, 0.0, True, B)
        seen.append(m.deltas["similarity"])
        assert m.deltas["activation"] >= -0.05  # its own floor
        assert m.deltas["freshness"] == 0.0  # x = 0.5: no signal
    assert seen == pytest.approx([0.025, 0.05, 0.075, 0.08, 0.08])  # clamped at max_delta 0.08
    assert m.deltas["activation"] == pytest.approx(-0.05)  # -0.025, then the floor -0.05
    assert m.model_version == 5 and m.outcome_count == 5
    assert m.ewma_loss == pytest.approx(1 - 0.9**5)  # loss 1 each step, EWMA alpha 0.1
    assert m.baseline_version == B


def test_no_error_no_change() -> None:
    m = sl.learn(sl.Model(), {"similarity": 1.0}, 1.0, True, B)
    assert all(d == 0.0 for d in m.deltas.values()) and m.ewma_loss == 0.0


def test_effective_weight_and_staleness() -> None:
    m = sl.Model(model_version=3, baseline_version=B, deltas={"freshness": 0.5})  # beyond clamp
    assert m.effective_weight("freshness", 0.10, B) == pytest.approx(0.25)  # 0.10 + max 0.15
    assert m.effective_weight("fused", 1.0, B) == 1.0  # not a learned factor
    bumped = dataclasses.replace(FactorSettings(), w_freshness=0.2)
    nb = sl.baseline_version(bumped)
    assert nb != B and m.stale(nb)
    assert m.effective_weight("freshness", 0.2, nb) == 0.2  # stale deltas are not used
    assert sl.settings_with(m, bumped) == bumped
    relearned = sl.learn(m, {"freshness": 1.0}, 0.0, True, nb)  # restarts from zero deltas
    assert relearned.deltas["freshness"] == pytest.approx(0.025)
    assert relearned.baseline_version == nb


def test_feedback_learns_replays_and_reaches_recall(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("the staging deploy flag is --stage")
        f.remember("lunch is at noon")
        for _ in range(5):  # the top hit judged useless: error -1, freshness x ~ 1
            out = f.call("feedback", memory_id=a, useful=False, query="staging deploy flag")
            assert out["scorer_learned"]
        model = f.call("scorer_model")
        hit = f.recall("staging deploy flag", explain=True, touch=False)[0]
    assert model["model_version"] == 5 and model["outcome_count"] == 5 and not model["stale"]
    assert model["factors"]["freshness"]["delta"] == pytest.approx(-0.10)  # clamped at min
    weights = {x.name: x.weight for x in hit.factors}
    assert weights["freshness"] == pytest.approx(0.10 - 0.10)
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.call("scorer_model") == model  # replay stores the snapshots, never re-learns


def test_feedback_bad_input_writes_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("something")
        before = f.stats().max_seqno
        with pytest.raises(NotFound):
            f.call("feedback", memory_id=99, useful=True)
        with pytest.raises(InvalidArgument):
            f.call("feedback", memory_id=a, useful="yes")
        with pytest.raises(InvalidArgument):
            f.call("feedback", memory_id="12x", useful=True)
        f.forget(a)
        after_forget = f.stats().max_seqno
        with pytest.raises(NotFound):
            f.call("feedback", memory_id=a, useful=True)
        assert after_forget == before + 1
        assert f.stats().max_seqno == after_forget
        assert f.call("source_weights")["total"] == 0


def test_organ_keeps_the_newest_snapshot_and_detects_staleness() -> None:
    from chitta import ops
    from chitta.organs.scorer_model import ScorerModelOrgan

    def snap(version: int, delta: float, baseline: int = B) -> ops.UpdateScorerModel:
        f = ops.FactorDelta(factor="freshness", delta=delta, min_delta=-0.1, max_delta=0.15)
        return ops.UpdateScorerModel(
            model_version=version, baseline_version=baseline, at_ms=version, factors=(f,)
        )

    o = ScorerModelOrgan()
    o.apply(snap(2, 0.05))
    o.apply(snap(1, 0.09))  # older: ignored
    o.apply(snap(2, 0.07))  # same version: ignored
    assert o.model_version == 2 and o.ignored == 2
    assert o.effective_weight("freshness", 0.10, B) == pytest.approx(0.15)
    o.apply(snap(3, 0.9))  # a delta beyond its clamp is used clamped
    assert o.effective_weight("freshness", 0.10, B) == pytest.approx(0.25)
    assert o.effective_weight("freshness", 0.10, B + 1) == 0.10  # after a baseline bump: stale
    assert o.stale(B + 1) and not o.stale(B)
