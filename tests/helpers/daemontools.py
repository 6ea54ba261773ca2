"""Helpers for the daemon and MCP tests: spawn ``chitta serve`` as a real process,
talk raw frames to it."""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from chitta.server import protocol

STARTUP_S = 60.0  # the machine is shared and slow; the daemon starts in ~1 s when idle


def chitta_command() -> list[str]:
    exe = Path(sys.executable).with_name("chitta")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "chitta.cli"]


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CHITTA_EMBEDDER", "none")
    env.update(extra)
    return env


class DaemonProcess:
    """``chitta --path FIELD serve --socket SOCK --json`` in a subprocess (cwd outside the repo)."""

    def __init__(
        self,
        field: Path,
        sock: Path,
        *,
        durability: str = "flush",
        env: dict[str, str] | None = None,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.field, self.sock = field, sock
        self.proc = subprocess.Popen(
            [
                *chitta_command(),
                "--path",
                str(field),
                "serve",
                "--socket",
                str(sock),
                "--json",
                "--durability",
                durability,
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=field.parent,
            env=env or child_env(),
        )
        self.info = self._ready()

    def _ready(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(STARTUP_S):
                self.kill()
                self.close()
                raise AssertionError("chitta serve did not become ready")
        finally:
            sel.close()
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            self.proc.wait()
            self.close()
            raise AssertionError(f"chitta serve exited: {err}")
        return dict(json.loads(line))

    def signal(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=60)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=60)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def raw_connect(sock: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(str(sock))
    return s


def read_reply(s: socket.socket) -> Any:
    """One reply frame, decoded; None when the daemon closed the connection."""
    header = _recv(s, 4)
    if header is None:
        return None
    (size,) = protocol.HEADER.unpack(header)
    body = _recv(s, size)
    return None if body is None else protocol.unpack(body)


def _recv(s: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def request(s: socket.socket, rid: int, method: str, **params: Any) -> Any:
    s.sendall(protocol.frame(protocol.pack({"id": rid, "method": method, "params": params})))
    return read_reply(s)
