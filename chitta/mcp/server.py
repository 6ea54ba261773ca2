"""``chitta mcp``: the field as MCP tools, on the official ``mcp`` SDK (low-level ``Server``).

One process per agent window on stdio (:func:`run_stdio`), each its own writer
instance; or one process for many clients over streamable HTTP on loopback
(``chitta/mcp/http.py``); or a warm ``chitta mcp-host`` (``chitta/mcp/host.py``)
serving the sessions that ``chitta mcp`` forwards to it (``chitta/mcp/forward.py``). The tool table lives in ``chitta/mcp/tools.py``. Bad
arguments (schema or value checks) are JSON-RPC errors ``-32602``; a missing
memory or another chitta error is a tool result with ``isError``. A remember
without ``source_tool`` records the MCP client's name (``clientInfo.name``),
which sets the harness. Reads refresh first, so writes of other windows show.

Start-up: the field opens on a thread while the SDK imports (the SDK import is
most of the start; see docs/DECISIONS.md D-014). The server serves
only once the field is open, so a bad path still fails before the client waits.
The field opens with a lazy embedder: no model loads before a call needs one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from chitta.mcp.tools import TOOLS, Answer, ChittaMCP, client_name, memory_json, tool_methods

INSTRUCTIONS = "chitta: shared long-term memory. remember what you learn; recall before you act."


def build_server(state: ChittaMCP) -> Any:
    """The SDK's low-level ``Server`` with chitta's tools, calling into ``state``."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from chitta._version import __version__
    from chitta.errors import ChittaError, InvalidArgument

    offered = tool_methods()
    tools = [
        types.Tool(
            name=name, description=m.description, input_schema=m.schema or {"type": "object"}
        )
        for name, m in offered.items()
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name not in offered:
            raise MCPError(
                types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {sorted(offered)}"
            )
        try:
            text, data = await anyio.to_thread.run_sync(
                state.call, params.name, params.arguments, client_name(ctx)
            )
        except InvalidArgument as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        except ChittaError as exc:
            message = f"{type(exc).__name__}: {exc}"
            return types.CallToolResult(
                content=[types.TextContent(text=message)],
                is_error=True,
                structured_content={"error": type(exc).__name__, "message": str(exc)},
            )
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)

    return Server(
        "chitta",
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        instructions=INSTRUCTIONS,
    )


def run_stdio(
    path: str | os.PathLike[str] | None = None,
    *,
    embedder: Any = "auto",
    opened: Callable[[], None] | None = None,
) -> None:
    """Serve the MCP tools on stdin/stdout until the client closes them.

    ``opened()`` runs once the field is open, before serving (``chitta mcp``
    starts the background host there, so a bad path starts none)."""
    state = ChittaMCP(path, embedder=embedder)
    state.start_open()  # overlaps the SDK import below
    try:
        import anyio
        from mcp.server.stdio import stdio_server

        server = build_server(state)
        state.field()  # a bad path fails here, before the client waits on us
        if opened is not None:
            opened()

        from chitta.mcp.screen import ScreenedLines

        stdin_bytes = open(0, "rb", closefd=False)  # noqa: SIM115  fd 0 stays open: the SDK's rule

        async def main() -> None:
            # stdin through ScreenedLines: every line gets an answer (chitta/mcp/screen.py)
            lines = ScreenedLines(anyio.wrap_file(stdin_bytes))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.attach(write_stream)
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(main)
    finally:
        state.close()


__all__ = ["TOOLS", "Answer", "ChittaMCP", "build_server", "memory_json", "run_stdio"]
