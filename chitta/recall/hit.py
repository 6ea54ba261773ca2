"""What recall returns."""

from __future__ import annotations

import dataclasses
from typing import Any

from chitta.model import Memory


@dataclasses.dataclass(frozen=True, slots=True)
class Factor:
    """One scoring factor of one hit: its value, and what it did to the score.

    ``kind`` is "additive" (relevance: contribution = weight x value, before
    multipliers), "context" (blended into the ``context`` multiplier with its
    weight), "multiplier" (the score is multiplied by ``value``; contribution
    is the score change it caused) or "prior" (the hit's fused lane score was
    multiplied by ``value`` before scoring, e.g. the speaker prior; contribution
    is the score change it caused).
    """

    name: str
    kind: str
    value: float
    weight: float
    contribution: float


@dataclasses.dataclass(frozen=True, slots=True)
class Hit:
    """A recalled memory with its score and how it got there."""

    id: int
    text: str
    score: float
    memory: Memory
    lanes: dict[str, int]  # lane name -> 1-based rank in that lane
    fused: float  # weighted RRF score over the lanes
    factors: tuple[Factor, ...] = ()  # filled when recall(explain=True)
    # The query's cosine with the memory's vector (absolute, unlike ``score``): set by
    # Field.recall; None when either has no vector (chitta/field/recall.py ``relevance``).
    relevance: float | None = None
    # The recall that returned this hit (chitta/field/recent_recalls.py): name it in
    # feedback(recall_id=...) instead of repeating the query. None for hits built elsewhere.
    recall_id: str | None = None
    # With explain=True, for a hit of the graph lane: how PageRank reached it from an entity the
    # query names ("jeff -uses-> Rust -has-> Tokio -> memory 7"; chitta/recall/graph_lane.py).
    graph_path: str | None = None

    @property
    def kind(self) -> str:
        return self.memory.kind

    def explain(self) -> str:
        """A readable account of the score (empty unless recalled with explain=True)."""
        lines = [f"{self.id}: score {self.score:.4f}  lanes {self.lanes}"]
        if self.graph_path:
            lines.append(f"  graph path: {self.graph_path}")
        for f in self.factors:
            lines.append(
                f"  {f.name:<14} {f.kind:<10} value {f.value:8.4f}  weight {f.weight:5.2f}  -> {f.contribution:+.4f}"
            )
        return "\n".join(lines)


def refine(hit: Hit, **changes: Any) -> Hit:
    """Set fields of a hit the current recall built and has not handed out yet (its score
    after reranking, its recall id, its relevance), in place: Hit is frozen for callers,
    and a copy per hit per step cost recall ~10 us a hit."""
    for name, value in changes.items():
        object.__setattr__(hit, name, value)
    return hit
