"""Payloads of the knowledge ops: file artifacts, graph triplets, logic facts."""

from __future__ import annotations

from typing import ClassVar

from chitta.ops.base import I64, U64, OpBase, OpType

__all__ = [
    "AddTriplet",
    "AssertFact",
    "InvalidateTriplet",
    "RetractFact",
    "UpsertArtifact",
]


class UpsertArtifact(OpBase, frozen=True, kw_only=True, array_like=True):
    """Register (or update) a file artifact, keyed by its normalised ``path``.

    ``repo_root`` is the repository the path lives in; ``content_hash`` lets a
    staleness check notice the file changed after a memory cited it.
    """

    op_type: ClassVar[OpType] = OpType.UpsertArtifact

    path: str
    repo_root: str | None = None
    content_hash: str | None = None
    at_ms: I64 = 0


class AddTriplet(OpBase, frozen=True, kw_only=True, array_like=True):
    """Add a knowledge-graph triplet ``(subject, predicate, object)``.

    A triplet is keyed by the three strings: adding one that exists reinforces
    its weight. ``valid_from_ms`` is when the fact became true (valid time);
    ``recorded_ms`` is when the field learned it (record time, the writer's clock).
    """

    op_type: ClassVar[OpType] = OpType.AddTriplet

    subject: str
    predicate: str
    object: str
    weight: float = 1.0
    valid_from_ms: I64 = 0
    source_memory_id: U64 | None = None
    confidence: float = 1.0
    recorded_ms: I64 = 0


class InvalidateTriplet(OpBase, frozen=True, kw_only=True, array_like=True):
    """Mark the triplet ``(subject, predicate, object)`` superseded at ``at_ms``.

    ``at_ms`` is the valid time it stopped being true; ``recorded_ms`` when the
    field learned that (record time). ``reason`` says why (a superseding fact,
    ``"refuted_by:<rule>"``, ...).
    """

    op_type: ClassVar[OpType] = OpType.InvalidateTriplet

    subject: str
    predicate: str
    object: str
    at_ms: I64
    reason: str | None = None
    recorded_ms: I64 = 0


class AssertFact(OpBase, frozen=True, kw_only=True, array_like=True):
    """Assert a logic fact ``predicate(args...)`` into the constraint store."""

    op_type: ClassVar[OpType] = OpType.AssertFact

    id: U64
    predicate: str
    args: tuple[str, ...] = ()
    at_ms: I64 = 0
    source_memory_id: U64 | None = None
    confidence: float = 1.0


class RetractFact(OpBase, frozen=True, kw_only=True, array_like=True):
    """Retract the constraint fact ``id`` at ``at_ms``."""

    op_type: ClassVar[OpType] = OpType.RetractFact

    id: U64
    at_ms: I64
