"""The call-graph organ: ``caller -> callee`` edges between symbol keys.

Applies AddSymCallEdge / RemoveSymCallEdge; RemoveSymbol drops every edge that
touches the symbol, and ClearProject every edge touching a symbol upserted with
that project (the organ keeps symbol -> project from UpsertSymbol for this; it
never reads the symbols organ).
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext

__all__ = ["CallGraphOrgan"]

SIDECAR = "call_graph.rec"
MAGIC = b"CHITTACG"
VERSION = 1


class CallGraphOrgan(OrganBase):
    name = "call_graph"
    handles = frozenset(
        {
            OpType.AddSymCallEdge,
            OpType.RemoveSymCallEdge,
            OpType.RemoveSymbol,
            OpType.UpsertSymbol,
            OpType.ClearProject,
        }
    )

    def __init__(self) -> None:
        self.callees: dict[str, set[str]] = {}
        self.callers: dict[str, set[str]] = {}
        self.project: dict[str, str] = {}  # symbol -> the project it was upserted with
        self.ignored = 0  # removals of edges this field does not hold, self or empty edges

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.AddSymCallEdge):
            if not op.caller or not op.callee:
                self.ignored += 1
            else:
                self.callees.setdefault(op.caller, set()).add(op.callee)
                self.callers.setdefault(op.callee, set()).add(op.caller)
        elif isinstance(op, ops.RemoveSymCallEdge):
            if op.callee in self.callees.get(op.caller, ()):
                self._drop(op.caller, op.callee)
            else:
                self.ignored += 1
        elif isinstance(op, ops.UpsertSymbol):
            if op.project is None:
                self.project.pop(op.name, None)
            else:
                self.project[op.name] = op.project
        elif isinstance(op, ops.RemoveSymbol):
            self._forget(op.name)
        elif isinstance(op, ops.ClearProject):
            for name in [n for n, p in self.project.items() if p == op.project]:
                self._forget(name)

    def _drop(self, caller: str, callee: str) -> None:
        for table, a, b in ((self.callees, caller, callee), (self.callers, callee, caller)):
            peers = table[a]
            peers.discard(b)
            if not peers:
                del table[a]

    def _forget(self, name: str) -> None:
        self.project.pop(name, None)
        for callee in sorted(self.callees.get(name, ())):
            self._drop(name, callee)
        for caller in sorted(self.callers.get(name, ())):
            self._drop(caller, name)

    # -- queries ---------------------------------------------------------------------
    def callees_of(self, name: str) -> list[str]:
        return sorted(self.callees.get(name, ()))

    def callers_of(self, name: str) -> list[str]:
        return sorted(self.callers.get(name, ()))

    @property
    def edges(self) -> int:
        return sum(len(v) for v in self.callees.values())

    # -- checkpoints -----------------------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows: list[Any] = [[a, sorted(bs)] for a, bs in sorted(self.callees.items())]
        rows.append(sorted([n, p] for n, p in self.project.items()))  # the last row
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"callers": len(self.callees), "edges": self.edges, "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        if int(state["callers"]) == 0 and SIDECAR not in ctx.sidecars:
            rows: list[Any] = [[]]
        else:
            rows = ctx.read_records(SIDECAR, MAGIC, VERSION)
        if not rows:
            raise ValueError("call_graph: the sidecar lacks its project row")
        for caller, callees in rows[:-1]:
            for callee in callees:
                self.callees.setdefault(str(caller), set()).add(str(callee))
                self.callers.setdefault(str(callee), set()).add(str(caller))
        self.project = {str(n): str(p) for n, p in rows[-1]}
        if len(self.callees) != int(state["callers"]) or self.edges != int(state["edges"]):
            raise ValueError("call_graph: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        return {"edges": self.edges, "callers": len(self.callees), "ignored": self.ignored}
