"""Public value types: what ``Field`` returns."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from typing import Any

import numpy as np
import numpy.typing as npt


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Memory:
    """One memory as the field knows it now (content plus current state)."""

    id: int
    text: str
    kind: str
    realm: str | None
    session: str | None
    source_tool: str | None
    harness: str | None
    tags: tuple[str, ...]
    confidence: float
    strength: float
    decay_rate: float
    tier: int
    created_ms: int
    updated_ms: int
    last_access_ms: int
    access_count: int
    meta: dict[str, Any] | None
    embedding: npt.NDArray[np.float32] | None = dataclasses.field(repr=False)
    artifacts: tuple[str, ...] = ()
    written_ms: int = 0  # when it was written to the field (created_ms: when it happened)

    @property
    def instance_id(self) -> int:
        """The writer instance that created this memory (the id's high 32 bits)."""
        return self.id >> 32

    @property
    def created_at(self) -> datetime:
        return _utc(self.created_ms)

    @property
    def updated_at(self) -> datetime:
        return _utc(self.updated_ms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Memory):
            return NotImplemented
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or not np.array_equal(a, b):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]


_MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))
_MEMORY_SLOTS = tuple(
    Memory.__dict__[name] for name in _MEMORY_FIELDS
)  # member descriptors, field order
_new_slotted: Any = (
    None  # chitta._core._new_slotted, bound on first use (import chitta stays light)
)


def memory_of(values: tuple[Any, ...]) -> Memory:
    """``Memory(**dict(zip(fields, values)))`` with ``values`` in field order, built
    without the frozen dataclass's ``__init__`` (it goes through ``object.__setattr__``
    once per field): the slots are set by one native call (``_core._new_slotted``, a C
    call per slot; ~4x cheaper than the descriptors' ``__set__`` from Python). Recall
    builds one per hit."""
    global _new_slotted
    if len(values) != len(_MEMORY_SLOTS):
        raise TypeError(f"Memory has {len(_MEMORY_SLOTS)} fields, got {len(values)} values")
    if _new_slotted is None:
        from chitta._core import _new_slotted as fn

        _new_slotted = fn
    memory: Memory = _new_slotted(Memory, _MEMORY_SLOTS, values)
    return memory


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FieldStats:
    """Counts and sizes of a field as this handle sees it."""

    path: str
    instance_id: int | None
    memories: int
    forgotten: int
    records_applied: int
    instances: int
    segments: int
    bytes: int
    max_seqno: int
    embedding_dim: int | None
    durability: str
    read_only: bool
    checkpoint: str | None = None  # the checkpoint this handle opened from
    records_since_checkpoint: int = 0  # records applied after it (all, without one)
    bytes_since_checkpoint: int = 0  # segment bytes after it
    remote: dict[str, Any] | None = (
        None  # replication state when opened with remote= (chitta/remote)
    )
    embed_backlog: int = 0  # memories of this handle still waiting for their vector
    # the query router's log and its last pass's four metrics (chitta/policies/router_metrics.py)
    router: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
