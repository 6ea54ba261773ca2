"""The two-hop suite (tests/helpers/two_hop_suite.py): with the graph lane the answer's
memory is in the top 5 for >= 90% of the cases; keywords alone do not get there."""

from __future__ import annotations

from pathlib import Path

import two_hop_suite as suite

import chitta
from chitta.recall.engine import RecallSettings


def test_two_hop_recall_at_5(tmp_path: Path) -> None:
    cases = suite.cases(60)
    assert len(cases) >= 50 and len({c.a for c in cases}) == len(cases)
    settings = RecallSettings(lane_weights={**RecallSettings().lane_weights, "graph": 1.0})
    with chitta.open(tmp_path / "f", embedder=None, recall_settings=settings) as f:
        ids = suite.load(f, cases)
        on = suite.recall_at(f, cases, ids, 5)
        off = suite.recall_at(f, cases, ids, 5, lanes=("bm25", "dense", "posting", "neighbour"))
    assert on >= 0.9, (on, off)
    assert off < on
