"""Payload of the curated layer's op (seed 001): one event op, like the seed's
lifecycle events, whose ``event`` names what happened to the closed vocabulary,
a capture, a fact, a dispute, a pin or a classifier audit record.

Fields an event does not use stay at their defaults. What each event reads is
listed in docs/OPS.md (CuratedEvent) and applied by chitta/organs/curated.py.
"""

from __future__ import annotations

from typing import Any, ClassVar

from chitta.ops.base import I64, OpBase, OpType

__all__ = ["CURATED_EVENTS", "CURATED_PROVENANCE", "CuratedEvent"]

CURATED_EVENTS = frozenset(
    {
        "declare",  # a domain (key "d") or topic (key "d/t") enters the vocabulary
        "amend",  # its descriptor changes
        "limits",  # the vocabulary's caps and budgets (``fields``)
        "capture",  # a candidate fact, durable before anything is derived from it
        "file",  # a fact filed under its paths (primary first); refs[0] = its capture
        "supersede",  # fact ``key`` is replaced by refs[0]
        "dispute",  # fact ``key`` disputes refs[0]
        "resolve",  # the dispute between key and refs[0] ends with ``outcome``
        "pin",  # task ``key``: ordered fact ids (refs) and the rendered bytes (blob)
        "audit_open",  # a classifier call ``key`` about to be dispatched
        "audit_close",  # its answer (paths) or its error (text)
    }
)
CURATED_PROVENANCE = frozenset({"machine", "human", "model"})


class CuratedEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """One event of the curated layer (docs/OPS.md, CuratedEvent).

    ``key``: a rendered topic path (declare, amend), a ULID (capture, file,
    supersede, dispute, resolve, audit), a task id (pin). ``paths``: rendered
    topic paths. ``refs``: the ULIDs an event names.
    """

    op_type: ClassVar[OpType] = OpType.CuratedEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {
        "event": CURATED_EVENTS,
        "provenance": CURATED_PROVENANCE,
    }

    event: str
    key: str
    at_ms: I64
    text: str | None = None
    kind: str | None = None
    fields: dict[str, Any] | None = None
    scope: str | None = None
    paths: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    outcome: str | None = None
    blob: bytes | None = None
    provenance: str | None = None
