"""``chitta mcp`` end to end with the SDK's own client (ClientSession over stdio)."""

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
from mcp.shared.exceptions import MCPError

import chitta


@asynccontextmanager
async def session(field: Path, client: str = "claude-code") -> AsyncIterator[ClientSession]:
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


def test_tools_remember_recall_and_bad_arguments(tmp_path: Path) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field, client="codex") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {
                "remember",
                "recall",
                "get",
                "forget",
                "link",
                "write_gate_stats",
                "stats",
            } <= set(tools)
            assert (
                tools["recall"].input_schema["required"] == ["query"]
                and tools["recall"].description
            )

            a = (
                await s.call_tool("remember", {"text": "the CI runs on 2 cores", "tags": ["ci"]})
            ).structured_content["id"]
            b = (
                await s.call_tool(
                    "remember",
                    {
                        "text": "CI jobs time out after 10 minutes",
                        "source_tool": "claude-code-bash",
                    },
                )
            ).structured_content["id"]
            res = await s.call_tool("recall", {"query": "CI cores", "k": 5})
            assert not res.is_error and res.structured_content["hits"][0]["id"] == a
            assert "the CI runs on 2 cores" in res.content[0].text
            got = (await s.call_tool("get", {"id": a})).structured_content
            assert (
                got["harness"] == "codex" and got["source_tool"] == "codex"
            )  # from clientInfo.name
            assert (await s.call_tool("get", {"id": b})).structured_content[
                "harness"
            ] == "claude-code"
            assert not (
                await s.call_tool("link", {"src": a, "dst": b, "edge": "Supports"})
            ).is_error
            stats = (await s.call_tool("stats", {})).structured_content
            assert stats["memories"] == 2
            assert "staged_count" in (await s.call_tool("write_gate_stats", {})).structured_content

            for name, args in [
                ("remember", {"txt": "x"}),
                ("remember", {"text": 3}),
                ("remember", {"text": "  "}),
                ("remember", {"text": "x", "kind": "poem"}),
                ("recall", {}),
                ("recall", {"query": "x", "k": 0}),
                ("link", {"src": a, "dst": a}),
            ]:  # SEP-1303: tool results with isError, not JSON-RPC errors
                res = await s.call_tool(name, args)
                assert res.is_error and "InvalidArgument" in res.content[0].text, (name, args)
            with pytest.raises(MCPError) as info:  # an unknown tool is a protocol error
                await s.call_tool("nope", {})
            assert info.value.error.code == types.INVALID_PARAMS
            missing = await s.call_tool("get", {"id": 12345})
            assert missing.is_error and "NotFound" in missing.content[0].text
            assert not (await s.call_tool("forget", {"id": b})).is_error
            assert (await s.call_tool("get", {"id": b})).is_error

    run(main)
    with chitta.open(field, read_only=True) as local:  # what the tools wrote is in the field
        assert [m.text for m in local.memories()] == ["the CI runs on 2 cores"]
        assert local.stats().memories == 1


def test_two_servers_on_one_field_see_each_others_writes(tmp_path: Path) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field) as one, session(field, client="codex") as two:
            a = (
                await one.call_tool("remember", {"text": "staging listens on port 8081"})
            ).structured_content["id"]
            hits = (await two.call_tool("recall", {"query": "staging port"})).structured_content[
                "hits"
            ]
            assert [h["id"] for h in hits] == [a]
            b = (
                await two.call_tool("remember", {"text": "production listens on port 443"})
            ).structured_content["id"]
            got = (await one.call_tool("get", {"id": b})).structured_content
            assert got["text"] == "production listens on port 443" and got["harness"] == "codex"
            s1 = (await one.call_tool("stats", {})).structured_content
            s2 = (await two.call_tool("stats", {})).structured_content
            assert (
                s1["instance_id"] != s2["instance_id"] and s1["instances"] == s2["instances"] == 2
            )

    run(main)


def test_not_a_field_exits_before_serving(tmp_path: Path) -> None:
    import subprocess

    bad = tmp_path / "notes"
    bad.mkdir()
    (bad / "todo.txt").write_text("not a field\n")
    proc = subprocess.run(
        [*chitta_command(), "--path", str(bad), "mcp"],
        stdin=subprocess.DEVNULL,
        check=False,
        capture_output=True,
        cwd=tmp_path,
        env=child_env(),
        timeout=120,
    )
    assert (
        proc.returncode == 5 and proc.stdout == b""
    )  # EXIT_NOT_FOUND; nothing written to the protocol stream
    assert b"NotAFieldError" in proc.stderr
    assert sorted(p.name for p in bad.iterdir()) == ["todo.txt"]


def test_state_opens_on_a_thread_and_reraises_its_error(tmp_path: Path) -> None:
    from chitta.mcp.tools import ChittaMCP

    state = ChittaMCP(tmp_path / "field", embedder=None)
    state.start_open()
    text, data = state.call("remember", {"text": "opened on a thread"}, "codex")
    assert text == f"remembered {data['id']}" and state.field().get(data["id"]).harness == "codex"
    state.close()
    state.close()  # twice is fine
    with pytest.raises(chitta.ClosedError):
        state.call("stats", {}, None)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "a").write_text("x")
    broken = ChittaMCP(tmp_path / "junk", embedder=None)
    broken.start_open()
    with pytest.raises(chitta.NotAFieldError):
        broken.field()
    with pytest.raises(chitta.InvalidArgument):
        broken.call(
            "remember", {"txt": "x"}, None
        )  # arguments are checked before the field is needed
    broken.close()
