"""The knowledge-graph organ's operations (every door: ``Field.call``, the daemon,
MCP, ``chitta call``): add, invalidate, alias, query, list entities.

Times at these doors are epoch seconds; the ops and the organ keep milliseconds.
Each write records the field's clock as the op's record time (``recorded_ms``).
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.ops import checks
from chitta.organs.contract import Operation

if TYPE_CHECKING:
    from chitta.organs.knowledge import KnowledgeOrgan, Triplet

__all__ = ["OPERATIONS"]

MAX_NAME_CHARS = 1024  # an entity or predicate name
MAX_LIMIT = 1000


def _name(value: object, what: str) -> str:
    from chitta.organs.knowledge import entity_key

    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a str, not {type(value).__name__}")
    if not entity_key(value):
        raise InvalidArgument(f"{what} is empty; give a name with at least one visible character")
    if len(value) > MAX_NAME_CHARS or any(
        unicodedata.category(c) in ("Cc", "Cf", "Cs") and not c.isspace() for c in value
    ):
        raise InvalidArgument(
            f"{what} must be 1-{MAX_NAME_CHARS} printable characters, got {value!r:.80}"
        )
    return value


def _when(value: object, what: str, default: int | None) -> int | None:
    return default if value is None else checks.epoch_ms(value, what)


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000.0


def _row(organ: KnowledgeOrgan, t: Triplet, view: dict[str, Any], classes: Any) -> dict[str, Any]:
    from chitta.organs.knowledge import entity_key

    return {
        "subject": t.subject,
        "predicate": t.predicate,
        "object": t.object,
        "subject_entity": organ.shown_name(entity_key(t.subject), classes),
        "object_entity": organ.shown_name(entity_key(t.object), classes),
        "weight": view["weight"],
        "confidence": view["confidence"],
        "valid_from": _seconds(view["valid_from_ms"]),
        "invalidated_at": _seconds(view["invalidated_at_ms"]),
        "recorded_at": _seconds(view["recorded_ms"]),
        "source_memory_ids": view["source_memory_ids"],
    }


def _pick(
    organ: KnowledgeOrgan, found: list[tuple[Triplet, dict[str, Any]]], names: tuple[str, ...]
) -> list[tuple[Triplet, dict[str, Any]]]:
    """``found`` narrowed to the triplet spelled ``names`` when it is among them."""
    from chitta.organs.knowledge import entity_key, predicate_key

    want = (entity_key(names[0]), predicate_key(names[1]), entity_key(names[2]))
    exact = [(t, v) for t, v in found if organ.triplets.get(want) is t]
    return exact or found


def _one(organ: KnowledgeOrgan, subject: str, predicate: str, obj: str) -> dict[str, Any]:
    """The triplet just added, as the latest view sees it (``current`` False when a
    known invalidation already covers the new assertion)."""
    from chitta.organs.knowledge import entity_key, predicate_key

    t = organ.triplets[(entity_key(subject), predicate_key(predicate), entity_key(obj))]
    view = t.view(None, None)
    if view is None:
        return {
            "subject": t.subject,
            "predicate": t.predicate,
            "object": t.object,
            "current": False,
        }
    return {**_row(organ, t, view, organ.classes()), "current": True}


def _add(
    organ: KnowledgeOrgan,
    ctx: Any,
    *,
    subject: str,
    predicate: str,
    object: str,
    weight: float = 1.0,
    confidence: float = 1.0,
    valid_from: float | None = None,
    source_memory_id: int | None = None,
) -> dict[str, Any]:
    now = ctx.now_ms()
    op = ops.AddTriplet(
        subject=_name(subject, "subject"),
        predicate=_name(predicate, "predicate"),
        object=_name(object, "object"),
        weight=checks.non_negative_float(weight, "weight"),
        valid_from_ms=_when(valid_from, "valid_from", now) or 0,
        source_memory_id=None if source_memory_id is None else checks.memory_id(source_memory_id),
        confidence=checks.unit_float(confidence, "confidence"),
        recorded_ms=now,
    )
    ctx.commit(op)
    return _one(organ, subject, predicate, object)


def _alias(
    organ: KnowledgeOrgan, ctx: Any, *, alias: str, canonical: str, valid_from: float | None = None
) -> dict[str, Any]:
    from chitta.organs.knowledge import ALIAS_OF, entity_key

    if entity_key(_name(alias, "alias")) == entity_key(_name(canonical, "canonical")):
        raise InvalidArgument(f"{alias!r} and {canonical!r} are already the same entity")
    since = 0.0 if valid_from is None else valid_from  # a name holds since always by default
    return _add(organ, ctx, subject=alias, predicate=ALIAS_OF, object=canonical, valid_from=since)


def _invalidate(
    organ: KnowledgeOrgan,
    ctx: Any,
    *,
    subject: str,
    predicate: str,
    object: str,
    at: float | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    for value, what in ((subject, "subject"), (predicate, "predicate"), (object, "object")):
        _name(value, what)
    now = ctx.now_ms()
    at_ms = _when(at, "at", now) or 0
    found = _pick(organ, organ.query(subject, predicate, object), (subject, predicate, object))
    if not found:
        raise InvalidArgument(
            f"no current triplet ({subject!r}, {predicate!r}, {object!r}) to invalidate; "
            "list them with kg_query (an invalidated one stays invalidated)"
        )
    if len(found) > 1:
        raise InvalidArgument(
            f"({subject!r}, {predicate!r}, {object!r}) matches {len(found)} triplets through "
            "aliases; name the triplet with its own subject and object"
        )
    t, view = found[0]
    if at_ms < view["valid_from_ms"]:
        raise InvalidArgument(
            f"at={at_ms / 1000} is before the triplet became valid "
            f"({view['valid_from_ms'] / 1000}); give a later time"
        )
    ctx.commit(
        ops.InvalidateTriplet(
            subject=t.subject,
            predicate=t.predicate,
            object=t.object,
            at_ms=at_ms,
            reason=checks.name(reason, "reason"),
            recorded_ms=now,
        )
    )
    return {**_row(organ, t, view, organ.classes()), "invalidated_at": at_ms / 1000.0}


def _query(
    organ: KnowledgeOrgan,
    ctx: Any,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object: str | None = None,
    as_of: float | None = None,
    known_at: float | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    for value, what in ((subject, "subject"), (predicate, "predicate"), (object, "object")):
        if value is not None:
            _name(value, what)
    t_ms, k_ms = _when(as_of, "as_of", None), _when(known_at, "known_at", None)
    found = organ.query(subject, predicate, object, as_of=t_ms, known_at=k_ms)
    classes = organ.classes(t_ms, k_ms)
    rows = [_row(organ, t, view, classes) for t, view in found[:limit]]
    return {"triplets": rows, "total": len(found)}


def _entities(
    organ: KnowledgeOrgan, ctx: Any, *, prefix: str = "", limit: int = 100
) -> dict[str, Any]:
    from chitta.organs.knowledge import entity_key

    if not isinstance(prefix, str):
        raise InvalidArgument(f"prefix must be a str, not {type(prefix).__name__}")
    want = entity_key(prefix)
    classes = organ.classes()
    groups: dict[str, list[str]] = {}
    for key in organ.names:
        groups.setdefault(classes.get(key, key), []).append(key)
    counts: dict[str, int] = {}
    for t, _view in organ.query():
        for key in {classes.get(k, k) for k in (entity_key(t.subject), entity_key(t.object))}:
            counts[key] = counts.get(key, 0) + 1
    rows = [
        {
            "name": organ.names.get(shown, shown),
            "key": shown,
            "aliases": [organ.names[m] for m in sorted(group) if m != shown],
            "triplets": counts.get(shown, 0),
        }
        for shown, group in sorted(groups.items())
        if any(m.startswith(want) for m in group)
    ]
    return {"entities": rows[:limit], "total": len(rows)}


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _epoch(description: str) -> dict[str, Any]:
    return {"type": "number", "description": description + " (epoch seconds)"}


_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
_TRIPLE = {
    "subject": _text("the entity the fact is about, e.g. 'Jeff'"),
    "predicate": _text("the relation, e.g. 'uses' or 'works at'"),
    "object": _text("the other entity or value, e.g. 'Rust'"),
}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "kg_add",
        _add,
        {
            "type": "object",
            "properties": {
                **_TRIPLE,
                "weight": {"type": "number", "minimum": 0, "description": "added to the weight"},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "valid_from": _epoch("when the fact became true; default now"),
                "source_memory_id": {"type": "integer", "description": "the memory it came from"},
            },
            "required": ["subject", "predicate", "object"],
            "additionalProperties": False,
        },
        "Record a fact (subject, predicate, object) in the knowledge graph; repeating "
        "a fact reinforces its weight. Returns the triplet as now stored.",
        writes=True,
    ),
    Operation(
        "kg_invalidate",
        _invalidate,
        {
            "type": "object",
            "properties": {
                **_TRIPLE,
                "at": _epoch("when the fact stopped being true; default now"),
                "reason": _text("why, e.g. 'moved to Berlin'"),
            },
            "required": ["subject", "predicate", "object"],
            "additionalProperties": False,
        },
        "Mark a current fact as no longer true from a time on; past queries still see "
        "it. Returns the triplet with its invalidated_at.",
        writes=True,
        idempotent=True,  # a repeat finds no current fact and is refused: nothing more changes
    ),
    Operation(
        "kg_alias",
        _alias,
        {
            "type": "object",
            "properties": {
                "alias": _text("another name of the entity, e.g. 'JS'"),
                "canonical": _text("the entity's main name, e.g. 'JavaScript'"),
                "valid_from": _epoch("when the alias became valid; default: always"),
            },
            "required": ["alias", "canonical"],
            "additionalProperties": False,
        },
        "Declare that two names are one entity (stored as an alias_of triplet); queries "
        "for either then match both.",
        writes=True,
    ),
    Operation(
        "kg_query",
        _query,
        {
            "type": "object",
            "properties": {
                **{
                    k: {**v, "description": v["description"] + "; omit for any"}
                    for k, v in _TRIPLE.items()
                },
                "as_of": _epoch("facts true at this time; default: the current facts"),
                "known_at": _epoch("as the field knew them at this time; default: all known"),
                "limit": {**_LIMIT, "description": "at most this many triplets (default 50)"},
            },
            "additionalProperties": False,
        },
        "Find knowledge-graph facts by subject, predicate and/or object (names match "
        "regardless of case, spacing and aliases), optionally as they held at a past "
        "time (as_of) or as known at a past time (known_at). Returns triplets, heaviest first.",
        reads=True,
    ),
    Operation(
        "kg_entities",
        _entities,
        {
            "type": "object",
            "properties": {
                "prefix": _text("only entities with a name starting with this"),
                "limit": {**_LIMIT, "description": "at most this many entities (default 100)"},
            },
            "additionalProperties": False,
        },
        "List the knowledge graph's entities with their aliases and how many current "
        "facts name them.",
        reads=True,
    ),
)
