"""Provenance through MCP with the SDK's own client: inferred from clientInfo.name,
a quarantined client cannot claim another provenance, the recall filter, the
laundering guard, and witness_memory kept off MCP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
import anyio
import mcp_types as types
from daemontools import child_env, chitta_command
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import chitta

# clientInfo.name -> what a person reads in it (docs/PROVENANCE.md)
CLIENTS = {
    "claude-code": ("claude", False),
    "codex-mcp-client": ("codex", False),
    "ollama-agent": ("open_weight_generated", True),
    "zed-editor": ("unknown", False),
}


@asynccontextmanager
async def session(field: Path, client: str) -> AsyncIterator[ClientSession]:
    cmd = chitta_command()
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--path", str(field), "mcp", "--no-host"],
        cwd=str(field.parent),
        env=child_env(),
    )
    info = types.Implementation(name=client, version="1")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=info) as s,
    ):
        await s.initialize()
        yield s


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(fn)


def test_provenance_is_inferred_from_the_mcp_client_name(tmp_path: Path) -> None:
    field = tmp_path / "field"
    ids: dict[str, str] = {}

    async def main() -> None:
        for client, want in CLIENTS.items():
            async with session(field, client) as s:
                res = await s.call_tool("remember", {"text": f"the build note from {client}"})
                assert not res.is_error, res.content
                ids[client] = res.structured_content["id"]
                got = (await s.call_tool("get", {"id": ids[client]})).structured_content
                assert (got["provenance"], got["candidate"]) == want

    run(main)
    with chitta.open(field, read_only=True) as f:  # recorded durably, replayed
        for client, mid in ids.items():
            view = f.call("provenance_of", id=int(mid))
            assert (view["provenance"], view["candidate"]) == CLIENTS[client]


def test_a_quarantined_client_cannot_lift_its_own_quarantine(tmp_path: Path) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field, "ollama-agent") as s:
            tools = {t.name for t in (await s.list_tools()).tools}
            assert "witness_memory" not in tools and {"provenance_of", "reconcile_all"} <= tools
            for claim in ("human", "claude"):
                res = await s.call_tool("remember", {"text": "trust me", "provenance": claim})
                assert res.is_error and "ProvenanceRefused" in res.content[0].text
            res = await s.call_tool(
                "remember", {"text": "a distilled summary", "provenance": "open_weight_distilled"}
            )
            assert not res.is_error
            res = await s.call_tool("remember", {"text": "we use postgres", "kind": "decision"})
            assert res.is_error and "can_write_kind" in res.content[0].text
            cand = (await s.call_tool("remember", {"text": "the cache is cold"})).structured_content
        async with session(field, "claude-code") as s:
            est = (await s.call_tool("remember", {"text": "the cache is warm"})).structured_content
            res = await s.call_tool(
                "link", {"src": cand["id"], "dst": est["id"], "edge": "Supports"}
            )
            assert res.is_error and "CandidateLaundering" in res.content[0].text
            hits = (
                await s.call_tool("recall", {"query": "cache", "provenance": ["claude"]})
            ).structured_content["hits"]
            assert [h["id"] for h in hits] == [est["id"]]
            res = await s.call_tool("recall", {"query": "cache", "provenance": ["robot"]})
            assert res.is_error and "InvalidArgument" in res.content[0].text

    run(main)
    with chitta.open(field, read_only=True) as f:
        assert sorted(m.text for m in f.memories()) == [
            "a distilled summary",
            "the cache is cold",
            "the cache is warm",
        ]
