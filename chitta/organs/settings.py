"""Settings organ: field-wide settings from ConfigureField ops (last one wins).

Never imports another organ.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Maintenance, Operation, RestoreContext, SnapshotContext


class SettingsOrgan:
    name = "settings"
    handles = frozenset({OpType.ConfigureField})
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = ()

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def apply(self, op: Op) -> None:
        if type(op) is ops.ConfigureField:
            self._values[op.key] = op.value

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        for op in run:
            self.apply(op)

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    # ---- checkpoints (chitta/field/checkpoint) ------------------------------------------------
    def snapshot(self, ctx: SnapshotContext | None = None) -> dict[str, Any]:
        return {"values": [[k, v] for k, v in self._values.items()]}

    def restore(self, state: dict[str, Any], ctx: RestoreContext | None = None) -> None:
        self._values = {str(k): v for k, v in state["values"]}

    def stats(self) -> dict[str, Any]:
        return {"settings": len(self._values)}
