"""The trust organ: no state of its own; it offers the introspection operations over
the code organs and the memories (what_do_i_know_about, cross_harness_conflicts,
get_conflicts, staleness, mark_invalidated, note_test, record_commit, find_symbol)
to every door. Their handlers live above the organs (chitta/policies/code_introspect.py)
and read the field through ``ctx.core``.
"""

from __future__ import annotations

from typing import Any

from chitta.ops import Op
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext

__all__ = ["TrustOrgan"]


def _policy() -> Any:
    from chitta.policies import code_introspect

    return code_introspect


def _know(organ: Any, ctx: Any, *, topic: str, k: int = 10) -> Any:
    return _policy().what_do_i_know_about(ctx.core, topic, k)


def _cross(organ: Any, ctx: Any, **kw: Any) -> Any:
    pairs = _policy().cross_harness_conflicts(ctx.core, **kw)
    return {"conflicts": pairs, "total": len(pairs)}


def _conflicts(organ: Any, ctx: Any, *, id: Any) -> Any:
    return _policy().get_conflicts(ctx.core, id)


def _stale(organ: Any, ctx: Any, *, id: Any) -> Any:
    return _policy().staleness(ctx.core, id)


def _invalidate(organ: Any, ctx: Any, *, id: Any, by: str) -> Any:
    return _policy().mark_invalidated(ctx.core, id, by)


def _test(organ: Any, ctx: Any, *, target: str, passed: bool, **kw: Any) -> Any:
    return _policy().note_test(ctx.core, target, passed, **kw)


def _commit(organ: Any, ctx: Any, *, commit: str, changes: Any, **kw: Any) -> Any:
    return _policy().record_commit(ctx.core, commit, changes, **kw)


def _index(organ: Any, ctx: Any, *, root: str, project: str | None = None) -> Any:
    from chitta.policies.code_index import index_code

    return index_code(ctx.core, root, project).as_dict()


def _find(organ: Any, ctx: Any, *, name: str, limit: int = 20) -> Any:
    return _policy().find_symbol(ctx.core, name, limit)


_ID = {
    "type": ["string", "integer"],
    "pattern": "^[0-9]{1,20}$",
    "minimum": 1,
    "description": "a memory id (the decimal string a tool returned)",
}
_STR = {"type": "string"}
_WHO = {"session": {"type": "string"}, "harness": {"type": "string"}}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "what_do_i_know_about",
        _know,
        _obj(
            {
                "topic": {**_STR, "description": "a question, a name or a symbol"},
                "k": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            ["topic"],
        ),
        "What the field believes about a topic and how far to trust each claim: per "
        "recalled memory its text, staged flag, invalidated_by, source session/tool/harness, "
        "age in days, staleness verdict with reason and contradiction peers; plus the "
        "cross-harness conflicts among them.",
        reads=True,
    ),
    Operation(
        "cross_harness_conflicts",
        _cross,
        _obj(
            {
                "min_similarity": {"type": "number", "minimum": -1, "maximum": 1},
                "neighbours": {"type": "integer", "minimum": 1, "maximum": 100},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            [],
        ),
        "Pairs of close live memories written by different agent harnesses (e.g. codex vs "
        "claude-code), ranked by disagreement 1 - cosine.",
        reads=True,
    ),
    Operation(
        "get_conflicts",
        _conflicts,
        _obj({"id": _ID}, ["id"]),
        "The memories that contradict, or are contradicted by, one memory.",
        reads=True,
    ),
    Operation(
        "staleness",
        _stale,
        _obj({"id": _ID}, ["id"]),
        "Whether a memory about code is fresh, stale (a file or symbol it cites changed "
        "after it was written) or invalidated, with the reason.",
        reads=True,
    ),
    Operation(
        "mark_invalidated",
        _invalidate,
        _obj(
            {"id": _ID, "by": {**_STR, "description": "the commit hash or event id"}}, ["id", "by"]
        ),
        "Mark a memory as invalidated by a commit or event; recall then ranks it lower "
        "(it is never deleted).",
        writes=True,
        idempotent=True,
    ),
    Operation(
        "note_test",
        _test,
        _obj(
            {
                "target": {**_STR, "description": "a symbol key, name or pytest node id"},
                "passed": {"type": "boolean"},
                "memory_id": _ID,
                **_WHO,
            },
            ["target", "passed"],
        ),
        "Record that the tests of a code symbol passed or failed (a TestPassed / "
        "TestFailed symbol event).",
        writes=True,
    ),
    Operation(
        "record_commit",
        _commit,
        _obj(
            {
                "commit": {**_STR, "description": "the commit hash"},
                "changes": {
                    "type": "object",
                    "description": "changed file -> [[start, end], ...] lines its hunks touch",
                },
                **_WHO,
            },
            ["commit", "changes"],
        ),
        "Record a commit: a Committed event for each changed file and for each symbol "
        "whose lines the diff touched (what the post-commit hook calls).",
        writes=True,
    ),
    Operation(
        "index_code",
        _index,
        _obj(
            {
                "root": {**_STR, "description": "the project's root directory (absolute)"},
                "project": {**_STR, "description": "its name (default: the directory's)"},
            },
            ["root"],
        ),
        "Index (or re-index, only what changed) the source files under a directory: "
        "files, symbols and call edges. Returns counts and seconds.",
        writes=True,
        idempotent=True,  # a repeat over unchanged files parses and writes nothing
    ),
    Operation(
        "find_symbol",
        _find,
        _obj(
            {
                "name": {**_STR, "description": "a symbol name or its start"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            ["name"],
        ),
        "Find indexed code symbols by exact, prefix or fuzzy name, with their callers and callees.",
        reads=True,
    ),
)


class TrustOrgan(OrganBase):
    name = "trust"
    handles: frozenset[Any] = frozenset()
    operations = OPERATIONS

    def apply(self, op: Op) -> None:
        return None

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        return None
