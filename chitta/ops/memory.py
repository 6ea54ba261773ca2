"""Payloads of the ops that change memories: content, state, tiers, edges, codes."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from chitta.ops.base import I64, U32, U64, OpBase, OpType

__all__ = [
    "EDGE_KINDS",
    "MEMORY_KINDS",
    "AddAssocEdge",
    "DeleteMemory",
    "DemoteMemory",
    "PutPayload",
    "TrainPQ",
    "UpdateMemoryContent",
    "UpdateResidualPQ",
    "UpdateSparseCode",
    "UpdateSparseCodeU8",
    "UpdateState",
]

MEMORY_KINDS: frozenset[str] = frozenset(
    {
        "observation",  # a recorded external fact (the default)
        "thought",  # speculation or synthesis
        "decision",  # a chosen action with its rationale
        "code_fact",  # about a symbol, call graph, file or type
        "alias",  # the plain-language twin of a compact (triplet-form) memory
        "lesson",  # a principle drawn from a failed episode
        "episode",  # a condensed stretch of a transcript
        "wisdom",  # a promoted recurring pattern
    }
)
"""Values of ``PutPayload.kind``."""

EDGE_KINDS: frozenset[str] = frozenset(
    {
        "DerivedFrom",  # src was made from dst
        "SameSession",  # written in the same session
        "CoRetrieved",  # returned together by one recall
        "Contradicts",  # src disputes dst (suppresses dst in scoring)
        "Supports",  # src is evidence for dst
        "Supersedes",  # src replaces dst
        "Confirms",  # src re-observes dst
        "AliasOf",  # src is the plain-language twin of dst
        "RelatedTo",  # untyped association
    }
)
"""Values of ``AddAssocEdge.edge``."""


class PutPayload(OpBase, frozen=True, kw_only=True, array_like=True):
    """Store a new memory with its content, embedding, metadata and artifact refs.

    ``embedding`` is little-endian float32 bytes; ``artifacts`` are normalised
    paths registered with ``UpsertArtifact``.
    """

    op_type: ClassVar[OpType] = OpType.PutPayload
    enums: ClassVar[dict[str, frozenset[str]]] = {"kind": MEMORY_KINDS}

    id: U64
    text: str
    kind: str = "observation"
    created_ms: I64 = 0
    realm: str | None = None
    session: str | None = None
    source_tool: str | None = None
    harness: str | None = None
    tags: tuple[str, ...] = ()
    confidence: float = 1.0
    strength: float = 1.0
    embedding: bytes | None = None
    meta: dict[str, Any] | None = None
    artifacts: tuple[str, ...] = ()
    written_ms: I64 = (
        0  # when the write happened (created_ms is when the event happened); 0: unknown
    )


class UpdateState(OpBase, frozen=True, kw_only=True, array_like=True):
    """Adjust strength, confidence or decay rate, or touch (record an access).

    ``None`` leaves a value as it is; ``touch`` sets last access to ``at_ms``
    and counts one access.
    """

    op_type: ClassVar[OpType] = OpType.UpdateState

    id: U64
    at_ms: I64
    strength: float | None = None
    confidence: float | None = None
    decay_rate: float | None = None
    touch: bool = False


class DeleteMemory(OpBase, frozen=True, kw_only=True, array_like=True):
    """Soft-delete a memory at ``at_ms``."""

    op_type: ClassVar[OpType] = OpType.DeleteMemory

    id: U64
    at_ms: I64


class AddAssocEdge(OpBase, frozen=True, kw_only=True, array_like=True):
    """Add a typed association edge ``src -> dst`` (``edge`` in ``EDGE_KINDS``)."""

    op_type: ClassVar[OpType] = OpType.AddAssocEdge
    enums: ClassVar[dict[str, frozenset[str]]] = {"edge": EDGE_KINDS}

    src: U64
    dst: U64
    edge: str
    weight: float = 1.0
    at_ms: I64 = 0


class UpdateSparseCode(OpBase, frozen=True, kw_only=True, array_like=True):
    """Store the sparse code of a memory.

    ``features`` are the active feature ids (ascending); ``activations`` holds
    one little-endian float32 per feature; ``encoder_version`` names the
    encoder that produced the code (stale codes are re-encoded).
    """

    op_type: ClassVar[OpType] = OpType.UpdateSparseCode

    id: U64
    features: tuple[U32, ...]
    activations: bytes
    encoder_version: U32 = 0


class UpdateSparseCodeU8(OpBase, frozen=True, kw_only=True, array_like=True):
    """The sparse code of a memory, packed (op 68; ``UpdateSparseCode`` in ~200 bytes
    instead of ~460 at 64 features).

    ``feature_deltas``: one little-endian u16 per feature, the first feature id and
    then each id minus the one before (ids ascending, unique: every later delta >= 1).
    ``levels``: one u8 per feature. The activation of feature ``i`` is
    ``float32(levels[i]) * float32(scale)``, one float32 product: that value, not
    the encoder's float32, is what the field applies, live and on replay.
    ``features`` and ``activations`` give the code as ``UpdateSparseCode`` holds it.
    """

    op_type: ClassVar[OpType] = OpType.UpdateSparseCodeU8

    id: U64
    feature_deltas: bytes
    levels: bytes
    scale: float
    encoder_version: U32 = 0

    @property
    def features(self) -> tuple[int, ...]:
        """The feature ids (ascending)."""
        return tuple(np.cumsum(np.frombuffer(self.feature_deltas, "<u2"), dtype=np.uint64).tolist())

    @property
    def activations(self) -> bytes:
        """One little-endian float32 per feature (the dequantised levels)."""
        levels = np.frombuffer(self.levels, np.uint8).astype(np.float32)
        return (levels * np.float32(self.scale)).astype("<f4").tobytes()


class DemoteMemory(OpBase, frozen=True, kw_only=True, array_like=True):
    """Move a memory to decay tier ``tier`` (0 = hottest; larger = colder)."""

    op_type: ClassVar[OpType] = OpType.DemoteMemory

    id: U64
    tier: int
    at_ms: I64


class TrainPQ(OpBase, frozen=True, kw_only=True, array_like=True):
    """Persist trained product-quantiser codebooks.

    ``codebooks`` is little-endian float32, laid out
    ``[subquantizer][centroid][dim // subquantizers]``.
    """

    op_type: ClassVar[OpType] = OpType.TrainPQ

    version: U32
    dim: U32
    subquantizers: U32
    bits: U32
    codebooks: bytes
    trained_ms: I64 = 0
    sample_count: U64 = 0


class UpdateResidualPQ(OpBase, frozen=True, kw_only=True, array_like=True):
    """Store the PQ residual codes of one memory (one byte per subquantizer)."""

    op_type: ClassVar[OpType] = OpType.UpdateResidualPQ

    id: U64
    codes: bytes
    pq_version: U32 = 0


class UpdateMemoryContent(OpBase, frozen=True, kw_only=True, array_like=True):
    """Replace content and/or embedding of an existing memory in place.

    ``None`` leaves a value as it is (so ``tags=()`` clears the tags).
    """

    op_type: ClassVar[OpType] = OpType.UpdateMemoryContent

    id: U64
    at_ms: I64
    text: str | None = None
    embedding: bytes | None = None
    tags: tuple[str, ...] | None = None
    meta: dict[str, Any] | None = None
