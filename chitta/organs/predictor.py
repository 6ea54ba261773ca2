"""The predictor: a first-order Markov chain over memory accesses.

``PredictorEvent`` ops carry its state changes: ``transition`` adds ``delta`` to
the weight of the edge ``from_id -> to_id`` (a weight never goes below 0),
``access`` counts one access of ``to_id``. The probability of going from ``a`` to
``b`` is ``weight(a, b) / sum_x weight(a, x)`` (0 when ``a`` has no outgoing
weight): the input of the prediction-boost factor. ``record_access`` logs the
accesses of a sequence of memories and a transition (delta 1) between each
consecutive pair; ``predict_next`` lists the most probable successors.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.ops import Op, OpType
from chitta.ops import checks as v
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext

MAX_SEQUENCE = 256


def _record(organ: PredictorOrgan, ctx: Any, *, ids: Any) -> dict[str, Any]:
    if not isinstance(ids, (list, tuple)) or not 0 < len(ids) <= MAX_SEQUENCE:
        raise InvalidArgument(f"ids must be a list of 1-{MAX_SEQUENCE} memory ids, in access order")
    seq = [v.memory_id(x) for x in ids]
    for mid in seq:
        if not ctx.core.memories.is_live(mid):
            raise NotFound(
                f"no live memory with id {mid}; record accesses of memories the field holds"
            )
    now = ctx.now_ms()
    group: list[Op] = [ops.PredictorEvent(event="access", to_id=m, at_ms=now) for m in seq]
    group += [
        ops.PredictorEvent(event="transition", to_id=b, at_ms=now, from_id=a, delta=1.0)
        for a, b in itertools.pairwise(seq)
        if a != b
    ]
    ctx.commit(*group)
    return {"accesses": len(seq), "transitions": len(group) - len(seq)}


def _predict(organ: PredictorOrgan, ctx: Any, *, id: Any, k: int = 5) -> dict[str, Any]:
    mid = v.memory_id(id)
    rows = organ.successors(mid)[:k]
    return {"id": str(mid), "next": [{"id": str(b), "probability": p} for b, p in rows]}


class PredictorOrgan(OrganBase):
    name = "predictor"
    handles = frozenset({OpType.PredictorEvent})
    operations: tuple[Operation, ...] = (
        Operation(
            "record_access",
            _record,
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["ids"],
                "properties": {
                    "ids": {
                        "type": "array",
                        "items": {"type": ["string", "integer"]},
                        "maxItems": MAX_SEQUENCE,
                        "description": "memory ids in the order they were used",
                    }
                },
            },
            "Record that memories were used in this order; the predictor learns which memory "
            "tends to follow which.",
            writes=True,
        ),
        Operation(
            "predict_next",
            _predict,
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["id"],
                "properties": {
                    "id": {"type": ["string", "integer"]},
                    "k": {"type": "integer", "minimum": 1, "maximum": 100},
                },
            },
            "The memories most likely to be needed after this one, with probabilities.",
            reads=True,
        ),
    )

    def __init__(self) -> None:
        self.edges: dict[int, dict[int, float]] = {}
        self.accesses: dict[int, int] = {}
        self.last: int | None = None  # the memory of the latest access event
        self.ignored = 0

    def apply(self, op: Op) -> None:
        if type(op) is not ops.PredictorEvent:
            return
        if op.event == "access":
            self.accesses[op.to_id] = self.accesses.get(op.to_id, 0) + 1
            self.last = int(op.to_id)
        elif op.from_id is None or not math.isfinite(op.delta):
            self.ignored += 1
        else:
            out = self.edges.setdefault(op.from_id, {})
            out[op.to_id] = max(0.0, out.get(op.to_id, 0.0) + float(op.delta))

    def probability(self, a: int, b: int) -> float:
        out = self.edges.get(a)
        total = sum(out.values()) if out else 0.0
        return out.get(b, 0.0) / total if out and total > 0 else 0.0

    def successors(self, a: int) -> list[tuple[int, float]]:
        out = self.edges.get(a, {})
        total = sum(out.values())
        if total <= 0:
            return []
        return sorted(
            ((b, w / total) for b, w in out.items() if w > 0), key=lambda x: (-x[1], x[0])
        )

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {
            "edges": [
                [a, b, w] for a, out in sorted(self.edges.items()) for b, w in sorted(out.items())
            ],
            "accesses": sorted([k, n] for k, n in self.accesses.items()),
            "ignored": self.ignored,
            "last": self.last,
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        for a, b, w in state["edges"]:
            self.edges.setdefault(int(a), {})[int(b)] = float(w)
        self.accesses = {int(k): int(n) for k, n in state["accesses"]}
        self.ignored = int(state["ignored"])
        self.last = None if state["last"] is None else int(state["last"])

    def stats(self) -> dict[str, Any]:
        return {"predictor_edges": sum(len(o) for o in self.edges.values())}
