"""When to write a checkpoint (compaction policy).

Opening a field costs loading its checkpoint plus replaying the records after
it, so a new checkpoint pays off once enough has been appended since the
last one. The daemon asks this policy after its maintenance passes;
``chitta checkpoint --if-needed`` asks it once.

A checkpoint also builds the dense lane's graph, but by at most ~2 s of vectors
(chitta/organs/dense_ann.py), so after a bulk load the saved graph may lack most of
them; a handle opened from it then searches binary codes instead (less exact, slower).
Such a checkpoint is due again, whatever was appended, until the graph lacks at most
``graph_lag`` vectors (``saved_graph_lacks`` reads what the live checkpoint's lacks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.organs.dense_ann import AUTO_PENDING_EXACT


@dataclass(frozen=True)
class CheckpointPolicy:
    """Checkpoint when any threshold is reached:

    * ``records``: log records applied since the last checkpoint (default 50,000;
      replaying that many takes about 0.1-0.2 s here);
    * ``log_bytes``: segment bytes appended since the last checkpoint (64 MiB);
    * ``max_age_s``: the last checkpoint is older than this and at least
      ``min_records`` records came after it (one hour, 1,000 records);
    * ``graph_lag``: the live checkpoint's dense graph lacks more vectors than this
      (default: the most a search scans exactly beside the graph, 10,000).

    A field with no checkpoint gets its first one once it has ``records`` records.
    """

    records: int = 50_000
    log_bytes: int = 64 << 20
    max_age_s: float = 3600.0
    min_records: int = 1_000
    graph_lag: int = AUTO_PENDING_EXACT

    def __post_init__(self) -> None:
        from chitta.errors import InvalidArgument

        for name in ("records", "log_bytes", "min_records", "graph_lag"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(
                    f"CheckpointPolicy.{name} must be a positive int, got {value!r}"
                )
        if (
            isinstance(self.max_age_s, bool)
            or not isinstance(self.max_age_s, (int, float))
            or not self.max_age_s > 0
        ):
            raise InvalidArgument(f"CheckpointPolicy.max_age_s must be > 0, got {self.max_age_s!r}")

    def due(
        self,
        records_since: int,
        bytes_since: int,
        age_s: float | None,
        graph_lacks: int | None = None,
    ) -> str | None:
        """Why a checkpoint is due now (a short reason), or None when it is not.
        ``graph_lacks``: vectors the live checkpoint's dense graph lacks (None: it has
        no graph, or there is no checkpoint)."""
        if records_since >= self.records:
            return f"{records_since:,} records since the last checkpoint (>= {self.records:,})"
        if bytes_since >= self.log_bytes:
            return f"{bytes_since:,} log bytes since the last checkpoint (>= {self.log_bytes:,})"
        if age_s is not None and age_s >= self.max_age_s and records_since >= self.min_records:
            return f"last checkpoint is {age_s:,.0f} s old with {records_since:,} records after it"
        if graph_lacks is not None and graph_lacks > self.graph_lag:
            return (
                f"the last checkpoint's dense graph lacks {graph_lacks:,} vectors "
                f"(> {self.graph_lag:,}); each checkpoint adds some"
            )
        return None


def saved_graph_lacks(checkpoint: str | Path) -> int | None:
    """How many vectors the dense graph saved in the checkpoint directory
    ``checkpoint`` lacks; None when it saved no graph (or its state cannot be read:
    then opening it reports that)."""
    from chitta.errors import ChittaError
    from chitta.field.checkpoint import format as fmt
    from chitta.field.checkpoint.snapshot import STATE

    try:
        _version, state = fmt.read_state(Path(checkpoint) / STATE)
    except (ChittaError, OSError):
        return None
    organs: Any = state.get("organs")
    index: Any = organs.get("recall_index") if isinstance(organs, dict) else None
    if not isinstance(index, dict) or index.get("ann") is not True:
        return None
    pending = index.get("ann_pending", b"")
    return len(pending) // 8 if isinstance(pending, bytes) else None
