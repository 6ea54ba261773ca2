"""``chitta mcp --http`` end to end: a real server process, the SDK's own streamable HTTP client."""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
import anyio
import mcp_types as types
from daemontools import STARTUP_S, child_env, chitta_command
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import chitta
from chitta.mcp.http import check_host, is_loopback, url_for


def spawn(field: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*chitta_command(), "--path", str(field), "mcp", "--http", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=field.parent,
        env=child_env(),
    )


def ready_line(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(STARTUP_S):
            proc.kill()
            raise AssertionError("chitta mcp --http did not become ready")
    line = proc.stdout.readline()
    if not line:
        raise AssertionError(f"chitta mcp --http exited: {proc.communicate()[1].decode()}")
    return dict(json.loads(line))


@contextmanager
def http_server(field: Path) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, Any]]]:
    proc = spawn(field, "--port", "0", "--json")
    try:
        yield proc, ready_line(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@asynccontextmanager
async def session(url: str, client: str) -> AsyncIterator[ClientSession]:
    info = types.Implementation(name=client, version="1")
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, client_info=info) as s,
    ):
        await s.initialize()
        yield s


def test_tools_over_http_remember_recall_and_bad_argument(tmp_path: Path) -> None:
    field = tmp_path / "field"
    with http_server(field) as (proc, info):
        assert info["url"] == f"http://127.0.0.1:{info['port']}/mcp" and info["port"] > 0
        assert info["pid"] == proc.pid and Path(info["path"]) == field

        async def main() -> None:
            async with (
                session(info["url"], "codex") as one,
                session(info["url"], "claude-code") as two,
            ):
                tools = {t.name for t in (await one.list_tools()).tools}
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
                    await one.call_tool("remember", {"text": "the deploy key lives in vault"})
                ).structured_content
                b = (
                    await two.call_tool("remember", {"text": "tests run on two cores"})
                ).structured_content
                hits = (
                    await two.call_tool("recall", {"query": "deploy key", "k": 3})
                ).structured_content["hits"]
                assert (
                    hits[0]["id"] == a["id"] and hits[0]["text"] == "the deploy key lives in vault"
                )
                # each HTTP session keeps its own client name (clientInfo) -> harness
                assert (await two.call_tool("get", {"id": a["id"]})).structured_content[
                    "harness"
                ] == "codex"
                assert (await one.call_tool("get", {"id": b["id"]})).structured_content[
                    "harness"
                ] == "claude-code"
                bad = await one.call_tool("remember", {"text": "x", "kind": "poem"})
                assert bad.is_error and "kind" in bad.content[0].text  # SEP-1303
                with pytest.raises(MCPError) as unknown:
                    await one.call_tool("nope", {})
                assert unknown.value.error.code == types.INVALID_PARAMS
                assert (await one.call_tool("stats", {})).structured_content["memories"] == 2

        anyio.run(main)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # graceful: sessions ended, field closed
    with chitta.open(field, read_only=True) as local:
        assert sorted(m.text for m in local.memories()) == [
            "tests run on two cores",
            "the deploy key lives in vault",
        ]


def test_sigint_flushes_the_field_and_exits_zero(tmp_path: Path) -> None:
    field = tmp_path / "field"
    with http_server(field) as (proc, info):

        async def main() -> None:
            async with session(info["url"], "codex") as s:
                await s.call_tool("remember", {"text": "written just before Ctrl-C"})

        anyio.run(main)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    with chitta.open(field, read_only=True) as local:
        assert [m.text for m in local.memories()] == ["written just before Ctrl-C"]


def test_foreign_host_header_is_refused_dns_rebinding(tmp_path: Path) -> None:
    with http_server(tmp_path / "field") as (_, info):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        req = urllib.request.Request(
            info["url"],
            data=body,
            method="POST",
            headers={
                "Host": "evil.example:80",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=30)
        err.value.close()
        assert err.value.code == 421


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.com"])
def test_non_loopback_host_is_refused_without_allow_remote(tmp_path: Path, host: str) -> None:
    field = tmp_path / "field"
    proc = spawn(field, "--host", host, "--port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == b""  # a bad value: exit 2
    assert "InvalidArgument" in err.decode() and "--allow-remote" in err.decode()
    assert not field.exists()  # refused before anything opened


def test_http_options_need_http(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*chitta_command(), "--path", str(tmp_path / "f"), "mcp", "--port", "9"],
        capture_output=True,
        cwd=tmp_path,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and b"go with --http" in proc.stderr


def test_port_taken_is_a_clear_error(tmp_path: Path) -> None:
    with http_server(tmp_path / "one") as (_, info):
        proc = spawn(tmp_path / "two", "--port", str(info["port"]))
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1 and "cannot listen on 127.0.0.1" in err.decode()


def test_loopback_rules() -> None:
    for host in ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]:
        assert is_loopback(host), host
        check_host(host)
    for host in ["0.0.0.0", "::", "10.0.0.1", "example.com", "localhost.evil.example"]:
        assert not is_loopback(host), host
        with pytest.raises(chitta.InvalidArgument, match="--allow-remote"):
            check_host(host)
        check_host(host, allow_remote=True)
    with pytest.raises(chitta.InvalidArgument):
        check_host("", allow_remote=True)
    assert url_for("::1", 8731) == "http://[::1]:8731/mcp"
