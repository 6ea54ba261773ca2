"""The daemon's JSON dialect: the same frames with a JSON body, for hosts without MessagePack.

A request frame whose body starts with ``{`` is JSON (a MessagePack request is a map, whose
first byte is never ``{``): ``{"id": int, "method": str, "params": object}``. Its reply is a
JSON frame too: ``{"id": same, "result": value}`` or ``{"id": same, "error": {"type", "message"}}``.
Values are plain JSON: memories and hits as objects (the fields the MCP tools return, plus a
hit's ``lanes``), dates as ISO 8601 text, ids as decimal strings (D-038); ids may be given as
strings or integers. The C API's memory-level calls (``cf_remember`` ... ``cf_call``,
docs/C_API.md) speak it. Normative: docs/DAEMON.md, "JSON dialect".
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import numpy as np

from chitta.errors import InvalidArgument
from chitta.model import Memory
from chitta.ops import json_ids
from chitta.recall.hit import Factor, Hit
from chitta.server import methods

#: the first byte of a JSON request body
JSON_MARK = b"{"


def is_json(body: bytes) -> bool:
    return body[:1] == JSON_MARK


def parse_request(body: bytes) -> tuple[Any, Any, Any]:
    """(id, method, params) of a JSON request; InvalidArgument when it is not one."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidArgument(
            f"the request is not valid JSON: {exc}; send one JSON object"
        ) from exc
    if not isinstance(request, dict):
        raise InvalidArgument("a request is an object with id, method and params")
    return request.get("id"), request.get("method"), request.get("params")


def check(method_name: object, params: object) -> tuple[methods.Method, dict[str, Any]]:
    """The method and its arguments. Names are checked against Field's signature (or an
    operation's schema); arguments a method's MCP schema describes are checked by it (ids
    given as strings become integers), the others (``touch``, ``explain``, ``at``...) go to
    Field as given, which checks their values."""
    method, checked = methods.check_call(method_name, params)
    if method.operation is not None or method.schema is None:
        return method, {k: _id_value(v) if json_ids.is_id_key(k) else v for k, v in checked.items()}
    props = method.schema.get("properties", {})
    described = methods.check_arguments(method, {k: v for k, v in checked.items() if k in props})
    rest = {
        k: _id_value(v) if json_ids.is_id_key(k) else v
        for k, v in checked.items()
        if k not in props
    }
    return method, {**described, **rest}


def _id_value(value: Any) -> Any:
    """An id (or a list of ids) given as decimal text, as integers; anything else unchanged."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    if isinstance(value, list):
        return [_id_value(v) for v in value]
    return value


def memory_json(m: Memory) -> dict[str, Any]:
    """The MCP tools' shape of a memory plus what ``chitta get`` shows besides."""
    from chitta.mcp.tools import memory_json as shaped

    return {
        **shaped(m),
        "tier": m.tier,
        "updated_at": m.updated_at.isoformat(),
        "embedding_dim": None if m.embedding is None else int(m.embedding.shape[0]),
    }


def hit_json(h: Hit) -> dict[str, Any]:
    return {
        "id": h.id,
        "text": h.text,
        "kind": h.memory.kind,
        "score": h.score,
        "relevance": h.relevance,
        "fused": h.fused,
        "lanes": dict(h.lanes),
        "factors": [to_json(f) for f in h.factors],
        "memory": memory_json(h.memory),
        "recall_id": h.recall_id,
        "graph_path": h.graph_path,
    }


def to_json(value: Any) -> Any:
    """``value`` (whatever a method returns) as plain JSON values."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Hit):
        return hit_json(value)
    if isinstance(value, Memory):
        return memory_json(value)
    if isinstance(value, Factor):
        return dataclasses.asdict(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.hex()
    if hasattr(value, "as_dict"):
        return to_json(value.as_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, Iterator)):
        return [to_json(v) for v in value]
    return str(value)


def reply(rid: Any, result: Any = None, error: dict[str, Any] | None = None) -> bytes:
    """The body of a JSON reply (ids as strings, Unicode kept)."""
    message: dict[str, Any] = {"id": rid}
    if error is None:
        message["result"] = json_ids.json_safe(to_json(result))
    else:
        message["error"] = error
    return json.dumps(message, ensure_ascii=False, default=str).encode()


__all__ = ["JSON_MARK", "check", "hit_json", "is_json", "parse_request", "reply", "to_json"]
