"""The debts organ's operations (every door): register, attach evidence, update,
list, auto-resolve. Times at these doors are epoch seconds; ids decimal strings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.ops import checks as v
from chitta.organs.contract import Operation
from chitta.policies import debts as policy

if TYPE_CHECKING:
    from chitta.organs.debts import Debt, DebtsOrgan

MAX_ITEMS = 32  # hypotheses, tests or memory ids of one debt or piece of evidence


def _texts(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_ITEMS:
        raise InvalidArgument(f"{what} must be a list of at most {MAX_ITEMS} texts")
    return tuple(v.text(x, what) for x in value)


def _memories(ctx: Any, value: object) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_ITEMS:
        raise InvalidArgument(f"memory_ids must be a list of at most {MAX_ITEMS} memory ids")
    ids = tuple(v.memory_id(x) for x in value)
    for mid in ids:
        if not ctx.core.memories.is_live(mid):
            raise NotFound(f"no live memory with id {mid}; cite memories the field holds")
    return ids


def _debt(organ: DebtsOrgan, value: object) -> Debt:
    did = v.memory_id(value)
    debt = organ.debts.get(did)
    if debt is None:
        raise NotFound(f"no epistemic debt with id {did}; list them with the debts operation")
    return debt


def _view(d: Debt) -> dict[str, Any]:
    return {
        "id": str(d.id),
        "question": d.question,
        "hypotheses": list(d.hypotheses),
        "tests": list(d.tests),
        "memory_ids": [str(m) for m in d.memory_ids],
        "priority": d.priority,
        "realm": d.realm,
        "status": d.status,
        "resolution": d.resolution,
        "registered": d.at_ms / 1000.0,
        "evidence": [
            {
                "memory_ids": [str(m) for m in p[0]],
                "confidence": p[1],
                "note": p[2],
                "hypothesis": p[3],
            }
            for p in d.evidence
        ],
    }


def _register(
    organ: DebtsOrgan,
    ctx: Any,
    *,
    question: str,
    hypotheses: Any = (),
    tests: Any = (),
    memory_ids: Any = (),
    priority: float = 0.5,
    realm: str | None = None,
) -> dict[str, Any]:
    op = ops.RegisterDebt(
        id=ctx.new_id(),
        question=v.text(question, "question"),
        at_ms=ctx.now_ms(),
        hypotheses=_texts(hypotheses, "hypotheses"),
        tests=_texts(tests, "tests"),
        memory_ids=_memories(ctx, memory_ids),
        priority=v.unit_float(priority, "priority"),
        realm=v.name(realm, "realm"),
    )
    ctx.commit(op)
    return _view(organ.debts[op.id])


def _evidence(
    organ: DebtsOrgan,
    ctx: Any,
    *,
    debt_id: Any,
    memory_ids: Any,
    confidence: Any,
    note: str | None = None,
    hypothesis: int | None = None,
) -> dict[str, Any]:
    debt = _debt(organ, debt_id)
    conf = v.unit_float(confidence, "confidence")
    if hypothesis is not None and (
        isinstance(hypothesis, bool)
        or not isinstance(hypothesis, int)
        or not 0 <= hypothesis < len(debt.hypotheses)
    ):
        raise InvalidArgument(
            f"hypothesis must be an index below {len(debt.hypotheses)} (the debt's hypotheses), "
            f"or omitted for the question as a whole; got {hypothesis!r}"
        )
    ids = _memories(ctx, memory_ids)
    if not ids:
        raise InvalidArgument("evidence cites at least one memory id")
    ctx.commit(
        ops.AttachDebtEvidence(
            debt_id=debt.id,
            memory_ids=ids,
            confidence=conf,
            at_ms=ctx.now_ms(),
            note=v.name(note, "note"),
            hypothesis=hypothesis,
        )
    )
    return _view(debt)


def _update(
    organ: DebtsOrgan,
    ctx: Any,
    *,
    debt_id: Any,
    status: str,
    resolution: str | None = None,
    defer_until: float | None = None,
    priority: float | None = None,
) -> dict[str, Any]:
    debt = _debt(organ, debt_id)
    v.choice(status, ops.DEBT_STATUSES, "status")
    if status == "resolved" and not resolution:
        raise InvalidArgument("a resolved debt needs a resolution: say what the answer is")
    ctx.commit(
        ops.UpdateDebt(
            id=debt.id,
            status=status,
            at_ms=ctx.now_ms(),
            resolution=v.name(resolution, "resolution"),
            defer_until_ms=None if defer_until is None else v.epoch_ms(defer_until, "defer_until"),
            priority=None if priority is None else v.unit_float(priority, "priority"),
        )
    )
    return _view(debt)


def _list(organ: DebtsOrgan, ctx: Any, *, status: str | None = None) -> dict[str, Any]:
    if status is not None:
        v.choice(status, ops.DEBT_STATUSES, "status")
    rows = [_view(d) for _, d in sorted(organ.debts.items()) if status in (None, d.status)]
    return {"debts": rows, "total": len(rows)}


def auto_resolve_if_ready(
    organ: DebtsOrgan, ctx: Any, debt: Debt, threshold: float = policy.RESOLVE_THRESHOLD
) -> bool:
    """Resolve ``debt`` (an UpdateDebt with a readable resolution) when its evidence
    meets ``threshold``; returns whether it did."""
    if debt.status not in ("open", "deferred"):
        return False
    evidence = [(p[1], p[3], p[0]) for p in debt.evidence]
    verdict = policy.ready(debt.hypotheses, evidence, threshold)
    if verdict is None:
        return False
    text = policy.resolution_text(debt.hypotheses, verdict)
    ctx.commit(ops.UpdateDebt(id=debt.id, status="resolved", at_ms=ctx.now_ms(), resolution=text))
    return True


def scan(organ: DebtsOrgan, ctx: Any, threshold: float = policy.RESOLVE_THRESHOLD) -> int:
    """Maintenance: auto-resolve every ready debt; returns how many it resolved."""
    return sum(
        auto_resolve_if_ready(organ, ctx, d, threshold) for _, d in sorted(organ.debts.items())
    )


def _auto(
    organ: DebtsOrgan, ctx: Any, *, threshold: float = policy.RESOLVE_THRESHOLD
) -> dict[str, Any]:
    return {"resolved": scan(organ, ctx, v.unit_float(threshold, "threshold"))}


_ID = {"type": ["string", "integer"], "description": "the debt's id (debt_register returned it)"}
_MIDS = {"type": "array", "items": {"type": ["string", "integer"]}, "maxItems": MAX_ITEMS}
_TEXTS = {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ITEMS}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_STATUS = {"type": "string", "enum": sorted(ops.DEBT_STATUSES)}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "debt_register",
        _register,
        _obj(
            {
                "question": {"type": "string", "description": "the open question"},
                "hypotheses": {**_TEXTS, "description": "competing answers"},
                "tests": {**_TEXTS, "description": "checks that would tell the hypotheses apart"},
                "memory_ids": {**_MIDS, "description": "memories the question arose from"},
                "priority": _UNIT,
                "realm": {"type": "string"},
            },
            ["question"],
        ),
        "Register an epistemic debt: an open question with competing hypotheses "
        "and discriminating tests. Returns the debt with its id.",
        writes=True,
    ),
    Operation(
        "debt_evidence",
        _evidence,
        _obj(
            {
                "debt_id": _ID,
                "memory_ids": {**_MIDS, "description": "memories that are the evidence"},
                "confidence": {**_UNIT, "description": "how strongly they bear on it, 0-1"},
                "note": {"type": "string"},
                "hypothesis": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "index of the hypothesis supported; omit: the question",
                },
            },
            ["debt_id", "memory_ids", "confidence"],
        ),
        "Attach evidence (memory ids and a confidence "
        "in [0, 1]) to an epistemic debt, optionally for one of its hypotheses.",
        writes=True,
    ),
    Operation(
        "debt_update",
        _update,
        _obj(
            {
                "debt_id": _ID,
                "status": _STATUS,
                "resolution": {"type": "string"},
                "defer_until": {"type": "number", "description": "epoch seconds"},
                "priority": _UNIT,
            },
            ["debt_id", "status"],
        ),
        "Resolve, defer, abandon or reopen an epistemic debt "
        "(a resolution is required to resolve).",
        writes=True,
    ),
    Operation(
        "debts",
        _list,
        _obj({"status": _STATUS}, []),
        "List epistemic debts with their hypotheses, tests, evidence and status.",
        reads=True,
    ),
    Operation(
        "debt_auto_resolve",
        _auto,
        _obj({"threshold": _UNIT}, []),
        "Resolve every open debt whose evidence reaches the threshold (default 0.70); "
        "returns how many were resolved.",
        writes=True,
        idempotent=True,  # a repeat finds them resolved
    ),
)
