"""Checkpoints of the memories organ: its state map plus the vector sidecar.

``vectors.ref`` (state 10, docs/FORMAT.md, "Checkpoints") says where the current
vector of every live memory lies in the log; when some vector cannot be found
there, ``vectors.emb`` holds a copy of every one instead (as states 1-9 do). The organ publishes the ids and vectors in the checkpoint
context's ``shared`` map (``"vectors"``), and on restore a :class:`LiveMemories`
view (``"live"``), for the organs built after it; neither is an import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.errors import CorruptionError
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import vector_refs
from chitta.field.checkpoint.mapped_vectors import MappedVectors

if TYPE_CHECKING:
    from chitta.organs.contract import RestoreContext, SnapshotContext
    from chitta.organs.memories import MemoriesOrgan

VECTORS = "vectors.emb"
REFS = "vectors.ref"  # state 10: where each vector's bytes lie in the log (vector_refs.py)


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
    log = ctx.shared.get("log")  # (field root, the view's watermark): state 10's references
    located = (
        vector_refs.locate(log[0], log[1], ids, vecs, organ.vector_refs)
        if log is not None and len(ids)
        else None
    )
    if located is not None:
        refs, crc = located
        entry = vector_refs.write_refs(ctx.path(REFS), refs, int(vecs.shape[1]))
        entry["crc"] = fmt.tail_crc(ctx.path(REFS))
        ctx.record(REFS, entry)
        state["vector_refs"] = {"segments": refs.segments, "crc": crc}
    else:
        entry = fmt.write_emb(ctx.path(VECTORS), ids, vecs)
        entry["crc"] = fmt.tail_crc(ctx.path(VECTORS))
        ctx.record(VECTORS, entry)
    ctx.shared["vectors"] = (ids, vecs)
    return state


def restore(organ: MemoriesOrgan, state: dict[str, Any], ctx: RestoreContext) -> None:
    if not isinstance(state, dict):
        raise CorruptionError("the memories organ's state is not a map")
    record = state.get("vector_refs")
    if record is not None:  # state 10: the vectors are read back from the log
        ids, vecs = _restore_refs(organ, record, ctx)
    else:
        ids, vecs = fmt.read_emb(ctx.path(VECTORS))
        want = ctx.sidecars[VECTORS]
        if (want["count"], want["crc"]) != (len(ids), fmt.tail_crc(ctx.path(VECTORS))):
            raise CorruptionError(f"{VECTORS} is not the one the state file was written with")
    organ.restore_columns(state, ids, vecs)
    ctx.shared["vectors"] = (ids, vecs)
    ctx.shared["live"] = LiveMemories(organ)


def _restore_refs(organ: MemoriesOrgan, record: dict[str, Any], ctx: RestoreContext) -> Any:
    """(ids, vectors) of a state-10 checkpoint: ``vectors.ref`` checked against the state,
    the vectors read in place from their segments (MappedVectors), the CRC of all of
    them checked."""
    want = ctx.sidecars[REFS]
    path = ctx.path(REFS)
    if (want["bytes"], want["crc"]) != (path.stat().st_size, fmt.tail_crc(path)):
        raise CorruptionError(f"{REFS} is not the one the state file was written with")
    segments = record["segments"]
    if not isinstance(segments, list) or not all(isinstance(n, str) for n in segments):
        raise CorruptionError(f"{REFS}: the state's segment list is not a list of names")
    positions = ctx.shared["watermark"]
    refs, dim = vector_refs.read_refs(path, segments, positions)
    if len(refs.ids) != want["count"]:
        raise CorruptionError(f"{REFS}: {len(refs.ids)} rows, the state file says {want['count']}")
    vecs = MappedVectors(ctx.shared["root"], refs.segments, refs.seg, refs.offsets, dim)
    if vecs.crc() != int(record["crc"]):
        raise CorruptionError(
            f"{REFS}: the referenced vector bytes in the log do not match their CRC"
        )
    organ.vector_refs = refs  # the next checkpoint scans only the records after this one
    return refs.ids, vecs
