"""The JSON schemas of the Field methods offered as MCP tools, and their shared parts.

:mod:`chitta.server.methods` puts them in the method table; the MCP tools show them to
the model and :mod:`chitta.server.arguments` checks calls against them. Every
description is written for an LLM reading the tool list: what to pass, what it does.
"""

from __future__ import annotations

from typing import Any

_S = {"type": "string"}
_OPT_S = {"type": ["string", "null"]}
# ids: a decimal string (what the JSON doors write, D-038) or an integer
ID = {
    "type": ["string", "integer"],
    "pattern": "^[0-9]{1,20}$",
    "minimum": 1,
    "description": "a memory id: the decimal string a tool returned (an integer also works)",
}
_TAGS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 128},
    "maxItems": 64,
    "description": 'short labels to filter and group by, e.g. ["ci", "deploy"] (at most 64)',
}
_SESSION = {
    **_OPT_S,
    "description": "the agent session (conversation) this belongs to, any stable label; "
    "omit when unknown",
}
# what each kind is for (remember offers the ones an agent writes; alias is chitta's own)
_KINDS = {
    "observation": "a fact seen or told (the default)",
    "thought": "speculation or a synthesis, not yet checked",
    "decision": "a chosen action with its reason",
    "code_fact": "about a symbol, file, call or type in code",
    "lesson": "a principle learned from something that went wrong",
    "episode": "a condensed stretch of a conversation or session",
    "wisdom": "a recurring pattern promoted from many memories",
}
_KIND_HELP = "; ".join(f"{k}: {v}" for k, v in _KINDS.items())
_PROVENANCES = [
    "human",
    "claude",
    "codex",
    "open_weight_distilled",
    "open_weight_generated",
    "unknown",
]
_EDGES = {
    "RelatedTo": "untyped association (the default)",
    "Supports": "src is evidence for dst",
    "Contradicts": "src disputes dst (recall ranks dst lower)",
    "Supersedes": "src replaces dst (recall ranks dst lower)",
    "DerivedFrom": "src was made from dst",
    "Confirms": "src observes dst again",
    "SameSession": "written in the same session",
    "CoRetrieved": "recalled together",
    "AliasOf": "src is the plain-language twin of dst",
}


def obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


REMEMBER_SCHEMA = obj(
    {
        "text": {**_S, "description": "what to remember (plain text, at most 1 MiB)"},
        "kind": {
            **_S,
            "enum": list(_KINDS),
            "description": f"what sort of memory it is; {_KIND_HELP}",
        },
        "realm": {**_OPT_S, "description": "the project or domain it belongs to, e.g. a repo name"},
        "session": _SESSION,
        "source_tool": {
            **_OPT_S,
            "description": "the tool that produced it (sets the harness); default: this client",
        },
        "tags": _TAGS,
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "how sure you are it is true, 0 to 1 (default 1); recall weighs it",
        },
        "artifacts": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 1024},
            "maxItems": 64,
            "description": "the code it is about: 'path', 'path#Qualified.name' or "
            "'path:line' (paths relative to the repository root); recall then knows "
            "when that code changed",
        },
        "dedup": {
            "type": "boolean",
            "description": "if a memory of the same realm says the same (case and spacing "
            "aside), reinforce it and return its id instead of storing a copy",
        },
        "provenance": {
            **_S,
            "enum": _PROVENANCES,
            "description": "who wrote it; default: inferred from this client's name. "
            "open_weight_generated memories enter the candidate band",
        },
    },
    ("text",),
)
RECALL_SCHEMA = obj(
    {
        "query": {**_S, "description": "what you need to know, in words (at most 32 KiB)"},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "how many memories (default 10)",
        },
        "kinds": {
            "type": "array",
            "items": {"type": "string", "enum": [*_KINDS, "alias"]},
            "uniqueItems": True,
            "description": "only memories of these kinds (default: every kind)",
        },
        "realm": {**_OPT_S, "description": "only memories of this project or domain"},
        "session": {**_OPT_S, "description": "only memories written in this agent session"},
        "harness": {
            **_OPT_S,
            "description": "only memories written through this harness (claude-code, codex)",
        },
        "since": {
            "type": "number",
            "description": "epoch seconds: only memories that happened at or after",
        },
        "until": {
            "type": "number",
            "description": "epoch seconds: only memories that happened before",
        },
        "include_staged": {
            "type": "boolean",
            "description": "include memories never recalled yet (staged by the write gate; "
            "default true); false returns only memories that proved useful before",
        },
        "budget_bytes": {
            "type": "integer",
            "minimum": 0,
            "description": "fit whole memories into this many bytes",
        },
        "tags": {**_TAGS, "description": "only memories carrying every one of these tags"},
        "min_score": {
            "type": "number",
            "minimum": -1,
            "maximum": 1,
            "description": "drop hits whose relevance (the query's cosine with the memory, "
            "about 0.3 loosely related, 0.6 and up close) is below this",
        },
        "mood": {
            "type": "number",
            "minimum": -1,
            "maximum": 1,
            "description": "the user's current mood, -1 (upset) to 1 (pleased): memories "
            "remembered with a matching meta.valence rank higher; omit when unknown",
        },
        "provenance": {
            "type": "array",
            "items": {"type": "string", "enum": _PROVENANCES},
            "uniqueItems": True,
            "description": "only memories written by these (unknown: none recorded)",
        },
        "route": {
            "type": ["boolean", "string"],
            "enum": [True, False, "exact", "fuzzy", "temporal", "causal", "hybrid"],
            "description": "true (default): the question picks its dispatch (a knowledge-graph "
            "lookup, a time-aware search, ...; see route_query); false: plain search; "
            "or force one dispatch by name",
        },
    },
    ("query",),
)
LINK_SCHEMA = obj(
    {
        "src": {**ID, "description": "the memory the edge starts at (a memory id)"},
        "dst": {**ID, "description": "the memory the edge points to (a memory id, not src)"},
        "edge": {
            **_S,
            "enum": list(_EDGES),
            "description": "how src relates to dst; "
            + "; ".join(f"{k}: {v}" for k, v in _EDGES.items()),
        },
        "weight": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 1e6,
            "description": "strength of the edge (default 1); linking again adds to it",
        },
    },
    ("src", "dst"),
)


__all__ = ["ID", "LINK_SCHEMA", "RECALL_SCHEMA", "REMEMBER_SCHEMA", "obj"]
