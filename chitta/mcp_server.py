"""``chitta mcp``: the field as MCP tools, on the official ``mcp`` SDK (low-level server, stdio).

One process per agent window, each its own writer instance. The tools and
their JSON schemas come from :data:`chitta.protocol.METHODS` (the entries with
a schema); :data:`TOOLS` maps each to a function shaping its answer. Bad
arguments (schema or value checks) are JSON-RPC errors ``-32602``; a missing
memory or another chitta error is a tool result with ``isError``. A remember
without ``source_tool`` records the MCP client's name (``clientInfo.name``),
which sets the harness. Reads refresh first, so writes of other windows show.
The field opens with a lazy embedder: nothing heavy loads before a call needs it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

from chitta import protocol
from chitta.errors import ChittaError, InvalidArgument
from chitta.field import Field
from chitta.model import Memory
from chitta.recall.hit import Hit

Answer = tuple[str, dict[str, Any]]


def memory_json(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id, "text": m.text, "kind": m.kind, "realm": m.realm, "session": m.session,
        "source_tool": m.source_tool, "harness": m.harness, "tags": list(m.tags),
        "confidence": m.confidence, "strength": m.strength, "created_at": m.created_at.isoformat(),
        "access_count": m.access_count, "meta": m.meta,
    }


def _hit_json(h: Hit) -> dict[str, Any]:
    return {"id": h.id, "text": h.text, "kind": h.memory.kind, "score": round(h.score, 6),
            "realm": h.memory.realm, "tags": list(h.memory.tags), "created_at": h.memory.created_at.isoformat()}


def _remember(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    if args.get("source_tool") is None and client:
        args["source_tool"] = client
    mid = field.remember(**args)
    return f"remembered {mid}", {"id": mid}


def _recall(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    hits = field.recall(**args)
    if not hits:
        return "no memories match", {"hits": []}
    lines = [f"- [{h.memory.kind}] {h.text} (id {h.id})" for h in hits]
    return "\n".join(lines), {"hits": [_hit_json(h) for h in hits]}


def _get(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    data = memory_json(field.get(args["id"]))
    return json.dumps(data, ensure_ascii=False, default=str), data


def _forget(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    field.forget(args["id"])
    return f"forgot {args['id']}", {"forgotten": args["id"]}


def _link(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    field.link(**args)
    edge = args.get("edge", "RelatedTo")
    return f"linked {args['src']} -{edge}-> {args['dst']}", {"src": args["src"], "dst": args["dst"], "edge": edge}


def _plain(method: str) -> Callable[[Field, dict[str, Any], str | None], Answer]:
    def run(field: Field, args: dict[str, Any], client: str | None) -> Answer:
        value = getattr(field, method)(**args)
        data = value.as_dict() if hasattr(value, "as_dict") else value
        if not isinstance(data, dict):
            data = {"result": data}
        return json.dumps(data, ensure_ascii=False, default=str), data

    return run


TOOLS: dict[str, Callable[[Field, dict[str, Any], str | None], Answer]] = {
    "remember": _remember,
    "recall": _recall,
    "get": _get,
    "forget": _forget,
    "link": _link,
    "write_gate_stats": _plain("write_gate_stats"),
    "stats": _plain("stats"),
}


def _client_name(ctx: Any) -> str | None:
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name.strip() else None


class ChittaMCP:
    """The server state: one field (opened on first need), one lock."""

    def __init__(self, path: str | os.PathLike[str] | None, *, embedder: Any = "auto") -> None:
        self._path = path
        self._embedder = embedder
        self._field: Field | None = None
        self._lock = threading.Lock()

    def field(self) -> Field:
        if self._field is None:
            from chitta.field import default_path

            self._field = Field(self._path if self._path is not None else default_path(), embedder=self._embedder)
        return self._field

    def close(self) -> None:
        with self._lock:
            if self._field is not None:
                self._field.close()

    def call(self, name: str, arguments: dict[str, Any] | None, client: str | None) -> Answer:
        """Run one tool (in a worker thread); InvalidArgument for bad arguments."""
        method = protocol.METHODS[name]
        args = protocol.check_arguments(method, arguments)
        with self._lock:
            field = self.field()
            if method.reads:
                field.refresh()
            return TOOLS[name](field, args, client)

    def build(self) -> Any:
        import anyio
        import mcp_types as types
        from mcp.server.lowlevel import Server
        from mcp.shared.exceptions import MCPError

        from chitta._version import __version__

        tools = [
            types.Tool(name=name, description=protocol.METHODS[name].description,
                       input_schema=protocol.METHODS[name].schema or {"type": "object"})
            for name in TOOLS
        ]

        async def list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx: Any, params: Any) -> Any:
            if params.name not in TOOLS:
                raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {sorted(TOOLS)}")
            client = _client_name(ctx)
            try:
                text, data = await anyio.to_thread.run_sync(self.call, params.name, params.arguments, client)
            except InvalidArgument as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
            except ChittaError as exc:
                message = f"{type(exc).__name__}: {exc}"
                return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True,
                                            structured_content={"error": type(exc).__name__, "message": str(exc)})
            return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)

        return Server("chitta", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                      instructions="chitta: shared long-term memory. remember what you learn; recall before you act.")


def run_stdio(path: str | os.PathLike[str] | None = None, *, embedder: Any = "auto") -> None:
    """Serve the MCP tools on stdin/stdout until the client closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    state = ChittaMCP(path, embedder=embedder)
    state.field()  # a bad path fails here, before the client waits on us
    server = state.build()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        state.close()
