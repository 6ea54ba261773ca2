"""Field reads by id: get, the live ids and memories, and the field's
statistics (``len`` and ``in`` are on the class itself).

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. Every read first applies what this
handle queued (``_check_open``), so it sees the handle's own writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from chitta.errors import NotFound
from chitta.field import deferred
from chitta.field.core import FieldCore
from chitta.model import FieldStats, Memory
from chitta.ops import checks as v


def get(core: FieldCore, id: int) -> Memory:
    """``Field.get`` (its docstring is the reference)."""
    core.check_open()
    mid = v.memory_id(id)
    memory = core.memories.get(mid)
    if memory is None:
        raise NotFound(f"no memory with id {mid}")
    return memory


def ids(core: FieldCore) -> list[int]:
    """``Field.ids`` (its docstring is the reference)."""
    core.check_open()
    return list(core.memories.live_ids())


def memories(core: FieldCore) -> Iterator[Memory]:
    """``Field.memories`` (its docstring is the reference)."""
    for mid in ids(core):
        memory = core.memories.get(mid)
        if memory is not None:
            yield memory


def stats(core: FieldCore) -> FieldStats:
    core.check_open()
    s = core.log.stats()
    return FieldStats(
        path=str(core.path),
        instance_id=core.instance_id,
        memories=len(core.memories),
        forgotten=core.memories.forgotten,
        records_applied=core.applied,
        instances=len(s["instances"]),
        segments=int(s["segments"]),
        bytes=int(s["bytes"]),
        max_seqno=int(core.log.clock),
        embedding_dim=core.memories.embedding_dim,
        durability=core.durability,
        read_only=core.read_only,
        checkpoint=core.checkpoint_loaded,
        records_since_checkpoint=core.applied - core.checkpoint_applied,
        bytes_since_checkpoint=max(0, int(s["bytes"]) - core.checkpoint_bytes),
        remote=core.remote.status() if core.remote is not None else None,
        embed_backlog=deferred.pending(core),
        router=next((o.stats() for o in core.organs if o.name == "router"), None),
    )
