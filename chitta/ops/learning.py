"""Payloads of the learning ops: surprise, epistemic debts, source weights,
surprise credit, wisdom candidates, the scorer model and the sparse encoder.

Per DESIGN.md, learning that changes shared state is logged as its result
(absolute values), so replay applies it without re-deriving it.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from chitta.ops.base import I64, U32, U64, OpBase, OpType

__all__ = [
    "DEBT_STATUSES",
    "WISDOM_STAGES",
    "AttachDebtEvidence",
    "FactorDelta",
    "RecordFeedback",
    "RecordSurprise",
    "RegisterDebt",
    "UpdateDebt",
    "UpdateScorerModel",
    "UpdateSourceWeight",
    "UpdateSparseEncoder",
    "UpdateSurpriseCredit",
    "UpdateWisdomLifecycle",
    "UpsertWisdomCandidate",
]

DEBT_STATUSES = frozenset({"open", "deferred", "resolved", "abandoned"})
WISDOM_STAGES = frozenset({"candidate", "provisional", "trusted", "demoted"})


class RecordSurprise(OpBase, frozen=True, kw_only=True, array_like=True):
    """A prediction error: ``expected`` vs ``actual`` outcome, magnitude ``surprise`` in [0, 1].

    ``source`` is what made the prediction (a tool name, a rule);
    ``memory_ids`` are the memories the prediction rested on.
    """

    op_type: ClassVar[OpType] = OpType.RecordSurprise

    expected: str
    actual: str
    surprise: float
    at_ms: I64
    source: str | None = None
    memory_ids: tuple[U64, ...] = ()
    latency_ms: I64 | None = None
    expected_latency_ms: I64 | None = None
    uncertainty: float | None = None
    session: str | None = None


class RegisterDebt(OpBase, frozen=True, kw_only=True, array_like=True):
    """Register an epistemic debt: an open ``question`` with competing
    ``hypotheses`` and the ``tests`` that would tell them apart."""

    op_type: ClassVar[OpType] = OpType.RegisterDebt

    id: U64
    question: str
    at_ms: I64
    hypotheses: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    memory_ids: tuple[U64, ...] = ()
    priority: float = 0.5
    realm: str | None = None


class UpdateDebt(OpBase, frozen=True, kw_only=True, array_like=True):
    """Set a debt's status (resolve, defer, abandon, reopen).

    ``resolution`` is the human-readable answer when resolved;
    ``defer_until_ms`` when deferred; ``priority`` replaces the old one if set.
    """

    op_type: ClassVar[OpType] = OpType.UpdateDebt
    enums: ClassVar[dict[str, frozenset[str]]] = {"status": DEBT_STATUSES}

    id: U64
    status: str
    at_ms: I64
    resolution: str | None = None
    defer_until_ms: I64 | None = None
    priority: float | None = None


class AttachDebtEvidence(OpBase, frozen=True, kw_only=True, array_like=True):
    """Attach evidence (memories + confidence) to debt ``debt_id``.

    ``hypothesis`` is the index in the debt's ``hypotheses`` the evidence
    supports (None: bears on the question as a whole).
    """

    op_type: ClassVar[OpType] = OpType.AttachDebtEvidence

    debt_id: U64
    memory_ids: tuple[U64, ...]
    confidence: float
    at_ms: I64
    note: str | None = None
    hypothesis: U32 | None = None


class UpdateSourceWeight(OpBase, frozen=True, kw_only=True, array_like=True):
    """Set the learned recall weight of a ``(domain, source)`` pair.

    ``alpha``/``beta`` are the Beta posterior (useful + 1, not useful + 1) the
    weight was computed from. Tool beliefs use ``domain="tool"``.
    """

    op_type: ClassVar[OpType] = OpType.UpdateSourceWeight

    domain: str
    source: str
    weight: float
    at_ms: I64
    alpha: float = 1.0
    beta: float = 1.0


class RecordFeedback(OpBase, frozen=True, kw_only=True, array_like=True):
    """Record whether a recall source was useful for ``domain`` (``note``: the
    caller's words on why, added later)."""

    op_type: ClassVar[OpType] = OpType.RecordFeedback

    domain: str
    source: str
    useful: bool
    at_ms: I64
    memory_id: U64 | None = None
    query: str | None = None
    session: str | None = None
    note: str | None = None


class UpdateSurpriseCredit(OpBase, frozen=True, kw_only=True, array_like=True):
    """Persist a memory's surprise-credit state after the hysteresis gate.

    ``streak`` is signed: +n for n same-direction positive signals, -n for
    negative ones. ``strength_delta`` is what the gate applied (0 if it held).
    """

    op_type: ClassVar[OpType] = OpType.UpdateSurpriseCredit

    id: U64
    credit: float
    streak: int
    at_ms: I64
    strength_delta: float = 0.0
    surprise: float | None = None


class UpsertWisdomCandidate(OpBase, frozen=True, kw_only=True, array_like=True):
    """Create or update (idempotently, by ``cluster_key``) a wisdom candidate.

    Counts are absolute: ``support`` observations, distinct ``sessions``,
    ``contradictions``; ``score`` is the promotion score.
    """

    op_type: ClassVar[OpType] = OpType.UpsertWisdomCandidate

    cluster_key: str
    statement: str
    at_ms: I64
    support: U32 = 0
    sessions: tuple[str, ...] = ()
    contradictions: U32 = 0
    score: float = 0.0
    evidence: tuple[U64, ...] = ()
    realm: str | None = None


class UpdateWisdomLifecycle(OpBase, frozen=True, kw_only=True, array_like=True):
    """Move a wisdom candidate to ``stage``; on promotion ``memory_id`` is the written memory."""

    op_type: ClassVar[OpType] = OpType.UpdateWisdomLifecycle
    enums: ClassVar[dict[str, frozenset[str]]] = {"stage": WISDOM_STAGES}

    cluster_key: str
    stage: str
    at_ms: I64
    memory_id: U64 | None = None
    reason: str | None = None


class FactorDelta(msgspec.Struct, frozen=True, kw_only=True, array_like=True, gc=False):
    """One scoring factor's learned weight delta, clamped to ``[min_delta, max_delta]``."""

    factor: str
    delta: float
    min_delta: float
    max_delta: float


class UpdateScorerModel(OpBase, frozen=True, kw_only=True, array_like=True):
    """An atomic snapshot of the learned scoring model (replaces the previous one).

    ``model_version`` increases monotonically; ``baseline_version`` names the
    static scoring config the deltas were learned against (a mismatch marks
    them stale). ``ewma_loss`` and ``outcome_count`` track calibration.
    """

    op_type: ClassVar[OpType] = OpType.UpdateScorerModel

    model_version: U64
    baseline_version: U32
    at_ms: I64
    factors: tuple[FactorDelta, ...] = ()
    ewma_loss: float = 0.0
    outcome_count: U64 = 0


class UpdateSparseEncoder(OpBase, frozen=True, kw_only=True, array_like=True):
    """One state of the learned sparse encoder (``chitta.encode.sparse``).

    ``version`` 0 with no rows is the initial op: it defines the shape
    (``n_features`` atoms of ``dim`` floats, ``active`` winners per code) and
    the ``seed`` of the random initial atoms. Version ``v >= 1`` is the result
    of one learning step applied to version ``v - 1``: ``rows`` are the atom
    ids that changed (ascending, unique) and ``atoms`` their new values,
    little-endian float32, ``len(rows) x dim``, row-major. Replay overwrites
    those rows with these values (nothing is re-derived). ``thresholds``
    (added later, optional): empty = the per-atom thresholds stay as they were
    (all 0 for an encoder whose ops never carried any); else every atom's new
    threshold, little-endian float32, ``n_features`` of them.
    """

    op_type: ClassVar[OpType] = OpType.UpdateSparseEncoder

    version: U32
    dim: U32
    n_features: U32
    seed: U64
    rows: tuple[U32, ...] = ()
    atoms: bytes = b""
    active: U32 = 64
    at_ms: I64 = 0
    thresholds: bytes = b""
