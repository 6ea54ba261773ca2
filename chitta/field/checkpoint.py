"""Field checkpoints: open from the live checkpoint, and write a new one.

A mixin of :class:`chitta.field.Field`. The format and the writer live in
:mod:`chitta.checkpoint`; the log stays the truth, so a checkpoint that
cannot be used is ignored (with a ``CheckpointIgnored`` warning) and the field
is rebuilt from its log.
"""

from __future__ import annotations

from pathlib import Path

from chitta.checkpoint.snapshot import CheckpointInfo
from chitta.errors import ChittaError
from chitta.field.state import FieldState


class CheckpointMixin(FieldState):
    """Checkpoints of Field (the state they use: chitta/field/state.py)."""

    def _load_checkpoint(self) -> None:
        """Start from the live checkpoint, if there is a usable one; the log stays
        the truth: anything wrong with it and the field is rebuilt from the log."""
        import warnings

        from chitta.checkpoint import snapshot
        from chitta.errors import CheckpointIgnored

        loaded = snapshot.try_load(self)
        if loaded is None:
            return
        try:
            snapshot.restore(self, loaded)
        except (ChittaError, KeyError, TypeError, ValueError, IndexError) as exc:
            warnings.warn(
                f"checkpoint {loaded.path.name} ignored, the field is rebuilt from its log: "
                f"{type(exc).__name__}: {exc}",
                CheckpointIgnored,
                stacklevel=3,
            )
            self._fresh_organs()
            return
        self.checkpoint_loaded = loaded.path.name
        self._checkpoint_applied = self._applied
        self._checkpoint_bytes = sum(int(p[1]) for p in loaded.state["watermark"]["positions"])

    def checkpoint(self) -> CheckpointInfo:
        """Write the field's derived state as a new checkpoint (``<root>/checkpoint/``)
        so that later opens load it and replay only what came after.

        Everything this handle wrote is pushed to the OS first; the checkpoint is
        built by a separate read-only view, so writers (this one included) go on
        appending meanwhile. LockedError if another process is writing one;
        InvalidArgument on a read-only handle (use ``chitta checkpoint``)."""
        self._check_writable()  # a read-only handle writes nothing, checkpoints included
        self._log.flush()
        from chitta.checkpoint.run import write_checkpoint

        vocab = self._engine.vocabulary  # the expansion lane's word table goes with it (vocab.emb)
        info = write_checkpoint(self._path, vocabulary=vocab)
        assert info is not None  # no policy: always written
        with self._lock:  # what this handle counts as "since the last checkpoint" starts over
            self._checkpoint_applied = self._applied
            self._checkpoint_bytes = int(self._log.stats()["bytes"])
            self.checkpoint_loaded = Path(info.path).name
        return info
