"""Settings of the write gate and of maintenance as operations (no state of its own: a pruned
memory is a forgotten one whose meta says it was pruned; see
:mod:`chitta.policies.write_gate`). ``set_prune_days`` sets the age (0 = never); ``list_pruned`` and
``restore_pruned`` (also ``Field.pruned()`` / ``Field.restore(id)``) list and bring
back pruned memories; ``set_maintenance_every`` sets one maintenance pass's cadence."""

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


def _cadence(organ: PruningOrgan, ctx: Any, *, name: str, every_s: Any) -> dict[str, Any]:
    from chitta import ops
    from chitta.errors import InvalidArgument
    from chitta.ops import checks

    core = ctx.core
    from chitta.field.maintain import FIELD_PASSES

    passes = sorted(
        [f"{o.name}.{t.name}" for o in core.organs for t in o.maintenance] + list(FIELD_PASSES)
    )
    if name not in passes:
        raise InvalidArgument(f"no maintenance pass {name!r}; passes: {passes}")
    seconds = checks.non_negative_float(every_s, "every_s")
    table = core.settings.get("maintenance_every_s")
    table = dict(table) if isinstance(table, dict) else {}
    table[name] = seconds
    ctx.commit(ops.ConfigureField(key="maintenance_every_s", value=table, at_ms=ctx.now_ms()))
    return {"maintenance_every_s": table}


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
        Operation(
            "set_maintenance_every",
            _cadence,
            {
                "type": "object",
                "required": ["name", "every_s"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "description": "a pass, e.g. debts.auto_resolve"},
                    "every_s": {"type": "number", "minimum": 0, "description": "seconds"},
                },
            },
            "Set how often maintain() runs one organ maintenance pass (seconds; the pass's "
            "own cadence otherwise, e.g. debts.auto_resolve every 1800).",
            writes=True,
        ),
    )

    def apply(self, op: Op) -> None:
        return None

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        return None
