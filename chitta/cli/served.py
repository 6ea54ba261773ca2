"""``chitta stats``, ``chitta get ID`` and ``chitta forget ID`` answered by the daemon that
serves the field, before the command line imports click, numpy or the field (issue 23:
those commands in <= 300 ms). It speaks the daemon's JSON dialect (docs/DAEMON.md) over
the same checked socket as :func:`chitta.connect` (owner, mode, peer uid), and prints what
the full command prints (:mod:`chitta.cli.render`).

Anything else returns None and the full CLI goes on: another command or option, no daemon,
a socket that fails its checks (the full CLI says why), ``CHITTA_NO_DAEMON=1``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

from chitta.errors import ChittaIOError
from chitta.mcp.forward import default_field  # light: the field's rule without the field
from chitta.server.sockets import connect_unix

_FRAME = struct.Struct(">I")  # the daemon's frame header: the body's length
_MAX_REPLY = 64 << 20
_FLAGS = {"stats": {"--json"}, "get": {"--json", "--full"}, "forget": {"--json"}}


class Request:
    """A command line the fast path answers."""

    def __init__(self, command: str, field: Path, memory_id: int | None, flags: set[str]):
        self.command, self.field, self.memory_id, self.flags = command, field, memory_id, flags


def parse(argv: list[str]) -> Request | None:
    """``[--path P] COMMAND [ID] [--json] [--full] [--path P]``, or None for anything else."""
    path: str | None = None
    command: str | None = None
    rest: list[str] = []
    args = iter(argv)
    for a in args:
        if a == "--path":
            path = next(args, "")
            if not path:
                return None
        elif a.startswith("--path="):
            path = a[7:]
        elif command is None:
            if a not in _FLAGS:
                return None
            command = a
        else:
            rest.append(a)
    if command is None or not (path is None or path):
        return None
    flags = {a for a in rest if a.startswith("-")}
    positional = [a for a in rest if not a.startswith("-")]
    if not flags <= _FLAGS[command]:
        return None
    memory_id: int | None = None
    if command == "stats":
        if positional:
            return None
    else:
        if len(positional) != 1:
            return None
        try:
            memory_id = int(positional[0], 0)
        except ValueError:
            return None  # the full CLI explains a bad id
    return Request(command, _field(path), memory_id, flags)


def _field(path: str | None) -> Path:
    return Path(path).expanduser() if path else default_field()


def socket_of(field: Path) -> Path:
    """The daemon's default socket (:func:`chitta.server.daemon.default_socket`'s rule)."""
    digest = hashlib.sha256(str(field.expanduser().absolute()).encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chitta" if runtime else Path(f"/tmp/chitta-{os.getuid()}")
    return base / f"{digest}.sock"


_ids = itertools.count(1)


def call(sock_path: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-dialect call: the reply's ``result`` or ``error`` object."""
    sock = connect_unix(sock_path, timeout=30)
    try:
        body = json.dumps({"id": next(_ids), "method": method, "params": params}).encode()
        sock.sendall(_FRAME.pack(len(body)) + body)
        (size,) = _FRAME.unpack(_recv(sock, _FRAME.size))
        if size > _MAX_REPLY:
            raise ChittaIOError(f"the daemon's reply claims {size} bytes; restart `chitta serve`")
        reply: dict[str, Any] = json.loads(_recv(sock, size))
        return reply
    finally:
        sock.close()


def _recv(sock: Any, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ChittaIOError("the daemon closed the connection mid-reply; retry")
        buf += chunk
    return bytes(buf)


def answer(req: Request) -> int | None:
    """Run ``req`` through the daemon and print its output; the exit code, or None when
    no daemon answers (the full CLI takes over)."""
    sock = socket_of(req.field)
    if not sock.exists():
        return None
    params: dict[str, Any] = {} if req.memory_id is None else {"id": str(req.memory_id)}
    try:
        reply = call(sock, req.command, params)
    except (OSError, ValueError):  # ChittaIOError included: not ours, stale, or cut short
        return None
    if "error" in reply:
        from chitta.cli.exits import exit_code_named

        err = reply["error"]
        print(f"chitta: {err.get('type')}: {err.get('message')}", file=sys.stderr)
        return exit_code_named(str(err.get("type")))
    _print(req, reply.get("result"))
    return 0


def _print(req: Request, result: Any) -> None:
    if req.command == "forget":
        value: Any = {"forgotten": str(req.memory_id)}
        if "--json" not in req.flags:
            print(f"forgot {req.memory_id}")
            return
    elif req.command == "get":
        from chitta.cli.render import memory_view

        value = memory_view(result)
    else:
        value = result
    if "--json" in req.flags:
        print(json.dumps(value, indent=2, ensure_ascii=False, default=str))
        return
    from chitta.cli.render import console, kv_table, memory_table

    if req.command == "get":
        console().print(memory_table(req.memory_id or 0, value, full="--full" in req.flags))
    else:
        console().print(kv_table("field", value))


def fast_path(argv: list[str] | None = None) -> None:
    """Answer and exit when the command line is one this module serves; else return."""
    if argv is None:
        if Path(sys.argv[0]).name != "chitta":
            return
        argv = sys.argv[1:]
    if os.environ.get("CHITTA_NO_DAEMON") == "1":
        return
    req = parse(argv)
    if req is None:
        return
    code = answer(req)
    if code is not None:
        sys.stdout.flush()
        sys.exit(code)


__all__ = ["Request", "answer", "call", "fast_path", "parse", "socket_of"]
