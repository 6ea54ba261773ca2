"""Organs: each owns one kind of state, applies the ops it handles, and
answers its own queries. Organs never import each other; the ``Field``
coordinator routes replayed and new ops to them by op type.
"""

from __future__ import annotations

from typing import Protocol

from chitta.ops import Op, OpType


class Organ(Protocol):
    """What the coordinator needs from an organ."""

    name: str
    handles: frozenset[OpType]

    def apply(self, op: Op) -> None:
        """Apply one op. Must not raise for ops that reference unknown state
        (another writer may have forgotten a memory first): count and ignore."""

    def apply_run(self, op_type: OpType, ops: list[Op]) -> None:
        """Apply consecutive ops of one type (replay's fast path)."""


__all__ = ["Organ"]
