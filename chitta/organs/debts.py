"""Epistemic debts: open questions with competing hypotheses, tests and evidence.

``RegisterDebt`` creates one, ``AttachDebtEvidence`` adds a piece of evidence
(memories, confidence in [0, 1], note, the hypothesis it supports),
``UpdateDebt`` sets its status (open, deferred, resolved, abandoned) with a
readable resolution. The organ stores what the ops carry; when a debt is ready
(:mod:`chitta.policies.debts`, threshold 0.70) is decided by the
``auto_resolve`` maintenance pass and the ``debt_auto_resolve`` operation, which
log the ``UpdateDebt``. Operations: :mod:`chitta.organs.debts_ops`.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Maintenance, OrganBase, RestoreContext, SnapshotContext
from chitta.organs.debts_ops import OPERATIONS, scan
from chitta.policies.debts import SCAN_EVERY_S

# evidence piece: [memory_ids, confidence, note, hypothesis, at_ms]
Piece = list[Any]


class Debt:
    __slots__ = (
        "at_ms",
        "defer_until_ms",
        "evidence",
        "hypotheses",
        "id",
        "memory_ids",
        "priority",
        "question",
        "realm",
        "resolution",
        "status",
        "tests",
        "updated_ms",
    )

    def __init__(self, op: ops.RegisterDebt) -> None:
        self.id, self.question, self.at_ms = int(op.id), op.question, int(op.at_ms)
        self.hypotheses, self.tests = tuple(op.hypotheses), tuple(op.tests)
        self.memory_ids, self.priority, self.realm = (
            tuple(op.memory_ids),
            float(op.priority),
            op.realm,
        )
        self.status: str = "open"
        self.resolution: str | None = None
        self.defer_until_ms: int | None = None
        self.updated_ms = int(op.at_ms)
        self.evidence: list[Piece] = []

    def row(self) -> list[Any]:
        return [
            self.id,
            self.question,
            self.at_ms,
            list(self.hypotheses),
            list(self.tests),
            list(self.memory_ids),
            self.priority,
            self.realm,
            self.status,
            self.resolution,
            self.defer_until_ms,
            self.updated_ms,
            self.evidence,
        ]

    @classmethod
    def of_row(cls, r: list[Any]) -> Debt:
        d = cls(
            ops.RegisterDebt(
                id=int(r[0]),
                question=str(r[1]),
                at_ms=int(r[2]),
                hypotheses=tuple(r[3]),
                tests=tuple(r[4]),
                memory_ids=tuple(r[5]),
                priority=float(r[6]),
                realm=r[7],
            )
        )
        d.status, d.resolution, d.defer_until_ms, d.updated_ms = r[8], r[9], r[10], int(r[11])
        d.evidence = [[list(p[0]), float(p[1]), p[2], p[3], int(p[4])] for p in r[12]]
        return d


class DebtsOrgan(OrganBase):
    name = "debts"
    handles = frozenset({OpType.RegisterDebt, OpType.UpdateDebt, OpType.AttachDebtEvidence})
    operations = OPERATIONS
    maintenance: tuple[Maintenance, ...] = (
        Maintenance("auto_resolve", scan, every_s=SCAN_EVERY_S),
    )

    def __init__(self) -> None:
        self.debts: dict[int, Debt] = {}
        self.ignored = 0  # updates and evidence for a debt this log lacks, repeated registers

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.RegisterDebt):
            if op.id in self.debts:
                self.ignored += 1
            else:
                self.debts[op.id] = Debt(op)
            return
        if isinstance(op, ops.UpdateDebt):
            key = int(op.id)
        elif isinstance(op, ops.AttachDebtEvidence):
            key = int(op.debt_id)
        else:
            return
        debt = self.debts.get(key)
        if debt is None:
            self.ignored += 1
        elif isinstance(op, ops.UpdateDebt):
            debt.status, debt.updated_ms = op.status, int(op.at_ms)
            debt.resolution = op.resolution
            debt.defer_until_ms = op.defer_until_ms
            if op.priority is not None:
                debt.priority = float(op.priority)
        elif isinstance(op, ops.AttachDebtEvidence):
            debt.evidence.append(
                [list(op.memory_ids), float(op.confidence), op.note, op.hypothesis, int(op.at_ms)]
            )
            debt.updated_ms = max(debt.updated_ms, int(op.at_ms))

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {"debts": [d.row() for _, d in sorted(self.debts.items())], "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        self.debts = {int(r[0]): Debt.of_row(r) for r in state["debts"]}
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        by: dict[str, int] = {}
        for d in self.debts.values():
            by[d.status] = by.get(d.status, 0) + 1
        return {"debts": len(self.debts), **{f"debts_{k}": n for k, n in sorted(by.items())}}
