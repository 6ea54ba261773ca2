"""``chitta mcp --http``: the MCP tools over the SDK's streamable HTTP transport.

One process serves one field to any number of MCP clients on a loopback
address: the SDK's low-level ``Server`` (``chitta/mcp/server.py``) exposes its
streamable HTTP app (Starlette, path ``/mcp``), run by uvicorn, both
dependencies of ``mcp``. A host that is not loopback is refused unless
``allow_remote`` (there is no authentication: whoever reaches the port reads
and writes the field). On loopback the SDK's DNS-rebinding protection is on.
SIGTERM or SIGINT stops it: open sessions end, the field is flushed and closed.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

from chitta.errors import ChittaIOError, InvalidArgument
from chitta.mcp.tools import ChittaMCP

DEFAULT_PORT = 8731
ENDPOINT = "/mcp"
_LOCAL_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, *, allow_remote: bool = False) -> None:
    """InvalidArgument for a host that is not loopback, unless allowed."""
    if not isinstance(host, str) or not host.strip():
        raise InvalidArgument(f"host must be a non-empty address, got {host!r}")
    if not allow_remote and not is_loopback(host):
        raise InvalidArgument(
            f"refusing to serve MCP on {host!r}, which is not a loopback address: the server has no "
            "authentication, so anyone who reaches it could read and write the field. "
            "Use 127.0.0.1 / ::1 / localhost, or pass --allow-remote to serve it anyway."
        )


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}{ENDPOINT}"


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: the OS picks a free one)."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidArgument(f"port must be an integer in 0..65535, got {port!r}")
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ChittaIOError(f"cannot listen on {host}:{port}: {exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)  # clients that connect before uvicorn starts wait in the backlog
    except OSError as exc:
        sock.close()
        raise ChittaIOError(f"cannot listen on {host}:{port}: {exc}") from exc
    return sock


def _security(host: str) -> Any:
    """DNS-rebinding protection for a loopback host (the SDK's own, widened to the host given)."""
    if not is_loopback(host):
        return None  # --allow-remote: the SDK's default for other hosts
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = {"127.0.0.1", "localhost", "[::1]", f"[{host.strip('[]')}]" if ":" in host else host}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in sorted(hosts)],
        allowed_origins=[f"http://{h}:*" for h in sorted(hosts)],
    )


def run_http(
    path: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
    embedder: Any = "auto",
    ready: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Serve the MCP tools at ``http://host:port/mcp`` until SIGTERM or SIGINT.

    ``ready`` gets ``{"url", "host", "port", "path", "pid"}`` once the socket
    listens and the field is open. Raises InvalidArgument (bad host or port,
    before anything opens) or ChittaIOError (the address is taken).
    """
    check_host(host, allow_remote=allow_remote)
    sock = listen(host, port)
    userver: Any = None

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Before serving: stop now (the finally below closes the field). While
        # serving, uvicorn has its own handlers; it puts this one back after its
        # graceful shutdown and raises the signal again, which then only
        # repeats should_exit. A signal in between makes uvicorn skip serving.
        if userver is None:
            raise SystemExit(0)
        userver.should_exit = True

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    state = ChittaMCP(path, embedder=embedder)
    try:
        state.start_open()  # overlaps the SDK import
        import asyncio

        import uvicorn

        from chitta.mcp.server import build_server

        server = build_server(state)
        app = server.streamable_http_app(
            streamable_http_path=ENDPOINT, host=host, transport_security=_security(host)
        )
        field = state.field()
        bound_port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            app,
            host=host,
            port=bound_port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
        server_obj = uvicorn.Server(config)
        if ready is not None:
            ready(
                {
                    "url": url_for(host, bound_port),
                    "host": host,
                    "port": bound_port,
                    "path": str(field.path),
                    "pid": os.getpid(),
                }
            )
        userver = server_obj
        asyncio.run(server_obj.serve(sockets=[sock]))
    finally:
        sock.close()
        state.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
