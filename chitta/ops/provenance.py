"""Payload of the provenance organ's op: who wrote a memory, and its candidate band.

One event op. ``assign`` records the writer class of memory ``id`` (one of
``PROVENANCES``) and whether it enters the candidate band; ``witness`` records
a closed-loop signal (``WITNESS_SIGNALS``) that promotes a candidate. A memory
no ``assign`` names is of ``unknown`` provenance and established (fields
written before the axis). Applied by chitta/organs/provenance.py; the rules
that choose the values are chitta/policies/provenance.py (docs/PROVENANCE.md).
"""

from __future__ import annotations

from typing import ClassVar

from chitta.ops.base import I64, U64, OpBase, OpType

__all__ = ["PROVENANCES", "PROVENANCE_EVENTS", "WITNESS_SIGNALS", "ProvenanceEvent"]

PROVENANCES: frozenset[str] = frozenset(
    {
        "human",  # a person wrote it (a MEMORY.md import, `chitta remember` by hand)
        "claude",  # written by a Claude agent (Claude Code, Claude Desktop)
        "codex",  # written by a Codex agent
        "open_weight_distilled",  # a local open-weight model condensing existing memories
        "open_weight_generated",  # a local open-weight model's own output (candidate band)
        "unknown",  # not recorded (every memory written before the axis)
    }
)
PROVENANCE_EVENTS: frozenset[str] = frozenset({"assign", "witness"})
WITNESS_SIGNALS: frozenset[str] = frozenset(
    {
        "user_correction",  # a person corrected or confirmed it
        "tool_outcome",  # a tool result bore it out
        "router_hit_rate",  # the router's hit rate moved with it
    }
)


class ProvenanceEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """``assign``: memory ``id`` was written by ``provenance``, in the candidate band
    when ``candidate``. ``witness``: candidate ``id`` is promoted by ``signal``
    (``note``: what closed the loop, e.g. the correcting message's id)."""

    op_type: ClassVar[OpType] = OpType.ProvenanceEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {
        "event": PROVENANCE_EVENTS,
        "provenance": PROVENANCES,
        "signal": WITNESS_SIGNALS,
    }

    event: str
    id: U64
    at_ms: I64
    provenance: str | None = None
    candidate: bool = False
    signal: str | None = None
    note: str | None = None
