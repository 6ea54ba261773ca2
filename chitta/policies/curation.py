"""Curation (seed 004): expire, exact dedupe, confidence decay; one report.

``Field.curate(now=None)`` runs three passes, in order, over live memories:

1. **Expire.** A memory whose ``meta["expires_at"]`` (epoch seconds, int or
   float) is at or before ``now`` is forgotten (``DeleteMemory``). Any other
   value of ``expires_at`` is ignored (counted in ``bad_expiry``).
2. **Exact dedupe.** Memories sharing realm, kind and canonical content hash
   (:mod:`chitta.policies.dedup`) collapse into one: the most verified
   (``meta["verified"] is True``), then the most confident, then the oldest.
   The survivor's ``meta["merged_from"]`` lists the others, which are forgotten
   in the same atomic group.
3. **Confidence decay.** An unverified memory loses ``DECAY_PER_DAY = 0.01``
   confidence per day since its last decay (else since it was written), never
   going below ``FLOOR = 0.05`` (so it still surfaces in recall); a memory
   already at or below the floor is left alone. Each decay is an ``UpdateState``
   carrying the new confidence, plus the time of this decay in
   ``meta["confidence_decayed_at"]`` (epoch seconds), in one group. Because the
   amount depends only on the time since the last decay, curating at t1 then
   at t2 leaves the same confidence as curating once at t2, and curating twice
   at the same time changes nothing the second time.

The passes only compute; the Field commits the ops.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from chitta import ops
from chitta.model import Memory
from chitta.policies.dedup import is_verified

DECAY_PER_DAY = 0.01
FLOOR = 0.05
MS_PER_DAY = 86_400_000.0
EXPIRES_KEY = "expires_at"
DECAYED_KEY = "confidence_decayed_at"


@dataclasses.dataclass(frozen=True, slots=True)
class CurationReport:
    """Counts of one ``Field.curate()`` run."""

    examined: int  # live memories at the start
    expired: int
    deduplicated: int  # memories folded into a survivor (and forgotten)
    decayed: int  # memories whose confidence went down
    bad_expiry: int  # expires_at values that are not epoch seconds
    at_ms: int

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def expiry_ms(memory: Memory) -> tuple[int | None, bool]:
    """(expiry in ms or None, whether an expires_at value was present but unusable)."""
    if not memory.meta or EXPIRES_KEY not in memory.meta:
        return None, False
    seconds = _number(memory.meta[EXPIRES_KEY])
    if seconds is None or abs(seconds) > 1e13:
        return None, True
    return int(seconds * 1000), False


def decay_ops(memory: Memory, now_ms: int) -> list[ops.Op]:
    """The group that decays one memory's confidence up to ``now_ms`` (empty: nothing to do)."""
    if is_verified(memory) or memory.confidence <= FLOOR:
        return []
    meta = dict(memory.meta or {})
    last = _number(meta.get(DECAYED_KEY))
    since_ms = memory.written_ms if last is None else round(last * 1000)
    days = (now_ms - since_ms) / MS_PER_DAY
    if days <= 0:
        return []
    new = max(FLOOR, memory.confidence - DECAY_PER_DAY * days)
    if new >= memory.confidence:
        return []
    meta[DECAYED_KEY] = now_ms / 1000.0
    return [
        ops.UpdateState(id=memory.id, at_ms=now_ms, confidence=new),
        ops.UpdateMemoryContent(id=memory.id, at_ms=now_ms, meta=meta),
    ]
