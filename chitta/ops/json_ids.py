"""Ids in JSON: written as decimal strings, so no JSON reader rounds them.

Memory ids (and writer instance ids) are u64, mostly above 2**53; a JSON reader
that reads numbers as doubles (JavaScript, jq 1.6) rounds them silently. Every
JSON door (MCP ``structuredContent`` and text, ``chitta ... --json``) passes
its value through :func:`json_safe`: a value under an id key (``id``, ``ids``,
``src``, ``dst``, ``*_id``, ``*_ids``) becomes a string, and so does any
other integer beyond 2**53 - 1; a door that writes an id under another key
writes it as a string itself. The doors take both forms back
(:func:`chitta.ops.checks.memory_id`). Decision: docs/DECISIONS.md D-038.
"""

from __future__ import annotations

import json
import numbers
from typing import Any

MAX_SAFE_INT = 2**53 - 1  # the largest integer every double-reading JSON parser keeps exact
ID_KEYS = frozenset({"id", "ids", "src", "dst"})  # ("forgotten" is a count in stats)
ID_SUFFIXES = ("_id", "_ids")

#: JSON Schema of an id as the JSON doors write it and take it.
ID_STRING_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": "^[0-9]{1,20}$",
    "description": "a memory id, as a decimal string (ids are 64-bit: use the string as is)",
}


def is_id_key(key: object) -> bool:
    return isinstance(key, str) and (key in ID_KEYS or key.endswith(ID_SUFFIXES))


def json_safe(value: Any, *, as_id: bool = False) -> Any:
    """``value`` with ids (and integers a double cannot hold) as decimal strings."""
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, numbers.Integral):
        i = int(value)
        return str(i) if as_id or not -MAX_SAFE_INT <= i <= MAX_SAFE_INT else i
    if isinstance(value, dict):
        return {k: json_safe(v, as_id=is_id_key(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, as_id=as_id) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`json_safe` (unknown types as ``str``, Unicode kept)."""
    kwargs.setdefault("default", str)
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(json_safe(value), **kwargs)


__all__ = ["ID_STRING_SCHEMA", "MAX_SAFE_INT", "dumps", "is_id_key", "json_safe"]
