"""Variants of the recall engine for locomo_quality.py (issue 17 items 1-3). Research only."""

from __future__ import annotations

import dataclasses
from typing import Any

from locomo_quality import settings, variant

from chitta.recall.engine import RecallSettings
from chitta.recall.scorer import Scorer


def scorer(**kw: Any) -> Any:
    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.scorer = Scorer(dataclasses.replace(e.scorer.settings, **kw))
        return c

    return fn


@variant("no-neighbour")
@settings
def _no_neighbour(s: RecallSettings) -> RecallSettings:
    return dataclasses.replace(s, lane_weights={**s.lane_weights, "neighbour": 0.0})


variant("staged1")(scorer(staged_multiplier=1.0))
variant("noact")(scorer(w_activation=0.0))
variant("staged1-noact")(scorer(staged_multiplier=1.0, w_activation=0.0))


@variant("no-floor")
@settings
def _no_floor(s: RecallSettings) -> RecallSettings:
    return dataclasses.replace(s, dense_floor=False)


def _floor_lanes(lanes: tuple[str, ...]) -> Any:
    import chitta.recall.lane_floor as lf

    def fn(e: Any) -> Any:
        lf.FLOOR_LANES = lanes  # research only: the variants run one after another
        return e

    return fn


variant("floor-dense-only")(_floor_lanes(("dense",)))
variant("floor-both")(_floor_lanes(("dense", "expansion")))
