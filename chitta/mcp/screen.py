"""Every line an MCP client sends gets an answer: the lines the SDK would drop, answered here.

The official SDK's stdio transport reads text decoded with ``errors="replace"``
(invalid UTF-8 silently becomes U+FFFD and would be stored so) and drops any
line it cannot validate without a reply, so a client waits forever for: a
line that is not JSON, a lone surrogate escape (``"a\\ud800b"``), ``"params"``
that is not an object. :class:`ScreenedLines` sits between the bytes and the
SDK's reader: a line that is strict UTF-8 and a valid JSON-RPC message goes on
unchanged; any other gets a JSON-RPC error reply written through the SDK's own
write stream (``-32700`` not UTF-8 / not JSON, ``-32602`` lone surrogate or
bad params, ``-32600`` not a JSON-RPC message), with the request's id where
one can be read. Notifications and responses get no reply (JSON-RPC), only a
note on stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def _id_of(text: str) -> Any:
    try:
        msg = json.loads(text)
    except ValueError:
        return None
    rid = msg.get("id") if isinstance(msg, dict) else None
    return (
        rid
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
        else None
    )


def _surrogate(value: Any) -> str | None:
    """The first string in ``value`` holding a lone UTF-16 surrogate, if any."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if any("\ud800" <= c <= "\udfff" for c in v):
                return v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def screen(raw: bytes) -> tuple[str | None, tuple[Any, int, str] | None]:
    """``(line, None)`` for a line to hand to the SDK, ``(None, (id, code, message))``
    for one to answer with an error here, ``(None, None)`` for one to skip."""
    if not raw.strip():
        return None, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        rid = _id_of(raw.decode("utf-8", errors="replace"))
        return None, (
            rid,
            PARSE_ERROR,
            (
                f"the message is not valid UTF-8 (byte {exc.start} of the line); "
                "send UTF-8 text, nothing was stored"
            ),
        )
    try:
        msg = json.loads(text)
    except ValueError as exc:
        return None, (None, PARSE_ERROR, f"parse error: the line is not JSON ({exc})")
    rid = msg.get("id") if isinstance(msg, dict) else None
    valid_id = isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
    is_request = isinstance(msg, dict) and "method" in msg and valid_id
    notification = isinstance(msg, dict) and "method" in msg and "id" not in msg
    line, error = _check(text, msg, rid if valid_id else None, is_request)
    if error is not None and notification:  # JSON-RPC: a notification is never answered
        print(f"chitta mcp: dropped a notification: {error[2]}", file=sys.stderr)
        return None, None
    return line, error


def _check(
    text: str, msg: Any, rid: Any, is_request: bool
) -> tuple[str | None, tuple[Any, int, str] | None]:
    bad = _surrogate(msg)
    if bad is not None:
        return None, (
            rid,
            INVALID_PARAMS,
            f"a string holds a lone UTF-16 surrogate ({bad!r:.60}); send valid Unicode, nothing was stored",
        )
    import mcp_types as types
    from pydantic import ValidationError

    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        if (
            isinstance(msg, dict)
            and "params" in msg
            and not isinstance(msg["params"], dict)
            and is_request
        ):
            return None, (
                rid,
                INVALID_PARAMS,
                f"params must be an object (by name), not {type(msg['params']).__name__}",
            )
        details = exc.errors()
        where = ".".join(str(p) for p in details[0]["loc"]) if details else ""
        what = details[0]["msg"] if details else str(exc)
        return None, (rid, INVALID_REQUEST, f"not a valid JSON-RPC 2.0 message: {where}: {what}")
    return text, None


class ScreenedLines:
    """The ``stdin`` to give ``mcp.server.stdio.stdio_server``: lines from ``source``
    (bytes, one message a line) after :func:`screen`. :meth:`attach` hands it the
    write stream that ``stdio_server`` yields, where its error replies go."""

    def __init__(self, source: AsyncIterable[bytes]) -> None:
        import anyio

        self._source = source
        self._out: Any = None
        self._attached = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        self._out = write_stream
        self._attached.set()

    async def _reply(self, rid: Any, code: int, message: str) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        await self._attached.wait()
        err = types.JSONRPCError(
            jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message)
        )
        await self._out.send(SessionMessage(err))

    async def __aiter__(self) -> AsyncIterator[str]:
        async for raw in self._source:
            line, error = screen(raw)
            if error is not None:
                await self._reply(*error)
            elif line is not None:
                yield line
