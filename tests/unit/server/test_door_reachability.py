"""Every operation of the method table is reachable from each door it declares.

Each door is a real one: the Python API, a real daemon process through ``connect()``, a
real ``chitta mcp`` through the official SDK client, and the ``chitta`` command. The
probe is a call with an argument no operation takes: a door that knows the operation
answers with that operation's own argument error (naming the argument), which also
proves the call changed nothing; a door that does not know it says "unknown". The toy
organ is registered, so organ operations are covered beside the Field methods, and every
organ a later issue registers is covered by this test with no edit.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemontools import DaemonProcess, child_env, chitta_command
from toy_organ import SessionTally

import chitta
from chitta.errors import InvalidArgument
from chitta.organs import registry
from chitta.server import methods

HELPERS = Path(__file__).resolve().parents[2] / "helpers"
PROBE = "zz_not_an_argument"
# the operation's own argument check answered: the bad argument, or a required one missing
OWN_CHECK = f"{PROBE}|missing a required argument|required"
LOCAL_ONLY = {"__len__", "__contains__"}  # Python protocol methods, not remote calls


@pytest.fixture()
def toy() -> Iterator[None]:
    registry.register(SessionTally)
    yield
    registry.unregister(SessionTally)


def _env() -> dict[str, str]:
    env = child_env(CHITTA_ORGANS="toy_organ:SessionTally")
    env["PYTHONPATH"] = f"{HELPERS}:{env.get('PYTHONPATH', '')}"
    return env


def _declared(door: str) -> dict[str, methods.Method]:
    return {n: m for n, m in methods.table().items() if door in m.doors and n not in LOCAL_ONLY}


def test_every_python_door_operation_is_reachable(tmp_path: Path, toy: None) -> None:
    table = _declared("python")
    assert {"remember", "recall", "session_tally", "session_note"} <= set(table)
    with chitta.open(tmp_path / "f", embedder=None) as field:
        for name, m in table.items():
            if m.operation is None:
                assert callable(getattr(field, name)), name
                continue
            with pytest.raises(InvalidArgument, match=PROBE):
                field.call(name, **{PROBE: 1})
        with pytest.raises(InvalidArgument, match="no operation named"):
            field.call("no_such_operation")
        assert len(field) == 0


def test_every_daemon_door_operation_is_reachable(tmp_path: Path, toy: None) -> None:
    table = _declared("daemon")
    daemon = DaemonProcess(tmp_path / "f", tmp_path / "d.sock", env=_env())
    try:
        with chitta.connect(tmp_path / "d.sock", timeout=30) as remote:
            for name, m in table.items():
                with pytest.raises(InvalidArgument, match=OWN_CHECK):
                    if m.operation is None:
                        remote._call(name, {PROBE: 1})
                    else:
                        remote.call(name, **{PROBE: 1})
                assert m.operation is not None or callable(getattr(remote, name)), name
            with pytest.raises(InvalidArgument, match="unknown"):
                remote._call("no_such_operation", {})
            assert remote.stats().memories == 0  # type: ignore[attr-defined]
    finally:
        daemon.close()


def test_every_mcp_door_operation_is_a_tool(tmp_path: Path, toy: None) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    field = tmp_path / "f"
    with chitta.open(field, embedder=None):
        pass
    want = {n for n, m in _declared("mcp").items() if m.schema is not None}
    cmd = chitta_command()

    async def main() -> set[str]:
        params = StdioServerParameters(
            command=cmd[0],
            args=[*cmd[1:], "--path", str(field), "mcp", "--no-host"],
            cwd=str(tmp_path),
            env=_env(),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            for name in want:
                res = await s.call_tool(name, {PROBE: 1})  # a tool error, never a protocol error
                text = res.content[0].text
                assert res.is_error and re.search(OWN_CHECK, text), (name, text)
            return tools

    tools = anyio.run(main)
    assert tools == want


def test_every_organ_operation_is_on_the_command_line(tmp_path: Path, toy: None) -> None:
    field = tmp_path / "f"
    listed = subprocess.run(
        [*chitta_command(), "--path", str(field), "operations", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=_env(),
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    names = set(json.loads(listed.stdout))
    organ_ops = {n for n, m in methods.table().items() if m.operation is not None}
    assert organ_ops <= names
    for name in organ_ops:
        r = subprocess.run(
            [*chitta_command(), "--path", str(field), "call", name, f"{PROBE}=1"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env=_env(),
            check=False,
        )
        assert r.returncode == 2 and PROBE in r.stderr, (name, r.stderr)
