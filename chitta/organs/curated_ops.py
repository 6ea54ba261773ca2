"""The curated organ's operations (every door through the method table; the
vocabulary's writes are not offered to MCP, the model-facing door: the
vocabulary is closed to any model).

Handlers check their input and raise chitta.errors before anything is written;
the stages themselves live in chitta/curated/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.curated import facts as F
from chitta.curated import pins, read_path, ulid, vocabulary_ops, write_path
from chitta.curated.paths import NAME_PATTERN
from chitta.curated.vocabulary import DEFAULT_LIMITS
from chitta.errors import InvalidArgument, NotFound
from chitta.organs.contract import Maintenance, Operation

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["MAINTENANCE", "OPERATIONS"]

_NO_MODEL = frozenset({"python", "daemon"})


def _remember(
    organ: CuratedOrgan,
    ctx: Any,
    *,
    body: str,
    kind: str = "fact",
    fields: dict[str, Any] | None = None,
    scope: str = "project",
    paths: list[str] | None = None,
    disputes: str | None = None,
    provenance: str = "machine",
) -> dict[str, Any]:
    capture_id = write_path.capture(
        organ,
        ctx,
        body=body,
        kind=kind,
        fields=fields,
        scope=scope,
        paths=paths,
        disputes=disputes,
        provenance=provenance,
    )
    return write_path.file_capture(organ, ctx, capture_id)


def _supersede(
    organ: CuratedOrgan,
    ctx: Any,
    *,
    fact: str,
    body: str,
    kind: str | None = None,
    fields: dict[str, Any] | None = None,
    scope: str | None = None,
    paths: list[str] | None = None,
    provenance: str = "human",
) -> dict[str, Any]:
    old = organ.live(ulid.check(fact, "fact"))
    if old is None:
        raise NotFound(f"no live fact {fact} to supersede")
    capture_id = write_path.capture(
        organ,
        ctx,
        body=body,
        kind=kind or old.kind,
        fields=old.fields if fields is None and kind is None else fields,
        scope=scope or old.scope,
        paths=paths,
        supersedes=fact,
        provenance=provenance,
    )
    return write_path.file_capture(organ, ctx, capture_id)


def _resolve(
    organ: CuratedOrgan, ctx: Any, *, fact: str, other: str, winner: str
) -> dict[str, Any]:
    a, b = ulid.check(fact, "fact"), ulid.check(other, "other")
    if organ.disputes.get(a) != b:
        raise NotFound(f"facts {a} and {b} are not in an open dispute")
    if winner not in (a, b, "both"):
        raise InvalidArgument("winner is one of the two fact ids, or 'both' (both stand)")
    ctx.commit(
        ops.CuratedEvent(event="resolve", key=a, at_ms=ctx.now_ms(), refs=(b,), outcome=winner)
    )
    return {"fact": a, "other": b, "winner": winner, "live": [i for i in (a, b) if organ.live(i)]}


def _catalog(organ: CuratedOrgan, ctx: Any) -> dict[str, Any]:
    text = read_path.catalog(organ)
    return {"text": text.decode(), "bytes": len(text), "budget": organ.limits.catalog_bytes}


def _recall(
    organ: CuratedOrgan, ctx: Any, *, paths: list[str], query: str = "", budget: int | None = None
) -> dict[str, Any]:
    chosen = read_path.chosen(organ, paths)
    return read_path.recall(organ, chosen, query, read_path.budget_of(organ, budget)).as_dict()


def _pin(
    organ: CuratedOrgan,
    ctx: Any,
    *,
    task: str,
    query: str = "",
    paths: list[str] | None = None,
    budget: int | None = None,
    by_task: str | None = None,
) -> dict[str, Any]:
    return pins.pin(organ, ctx, task=task, query=query, paths=paths, budget=budget, by_task=by_task)


def _pinned(organ: CuratedOrgan, ctx: Any, *, task: str) -> dict[str, Any]:
    ids, blob = pins.pinned(organ, task)
    return {"task": task, "ids": list(ids), "text": blob.decode(), "bytes": len(blob)}


def _channel(organ: CuratedOrgan, ctx: Any, *, task: str, role: str) -> dict[str, Any]:
    blob = pins.channel(organ, task, role)
    return {"task": task, "role": role, "channel": "recalled memory", "text": blob.decode()}


def _fact(organ: CuratedOrgan, ctx: Any, *, id: str) -> dict[str, Any]:
    found = organ.facts.get(ulid.check(id))
    if found is None:
        raise NotFound(f"no fact {id}")
    return {**F.fact_dict(found), "disputes": organ.disputes.get(found.id)}


def _export(organ: CuratedOrgan, ctx: Any, *, directory: str) -> dict[str, Any]:
    from chitta.curated.export import export_tree

    return export_tree(organ, directory)


def _import(organ: CuratedOrgan, ctx: Any, *, directory: str) -> dict[str, Any]:
    from chitta.curated.export import import_tree

    return import_tree(organ, ctx, directory)


def _sweep(organ: CuratedOrgan, ctx: Any, *, min_age_s: float = 60.0) -> dict[str, Any]:
    return write_path.sweep(organ, ctx, min_age_ms=int(min_age_s * 1000))


def _sweep_pass(organ: CuratedOrgan, ctx: Any) -> int:
    return len(write_path.sweep(organ, ctx)["filed"])


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_PATH = _s(
    "a topic path 'domain/topic' (or a domain 'domain')",
    pattern=f"{NAME_PATTERN}(/{NAME_PATTERN})?",
)
_ID = _s("a fact id (ULID)", pattern=ulid.ULID_PATTERN)
_PATHS = {
    "type": "array",
    "items": _PATH,
    "maxItems": 64,
    "description": "topic paths from the catalog",
}
_TASK = _s("a task id", pattern=pins.TASK_PATTERN)
_BUDGET = {
    "type": "integer",
    "minimum": 1,
    "maximum": read_path.MAX_RECALL_BYTES,
    "description": "bytes of rendered facts (default: the recall_bytes limit)",
}
_FACT_PROPS = {
    "body": _s("the fact, in a few lines"),
    "kind": _s("its kind", enum=sorted(F.KINDS)),
    "fields": {"type": "object", "description": "the kind's fields (vocabulary_show lists them)"},
    "scope": _s("where it holds", enum=list(F.SCOPE_TIERS)),
    "paths": _PATHS,
    "provenance": _s("who states it", enum=sorted(ops.CURATED_PROVENANCE)),
}
_LIMIT_PROPS = {
    k: {
        "type": "integer" if isinstance(v, int) else "number",
        "minimum": 0 if isinstance(v, float) else 1,
    }
    for k, v in DEFAULT_LIMITS.to_fields().items()
}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "vocabulary_declare",
        vocabulary_ops.declare,
        _obj({"path": _PATH, "descriptor": _s("what belongs there")}, ("path", "descriptor")),
        "Declare a domain or a domain/topic of the curated memory with its descriptor.",
        writes=True,
        doors=_NO_MODEL,
    ),
    Operation(
        "vocabulary_amend",
        vocabulary_ops.amend,
        _obj({"path": _PATH, "descriptor": _s("the new descriptor")}, ("path", "descriptor")),
        "Change the descriptor of a declared domain or topic.",
        writes=True,
        doors=_NO_MODEL,
        idempotent=True,
    ),
    Operation(
        "vocabulary_limits",
        vocabulary_ops.limits,
        _obj(_LIMIT_PROPS),
        "Set the curated memory's caps, budgets and admission floors; returns them all.",
        writes=True,
        doors=_NO_MODEL,
        idempotent=True,
    ),
    Operation(
        "vocabulary_show",
        vocabulary_ops.show,
        _obj({}),
        "The curated vocabulary: domains, topics with fact counts, limits, fact kinds, scopes.",
        reads=True,
    ),
    Operation(
        "memory_remember",
        _remember,
        _obj(
            {**_FACT_PROPS, "disputes": {**_ID, "description": "a fact this one disputes"}},
            ("body",),
        ),
        "File a curated fact: captured first, then nominated, classified, admitted and filed "
        "under one primary topic path. Returns the filing.",
        writes=True,
        idempotent=True,  # a repeat is refused (duplicate, gone, or pinned)
    ),
    Operation(
        "memory_supersede",
        _supersede,
        _obj({"fact": _ID, **_FACT_PROPS}, ("fact", "body")),
        "Replace a curated fact with a new version (same paths unless given).",
        writes=True,
        idempotent=True,  # a repeat is refused (duplicate, gone, or pinned)
    ),
    Operation(
        "memory_resolve",
        _resolve,
        _obj(
            {"fact": _ID, "other": _ID, "winner": _s("the fact id that stands, or 'both'")},
            ("fact", "other", "winner"),
        ),
        "End a dispute between two curated facts: one stands (the other retires) or both.",
        writes=True,
        idempotent=True,  # a repeat is refused (duplicate, gone, or pinned)
    ),
    Operation(
        "memory_catalog",
        _catalog,
        _obj({}),
        "Every domain and topic of the curated memory with descriptors: choose paths to recall.",
        reads=True,
    ),
    Operation(
        "memory_recall",
        _recall,
        _obj(
            {"paths": _PATHS, "query": _s("what the task is about"), "budget": _BUDGET}, ("paths",)
        ),
        "The curated facts under the chosen topic paths, most relevant first, within a byte "
        "budget (whole facts only; disputed facts with their other side).",
        reads=True,
    ),
    Operation(
        "memory_pin",
        _pin,
        _obj(
            {
                "task": _TASK,
                "query": _s("the task"),
                "paths": _PATHS,
                "budget": _BUDGET,
                "by_task": {**_TASK, "description": "the task making the call, if any"},
            },
            ("task",),
        ),
        "Pin a task's recall once before its first attempt: stores the ordered ids and bytes.",
        writes=True,
        idempotent=True,  # a repeat is refused (duplicate, gone, or pinned)
    ),
    Operation(
        "memory_pinned",
        _pinned,
        _obj({"task": _TASK}, ("task",)),
        "The pinned recall of a task: the same bytes every attempt.",
        reads=True,
    ),
    Operation(
        "memory_channel",
        _channel,
        _obj(
            {"task": _TASK, "role": _s("the reader's role", enum=list(pins.ROLES))},
            ("task", "role"),
        ),
        "The recalled-memory channel of a task for a role; a reviewer is refused (no memory).",
        reads=True,
    ),
    Operation(
        "memory_fact",
        _fact,
        _obj({"id": _ID}, ("id",)),
        "One curated fact by id, with its paths, provenance and what superseded it.",
        reads=True,
    ),
    Operation(
        "memory_export",
        _export,
        _obj(
            {"directory": _s("where to write the tree (new, empty, or an earlier export)")},
            ("directory",),
        ),
        "Write the curated memory as files: CATALOG.md, fact/, index/, MANIFEST.json.",
        reads=True,
    ),
    Operation(
        "memory_import",
        _import,
        _obj({"directory": _s("an exported tree, edited by a person")}, ("directory",)),
        "Read an edited export tree back: changed facts enter as human supersedes.",
        writes=True,
        doors=_NO_MODEL,
    ),
    Operation(
        "memory_sweep",
        _sweep,
        _obj(
            {
                "min_age_s": {
                    "type": "number",
                    "minimum": 0,
                    "description": "only captures at least this old (default 60)",
                }
            }
        ),
        "File captures left open by a process that ended before filing them.",
        writes=True,
        doors=_NO_MODEL,  # maintenance, not a model's call
    ),
)

MAINTENANCE: tuple[Maintenance, ...] = (
    Maintenance("file_open_captures", _sweep_pass, every_s=300.0),
)
