"""Wisdom candidates: recurring patterns on their way to trusted knowledge.

``UpsertWisdomCandidate`` creates or updates (idempotently, by ``cluster_key``) a
candidate with absolute counts: support, sessions, contradictions, score,
evidence. ``UpdateWisdomLifecycle`` moves it through the seed's FSM (candidate ->
provisional -> trusted -> demoted) and, on promotion, records the id of the
``wisdom`` memory written for it. The gates are :mod:`chitta.policies.wisdom`;
the passes that apply them (and the distillation that proposes candidates) are
:mod:`chitta.field.distill`. This organ stores what the ops carry; a lifecycle
move the FSM does not allow, or one for an unknown key, is counted and ignored.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import (
    Maintenance,
    Operation,
    OrganBase,
    RestoreContext,
    SnapshotContext,
)
from chitta.policies.wisdom import legal

DISTILL_EVERY_S = 3600.0

# cluster_key -> [statement, support, sessions, contradictions, score, evidence, realm,
#                 stage, memory_id, updated_ms, reason]
Row = list[Any]


def _pass(name: str) -> Any:
    def run(organ: WisdomOrgan, ctx: Any, **kw: Any) -> Any:
        from chitta.field import distill

        return getattr(distill, name)(ctx, **kw)

    return run


def _list(organ: WisdomOrgan, ctx: Any, *, stage: str | None = None) -> dict[str, Any]:
    from chitta.ops import checks

    if stage is not None:
        checks.choice(stage, ops.WISDOM_STAGES, "stage")
    rows = [
        organ.view(k) for k in sorted(organ.candidates) if stage in (None, organ.candidates[k][7])
    ]
    return {"candidates": rows, "total": len(rows)}


_KEY = {"type": "string", "minLength": 1, "maxLength": 256, "description": "the cluster key"}
_NONE = {"type": "object", "properties": {}, "additionalProperties": False}


class WisdomOrgan(OrganBase):
    name = "wisdom"
    handles = frozenset({OpType.UpsertWisdomCandidate, OpType.UpdateWisdomLifecycle})
    operations: tuple[Operation, ...] = (
        Operation(
            "wisdom_candidates",
            _list,
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"stage": {"type": "string", "enum": sorted(ops.WISDOM_STAGES)}},
            },
            "List wisdom candidates with support, sessions, score, contradictions and stage.",
            reads=True,
        ),
        Operation(
            "distill",
            _pass("distill"),
            _NONE,
            "Cluster recurring episodes and lessons across sessions into wisdom "
            "candidates (no model), then promote, trust or demote candidates by their "
            "gates. Returns what changed.",
            writes=True,
            idempotent=True,  # a repeat with nothing new to cluster writes nothing
        ),
        Operation(
            "wisdom_contradict",
            _pass("contradict"),
            {
                "type": "object",
                "properties": {"cluster_key": _KEY},
                "required": ["cluster_key"],
                "additionalProperties": False,
            },
            "Count one contradiction against a wisdom candidate (blocks promotion, demotes a "
            "promoted one).",
            writes=True,
        ),
        Operation(
            "wisdom_clear",
            _pass("clear"),
            {
                "type": "object",
                "properties": {"cluster_key": _KEY},
                "required": ["cluster_key"],
                "additionalProperties": False,
            },
            "Clear a wisdom candidate's contradictions by hand (a demoted one becomes a "
            "candidate again).",
            writes=True,
        ),
    )
    maintenance: tuple[Maintenance, ...] = (
        Maintenance("distill", _pass("maintain"), every_s=DISTILL_EVERY_S),
    )

    def __init__(self) -> None:
        self.candidates: dict[str, Row] = {}
        self.ignored = 0

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.UpsertWisdomCandidate):
            old = self.candidates.get(op.cluster_key)
            stage, mid, reason = (
                ("candidate", None, None) if old is None else (old[7], old[8], old[10])
            )
            self.candidates[op.cluster_key] = [
                op.statement,
                int(op.support),
                list(op.sessions),
                int(op.contradictions),
                float(op.score),
                list(op.evidence),
                op.realm,
                stage,
                mid,
                int(op.at_ms),
                reason,
            ]
        elif isinstance(op, ops.UpdateWisdomLifecycle):
            row = self.candidates.get(op.cluster_key)
            if row is None or not legal(row[7], op.stage):
                self.ignored += 1
                return
            row[7], row[9], row[10] = op.stage, int(op.at_ms), op.reason
            if op.memory_id is not None:
                row[8] = int(op.memory_id)

    def view(self, key: str) -> dict[str, Any]:
        r = self.candidates[key]
        return {
            "cluster_key": key,
            "statement": r[0],
            "support": r[1],
            "sessions": list(r[2]),
            "contradictions": r[3],
            "score": r[4],
            "evidence": [str(m) for m in r[5]],
            "realm": r[6],
            "stage": r[7],
            "memory_id": None if r[8] is None else str(r[8]),
            "reason": r[10],
        }

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {
            "candidates": [[k, *r] for k, r in sorted(self.candidates.items())],
            "ignored": self.ignored,
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        for k, *r in state["candidates"]:
            r[1], r[3], r[4], r[9] = int(r[1]), int(r[3]), float(r[4]), int(r[9])
            r[2], r[5] = [str(s) for s in r[2]], [int(m) for m in r[5]]
            self.candidates[str(k)] = r
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        by: dict[str, int] = {}
        for r in self.candidates.values():
            by[r[7]] = by.get(r[7], 0) + 1
        return {
            "candidates": len(self.candidates),
            **{f"wisdom_{k}": n for k, n in sorted(by.items())},
        }
