"""The write gate's prune age as an operation (no state of its own: a pruned
memory is a forgotten one whose meta says it was pruned; see
:mod:`chitta.policies.write_gate`). ``set_prune_days`` sets the age (0 = never); ``list_pruned`` and
``restore_pruned`` (also ``Field.pruned()`` / ``Field.restore(id)``) list and bring
back pruned memories."""

from __future__ import annotations

from typing import Any

from chitta.ops import Op
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext


def _list(organ: PruningOrgan, ctx: Any) -> dict[str, Any]:
    from chitta.field import pruning

    rows = pruning.pruned(ctx.core)
    return {"pruned": rows, "total": len(rows)}


def _restore(organ: PruningOrgan, ctx: Any, *, id: Any) -> dict[str, Any]:
    from chitta.field import pruning

    return {"id": str(pruning.restore(ctx.core, id)), "restored_from": str(id)}


def _days(organ: PruningOrgan, ctx: Any, *, days: Any) -> dict[str, Any]:
    from chitta.field import pruning

    return {"staged_prune_days": pruning.set_prune_days(ctx.core, days)}


class PruningOrgan(OrganBase):
    name = "pruning"
    operations: tuple[Operation, ...] = (
        Operation(
            "list_pruned",
            _list,
            {"type": "object", "properties": {}, "additionalProperties": False},
            "List memories the write gate pruned (never recalled for the prune age) that "
            "nobody restored.",
            reads=True,
        ),
        Operation(
            "restore_pruned",
            _restore,
            {
                "type": "object",
                "required": ["id"],
                "additionalProperties": False,
                "properties": {"id": {"type": ["string", "integer"], "description": "a pruned id"}},
            },
            "Bring a pruned memory back as a new memory the gate never prunes; returns its id.",
            writes=True,
            idempotent=True,  # a repeat finds it restored and is refused: nothing more changes
        ),
        Operation(
            "set_prune_days",
            _days,
            {
                "type": "object",
                "required": ["days"],
                "additionalProperties": False,
                "properties": {
                    "days": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 36500,
                        "description": "prune age in days; 0 = never prune",
                    }
                },
            },
            "Set how many days a never-recalled memory waits before the write gate prunes "
            "it (0: never).",
            writes=True,
        ),
    )

    def apply(self, op: Op) -> None:
        return None

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        return None
