"""The daemon's JSON dialect (docs/DAEMON.md) spoken with raw frames by a real process.

Python's ``json`` writes the requests and reads the replies; the MessagePack client
(``chitta.connect``) on the same daemon is the oracle for what the calls did.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemontools import DaemonProcess, child_env, raw_connect

import chitta


@pytest.fixture()
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(
        tmp_path / "f", tmp_path / "d.sock", env=child_env(CHITTA_EMBEDDER="hashing-v1-d64")
    )
    yield d
    d.close()


def _frame(s: socket.socket, body: bytes) -> dict[str, Any]:
    s.sendall(struct.pack(">I", len(body)) + body)
    (n,) = struct.unpack(">I", _read(s, 4))
    reply = json.loads(_read(s, n))  # a JSON reply to a JSON request
    assert isinstance(reply, dict)
    return reply


def _read(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        assert chunk, "the daemon closed the connection"
        buf += chunk
    return buf


def test_calls_in_json_do_what_the_msgpack_client_sees(daemon: DaemonProcess) -> None:
    s = raw_connect(daemon.sock)
    req = {"id": 1, "method": "remember", "params": {"text": "Ana picked SQLite", "tags": ["db"]}}
    r = _frame(s, json.dumps(req).encode())
    mid = r["result"]
    assert r["id"] == 1 and isinstance(mid, str) and mid.isdigit()  # ids travel as text
    got = _frame(s, json.dumps({"id": 2, "method": "get", "params": {"id": mid}}).encode())
    assert got["result"]["text"] == "Ana picked SQLite" and got["result"]["tags"] == ["db"]
    hits = _frame(
        s,
        json.dumps(
            {
                "id": 3,
                "method": "recall",
                "params": {"query": "SQLite", "touch": False, "explain": True},
            }
        ).encode(),
    )["result"]
    with chitta.connect(daemon.sock, timeout=30) as remote:
        assert remote.get(int(mid)).tags == ("db",)
        ref = remote.recall("SQLite", touch=False, explain=True)
    assert [h["id"] for h in hits] == [str(h.id) for h in ref]
    assert hits[0]["lanes"] == dict(ref[0].lanes)
    assert [f["name"] for f in hits[0]["factors"]] == [f.name for f in ref[0].factors]
    s.close()


def test_damaged_requests_get_an_error_and_the_connection_stays(daemon: DaemonProcess) -> None:
    s = raw_connect(daemon.sock)
    cases = [
        (b"{not json", None, "not valid JSON"),
        (b'{"method": "stats"}', None, "integer id"),
        (b'{"id": "7", "method": "stats"}', None, "integer id"),
        (b'{"id": 4, "method": "no_such"}', 4, "unknown method"),
        (b'{"id": 5, "method": "stats", "params": [1]}', 5, "params must be a map"),
        (b'{"id": 6, "method": "get", "params": {"id": "x1"}}', 6, "id"),
        (b'{"id": 7, "method": "remember", "params": {"text": 5}}', 7, "text"),
        (b'{"id": 8, "method": "remember", "params": {"text": "\\ud800"}}', 8, "Unicode"),
    ]
    for body, rid, text in cases:
        r = _frame(s, body)
        assert r["id"] == rid and "error" in r and text in r["error"]["message"], (body, r)
        assert r["error"]["type"] in {"InvalidArgument", "ProtocolError", "NotFound"}, r
    ok = _frame(s, b'{"id": 9, "method": "stats"}')  # the same connection still answers
    assert ok["id"] == 9 and ok["result"]["memories"] == 0  # nothing was written
    s.close()
