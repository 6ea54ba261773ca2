"""The organ contract: what every organ declares and implements.

An organ owns one kind of state. It declares the op types it applies
(``handles``); the field's registry routes every replayed and every new op of
those types to it, in log order. It snapshots itself into a checkpoint and
restores from one (``snapshot`` / ``restore``, with sidecar files of its own
through :class:`SnapshotContext` / :class:`RestoreContext`); it reports
``stats()``; it may declare maintenance passes with a cadence
(``maintenance``) and operations that reach every door (``operations``: the
method table, :mod:`chitta.server.methods`).

Rules (tested for every registered organ by ``tests/unit/organs/test_contract.py``):
- ``apply`` never raises for an op that names state it does not hold (another
  writer may have deleted it first): count and ignore. Malformed ops never reach
  it: payloads are validated when decoded (a located CorruptionError).
- Two replays of the same log give equal ``snapshot`` maps; restoring a
  snapshot then applying the rest of the log equals replaying it all.
- No organ imports another. Cross-organ policies (scoring, curation, routing,
  reconciliation) live above the organs and read them through their queries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from chitta.ops import Op, OpType

__all__ = [
    "Maintenance",
    "Operation",
    "Organ",
    "OrganBase",
    "RestoreContext",
    "SnapshotContext",
]


@dataclasses.dataclass(frozen=True)
class Operation:
    """One operation an organ offers to every door (Python ``Field.call``, the
    daemon and its ``connect()`` handle, MCP tools).

    ``handler(organ, ctx, **arguments)`` runs it; ``ctx`` is the field's
    :class:`~chitta.field.calls.CallContext` (commit ops, the clock). ``schema`` is
    the JSON Schema of the arguments (an object schema; the doors check it before
    the handler runs). ``reads``: a long-lived server refreshes its view of other
    writers first. ``writes``: the operation appends ops (refused on a read-only
    field). ``idempotent``: a repeat with the same arguments changes nothing more
    (None: exactly when it does not write); MCP reports it as ``idempotentHint``.
    ``doors``: where it is offered (``"python"``, ``"daemon"``, ``"mcp"``).
    """

    name: str
    handler: Callable[..., Any]
    schema: Mapping[str, Any]
    description: str
    reads: bool = False
    writes: bool = False
    doors: frozenset[str] = frozenset({"python", "daemon", "mcp"})
    idempotent: bool | None = None


@dataclasses.dataclass(frozen=True)
class Maintenance:
    """A maintenance pass: ``run(organ, ctx)`` returns a count of what it did.
    ``every_s``: its cadence in seconds (the daemon's maintenance thread runs it
    when that much time has passed since its last run)."""

    name: str
    run: Callable[..., int]
    every_s: float


class SnapshotContext(Protocol):
    """What ``Organ.snapshot`` gets from the checkpoint writer."""

    directory: Path  # the checkpoint being written (a temporary directory until published)
    shared: dict[str, Any]  # values earlier organs (registry order) published for later ones

    def path(self, name: str) -> Path:
        """Where to write sidecar ``name`` (then record it with :meth:`record`)."""

    def record(self, name: str, entry: dict[str, int]) -> None:
        """Note sidecar ``name`` in the state file (at least its bytes and CRC)."""

    def write_records(self, name: str, magic: bytes, version: int, records: list[Any]) -> None:
        """Write ``records`` as sidecar ``name`` in the shared organ sidecar format
        (chitta.organs.sidecar) and record it."""


class RestoreContext(Protocol):
    """What ``Organ.restore`` gets from the checkpoint reader."""

    directory: Path  # the live checkpoint
    version: int  # its state format version
    sidecars: Mapping[str, Mapping[str, int]]  # what the state file recorded of each sidecar
    shared: dict[str, Any]  # values earlier organs published while restoring

    def path(self, name: str) -> Path:
        """Sidecar ``name`` of the checkpoint."""

    def read_records(self, name: str, magic: bytes, version: int) -> list[Any]:
        """Read sidecar ``name`` written by ``SnapshotContext.write_records``, checked
        against the state's record of it (CorruptionError otherwise)."""


@runtime_checkable
class Organ(Protocol):
    """What the coordinator needs from an organ (see the module docstring)."""

    name: str  # its key in checkpoints, stats and the registry
    handles: frozenset[OpType]
    maintenance: tuple[Maintenance, ...]
    operations: tuple[Operation, ...]

    def apply(self, op: Op) -> None:
        """Apply one op (live writes, and replay of a lone op)."""

    def apply_run(self, op_type: OpType, ops: list[Op]) -> None:
        """Apply consecutive ops of one type, in order (replay's fast path)."""

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        """This organ's state as a msgpack-able map (large parts as sidecars via ``ctx``)."""

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        """Load a snapshot into this fresh organ. Raises on anything malformed; the
        field then discards every organ and replays the log."""

    def stats(self) -> dict[str, Any]:
        """Counts worth showing in ``Field.stats()`` (plain ints, floats, strings)."""


class OrganBase:
    """Defaults for an organ: ``apply_run`` applies one op at a time, no stats, no
    maintenance, no operations. Subclasses set ``name`` and ``handles`` and
    implement ``apply``, ``snapshot`` and ``restore``."""

    name: str = ""
    handles: frozenset[OpType] = frozenset()
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = ()

    def apply(self, op: Op) -> None:
        raise NotImplementedError

    def apply_run(self, op_type: OpType, ops: list[Op]) -> None:
        for op in ops:
            self.apply(op)

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        raise NotImplementedError

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        raise NotImplementedError

    def stats(self) -> dict[str, Any]:
        return {}
