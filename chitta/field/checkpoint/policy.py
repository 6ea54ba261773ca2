"""When to write a checkpoint (compaction policy).

Opening a field costs loading its checkpoint plus replaying the records after
it, so a new checkpoint pays off once enough has been appended since the
last one. The daemon asks this policy after its maintenance passes;
``chitta checkpoint --if-needed`` asks it once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckpointPolicy:
    """Checkpoint when any threshold is reached:

    * ``records``: log records applied since the last checkpoint (default 50,000;
      replaying that many takes about 0.1-0.2 s here);
    * ``log_bytes``: segment bytes appended since the last checkpoint (64 MiB);
    * ``max_age_s``: the last checkpoint is older than this and at least
      ``min_records`` records came after it (one hour, 1,000 records).

    A field with no checkpoint gets its first one once it has ``records`` records.
    """

    records: int = 50_000
    log_bytes: int = 64 << 20
    max_age_s: float = 3600.0
    min_records: int = 1_000

    def __post_init__(self) -> None:
        from chitta.errors import InvalidArgument

        for name in ("records", "log_bytes", "min_records"):
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

    def due(self, records_since: int, bytes_since: int, age_s: float | None) -> str | None:
        """Why a checkpoint is due now (a short reason), or None when it is not."""
        if records_since >= self.records:
            return f"{records_since:,} records since the last checkpoint (>= {self.records:,})"
        if bytes_since >= self.log_bytes:
            return f"{bytes_since:,} log bytes since the last checkpoint (>= {self.log_bytes:,})"
        if age_s is not None and age_s >= self.max_age_s and records_since >= self.min_records:
            return f"last checkpoint is {age_s:,.0f} s old with {records_since:,} records after it"
        return None
