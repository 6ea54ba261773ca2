"""The toy organ (tests/helpers/toy_organ.py) reaches every door with no edit outside
its own file: a real ``chitta serve`` process and its ``connect()`` handle, and a real
``chitta mcp`` process driven by the official MCP SDK client. The organ is registered
in those processes by ``CHITTA_ORGANS`` (the registry's plugin line)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from daemontools import DaemonProcess, child_env, chitta_command

import chitta

HELPERS = Path(__file__).resolve().parents[2] / "helpers"


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(HELPERS), os.environ.get("PYTHONPATH")]))
    return child_env(CHITTA_ORGANS="toy_organ:SessionTally", PYTHONPATH=path)


def test_the_toy_organ_answers_through_the_daemon_handle(tmp_path: Path) -> None:
    field, sock = tmp_path / "field", tmp_path / "d.sock"
    daemon = DaemonProcess(field, sock, env=_env())
    try:
        with chitta.connect(sock, timeout=30) as remote:
            assert remote.call("session_tally", session="w1")["total"] == 0
            after = remote.call("session_note", session="w1", event="register")
            assert after["events"] == {"register": 1}
            remote.call("session_note", session="w1", event="heartbeat")
            assert remote.call("session_tally", session="w1") == {
                "session": "w1",
                "events": {"heartbeat": 1, "register": 1},
                "total": 2,
            }
            with pytest.raises(chitta.InvalidArgument, match="event must be one of"):
                remote.call("session_note", session="w1", event="exploded")
            with pytest.raises(chitta.InvalidArgument, match="unknown method"):
                remote.call("no_such_operation")
            remote.flush()
    finally:
        daemon.close()
    # What the daemon's organ applied is in the log: an in-process field replays it.
    from toy_organ import SessionTally

    from chitta.organs import registry

    registry.register(SessionTally)
    try:
        with chitta.open(field, read_only=True) as f:
            assert f.call("session_tally", session="w1")["total"] == 2
    finally:
        registry.unregister(SessionTally)


mcp = pytest.importorskip("mcp")


def test_the_toy_organ_is_an_mcp_tool(tmp_path: Path) -> None:
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    field = tmp_path / "field"
    cmd = chitta_command()
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--path", str(field), "mcp", "--no-host"],
        cwd=str(field.parent),
        env=_env(),
    )

    async def main() -> dict[str, Any]:
        info = types.Implementation(name="toy-test", version="1")
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, client_info=info) as s,
        ):
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"session_tally", "session_note", "remember", "recall"} <= set(tools)
            assert tools["session_note"].input_schema["required"] == ["session"]
            assert tools["session_tally"].description.startswith("How many session events")
            noted = await s.call_tool("session_note", {"session": "m1", "event": "register"})
            assert not noted.is_error and noted.structured_content["total"] == 1
            tally = await s.call_tool("session_tally", {"session": "m1"})
            return dict(tally.structured_content or {})

    assert anyio.run(main) == {"session": "m1", "events": {"register": 1}, "total": 1}
