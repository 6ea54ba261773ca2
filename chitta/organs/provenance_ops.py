"""The provenance organ's operations: witness a candidate, read a memory's
provenance, list the candidate band, and the reconciler's ``reconcile_all``.

``witness_memory`` is offered to Python, the daemon and ``chitta call`` but not to
MCP: a model client could otherwise lift its own quarantine (docs/PROVENANCE.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.organs.contract import Operation

if TYPE_CHECKING:
    from chitta.organs.provenance import ProvenanceOrgan

__all__ = ["OPERATIONS"]

MAX_NOTE_CHARS = 1024
MAX_LIMIT = 10_000


def _view(organ: ProvenanceOrgan, mid: int) -> dict[str, Any]:
    return {
        "id": mid,
        "provenance": organ.provenance(mid),
        "candidate": organ.is_candidate(mid),
        "witnesses": [
            {"signal": s, "at": t / 1000.0, "note": n} for s, t, n in organ.witnesses.get(mid, [])
        ],
    }


def _witness(
    organ: ProvenanceOrgan, ctx: Any, *, id: int, signal: str, note: str | None = None
) -> dict[str, Any]:
    from chitta.policies import provenance as policy

    sig = policy.signal(signal)
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE_CHARS):
        raise InvalidArgument(f"note must be a str of at most {MAX_NOTE_CHARS} characters")
    mid = ctx.core.live_id(id)  # NotFound for an unknown or forgotten id
    if not organ.is_candidate(mid):
        raise InvalidArgument(
            f"memory {mid} is not a candidate (provenance {organ.provenance(mid)}, "
            "established); only candidates are witnessed. List them with candidates"
        )
    ctx.commit(
        ops.ProvenanceEvent(event="witness", id=mid, at_ms=ctx.now_ms(), signal=sig, note=note)
    )
    return _view(organ, mid)


def _of(organ: ProvenanceOrgan, ctx: Any, *, id: int) -> dict[str, Any]:
    return _view(organ, ctx.core.live_id(id))


def _candidates(organ: ProvenanceOrgan, ctx: Any, *, limit: int = 100) -> dict[str, Any]:
    live = ctx.core.memories.is_live
    ids = sorted(m for m in organ.candidates if live(m))
    return {
        "candidates": [_view(organ, m) for m in ids[:limit]],
        "total": len(ids),
    }


def _reconcile(organ: ProvenanceOrgan, ctx: Any) -> dict[str, Any]:
    from chitta.policies import reconcile

    return reconcile.reconcile_all(ctx).as_dict()


_ID = {
    "type": ["string", "integer"],
    "pattern": "^[0-9]{1,20}$",
    "minimum": 1,
    "description": "a memory id",
}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "witness_memory",
        _witness,
        _obj(
            {
                "id": {**_ID, "description": "the candidate memory to promote"},
                "signal": {
                    "type": "string",
                    "enum": sorted(ops.WITNESS_SIGNALS),
                    "description": "the closed-loop signal that bears it out: user_correction, "
                    "tool_outcome or router_hit_rate",
                },
                "note": {"type": "string", "description": "what closed the loop, e.g. an id"},
            },
            ("id", "signal"),
        ),
        "Promote a candidate memory (open-weight output in quarantine) to established on a "
        "closed-loop signal; logged. Returns its provenance view.",
        writes=True,
        doors=frozenset({"python", "daemon"}),
    ),
    Operation(
        "provenance_of",
        _of,
        _obj({"id": _ID}, ("id",)),
        "Who wrote a memory (human, claude, codex, open_weight_distilled, "
        "open_weight_generated, unknown), whether it is a candidate, and what witnessed it.",
        reads=True,
    ),
    Operation(
        "candidates",
        _candidates,
        _obj(
            {
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "at most this many (default 100)",
                }
            }
        ),
        "List the live memories in the candidate band (not yet witnessed), oldest id first.",
        reads=True,
    ),
    Operation(
        "reconcile_all",
        _reconcile,
        _obj({}),
        "The reconciler R0: every edge the kind-legality matrix forbids and every "
        "candidate-to-established edge (laundering) in the field, with an R1 proposer's "
        "validated proposals when one is installed. Deterministic; no model call.",
        reads=True,  # writes only a proposer's validated proposals (ctx.commit checks)
    ),
)
