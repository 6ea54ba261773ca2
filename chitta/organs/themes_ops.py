"""The themes organ's operations (every door): the themes nearest a query, one
theme's members, and the clustering pass run now."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.errors import InvalidArgument
from chitta.ops import checks
from chitta.organs.contract import Operation

if TYPE_CHECKING:
    from chitta.organs.themes import Theme, ThemesOrgan

__all__ = ["OPERATIONS"]

MAX_K = 100
MAX_MEMBERS_SHOWN = 1000


def _query_vector(ctx: Any, query: str | None, vector: list[float] | None) -> Any:
    if (query is None) == (vector is None):
        raise InvalidArgument("give exactly one of query (a text) or vector (its embedding)")
    if vector is not None:
        if not vector or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in vector
        ):
            raise InvalidArgument("vector must be a non-empty list of finite numbers")
        return np.asarray(vector, np.float32)
    text = checks.text(query, "query")
    encoding = ctx.core.encoding
    if not encoding.enabled:
        raise InvalidArgument(
            "this field has no embedder to embed the query; pass vector= or open it with one"
        )
    return np.asarray(encoding.embed([text])[0], np.float32)


def _row(theme: Theme, score: float | None, realm: str | None, any_realm: bool) -> dict[str, Any]:
    members = theme.member_ids(realm, any_realm=any_realm)
    return {
        "theme": theme.id,
        "label": theme.label,
        "score": score,
        "coherence": theme.coherence,
        "size": theme.size,
        "realms": {
            ("" if r is None else r): len(ms)
            for r, ms in sorted(theme.members.items(), key=lambda kv: kv[0] or "")
        },
        "members": members[:MAX_MEMBERS_SHOWN],
    }


def _themes(
    organ: ThemesOrgan,
    ctx: Any,
    *,
    query: str | None = None,
    vector: list[float] | None = None,
    k: int = 5,
    realm: str | None = None,
) -> dict[str, Any]:
    q = _query_vector(ctx, query, vector)
    where = None if realm is None else checks.name(realm, "realm")
    found = organ.nearest(q, k, where, any_realm=realm is None)
    return {
        "themes": [_row(t, s, where, realm is None) for t, s in found],
        "total": len(organ.themes),
    }


def _members(
    organ: ThemesOrgan, ctx: Any, *, theme: int, realm: str | None = None
) -> dict[str, Any]:
    t = organ.themes.get(theme)
    if t is None:
        raise InvalidArgument(f"no theme {theme}; list them with themes(query=...)")
    where = None if realm is None else checks.name(realm, "realm")
    return _row(t, None, where, realm is None)


def _cluster(
    organ: ThemesOrgan,
    ctx: Any,
    *,
    assign_min: float | None = None,
    max_members: int | None = None,
    merge_above: float | None = None,
) -> dict[str, int]:
    from chitta.policies import themes_pass

    def unit(value: float | None, default: float, what: str) -> float:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 <= value <= 1:
            raise InvalidArgument(f"{what} must be a cosine between -1 and 1, not {value!r}")
        return float(value)

    if max_members is not None and (
        isinstance(max_members, bool) or not isinstance(max_members, int) or max_members < 2
    ):
        raise InvalidArgument(f"max_members must be an integer >= 2, not {max_members!r}")
    return themes_pass.run_pass(
        organ,
        ctx,
        assign_min=unit(assign_min, themes_pass.ASSIGN_MIN, "assign_min"),
        max_members=themes_pass.MAX_MEMBERS if max_members is None else max_members,
        merge_above=unit(merge_above, themes_pass.MERGE_ABOVE, "merge_above"),
    )


def _cosine(description: str) -> dict[str, Any]:
    return {"type": "number", "minimum": -1, "maximum": 1, "description": description}


_REALM = {
    "type": "string",
    "description": "only themes with members in this realm, and those members",
}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "themes",
        _themes,
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what the themes should be about"},
                "vector": {
                    "type": "array",
                    "items": {"type": "number"},
                    "description": "or its embedding",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_K,
                    "description": "how many (default 5)",
                },
                "realm": _REALM,
            },
            "additionalProperties": False,
        },
        "Find the themes (clusters of related memories) nearest a query by cosine of "
        "their centroids. Returns each theme's id, label, score, coherence, size per "
        "realm and member memory ids.",
        reads=True,
    ),
    Operation(
        "theme_members",
        _members,
        {
            "type": "object",
            "properties": {
                "theme": {"type": "integer", "minimum": 0, "description": "a theme id"},
                "realm": _REALM,
            },
            "required": ["theme"],
            "additionalProperties": False,
        },
        "One theme's label, coherence and member memory ids (optionally of one realm).",
        reads=True,
    ),
    Operation(
        "themes_cluster",
        _cluster,
        {
            "type": "object",
            "properties": {
                "assign_min": {
                    "type": "number",
                    "minimum": -1,
                    "maximum": 1,
                    "description": "least cosine to join a theme (default 0.5)",
                },
                "max_members": {
                    "type": "integer",
                    "minimum": 2,
                    "description": "split themes larger than this (default 64)",
                },
                "merge_above": {
                    "type": "number",
                    "minimum": -1,
                    "maximum": 1,
                    "description": "merge themes whose centroids are closer (default 0.9)",
                },
            },
            "additionalProperties": False,
        },
        "Run the themes clustering pass now: assign new memories, split oversized "
        "themes, merge near-identical ones. Returns the events logged per step.",
        writes=True,
        doors=frozenset({"python", "daemon"}),
    ),
)
