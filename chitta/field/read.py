"""Field reads by id: get, the live ids and memories, and the field's
statistics (``len`` and ``in`` are on the class itself).

A mixin of :class:`chitta.field.Field`. Every read first applies what this
handle queued (``_check_open``), so it sees the handle's own writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from chitta.ops import checks as v
from chitta.errors import NotFound
from chitta.field.state import FieldState
from chitta.model import FieldStats, Memory


class ReadMixin(FieldState):
    """Reads of Field (the state they use: chitta/field/state.py)."""

    def get(self, id: int) -> Memory:
        """The live memory with this id; NotFound if it never existed or was forgotten."""
        self._check_open()
        mid = v.memory_id(id)
        memory = self._memories.get(mid)
        if memory is None:
            raise NotFound(f"no memory with id {mid}")
        return memory

    def ids(self) -> list[int]:
        """Ids of all live memories, in the order they were applied."""
        self._check_open()
        return list(self._memories.live_ids())

    def memories(self) -> Iterator[Memory]:
        """Every live memory (a snapshot of ids taken at the call)."""
        for mid in self.ids():
            memory = self._memories.get(mid)
            if memory is not None:
                yield memory

    def stats(self) -> FieldStats:
        self._check_open()
        s = self._log.stats()
        return FieldStats(
            path=str(self._path),
            instance_id=self.instance_id,
            memories=len(self._memories),
            forgotten=self._memories.forgotten,
            records_applied=self._applied,
            instances=len(s["instances"]),
            segments=int(s["segments"]),
            bytes=int(s["bytes"]),
            max_seqno=int(self._log.clock),
            embedding_dim=self._memories.embedding_dim,
            durability=self._durability,
            read_only=self.read_only,
            checkpoint=self.checkpoint_loaded,
            records_since_checkpoint=self._applied - self._checkpoint_applied,
            bytes_since_checkpoint=max(0, int(s["bytes"]) - self._checkpoint_bytes),
            remote=self._remote.status() if self._remote is not None else None,
        )
