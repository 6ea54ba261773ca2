"""``chitta mcp`` as a thin forwarder: stdin/stdout <-> the warm MCP host's Unix socket.

Standard library only (no SDK, no numpy, no native core), so a client's spawn
of ``chitta mcp`` costs Python's start-up plus a connect when a host
(``chitta mcp-host``, ``chitta/mcp/host.py``) already serves the field. The
bytes are the MCP stdio framing (one JSON-RPC message a line) unchanged; the
host runs a full SDK ``Server`` session for each connection.

:func:`fast_path` is called at the top of ``chitta/cli/app.py``, before the CLI's
heavy imports: for ``chitta [--path P] mcp`` with a host listening it
forwards and exits; otherwise it returns and the CLI runs as usual (which
tries the host again, then starts one and serves this session itself).

The host's socket (:func:`host_socket`) is mode 0600 in a 0700 directory;
both ends check the other's uid with ``SO_PEERCRED``, and the forwarder checks the
directory and the socket file first (``chitta/server/sockets.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import selectors
import socket
import subprocess
import sys
from pathlib import Path

from chitta.errors import ChittaIOError, InvalidArgument
from chitta.server.sockets import UntrustedSocket, check_peer, connect_unix, peer_cred, private_dir

CONNECT_TIMEOUT_S = 2.0
CHUNK = 1 << 16
#: seconds without a session after which a host started by ``chitta mcp`` exits
AUTO_HOST_IDLE_S = 120.0  # a host `chitta mcp` starts exits this long after its last session


def auto_host_grace() -> float:
    """How long an auto-started host outlives its last session: ``$CHITTA_MCP_HOST_GRACE``
    seconds (> 0), else AUTO_HOST_IDLE_S. A client's health check (``claude mcp list``)
    then leaves no host behind for long."""
    raw = os.environ.get("CHITTA_MCP_HOST_GRACE")
    if raw is None:
        return AUTO_HOST_IDLE_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise InvalidArgument(
            f"CHITTA_MCP_HOST_GRACE={raw!r}: give a number of seconds above 0 (or unset it)"
        )
    return value


def default_field() -> Path:
    """``$CHITTA_HOME``, else ``$XDG_DATA_HOME/chitta/default``: the same rule as
    :func:`chitta.field.default_path`, without importing the field."""
    home = os.environ.get("CHITTA_HOME")
    if home:
        return Path(home).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(data) / "chitta" / "default"


def host_socket(field_path: str | os.PathLike[str]) -> Path:
    """The MCP host's socket of a field: ``$XDG_RUNTIME_DIR/chitta/mcp-<hash>.sock``, else
    ``/tmp/chitta-<uid>/mcp-<hash>.sock``. ``<hash>``: 16 hex digits of SHA-256 of the
    field's absolute path and the chitta version (an upgraded chitta starts its own host)."""
    import chitta

    key = f"{Path(field_path).expanduser().absolute()}\0{chitta.__version__}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chitta" if runtime else Path(f"/tmp/chitta-{os.getuid()}")
    return base / f"mcp-{digest}.sock"


def connect(
    path: str | os.PathLike[str], timeout: float = CONNECT_TIMEOUT_S
) -> socket.socket | None:
    """A connection to the host listening on ``path``, or None when none does (no file,
    a stale socket nobody listens on). A directory or socket of another user, a
    symlinked directory, or a host of another uid: UntrustedSocket (a ChittaIOError)."""
    try:
        sock = connect_unix(path, timeout)
    except UntrustedSocket:
        raise
    except OSError:  # nothing there, nobody listening, timed out (ChittaIOError included)
        return None
    sock.settimeout(None)
    return sock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def forward(sock: socket.socket, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Copy stdin -> socket and socket -> stdout until the session ends. 0 when the
    client closed stdin (and the host then closed); 1 when the host went away first
    (stdout is then closed, so the client sees its stream end) or the client did."""
    sel = selectors.DefaultSelector()
    sel.register(stdin_fd, selectors.EVENT_READ, "in")
    sel.register(sock, selectors.EVENT_READ, "sock")
    stdin_open = True
    try:
        while True:
            for key, _ in sel.select():
                if key.data == "in":
                    data = os.read(stdin_fd, CHUNK)
                    if data:
                        sock.sendall(data)
                        continue
                    stdin_open = False  # the client is done: let the host finish and close
                    sel.unregister(stdin_fd)
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_WR)
                else:
                    data = sock.recv(CHUNK)
                    if not data:
                        if stdin_open:
                            print("chitta mcp: the MCP host closed the connection", file=sys.stderr)
                        return 1 if stdin_open else 0
                    _write_all(stdout_fd, data)
    except OSError as exc:  # a reset from the host, or the client's end of stdout closed
        print(f"chitta mcp: forwarding stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        sel.close()
        sock.close()
        with contextlib.suppress(OSError):
            os.close(stdout_fd)


def try_forward(field_path: str | os.PathLike[str]) -> int | None:
    """Forward this process's stdio to the field's host: the exit code, or None when no host listens."""
    sock = connect(host_socket(field_path))
    if sock is None:
        return None
    return forward(sock)


def spawn_host(field_path: str | os.PathLike[str], idle_exit_s: float | None = None) -> int:
    """Start ``chitta mcp-host`` for the field in the background (its own session, no
    terminal, output to ``<socket>.log``); returns its pid. A host already starting or
    running makes the new one exit at once (it takes a lock first)."""
    sock = host_socket(field_path)
    private_dir(sock.parent)  # 0700 and this user's, or UntrustedSocket
    code = "import sys; from chitta.cli import main; sys.exit(main())"
    cmd = [
        sys.executable,
        "-c",
        code,
        "--path",
        str(Path(field_path).expanduser().absolute()),
        "mcp-host",
        "--idle-exit",
        str(auto_host_grace() if idle_exit_s is None else idle_exit_s),
    ]
    fd = os.open(f"{sock}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)
    return proc.pid


def _argv_field(argv: list[str]) -> Path | None:
    """The field of ``chitta [--path P] mcp`` or ``chitta mcp [--path P]`` (nothing else);
    None for any other command line."""
    if argv[:1] == ["mcp"]:
        argv = [*argv[1:], "mcp"]  # --path after the command means the same
    if argv[-1:] != ["mcp"]:
        return None
    head = argv[:-1]
    if not head:
        return default_field()
    if len(head) == 2 and head[0] == "--path" and head[1]:
        return Path(head[1]).expanduser()
    if len(head) == 1 and head[0].startswith("--path=") and len(head[0]) > 7:
        return Path(head[0][7:]).expanduser()
    return None


def fast_path(argv: list[str] | None = None) -> None:
    """For ``chitta [--path P] mcp`` run as the ``chitta`` command with a host listening:
    forward and exit. Anything else (or no host) returns, and the CLI goes on."""
    if argv is None:
        if Path(sys.argv[0]).name != "chitta":
            return
        argv = sys.argv[1:]
    field = _argv_field(argv)
    if field is None:
        return
    try:
        code = try_forward(field)
    except ChittaIOError:
        return  # the full CLI reports it
    if code is not None:
        sys.exit(code)


__all__ = [
    "AUTO_HOST_IDLE_S",
    "auto_host_grace",
    "check_peer",
    "connect",
    "default_field",
    "fast_path",
    "forward",
    "host_socket",
    "peer_cred",
    "spawn_host",
    "try_forward",
]
