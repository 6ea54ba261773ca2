"""Checkpoints of the memories organ: its state map plus the vector sidecar.

``vectors.emb`` (docs/FORMAT.md, "Checkpoints") holds the current vector of
every live memory. The organ publishes the ids and vectors in the checkpoint
context's ``shared`` map (``"vectors"``), and on restore a :class:`LiveMemories`
view (``"live"``), for the organs built after it; neither is an import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.errors import CorruptionError
from chitta.field.checkpoint import format as fmt

if TYPE_CHECKING:
    from chitta.organs.contract import RestoreContext, SnapshotContext
    from chitta.organs.memories import MemoriesOrgan

VECTORS = "vectors.emb"


class LiveMemories:
    """The live memories as the recall index reads them at restore, on demand: a
    version-4 state needs only the live ids (and the texts of a few memories);
    every live put is rebuilt only for older states or a missing sidecar."""

    def __init__(self, memories: MemoriesOrgan) -> None:
        self._memories = memories
        self._puts: tuple[list[int], list[Any], list[str]] | None = None

    def ids(self) -> Any:
        return self._memories.live_id_array()

    def text(self, mid: int) -> str | None:
        return self._memories.text(mid)

    def puts(self) -> tuple[list[int], list[Any], list[str]]:
        """(ids, puts, current texts) of every live memory, in ``ids()`` order."""
        if self._puts is None:
            self._puts = self._memories.live_puts()
        return self._puts


def snapshot(organ: MemoriesOrgan, ctx: SnapshotContext) -> dict[str, Any]:
    state, ids, vecs = organ.snapshot_columns()
    entry = fmt.write_emb(ctx.path(VECTORS), ids, vecs)
    entry["crc"] = fmt.tail_crc(ctx.path(VECTORS))
    ctx.record(VECTORS, entry)
    ctx.shared["vectors"] = (ids, vecs)
    return state


def restore(organ: MemoriesOrgan, state: dict[str, Any], ctx: RestoreContext) -> None:
    ids, vecs = fmt.read_emb(ctx.path(VECTORS))
    want = ctx.sidecars[VECTORS]
    if (want["count"], want["crc"]) != (len(ids), fmt.tail_crc(ctx.path(VECTORS))):
        raise CorruptionError(f"{VECTORS} is not the one the state file was written with")
    organ.restore_columns(state, ids, vecs)
    ctx.shared["vectors"] = (ids, vecs)
    ctx.shared["live"] = LiveMemories(organ)
