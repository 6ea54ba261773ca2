"""Issue 16, finding 8: a real ``chitta mcp --no-host`` answers every request line,
including the ones the SDK's stdio reader drops (a lone surrogate escape, params
that are not an object, a line that is not JSON, invalid UTF-8 in a string), and
stores nothing from them (no U+FFFD texts)."""

from __future__ import annotations

import json
import select
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from daemontools import child_env, chitta_command

import chitta

REPLY_S = 30.0


def _req(rid: int, method: str, params: Any) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        + b"\n"
    )


def _remember(rid: int, text_json: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":"'
        % rid
        + text_json
        + b'"}}}\n'
    )


class Raw:
    def __init__(self, field: Path) -> None:
        self.proc = subprocess.Popen(
            [*chitta_command(), "--path", str(field), "mcp", "--no-host"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=field.parent,
            env=child_env(),
        )
        self.buf = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        """The next message the server writes (never waits past REPLY_S: a hang is a failure)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            r, _, _ = select.select([fd], [], [], REPLY_S)
            if not r:
                raise AssertionError("the server sent no answer")
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                raise AssertionError(
                    f"the server exited: {self.proc.stderr.read() if self.proc.stderr else b''!r}"
                )
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return dict(json.loads(line))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def test_every_request_line_gets_an_answer_and_nothing_bad_is_stored(tmp_path: Path) -> None:
    field = tmp_path / "field"
    raw = Raw(field)
    try:
        raw.send(
            _req(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-bytes", "version": "1"},
                },
            )
        )
        assert raw.reply()["id"] == 1
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

        raw.send(_remember(2, b"a\\ud800b"))  # a lone surrogate escape
        r = raw.reply()
        assert (r["id"], r["error"]["code"]) == (2, -32602) and "surrogate" in r["error"]["message"]

        raw.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1,2]}\n')
        r = raw.reply()
        assert (r["id"], r["error"]["code"]) == (3, -32602) and "object" in r["error"]["message"]

        raw.send(b"this is not json {\n")
        r = raw.reply()
        assert (r["id"], r["error"]["code"]) == (None, -32700)

        raw.send(_remember(4, b"caf\xff\xfe bytes"))  # invalid UTF-8 inside a JSON string
        r = raw.reply()
        assert (r["id"], r["error"]["code"]) == (4, -32700) and "UTF-8" in r["error"]["message"]

        raw.send(
            b'{"jsonrpc":"2.0","method":"notifications/bogus","params":7}\n'
        )  # never answered (JSON-RPC)
        raw.send(_remember(5, b"the only memory"))
        r = raw.reply()
        assert r["id"] == 5 and "error" not in r and not r["result"].get("isError")
    finally:
        raw.close()
    with chitta.open(field, embedder=None, read_only=True) as f:
        assert [m.text for m in f.memories()] == ["the only memory"]
