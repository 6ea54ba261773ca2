"""Writing a checkpoint of a field by path: the one entry point that the Field,
the CLI and the daemon share."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta import free_memory
from chitta.field.checkpoint import store
from chitta.field.checkpoint.policy import CheckpointPolicy, saved_graph_lacks
from chitta.field.checkpoint.snapshot import CheckpointInfo, write


def write_checkpoint(
    path: str | os.PathLike[str],
    *,
    policy: CheckpointPolicy | None = None,
    on_step: Callable[[str], None] | None = None,
    vocabulary: Any = None,
) -> CheckpointInfo | None:
    """Open a read-only view of the field at ``path`` (its current checkpoint plus
    the log after it) and write that view as the new live checkpoint. With a
    ``policy``, write only when it says one is due (None otherwise). ``on_step``
    hears each step's name (progress). LockedError when another process is
    writing one. ``vocabulary``: the calling handle's expansion word table
    (chitta.recall.expand.Vocabulary), saved with the checkpoint."""
    from chitta.field import Field

    step = on_step or (lambda _name: None)
    root = Path(path).expanduser().absolute()
    with store.writer_lock(root):
        step("loading the field (last checkpoint + the log after it)")
        view = Field(root, read_only=True, create=False, embedder=None)
        try:
            if policy is not None:
                stats = view.stats()
                live = store.current(root) if view.checkpoint_loaded else None
                age = store.age_seconds(live) if live is not None else None
                lacks = saved_graph_lacks(live) if live is not None else None
                if (
                    policy.due(
                        stats.records_since_checkpoint, stats.bytes_since_checkpoint, age, lacks
                    )
                    is None
                ):
                    return None
            step("writing state and sidecars")
            return write(view, root, vocabulary)
        finally:
            view.close()
            del view
            free_memory.give_back()  # the view's organs and the sidecars' buffers (D-089)
