"""Field checkpoints: open from the live checkpoint, and write a new one.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. The format and the writer are
the other modules of this package; the log stays the truth, so a checkpoint that
cannot be used is ignored (with a ``CheckpointIgnored`` warning) and the field
is rebuilt from its log.
"""

from __future__ import annotations

from pathlib import Path

from chitta.errors import ChittaError
from chitta.field.checkpoint.snapshot import CheckpointInfo
from chitta.field.core import FieldCore


def load(core: FieldCore) -> None:
    """Start from the live checkpoint, if there is a usable one; the log stays
    the truth: anything wrong with it and the field is rebuilt from the log."""
    import warnings

    from chitta.errors import CheckpointIgnored
    from chitta.field.checkpoint import snapshot

    loaded = snapshot.try_load(core)
    if loaded is None:
        return
    try:
        snapshot.restore(core, loaded)
    except (ChittaError, KeyError, TypeError, ValueError, IndexError) as exc:
        warnings.warn(
            f"checkpoint {loaded.path.name} ignored, the field is rebuilt from its log: "
            f"{type(exc).__name__}: {exc}",
            CheckpointIgnored,
            stacklevel=3,
        )
        core.fresh_organs()
        return
    core.checkpoint_loaded = loaded.path.name
    core.checkpoint_applied = core.applied
    core.checkpoint_bytes = sum(int(p[1]) for p in loaded.state["watermark"]["positions"])


def checkpoint(core: FieldCore) -> CheckpointInfo:
    """``Field.checkpoint`` (its docstring is the reference)."""
    core.check_writable()  # a read-only handle writes nothing, checkpoints included
    core.log.flush()
    from chitta.field.checkpoint.run import write_checkpoint

    vocab = core.engine.vocabulary  # the expansion lane's word table goes with it (vocab.emb)
    info = write_checkpoint(core.path, vocabulary=vocab)
    assert info is not None  # no policy: always written
    with core.lock:  # what this handle counts as "since the last checkpoint" starts over
        core.checkpoint_applied = core.applied
        core.checkpoint_bytes = int(core.log.stats()["bytes"])
        core.checkpoint_loaded = Path(info.path).name
    return info
