"""The Markov predictor: transition probabilities against counts by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.organs.predictor import PredictorOrgan


def test_probabilities_by_hand(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b, c = (f.remember(t) for t in ("open the file", "edit the file", "save the file"))
        f.call("record_access", ids=[a, b, a, b, a, c])  # a->b twice, a->c once, b->a twice
        nxt = f.call("predict_next", id=a)["next"]
        organ = f.organ("predictor")
        assert organ.accesses[a] == 3 and organ.accesses[c] == 1
        state = organ.snapshot(None)  # type: ignore[arg-type]
    assert [(int(r["id"]), r["probability"]) for r in nxt] == [
        (b, pytest.approx(2 / 3)),
        (c, pytest.approx(1 / 3)),
    ]
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.organ("predictor").snapshot(None) == state  # type: ignore[arg-type]
        assert g.organ("predictor").probability(b, a) == 1.0
        assert g.organ("predictor").probability(c, a) == 0.0


def test_weights_never_go_negative() -> None:
    o = PredictorOrgan()
    o.apply(ops.PredictorEvent(event="transition", from_id=1, to_id=2, at_ms=1, delta=1.0))
    o.apply(ops.PredictorEvent(event="transition", from_id=1, to_id=2, at_ms=2, delta=-5.0))
    o.apply(ops.PredictorEvent(event="transition", to_id=2, at_ms=3))  # no from_id: ignored
    assert o.edges[1][2] == 0.0 and o.successors(1) == [] and o.ignored == 1


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("x")
        before = f.stats().max_seqno
        with pytest.raises(NotFound):
            f.call("record_access", ids=[a, 999])
        with pytest.raises(InvalidArgument):
            f.call("record_access", ids=[])
        assert f.stats().max_seqno == before
