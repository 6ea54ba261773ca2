"""Surprise credit: each memory's rolling credit state after the hysteresis gate.

The gate itself is :mod:`chitta.policies.credit` (the seed's constants); the
outcome policy (:mod:`chitta.field.learning`) runs it and logs, per memory, an
``UpdateSurpriseCredit`` with the new credit, the signed streak and the strength
delta it applied (with an ``UpdateState`` carrying the new absolute strength in
the same batch). This organ stores the state the op carries and counts the hard
and soft surprises (the bands of ``credit.band``) per memory, the input of the
integration-kernel factor.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.ops import checks as v
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext
from chitta.policies.credit import band

# id -> [credit, streak, at_ms, hard, soft, applied (sum of deltas)]
State = list[Any]


def _show(organ: SurpriseCreditOrgan, ctx: Any, *, id: Any) -> dict[str, Any]:
    mid = v.memory_id(id)
    credit, streak, at_ms, hard, soft, applied = organ.state.get(mid, [0.0, 0, 0, 0, 0, 0.0])
    return {
        "id": str(mid),
        "credit": credit,
        "streak": streak,
        "hard": hard,
        "soft": soft,
        "applied": applied,
        "at": at_ms / 1000.0,
    }


class SurpriseCreditOrgan(OrganBase):
    name = "surprise_credit"
    handles = frozenset({OpType.UpdateSurpriseCredit})
    operations: tuple[Operation, ...] = (
        Operation(
            "surprise_credit",
            _show,
            {
                "type": "object",
                "properties": {"id": {"type": ["string", "integer"], "description": "memory id"}},
                "required": ["id"],
                "additionalProperties": False,
            },
            "Show one memory's surprise credit: rolling credit, signed streak, hard and soft "
            "surprise counts and the total strength change the gate applied.",
            reads=True,
        ),
    )

    def __init__(self) -> None:
        self.state: dict[int, State] = {}

    def apply(self, op: Op) -> None:
        if type(op) is not ops.UpdateSurpriseCredit:
            return
        old = self.state.get(op.id, [0.0, 0, 0, 0, 0, 0.0])
        which = band(op.surprise) if op.surprise is not None else "none"
        self.state[op.id] = [
            float(op.credit),
            int(op.streak),
            int(op.at_ms),
            old[3] + (which == "hard"),
            old[4] + (which == "soft"),
            old[5] + float(op.strength_delta),
        ]

    def credit(self, mid: int) -> tuple[float, int]:
        s = self.state.get(mid)
        return (0.0, 0) if s is None else (s[0], s[1])

    def bands(self, mid: int) -> tuple[int, int]:
        """(hard, soft) surprise counts of a memory."""
        s = self.state.get(mid)
        return (0, 0) if s is None else (s[3], s[4])

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {"state": [[k, *s] for k, s in sorted(self.state.items())]}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        for k, credit, streak, at, hard, soft, applied in state["state"]:
            self.state[int(k)] = [
                float(credit),
                int(streak),
                int(at),
                int(hard),
                int(soft),
                float(applied),
            ]

    def stats(self) -> dict[str, Any]:
        return {"memories": len(self.state)}
