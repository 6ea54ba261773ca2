"""What each MCP tool answers (``outputSchema``) and how it behaves (annotations).

The shapes are what ``chitta/mcp/tools.py`` puts in ``structuredContent``, ids
as decimal strings (D-038). Annotations follow the MCP spec's hints: a tool is
read-only when it appends nothing to the log; ``recall`` is not (it records an
access per hit, which strengthens those memories and lifts them out of the
write gate's staging). An organ's operation gets annotations from its
``reads``/``writes`` and a generic object schema. Plain dicts only: this
module does not import the SDK.
"""

from __future__ import annotations

from typing import Any

from chitta.ops.json_ids import ID_STRING_SCHEMA

_ID = ID_STRING_SCHEMA
_OPT_S = {"type": ["string", "null"]}
_INT = {"type": "integer", "minimum": 0}
_TIME = {"type": "string", "description": "ISO 8601 time"}


def _obj(props: dict[str, Any], required: tuple[str, ...] | None = None) -> dict[str, Any]:
    """An object schema; every listed property required unless ``required`` says which.
    More properties may come in later versions (additionalProperties stays open)."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props if required is None else required),
    }


MEMORY = _obj(
    {
        "id": _ID,
        "text": {"type": "string"},
        "kind": {"type": "string"},
        "realm": _OPT_S,
        "session": _OPT_S,
        "source_tool": _OPT_S,
        "harness": _OPT_S,
        "tags": {"type": "array", "items": {"type": "string"}},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "strength": {"type": "number"},
        "created_at": _TIME,
        "access_count": _INT,
        "meta": {"type": ["object", "null"], "description": "the writer's own metadata"},
        "provenance": {"type": "string", "description": "who wrote it (docs/PROVENANCE.md)"},
        "candidate": {"type": "boolean", "description": "in the candidate band (unverified)"},
    },
    required=(
        "id",
        "text",
        "kind",
        "realm",
        "session",
        "source_tool",
        "harness",
        "tags",
        "confidence",
        "strength",
        "created_at",
        "access_count",
        "meta",
    ),
)

HIT = _obj(
    {
        "id": _ID,
        "text": {"type": "string"},
        "kind": {"type": "string"},
        "score": {"type": "number", "description": "higher is more relevant"},
        "relevance": {
            "type": ["number", "null"],
            "description": "the query's cosine with the memory (absolute; null: no vector yet)",
        },
        "realm": _OPT_S,
        "tags": {"type": "array", "items": {"type": "string"}},
        "created_at": _TIME,
    }
)

OUTPUT: dict[str, dict[str, Any]] = {
    "remember": _obj({"id": {**_ID, "description": "the new memory's id (a decimal string)"}}),
    "recall": _obj(
        {
            "hits": {"type": "array", "items": HIT, "description": "best first"},
            "recall_id": {
                "type": "string",
                "description": "name this recall in feedback (with the memory that helped)",
            },
        },
        ("hits",),
    ),
    "get": MEMORY,
    "forget": _obj({"forgotten": _ID}),
    "link": _obj({"src": _ID, "dst": _ID, "edge": {"type": "string"}}),
    "write_gate_stats": _obj(
        {
            "staged_count": _INT,
            "oldest_staged_age_days": {"type": ["number", "null"], "minimum": 0},
        }
    ),
    "stats": _obj(
        {
            "path": {"type": "string"},
            "instance_id": {**_ID, "type": ["string", "null"], "description": "this writer"},
            "memories": _INT,
            "forgotten": _INT,
            "records_applied": _INT,
            "instances": _INT,
            "segments": _INT,
            "bytes": _INT,
            "max_seqno": _INT,
            "embedding_dim": {"type": ["integer", "null"]},
            "durability": {"type": "string"},
            "read_only": {"type": "boolean"},
        }
    ),
}

#: An organ operation's answer: its result object (a non-object result under ``result``).
GENERIC_OUTPUT: dict[str, Any] = {
    "type": "object",
    "description": "the operation's result (a result that is not an object is under 'result')",
}


def _hints(read_only: bool, destructive: bool, idempotent: bool, title: str) -> dict[str, Any]:
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,  # only the local field is touched
    }


ANNOTATIONS: dict[str, dict[str, Any]] = {
    # a second remember of the same text is a second memory
    "remember": _hints(False, False, False, "Remember"),
    # records an access per hit (strength, write gate), so neither read-only nor idempotent
    "recall": _hints(False, False, False, "Recall"),
    "get": _hints(True, False, True, "Get a memory"),
    # soft delete: the memory leaves recall; forgetting again changes nothing more
    "forget": _hints(False, True, True, "Forget a memory"),
    # linking again adds to the edge's weight
    "link": _hints(False, False, False, "Link two memories"),
    "write_gate_stats": _hints(True, False, True, "Write gate statistics"),
    "stats": _hints(True, False, True, "Field statistics"),
}


def operation_annotations(
    name: str, writes: bool, idempotent: bool | None = None
) -> dict[str, Any]:
    """An organ operation's hints from its ``writes`` flag: one that writes may
    change or hide what exists (destructive; idempotent only when the operation says so)."""
    repeat = (not writes) if idempotent is None else idempotent
    return _hints(not writes, writes, repeat, name.replace("_", " ").capitalize())


__all__ = ["ANNOTATIONS", "GENERIC_OUTPUT", "OUTPUT", "operation_annotations"]
