"""The engine's lane fusion with the default weights, against a hand computation.

Fake organ views return fixed ranked lists, so the only thing under test is
``RecallEngine``: weighted RRF (k = 20) over the lanes, then the scorer
(equal state for every memory, no cosine: the order is the fused order).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chitta.model import Memory
from chitta.organs.memories import ScoringStates
from chitta.recall.engine import RecallEngine, RecallSettings

NOW = 1_700_000_000_000
LISTS = {"bm25": [1, 2, 3], "dense": [3, 2, 1], "posting": [3, 1, 2]}


class Memories:
    def get(self, mid: int) -> Memory:
        return Memory(
            id=mid,
            text=f"m{mid}",
            kind="observation",
            realm=None,
            session=None,
            source_tool=None,
            harness=None,
            tags=(),
            confidence=1.0,
            strength=1.0,
            decay_rate=0.0,
            tier=0,
            created_ms=NOW,
            updated_ms=NOW,
            last_access_ms=NOW,
            access_count=0,
            meta=None,
            embedding=None,
        )

    def memories(self, ids: list[int]) -> list[Memory | None]:
        return [self.get(mid) for mid in ids]

    def is_live(self, mid: int) -> bool:
        return True

    def scoring_states(self, ids: list[int]) -> ScoringStates:
        n = len(ids)
        return ScoringStates(
            live=np.ones(n, bool),
            kind=["observation"] * n,
            created_ms=np.full(n, NOW, np.int64),
            confidence=np.ones(n),
            strength=np.ones(n),
            tier=np.zeros(n, np.int64),
            access_ms=[(NOW,)] * n,
        )


class Index:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def keyword(self, query: str, k: int, allowed: Any) -> Any:
        self.queries.append(query)
        return np.array(LISTS["bm25"], np.uint64)

    def dense(self, vector: Any, k: int, allowed: Any) -> Any:
        return np.array(LISTS["dense"], np.uint64), np.zeros(3, np.float32)

    def posting(self, features: Any, k: int, allowed: Any) -> Any:
        return np.array(LISTS["posting"], np.uint64)

    def cosine_array(self, vector: Any, ids: list[int]) -> Any:
        return np.full(len(ids), np.nan)  # no vectors: the cosine factor is absent

    def is_staged(self, mid: int) -> bool:
        return False

    def speaker_ids(self, query: str) -> Any:
        return None  # no memory names a speaker


class Graph:
    edges = 0

    def __init__(self) -> None:
        self.suppression_targets: set[int] = set()

    def neighbours(self, mid: int) -> list[tuple[int, str, bool, float]]:
        return []


def hand_rrf(weights: dict[str, float], k: float = 20) -> dict[int, float]:
    out: dict[int, float] = {}
    for lane, ids in LISTS.items():
        for rank, mid in enumerate(ids, 1):
            out[mid] = out.get(mid, 0.0) + weights.get(lane, 0.0) / (k + rank)
    return out


def run(engine: RecallEngine) -> list[Any]:
    return engine.recall(
        text="What did Ana adopt?",
        vector=np.ones(4, np.float32) / 2,
        code=np.zeros(2, np.uint32),
        k=3,
        allowed=None,
        now_ms=NOW,
    )


def test_default_weights_let_the_keyword_lane_lead() -> None:
    engine = RecallEngine(Memories(), Index(), Graph())
    hits = run(engine)
    w = dict(RecallSettings().lane_weights)
    assert (w["bm25"], w["dense"], w["posting"]) == (1.0, 0.5, 0.0)
    # by hand: 1: 1/21 + .5/23 = .06936; 2: 1/22 + .5/22 = .06818; 3: 1/23 + .5/21 = .06729
    want = hand_rrf(w)
    assert want[1] == pytest.approx(1 / 21 + 0.5 / 23)
    assert [h.id for h in hits] == [1, 2, 3]
    assert [h.fused for h in hits] == pytest.approx([want[1], want[2], want[3]])
    assert all("posting" not in h.lanes for h in hits)  # weight 0: the lane is not run


def test_equal_weights_would_let_agreement_win() -> None:
    settings = RecallSettings(
        lane_weights={"bm25": 1.0, "dense": 1.0, "posting": 1.0, "neighbour": 0.0}
    )
    hits = run(RecallEngine(Memories(), Index(), Graph(), settings=settings))
    want = hand_rrf(settings.lane_weights)  # 3: 1/23 + 1/21 + 1/21 is the largest
    assert [h.id for h in hits] == sorted(want, key=lambda m: -want[m]) == [3, 1, 2]


def test_a_lane_asked_for_by_name_runs_even_at_default_weight_zero() -> None:
    hits = run(RecallEngine(Memories(), Index(), Graph()).with_lanes(("posting",)))
    assert [h.id for h in hits] == LISTS["posting"]
    assert [h.lanes for h in hits] == [{"posting": 1}, {"posting": 2}, {"posting": 3}]


def test_keyword_lane_gets_the_processed_query() -> None:
    index = Index()
    run(RecallEngine(Memories(), index, Graph()))
    assert index.queries == ["ana adopt"]
    index.queries.clear()
    run(RecallEngine(Memories(), index, Graph(), settings=RecallSettings(keyword_query=False)))
    assert index.queries == ["What did Ana adopt?"]
