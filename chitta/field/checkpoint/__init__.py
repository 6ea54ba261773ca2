"""Checkpoints: a field's derived state as of a log watermark, so that opening
a large field loads it and replays only what came after (docs/FORMAT.md)."""

from chitta.field.checkpoint.policy import CheckpointPolicy
from chitta.field.checkpoint.snapshot import CheckpointInfo

__all__ = ["CheckpointInfo", "CheckpointPolicy"]
