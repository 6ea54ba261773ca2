"""``chitta mcp``: the field as MCP tools, on the official ``mcp`` SDK (low-level ``Server``).

One process per agent window on stdio (:func:`run_stdio`), each its own writer
instance; or one process for many clients over streamable HTTP on loopback
(``chitta/mcp/http.py``); or a warm ``chitta mcp-host`` (``chitta/mcp/host.py``)
serving the sessions that ``chitta mcp`` forwards to it (``chitta/mcp/forward.py``). The tool table lives in ``chitta/mcp/tools.py``, output
schemas and annotations in ``chitta/mcp/schemas.py``. Per the MCP spec 2025-11-25
(SEP-1303) bad arguments (schema or value checks), a missing memory and every other
chitta error are tool results with ``isError`` and a message naming what to fix;
only an unknown tool (or a malformed request, the SDK's) is a JSON-RPC error. Ids
travel as decimal strings (D-038). Resources: ``chitta://stats`` and
``chitta://memory/{id}``; one prompt, ``recall-before-you-start``. A remember
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

from chitta.mcp import schemas
from chitta.mcp.tools import TOOLS, Answer, ChittaMCP, client_name, memory_json, tool_methods
from chitta.ops import json_ids

INSTRUCTIONS = "chitta: shared long-term memory. remember what you learn; recall before you act."


def _tool_list(types: Any) -> tuple[dict[str, Any], list[Any]]:
    """The offered methods and their SDK ``Tool`` entries: input and output schemas,
    annotations (chitta/mcp/schemas.py)."""
    offered = tool_methods()
    tools = []
    for name, m in offered.items():
        if m.operation is not None:
            output = schemas.GENERIC_OUTPUT
            hints = schemas.operation_annotations(name, m.operation.writes, m.operation.idempotent)
        else:
            output, hints = schemas.OUTPUT[name], schemas.ANNOTATIONS[name]
        tools.append(
            types.Tool(
                name=name,
                title=hints["title"],
                description=m.description,
                input_schema=m.schema or {"type": "object"},
                output_schema=output,
                annotations=types.ToolAnnotations.model_validate(hints),
            )
        )
    return offered, tools


def build_server(state: ChittaMCP) -> Any:
    """The SDK's low-level ``Server`` with chitta's tools, resources and prompt,
    calling into ``state``."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    import chitta
    from chitta.errors import ChittaError, InvalidArgument

    offered, tools = _tool_list(types)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    def failed(exc: ChittaError) -> Any:
        # SEP-1303: bad arguments are tool results the model reads and corrects. No
        # structuredContent: clients validate it against the output schema even here.
        return types.CallToolResult(
            content=[types.TextContent(text=f"{type(exc).__name__}: {exc}")], is_error=True
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name not in offered:  # a protocol error: the client asked for no such tool
            raise MCPError(
                types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {sorted(offered)}"
            )
        try:
            text, data = await anyio.to_thread.run_sync(
                state.call, params.name, params.arguments, client_name(ctx)
            )
        except ChittaError as exc:  # InvalidArgument included: nothing was written
            return failed(exc)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(resources=[_stats_resource(types)])

    async def list_templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult(resource_templates=[_memory_template(types)])

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        if uri == STATS_URI:
            call: tuple[str, dict[str, Any]] = ("stats", {})
        elif uri.startswith(MEMORY_URI_PREFIX):
            call = ("get", {"id": uri[len(MEMORY_URI_PREFIX) :]})
        else:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no resource {uri!r:.120}; read {STATS_URI} or {MEMORY_URI_PREFIX}<id>",
            )
        try:
            _text, data = await anyio.to_thread.run_sync(state.call, *call, None)
        except InvalidArgument as exc:
            raise MCPError(types.INVALID_PARAMS, f"{uri}: {exc}") from exc
        except ChittaError as exc:
            raise MCPError(types.INVALID_PARAMS, f"{type(exc).__name__}: {exc}") from exc
        body = json_ids.dumps(data)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=body)]
        )

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[_recall_prompt(types)])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != RECALL_PROMPT:
            raise MCPError(
                types.INVALID_PARAMS, f"no prompt {params.name!r:.80}; prompts: [{RECALL_PROMPT!r}]"
            )
        task = (params.arguments or {}).get("task") or "this task"
        return types.GetPromptResult(
            description="Recall what the shared memory knows before starting a task.",
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(text=_recall_text(str(task)))
                )
            ],
        )

    return Server(
        "chitta",
        version=chitta.__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        instructions=INSTRUCTIONS,
    )


STATS_URI = "chitta://stats"
MEMORY_URI_PREFIX = "chitta://memory/"
RECALL_PROMPT = "recall-before-you-start"


def _stats_resource(types: Any) -> Any:
    return types.Resource(
        name="stats",
        title="Field statistics",
        uri=STATS_URI,
        description="Counts and sizes of the field (the stats tool's answer), as JSON.",
        mime_type="application/json",
    )


def _memory_template(types: Any) -> Any:
    return types.ResourceTemplate(
        name="memory",
        title="A memory by id",
        uri_template=MEMORY_URI_PREFIX + "{id}",
        description="One memory (the get tool's answer) as JSON; id: its decimal id.",
        mime_type="application/json",
    )


def _recall_prompt(types: Any) -> Any:
    return types.Prompt(
        name=RECALL_PROMPT,
        title="Recall before you start",
        description="Before starting a task, recall what the shared memory already knows "
        "about it, then remember what you learn.",
        arguments=[
            types.PromptArgument(name="task", description="the task, in a sentence", required=False)
        ],
    )


def _recall_text(task: str) -> str:
    return (
        f"Before you start on {task}: call the chitta `recall` tool with a query that "
        "describes it (and again for each sub-problem), read the memories it returns, and "
        "follow the decisions and lessons among them unless they are superseded. While you "
        "work, call `remember` for each fact, decision or lesson worth keeping (one memory "
        "each, with a kind and tags), and `link` a new memory to the one it supports, "
        "contradicts or supersedes."
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
