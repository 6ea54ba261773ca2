"""``chitta mcp`` forwarding to a warm ``chitta mcp-host``, with the SDK's own client over stdio."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")
import anyio
import mcp_types as types
from daemontools import STARTUP_S, child_env, chitta_command
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import chitta
from chitta.mcp import forward as mcp_forward


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short private XDG_RUNTIME_DIR (socket paths must stay under 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cmh", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Host:
    """``chitta --path FIELD mcp-host --json`` in a subprocess."""

    def __init__(self, field: Path) -> None:
        self.proc = subprocess.Popen(
            [*chitta_command(), "--path", str(field), "mcp-host", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            env=child_env(),
        )
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(STARTUP_S)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.stop()
            raise AssertionError(f"chitta mcp-host did not start: {self.proc.stderr.read()!r}")  # type: ignore[union-attr]
        import json

        self.info = json.loads(line)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        code = self.proc.wait(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code


@pytest.fixture
def host(tmp_path: Path, runtime: Path) -> Iterator[Host]:
    with chitta.open(tmp_path / "field", embedder=None) as f:
        f.remember("seeded before the host started")
    h = Host(tmp_path / "field")
    yield h
    h.stop()


@asynccontextmanager
async def session(
    field: Path, client: str = "claude-code", *extra: str
) -> AsyncIterator[ClientSession]:
    cmd = chitta_command()
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--path", str(field), "mcp", *extra],
        cwd="/",
        env=child_env(),
    )
    info = types.Implementation(name=client, version="1")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=info) as s,
    ):
        with anyio.fail_after(STARTUP_S):
            await s.initialize()
        yield s


def test_forwarded_session_serves_every_tool_and_rejects_bad_arguments(
    tmp_path: Path, host: Host
) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field, "codex") as s:
            tools = {t.name for t in (await s.list_tools()).tools}
            assert {
                "remember",
                "recall",
                "get",
                "forget",
                "link",
                "write_gate_stats",
                "stats",
            } <= tools
            a = (
                await s.call_tool("remember", {"text": "the CI runs on 2 cores"})
            ).structured_content["id"]
            hits = (await s.call_tool("recall", {"query": "CI cores"})).structured_content["hits"]
            assert hits[0]["id"] == a
            got = (await s.call_tool("get", {"id": a})).structured_content
            assert got["source_tool"] == "codex" and got["harness"] == "codex"
            stats = (await s.call_tool("stats", {})).structured_content
            assert stats["memories"] == 2  # the seeded one too: the host serves this field
            for name, args in [  # SEP-1303: tool results with isError, naming the argument
                ("remember", {"txt": "x"}),
                ("remember", {"text": "  "}),
                ("recall", {}),
            ]:
                res = await s.call_tool(name, args)
                assert res.is_error and "InvalidArgument" in res.content[0].text, (name, args)
            with pytest.raises(MCPError) as info:  # an unknown tool is a protocol error
                await s.call_tool("nope", {})
            assert info.value.error.code == types.INVALID_PARAMS
            missing = await s.call_tool("get", {"id": 12345})
            assert missing.is_error and "NotFound" in missing.content[0].text

    anyio.run(main)
    assert host.proc.poll() is None  # the host outlives its sessions
    host.stop()
    with chitta.open(field, read_only=True) as local:
        assert sorted(m.text for m in local.memories()) == [
            "seeded before the host started",
            "the CI runs on 2 cores",
        ]


def test_two_concurrent_sessions_are_two_instances_with_their_client_names(
    tmp_path: Path, host: Host
) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field, "claude-code") as one, session(field, "codex") as two:
            a = (
                await one.call_tool("remember", {"text": "staging listens on 8081"})
            ).structured_content["id"]
            b = (
                await two.call_tool("remember", {"text": "production listens on 443"})
            ).structured_content["id"]
            assert (await two.call_tool("get", {"id": a})).structured_content[
                "source_tool"
            ] == "claude-code"
            assert (await one.call_tool("get", {"id": b})).structured_content[
                "source_tool"
            ] == "codex"
            s1 = (await one.call_tool("stats", {})).structured_content
            s2 = (await two.call_tool("stats", {})).structured_content
            assert s1["instance_id"] != s2["instance_id"]  # each window is its own writer instance

    anyio.run(main)


def test_host_killed_mid_session_ends_the_client_stream(tmp_path: Path, host: Host) -> None:
    field = tmp_path / "field"

    async def main() -> None:
        async with session(field) as s:
            assert not (await s.call_tool("stats", {})).is_error
            os.kill(host.info["pid"], signal.SIGKILL)
            host.proc.wait(timeout=60)
            with anyio.fail_after(30), pytest.raises(MCPError):  # not a hang: the stream ended
                await s.call_tool("stats", {})

    anyio.run(main)


def test_second_host_for_the_same_field_is_refused(tmp_path: Path, host: Host) -> None:
    proc = subprocess.run(
        [*chitta_command(), "--path", str(tmp_path / "field"), "mcp-host"],
        check=False,
        cwd="/",
        env=child_env(),
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1 and b"already serves" in proc.stderr
    conn = mcp_forward.connect(host.info["socket"])
    assert conn is not None  # the first still listens
    conn.close()


def test_stale_socket_file_is_replaced(tmp_path: Path, runtime: Path) -> None:
    with chitta.open(tmp_path / "field", embedder=None):
        pass
    path = mcp_forward.host_socket(tmp_path / "field")
    path.parent.mkdir(mode=0o700, parents=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens: what a SIGKILLed host leaves
    assert path.exists() and mcp_forward.connect(path) is None
    h = Host(tmp_path / "field")
    try:
        assert h.info["socket"] == str(path)
        conn = mcp_forward.connect(path)
        assert conn is not None
        conn.close()
    finally:
        assert h.stop() == 0
    assert not path.exists()  # removed on SIGTERM


def test_peer_of_another_uid_is_refused() -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        pid, uid, _gid = mcp_forward.peer_cred(a)  # type: ignore[misc]
        assert (pid, uid) == (os.getpid(), os.getuid())
        mcp_forward.check_peer(a)
        with pytest.raises(chitta.errors.ChittaIOError, match="runs as uid"):
            mcp_forward.check_peer(a, uid=os.getuid() + 1)


def test_without_a_host_the_first_session_starts_one(tmp_path: Path, runtime: Path) -> None:
    field = tmp_path / "field"

    async def first() -> int:
        async with session(
            field, "codex"
        ) as s:  # served in-process; a host starts in the background
            return int(
                (
                    await s.call_tool("remember", {"text": "written before any host"})
                ).structured_content["id"]
            )

    mid = anyio.run(first)
    path = mcp_forward.host_socket(field)
    deadline = time.monotonic() + STARTUP_S
    conn = None
    while conn is None and time.monotonic() < deadline:
        conn = mcp_forward.connect(path)
        time.sleep(0.1) if conn is None else None
    assert conn is not None, "no host started"
    pid = mcp_forward.peer_cred(conn)[0]  # type: ignore[index]
    conn.close()
    try:

        async def second() -> None:
            async with session(field, "claude-code") as s:
                assert (await s.call_tool("get", {"id": mid})).structured_content[
                    "text"
                ] == "written before any host"

        anyio.run(second)
    finally:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not path.exists()


def test_fast_path_parses_only_plain_mcp_command_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse = mcp_forward._argv_field
    monkeypatch.setenv("CHITTA_HOME", str(tmp_path / "home"))
    assert parse(["mcp"]) == tmp_path / "home"
    assert parse(["--path", "/f", "mcp"]) == Path("/f") and parse(["--path=/f", "mcp"]) == Path(
        "/f"
    )
    for argv in (
        ["mcp", "--no-host"],
        ["mcp", "--http"],
        ["stats"],
        [],
        ["--path", "mcp"],
        ["-v", "x", "mcp"],
    ):
        assert parse(argv) is None, argv
    from chitta.field import default_path

    for env in (
        {"CHITTA_HOME": "~/x"},
        {"CHITTA_HOME": "", "XDG_DATA_HOME": "/d"},
        {"CHITTA_HOME": ""},
    ):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert mcp_forward.default_field() == default_path()


def test_forwarder_imports_only_the_standard_library() -> None:
    code = (
        "import sys, chitta.mcp.forward; heavy = {'numpy', 'msgspec', 'click', 'rich', 'mcp', 'anyio', "
        "'pydantic', 'chitta._core'} & set(sys.modules); print(sorted(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_idle_host_exits_and_removes_its_socket(tmp_path: Path, runtime: Path) -> None:
    with chitta.open(tmp_path / "field", embedder=None):
        pass
    proc = subprocess.Popen(
        [*chitta_command(), "--path", str(tmp_path / "field"), "mcp-host", "--idle-exit", "0.5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=child_env(),
    )
    try:
        assert proc.wait(timeout=STARTUP_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not mcp_forward.host_socket(tmp_path / "field").exists()


def test_an_auto_started_host_exits_soon_after_its_last_session(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHITTA_MCP_HOST_GRACE", "2")  # instead of the default 120 s
    field = tmp_path / "field"

    async def health_check() -> None:  # what `claude mcp list` does: start, list, leave
        async with session(field) as s:
            assert (await s.list_tools()).tools

    anyio.run(health_check)
    path = mcp_forward.host_socket(field)
    deadline = time.monotonic() + STARTUP_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.exists(), "no host started"
    deadline = time.monotonic() + 60
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists()  # it left on its own, no SIGTERM


def test_a_bad_host_grace_is_a_usage_error(tmp_path: Path) -> None:
    r = subprocess.run(
        [*chitta_command(), "--path", str(tmp_path / "f"), "mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**child_env(), "CHITTA_MCP_HOST_GRACE": "soon"},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert r.returncode == 2 and "CHITTA_MCP_HOST_GRACE" in r.stderr and "seconds" in r.stderr
