"""Op type codes, the payload base class and the shared field types.

Every payload is a frozen, keyword-only ``msgspec.Struct`` encoded as a
positional msgpack array (``array_like``): field order is the on-disk format.
See ``docs/OPS.md`` for the evolution rules.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated, ClassVar

import msgspec

__all__ = [
    "I64",
    "U32",
    "U64",
    "OpBase",
    "OpType",
]


class OpType(enum.IntEnum):
    """The op type byte of a segment record.

    Codes 0-29 and 39-48 follow the seed's Op table; 30-38 are unassigned and
    decode as an unknown op type. 49 is the curated layer's event (seed 001 names
    no op), 64 chitta's atomic group, 65 its learned sparse encoder state, 66
    field-wide settings (ConfigureField), 67 the provenance axis, 68 the packed
    sparse code (UpdateSparseCodeU8).
    """

    PutPayload = 0
    UpdateState = 1
    DeleteMemory = 2
    AddAssocEdge = 3
    UpsertArtifact = 4
    AddTriplet = 5
    InvalidateTriplet = 6
    UpsertSymbol = 7
    RemoveSymbol = 8
    AddSymCallEdge = 9
    RemoveSymCallEdge = 10
    UpsertCodeFile = 11
    UpdateSparseCode = 12
    DemoteMemory = 13
    TrainPQ = 14
    UpdateResidualPQ = 15
    SessionEvent = 16
    TranscriptEvent = 17
    TaskEvent = 18
    UserModelEvent = 19
    ThemeEvent = 20
    AnalyticsEvent = 21
    ClearProject = 22
    UpdateSymbolDescription = 23
    UpdateMemoryContent = 24
    AssertFact = 25
    RetractFact = 26
    BranchEvent = 27
    TriggerEvent = 28
    PredictorEvent = 29
    RecordSurprise = 39
    RegisterDebt = 40
    UpdateDebt = 41
    UpdateSourceWeight = 42
    RecordFeedback = 43
    UpdateSurpriseCredit = 44
    UpsertWisdomCandidate = 45
    UpdateWisdomLifecycle = 46
    UpdateScorerModel = 47
    AttachDebtEvidence = 48
    CuratedEvent = 49
    Batch = 64
    UpdateSparseEncoder = 65
    ConfigureField = 66
    ProvenanceEvent = 67
    UpdateSparseCodeU8 = 68


# Field types. msgpack carries integers up to 2**64-1, so an unsigned id needs
# only a lower bound here; msgspec cannot express an upper bound above int64.
U64 = Annotated[int, msgspec.Meta(ge=0)]
"""An unsigned 64-bit id (memory, debt, theme, ...)."""

U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
"""An unsigned 32-bit number (sparse feature ids, versions, counts)."""

I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""A signed 64-bit number; every ``*_ms`` field (Unix epoch milliseconds)."""


class OpBase(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    array_like=True,
    gc=False,
    forbid_unknown_fields=False,
):
    """Base of every op payload.

    ``forbid_unknown_fields=False`` is load-bearing: with ``array_like`` it
    makes msgspec ignore trailing array elements it has no field for, so a
    record from a newer writer (with extra optional fields) still decodes.
    ``gc=False``: decoded ops hold no reference cycles, and replay creates
    millions of them.

    ``enums`` names the string fields whose values must come from a documented
    set; :func:`chitta.ops.validate` checks them (the decoder does not, so an
    older reader can still replay a value a newer writer added).
    """

    op_type: ClassVar[OpType]
    enums: ClassVar[Mapping[str, frozenset[str]]] = {}
