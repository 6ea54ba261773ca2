"""The write gate's prune: what may go, and how it goes (softly).

Following the seed, a staged memory (never recalled) older than the prune age
(7 days by default; the field setting ``staged_prune_days``, 0 = never) is
pruned. Unlike the seed, nothing a person wanted kept goes: the gate never
prunes a ``decision``, a ``code_fact``, a ``wisdom`` memory, a memory of human
provenance (``meta["provenance"] == "human"``, e.g. a MEMORY.md import), a pinned
or curated one (``meta["pinned"]`` or ``meta["curated"]`` true, or the tag
``pinned``), or a restored one (``meta["restored_from"]``).

A prune is a soft delete: the memory's meta gains ``"pruned": {"at_ms", "by"}``
(an ``UpdateMemoryContent``) and it is forgotten (``DeleteMemory``), both in one
batch. ``Field.pruned()`` lists such memories and ``Field.restore(id)`` brings
one back as a new memory (same content, vector and time; meta
``restored_from``), which the gate then never prunes again.
"""

from __future__ import annotations

import math
from typing import Any

from chitta import ops
from chitta.model import Memory

STAGED_PRUNE_DAYS = 7.0
PRUNED_KEY = "pruned"
RESTORED_KEY = "restored_from"
KEPT_KINDS = frozenset({"decision", "code_fact", "wisdom"})


def protected(m: Memory) -> str | None:
    """Why the gate must keep ``m`` (None: it may be pruned)."""
    if m.kind in KEPT_KINDS:
        return f"kind {m.kind}"
    meta: dict[str, Any] = m.meta or {}
    if meta.get("provenance") == "human":
        return "human provenance"
    if meta.get("pinned") is True or meta.get("curated") is True or "pinned" in m.tags:
        return "pinned or curated"
    if RESTORED_KEY in meta:
        return "restored by hand"
    return None


def prune_ops(m: Memory, now_ms: int, by: str = "write_gate") -> list[ops.Op]:
    meta = dict(m.meta or {})
    meta[PRUNED_KEY] = {"at_ms": now_ms, "by": by}
    return [
        ops.UpdateMemoryContent(id=m.id, at_ms=now_ms, meta=meta),
        ops.DeleteMemory(id=m.id, at_ms=now_ms),
    ]


def prune_days(value: object) -> float:
    """The setting's value as days (the default when unset or unusable)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        return STAGED_PRUNE_DAYS
    return float(value)
